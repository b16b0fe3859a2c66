//! `subgraph`: a child graph run in its own state. An embedded child is
//! validated like a top-level document (its diagnostics point into the
//! parent at `/logical/nodes/<i>/graph/...`), and the `input` and `output`
//! mappings are checked against both states. A child given by path is read
//! by the host, which then runs [`subgraph_child_checks`] itself.

use std::collections::BTreeMap;

use super::fields::ReadValue;
use super::{Here, KindRules};
use crate::diag::{did_you_mean, Diagnostic};
use crate::json::{Json, Node as JNode};
use crate::model::{Document, NodeKind, Security, Settings};
use crate::read::Reader;
use crate::requirements::{requirements, Category, Requirement};
use crate::validate::{validate, Validator};

crate::kind_fields! {
    /// A child graph run in its own state.
    pub struct SubgraphNode {
        /// An embedded IR document, or a path (relative to this document) of one.
        /// The host reads a path and embeds the child before any backend sees it.
        graph: SubgraphRef = required("graph"),
        /// `{ child field: parent field }`: the child's initial state.
        #[schemars(default)]
        input: BTreeMap<String, String> = or_empty("input"),
        /// `{ parent field: child field }`: what is copied back.
        #[schemars(default)]
        output: BTreeMap<String, String> = or_empty("output"),
    }
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum SubgraphRef {
    Path(String),
    /// The child document (validated like a top-level one).
    Embedded(Box<Document>),
}

/// What an unreadable `graph` becomes (its problem already reported).
impl Default for SubgraphRef {
    fn default() -> Self {
        SubgraphRef::Path(String::new())
    }
}

impl ReadValue for SubgraphRef {
    fn read(r: &mut Reader, n: &JNode, p: &str) -> Option<Self> {
        match &n.value {
            Json::String(path) => Some(SubgraphRef::Path(path.clone())),
            Json::Object(_) => r
                .document_at(n, p)
                .map(|child| SubgraphRef::Embedded(Box::new(child))),
            _ => {
                r.type_error(p, "an embedded document or a path", n);
                None
            }
        }
    }
}

impl KindRules for SubgraphNode {
    fn validate<'a>(&'a self, v: &mut Validator<'a>, here: &Here<'a>) {
        let (at, id) = (here.at.as_str(), here.id);
        let parents = self
            .input
            .iter()
            .map(|(child, parent)| (format!("{at}/input/{child}"), parent))
            .chain(
                self.output
                    .keys()
                    .map(|parent| (format!("{at}/output/{parent}"), parent)),
            );
        for (ptr, parent) in parents {
            v.check_field_ref(parent, ptr, Some(id), "parent field");
        }
        let SubgraphRef::Embedded(child) = &self.graph else {
            return;
        };
        let prefix = format!("{at}/graph");
        for mut d in validate(child) {
            d.pointer = Some(format!("{prefix}{}", d.pointer.as_deref().unwrap_or("")));
            d.node.get_or_insert_with(|| id.to_string());
            v.err(d);
        }
        for d in subgraph_child_checks(v.doc(), here.index) {
            v.err(d);
        }
    }

    /// A child graph needs what it uses, found at its place in the parent.
    fn requirements(&self, _doc: &Document, at: &str, out: &mut Vec<Requirement>) {
        let SubgraphRef::Embedded(child) = &self.graph else {
            return;
        };
        for mut r in requirements(child) {
            if r.category == Category::Auth {
                continue;
            }
            r.pointer = format!("{at}/graph{}", r.pointer);
            out.push(r);
        }
    }
}

/// The child of the subgraph node at `index` (embedded) against its parent:
/// `input` and `output` against both states (every field exists, the types
/// match, every required child field is given), and the child's settings,
/// of which only `maxSteps` and `model` apply to a child.
pub fn subgraph_child_checks(parent: &Document, index: usize) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let Some(n) = parent.logical.nodes.get(index) else {
        return out;
    };
    let NodeKind::Subgraph(s) = &n.kind else {
        return out;
    };
    let SubgraphRef::Embedded(child) = &s.graph else {
        return out;
    };
    let ptr = format!("/logical/nodes/{index}");
    let child_names: Vec<&str> = child
        .logical
        .state
        .iter()
        .map(|f| f.name.as_str())
        .collect();
    let mut pair = |child_field: &str, parent_field: &str, at: String, into_child: bool| {
        let Some(c) = child.state_field(child_field) else {
            let mut d = Diagnostic::error(
                &crate::codes::UNKNOWN_STATE_FIELD,
                format!(
                    "`{child_field}` is not a state field of the subgraph `{}`",
                    child.id
                ),
            )
            .at(at)
            .node(&n.id);
            if let Some(s) = did_you_mean(child_field, child_names.iter().copied()) {
                d = d.hint(format!("did you mean `{s}`?"));
            }
            out.push(d);
            return;
        };
        // The parent field's existence is checked with the node's fields.
        let Some(p) = parent.state_field(parent_field) else {
            return;
        };
        if c.ty != p.ty || c.items != p.items {
            let (from, to) = if into_child { (p, c) } else { (c, p) };
            out.push(
                Diagnostic::error(
                    &SUBGRAPH_TYPE,
                    format!(
                        "subgraph `{}` copies `{}` ({}) into `{}` ({}); the types must match",
                        n.id,
                        from.name,
                        from.describe(),
                        to.name,
                        to.describe()
                    ),
                )
                .at(at)
                .node(&n.id)
                .hint("map fields of the same type, or change one of the declarations"),
            );
        }
    };
    for (child_field, parent_field) in &s.input {
        pair(
            child_field,
            parent_field,
            format!("{ptr}/input/{child_field}"),
            true,
        );
    }
    for (parent_field, child_field) in &s.output {
        pair(
            child_field,
            parent_field,
            format!("{ptr}/output/{parent_field}"),
            false,
        );
    }
    for f in &child.logical.state {
        if f.required && !s.input.contains_key(&f.name) {
            out.push(
                Diagnostic::error(
                    &SUBGRAPH_TYPE,
                    format!(
                        "the subgraph `{}` requires `{}`, which `input` does not give it",
                        child.id, f.name
                    ),
                )
                .at(format!("{ptr}/input"))
                .node(&n.id)
                .hint(format!("add \"{}\": \"<parent field>\" to `input`", f.name)),
            );
        }
    }
    out.extend(child_settings(child, &ptr, &n.id));
    out
}

