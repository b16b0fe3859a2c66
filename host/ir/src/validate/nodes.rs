//! Each node: its id, the state field it writes, then its kind's own rules
//! (`crate::nodes`); the checks kinds share (templates, tool references).

use std::collections::HashMap;

use crate::diag::{did_you_mean, Diagnostic};
use crate::model::*;
use crate::nodes::{end, start, Here};

use super::ids::is_node_id;
use super::Validator;

impl<'a> Validator<'a> {
    pub(super) fn nodes(&mut self) {
        let doc = self.doc;
        let mut seen: HashMap<&str, usize> = HashMap::new();
        let mut starts = Vec::new();
        let mut ends = 0;
        for (i, n) in doc.logical.nodes.iter().enumerate() {
            let ptr = Self::node_ptr(i);
            if !is_node_id(&n.id) {
                self.err(
                    Diagnostic::error(
                        &crate::codes::INVALID_ID,
                        format!("node id `{}` must match {NODE_ID_PATTERN}", n.id),
                    )
                    .at(format!("{ptr}/id"))
                    .hint("node ids become identifiers: letters, digits and `_`, starting with a letter"),
                );
            } else if let Some(first) = seen.insert(n.id.as_str(), i) {
                self.err(
                    Diagnostic::error(
                        &crate::codes::DUPLICATE_ID,
                        format!(
                            "node id `{}` is used twice (first at /logical/nodes/{first})",
                            n.id
                        ),
                    )
                    .at(format!("{ptr}/id"))
                    .node(&n.id),
                );
            }
            if matches!(n.kind, NodeKind::Start) {
                starts.push(i);
            } else if matches!(n.kind, NodeKind::End) {
                ends += 1;
            }
            self.node_fields(i, n);
        }
        start::check_count(self, &starts);
        end::check_count(self, ends);
    }

    /// The shared checks of a node's fields, then its kind's own rules.
    pub(super) fn node_fields(&mut self, i: usize, n: &'a Node) {
        let here = Here {
            index: i,
            id: &n.id,
            at: Self::node_ptr(i),
        };
        if let Some(key) = n.kind.output_key() {
            let at = format!("{}/outputKey", here.at);
            self.check_field_ref(key, at, Some(&n.id), "outputKey");
        }
        n.kind.rules().validate(self, &here);
    }

    pub(crate) fn check_template(&mut self, text: &str, ptr: String, node: &str) {
        for name in placeholders(text) {
            self.check_field_ref(name, ptr.clone(), Some(node), "placeholder");
        }
    }

    pub(crate) fn check_tool_ref(&mut self, tool: &str, ptr: String, node: &str) {
        if self.doc.tool(tool).is_some() {
            return;
        }
        let ids: Vec<&str> = self
            .doc
            .logical
            .tools
            .iter()
            .map(|t| t.id.as_str())
            .collect();
        let mut d = Diagnostic::error(
            &crate::codes::UNRESOLVED_REF,
            format!("tool `{tool}` is not declared in `logical.tools`"),
        )
        .at(ptr)
        .node(node);
        if let Some(s) = did_you_mean(tool, ids.iter().copied()) {
            d = d.hint(format!("did you mean `{s}`?"));
        }
        self.err(d);
    }
}
