//! `response_template` (alias `response_transformer`): a template rendered
//! over the state, written as text to `outputKey`.

use super::{Here, KindRules};
use crate::diag::Diagnostic;
use crate::validate::{Validator, TEXT_TARGETS};

crate::kind_fields! {
    /// A node that renders a template.
    pub struct ResponseTemplateNode {
        /// Text with `{{field}}` placeholders.
        template: String = required("template"),
        output_key: String = required("outputKey"),
    }
}

impl KindRules for ResponseTemplateNode {
    fn output_key(&self) -> Option<&str> {
        Some(&self.output_key)
    }

    fn validate<'a>(&'a self, v: &mut Validator<'a>, here: &Here<'a>) {
        let (at, id) = (here.at.as_str(), here.id);
        v.check_template(&self.template, format!("{at}/template"), id);
        if let Some(f) = v.field(&self.output_key) {
            if f.text_write().is_none() {
                v.err(
                    Diagnostic::error(
                        &crate::codes::OUTPUT_TYPE,
                        format!(
                            "response_template `{id}` writes text to `{}`, {}; it needs {TEXT_TARGETS}",
                            f.name,
                            f.describe()
                        ),
                    )
                    .at(format!("{at}/outputKey"))
                    .node(id),
                );
            }
        }
    }
}