/// The settings of a child that its parent's run decides: a child runs
/// inside the parent's request (its deadline, server, logs, traces, thread,
/// stream and credentials), so a child's own value would be ignored.
pub(crate) fn child_settings(child: &Document, at: &str, node: &str) -> Vec<Diagnostic> {
    let d = Settings::default();
    // Every field named, so a new setting must be decided on here.
    let Settings {
        max_steps: _,
        model: _,
        budget,
        request_timeout_ms,
        server,
        logging,
        tracing,
        checkpointer,
        streaming,
        mcp,
        a2a,
    } = &child.logical.settings;
    let security = child.security != Security::default();
    let given = [
        (
            "requestTimeoutMs",
            *request_timeout_ms != d.request_timeout_ms,
        ),
        ("server", *server != d.server),
        // The run's budget is the parent's: its count covers the child's calls.
        ("budget", *budget != d.budget),
        ("logging", *logging != d.logging),
        ("tracing", *tracing != d.tracing),
        // A child's `hitl` needs a checkpointer of its own to validate, and
        // every backend then refuses the `hitl` itself, by name.
        (
            "checkpointer",
            *checkpointer != d.checkpointer
                && !child
                    .logical
                    .nodes
                    .iter()
                    .any(|n| matches!(n.kind, NodeKind::Hitl(_))),
        ),
        ("streaming", *streaming != d.streaming),
        ("mcp", *mcp != d.mcp),
        ("a2a", *a2a != d.a2a),
    ];
    let mut out: Vec<Diagnostic> = given
        .iter()
        .filter(|(_, differs)| *differs)
        .map(|(key, _)| {
            Diagnostic::error(
                &crate::codes::INVALID_VALUE,
                format!("the subgraph `{}` sets `settings.{key}`, which a child cannot use: it runs under its parent's", child.id),
            )
            .at(format!("{at}/graph/logical/settings/{key}"))
            .node(node)
            .hint(format!("remove `{key}` from the child's settings (only `maxSteps` and `model` apply to a subgraph), or set it on the parent"))
        })
        .collect();
    if security {
        out.push(
            Diagnostic::error(
                &crate::codes::INVALID_VALUE,
                format!("the subgraph `{}` sets `security`, which a child cannot use: the parent's request is already authenticated", child.id),
            )
            .at(format!("{at}/graph/security"))
            .node(node)
            .hint("remove `security` from the child"),
        );
    }
    out
}

crate::diagnostic_codes! {
    /// A subgraph's `input` or `output` copies between fields of different types, or leaves a required child field out.
    ///
    /// A `subgraph` node runs its child graph on a fresh state built from `input` (`{ child field: parent field }`) and copies fields back with `output` (`{ parent field: child field }`). Values are copied as they are, so both sides of each pair must have the same type (and the same item type for arrays), and every field the child declares `required` must be given by `input`. The check runs at compile time, for embedded children and for children read from a path.
    ///
    /// Map fields of the same type, or change a declaration.
    ///
    /// # Example
    ///
    /// `fixtures/invalid/subgraph_type_mismatch.graph.json`:
    ///
    /// ```json
    /// { "id": "inner", "kind": "subgraph", "graph": { ... "state": [ { "name": "count", "type": "integer", "required": true } ] ... },
    ///   "input": { "count": "question" } }
    /// ```
    ///
    /// # Fix
    ///
    /// ```json
    /// { "id": "inner", "kind": "subgraph", "graph": { ... "state": [ { "name": "count", "type": "integer", "required": true } ] ... },
    ///   "input": { "count": "attempts" } }
    /// ```
    pub SUBGRAPH_TYPE = "subgraph-type", group "nodes";
}
