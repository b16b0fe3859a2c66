//! `agent`: runs an agent of `logical.agents` on a templated input, in an
//! isolated child scope, with the caller roles the node carries.

use super::{Here, KindRules};
use crate::diag::{did_you_mean, Diagnostic};
use crate::validate::Validator;

crate::kind_fields! {
    /// Runs an agent of `logical.agents`.
    pub struct AgentNode {
        /// The id of an entry of `logical.agents`.
        agent: String = required("agent"),
        /// Template (`{{field}}`) given to the agent as the user message.
        input: String = required("input"),
        /// A `string` field, or a `messages` field (one assistant message).
        output_key: String = required("outputKey"),
        /// The roles this call carries.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        #[schemars(default)]
        caller_roles: Vec<String> = or_empty("callerRoles"),
    }
}

impl KindRules for AgentNode {
    fn output_key(&self) -> Option<&str> {
        Some(&self.output_key)
    }

    fn validate<'a>(&'a self, v: &mut Validator<'a>, here: &Here<'a>) {
        let (at, id) = (here.at.as_str(), here.id);

        v.check_template(&self.input, format!("{at}/input"), id);
        v.text_output(id, &self.output_key, at, "its answer", true);
        if v.doc().agent(&self.agent).is_none() {
            let ids: Vec<&str> = v
                .doc()
                .logical
                .agents
                .iter()
                .map(|a| a.id.as_str())
                .collect();
            let mut d = Diagnostic::error(
                &crate::codes::UNRESOLVED_REF,
                format!("agent `{}` is not declared in `logical.agents`", self.agent),
            )
            .at(format!("{at}/agent"))
            .node(id);
            d = match did_you_mean(&self.agent, ids.iter().copied()) {
                Some(s) => d.hint(format!("did you mean `{s}`?")),
                None => d.hint("declare it in `logical.agents`"),
            };
            v.err(d);
        }
    }
}
