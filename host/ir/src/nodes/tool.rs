//! `tool`: one call of a tool of `logical.tools` with the node's input.

use std::collections::BTreeMap;

use serde_json::Value;

use super::{Here, KindRules};
use crate::validate::Validator;

crate::kind_fields! {
    /// A node that calls a tool.
    pub struct ToolNode {
        /// An entry of `logical.tools`.
        tool_id: String = required("toolId"),
        /// The call's arguments; string values may be `{{field}}` templates
        /// (a lone `{{field}}` passes the field's value with its type).
        #[schemars(default)]
        input: BTreeMap<String, Value> = or_empty("input"),
        output_key: String = required("outputKey"),
    }
}

impl KindRules for ToolNode {
    fn output_key(&self) -> Option<&str> {
        Some(&self.output_key)
    }

    fn validate<'a>(&'a self, v: &mut Validator<'a>, here: &Here<'a>) {
        let (at, id) = (here.at.as_str(), here.id);
        v.check_tool_ref(&self.tool_id, format!("{at}/toolId"), id);
        for (k, value) in &self.input {
            if let Value::String(s) = value {
                v.check_template(s, format!("{at}/input/{k}"), id);
            }
        }
    }
}
