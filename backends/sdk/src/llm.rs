//! How an LLM node's reply becomes the value it writes, decided once for
//! every backend from the node and the type of its `outputKey`.

use svc_ir::{Document, FieldType, LlmNode, OutputShape};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LlmOutput {
    /// A `messages` field with `replaceMessages`: the reply replaces them.
    ReplaceMessages,
    /// A `messages` field: the reply is appended as an assistant message.
    AppendMessage,
    /// `outputShape: list` into a list of strings: one string per item.
    TextList,
    /// `outputShape: list` into any other field.
    List,
    /// The reply as it is.
    Scalar,
}

pub fn output(doc: &Document, llm: &LlmNode) -> LlmOutput {
    let field = doc.state_field(&llm.output_key);
    match (llm.output_shape, field.map(|f| f.ty)) {
        (_, Some(FieldType::Messages)) if llm.replace_messages => LlmOutput::ReplaceMessages,
        (_, Some(FieldType::Messages)) => LlmOutput::AppendMessage,
        (OutputShape::List, _) => {
            let strings = field
                .and_then(|f| f.items.as_ref())
                .is_some_and(|it| it.ty == FieldType::String);
            if strings {
                LlmOutput::TextList
            } else {
                LlmOutput::List
            }
        }
        (OutputShape::Scalar, _) => LlmOutput::Scalar,
    }
}
