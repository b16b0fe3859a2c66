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
    /// An object of the output field's `properties`, asked for as
    /// structured output ([`output_schema`]).
    Structured,
}

pub fn output(doc: &Document, llm: &LlmNode) -> LlmOutput {
    if llm.structured_output(doc).is_some() {
        return LlmOutput::Structured;
    }
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

/// The JSON Schema a structured-output node sends and checks its reply
/// against; `None` when the node writes text.
pub fn output_schema(doc: &Document, llm: &LlmNode) -> Option<serde_json::Value> {
    llm.structured_output(doc).map(|f| f.shape().json_schema())
}
