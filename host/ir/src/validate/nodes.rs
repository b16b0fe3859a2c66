//! Each node: its kind's fields, templates, tool references, router
//! branches and conditions.

use std::collections::HashMap;

use serde_json::Value;

use crate::diag::{did_you_mean, Diagnostic};
use crate::model::*;

use super::ids::is_node_id;
use super::values::describe_type;
use super::values::value_matches;
use super::{Validator, TEXT_TARGETS};

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
                        "invalid-id",
                        format!("node id `{}` must match {NODE_ID_PATTERN}", n.id),
                    )
                    .at(format!("{ptr}/id"))
                    .hint("node ids become identifiers: letters, digits and `_`, starting with a letter"),
                );
            } else if let Some(first) = seen.insert(n.id.as_str(), i) {
                self.err(
                    Diagnostic::error(
                        "duplicate-id",
                        format!(
                            "node id `{}` is used twice (first at /logical/nodes/{first})",
                            n.id
                        ),
                    )
                    .at(format!("{ptr}/id"))
                    .node(&n.id),
                );
            }
            match &n.kind {
                NodeKind::Start => starts.push(i),
                NodeKind::End => ends += 1,
                _ => {}
            }
            self.node_fields(i, n);
        }
        if starts.len() != 1 {
            let mut d = Diagnostic::error(
                "start-count",
                format!(
                    "a graph has exactly one `start` node; found {}",
                    starts.len()
                ),
            );
            d = match starts.get(1) {
                Some(second) => d.at(Self::node_ptr(*second)),
                None => d
                    .at("/logical/nodes")
                    .hint("add { \"id\": \"start\", \"kind\": \"start\" }"),
            };
            self.err(d);
        }
        if ends == 0 {
            self.err(
                Diagnostic::error("no-end", "a graph needs at least one `end` node")
                    .at("/logical/nodes")
                    .hint("add { \"id\": \"end\", \"kind\": \"end\" } and an edge to it"),
            );
        }
    }

    pub(super) fn node_fields(&mut self, i: usize, n: &'a Node) {
        let ptr = Self::node_ptr(i);
        let id = Some(n.id.as_str());
        if let Some(key) = n.kind.output_key() {
            self.check_field_ref(key, format!("{ptr}/outputKey"), id, "outputKey");
        }
        match &n.kind {
            NodeKind::Llm(llm) => {
                if llm.model.is_none() && self.doc.logical.settings.model.is_none() {
                    self.err(
                        Diagnostic::error(
                            "missing-model",
                            format!("llm node `{}` names no model and `settings.model` is absent", n.id),
                        )
                        .at(&ptr)
                        .node(&n.id)
                        .hint("add \"model\": { \"provider\": \"openai\", \"name\": \"gpt-4o-mini\" } to the node or to `logical.settings`"),
                    );
                }
                if llm.prompt.user.trim().is_empty() {
                    self.err(
                        Diagnostic::error(
                            "empty-prompt",
                            format!("llm node `{}` has an empty user prompt", n.id),
                        )
                        .at(format!("{ptr}/prompt/user"))
                        .node(&n.id),
                    );
                }
                if let Some(system) = &llm.prompt.system {
                    self.check_template(system, format!("{ptr}/prompt/system"), &n.id);
                }
                self.check_template(&llm.prompt.user, format!("{ptr}/prompt/user"), &n.id);
                if let Some(f) = self.fields.get(llm.output_key.as_str()) {
                    let ok = match llm.output_shape {
                        OutputShape::Scalar => f.text_write().is_some(),
                        OutputShape::List => {
                            f.ty == FieldType::Array
                                && f.items.as_ref().is_none_or(|it| it.ty == FieldType::String)
                        }
                    };
                    if !ok {
                        let (shape, want) = match llm.output_shape {
                            OutputShape::Scalar => ("scalar", TEXT_TARGETS),
                            OutputShape::List => ("list", "an `array` field of strings"),
                        };
                        self.err(
                            Diagnostic::error(
                                "output-type",
                                format!(
                                    "llm node `{}` writes {shape} output to `{}`, {}; it needs {want}",
                                    n.id,
                                    f.name,
                                    f.describe()
                                ),
                            )
                            .at(format!("{ptr}/outputKey"))
                            .node(&n.id),
                        );
                    }
                }
                for (j, tool) in llm.bound_tool_ids.iter().enumerate() {
                    self.check_tool_ref(tool, format!("{ptr}/boundToolIds/{j}"), &n.id);
                }
            }
            NodeKind::Tool { tool_id, input, .. } => {
                self.check_tool_ref(tool_id, format!("{ptr}/toolId"), &n.id);
                for (k, v) in input {
                    if let Value::String(s) = v {
                        self.check_template(s, format!("{ptr}/input/{k}"), &n.id);
                    }
                }
            }
            NodeKind::ResponseTemplate {
                template,
                output_key,
            } => {
                self.check_template(template, format!("{ptr}/template"), &n.id);
                if let Some(f) = self.fields.get(output_key.as_str()) {
                    if f.text_write().is_none() {
                        self.err(
                            Diagnostic::error(
                                "output-type",
                                format!(
                                    "response_template `{}` writes text to `{}`, {}; it needs {TEXT_TARGETS}",
                                    n.id,
                                    f.name,
                                    f.describe()
                                ),
                            )
                            .at(format!("{ptr}/outputKey"))
                            .node(&n.id),
                        );
                    }
                }
            }
            NodeKind::Router { branches } => self.router(i, n, branches),
            _ => self.python_only_node(i, n),
        }
    }

    pub(super) fn check_template(&mut self, text: &str, ptr: String, node: &str) {
        for name in placeholders(text) {
            self.check_field_ref(name, ptr.clone(), Some(node), "placeholder");
        }
    }

    pub(super) fn check_tool_ref(&mut self, tool: &str, ptr: String, node: &str) {
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
            "unresolved-ref",
            format!("tool `{tool}` is not declared in `logical.tools`"),
        )
        .at(ptr)
        .node(node);
        if let Some(s) = did_you_mean(tool, ids.iter().copied()) {
            d = d.hint(format!("did you mean `{s}`?"));
        }
        self.err(d);
    }

    pub(super) fn router(&mut self, i: usize, n: &Node, branches: &'a [Branch]) {
        let ptr = Self::node_ptr(i);
        if branches.is_empty() {
            self.err(
                Diagnostic::error(
                    "router-default",
                    format!("router `{}` has no branches", n.id),
                )
                .at(format!("{ptr}/branches"))
                .node(&n.id)
                .hint("end the list with a default branch: { \"to\": \"<node id>\" }"),
            );
            return;
        }
        let last = branches.len() - 1;
        for (j, b) in branches.iter().enumerate() {
            let bptr = format!("{ptr}/branches/{j}");
            match (&b.when, j == last) {
                (Some(_), true) => self.err(
                    Diagnostic::error(
                        "router-default",
                        format!("the last branch of router `{}` has a condition; it must be the unconditional default", n.id),
                    )
                    .at(format!("{bptr}/when"))
                    .node(&n.id)
                    .hint("add a final branch without `when`"),
                ),
                (None, false) => self.err(
                    Diagnostic::error(
                        "router-default",
                        format!("branch {j} of router `{}` has no condition but is not last; branches after it could never run", n.id),
                    )
                    .at(bptr.clone())
                    .node(&n.id)
                    .hint("move the default branch to the end"),
                ),
                _ => {}
            }
            if let Some(c) = &b.when {
                self.condition(c, format!("{bptr}/when"), &n.id);
            }
        }
    }

    pub(super) fn condition(&mut self, c: &Condition, ptr: String, node: &str) {
        if !self.check_field_ref(
            &c.field,
            format!("{ptr}/field"),
            Some(node),
            "condition field",
        ) {
            return;
        }
        let Some(f) = self.fields.get(c.field.as_str()).copied() else {
            return;
        };
        let op = c.op.as_str();
        let scalar = matches!(
            f.ty,
            FieldType::String | FieldType::Integer | FieldType::Number | FieldType::Boolean
        );
        let fail = |msg: String, at: String| {
            Diagnostic::error("invalid-condition", msg)
                .at(at)
                .node(node)
        };
        if !c.op.takes_value() {
            if c.value.is_some() {
                self.err(fail(
                    format!("`{op}` takes no `value`"),
                    format!("{ptr}/value"),
                ));
            }
            return;
        }
        let Some(value) = &c.value else {
            self.err(fail(format!("`{op}` needs a `value` to compare with"), ptr));
            return;
        };
        if !scalar {
            self.err(fail(
                format!(
                    "`{op}` compares scalars; `{}` is `{}`",
                    f.name,
                    f.ty.as_str()
                ),
                format!("{ptr}/op"),
            ));
            return;
        }
        if c.op.is_ordering() && f.ty == FieldType::Boolean {
            self.err(fail(
                format!(
                    "`{op}` orders numbers or strings; `{}` is `boolean`",
                    f.name
                ),
                format!("{ptr}/op"),
            ));
            return;
        }
        let values: Vec<&Value> = match (c.op, value) {
            (Op::In, Value::Array(list)) => list.iter().collect(),
            (Op::In, _) => {
                self.err(fail(
                    "`in` needs a list `value`".into(),
                    format!("{ptr}/value"),
                ));
                return;
            }
            (_, v) => vec![v],
        };
        if values.iter().any(|v| !value_matches(f.ty, None, v)) {
            self.err(fail(
                format!(
                    "the `value` of this condition must be {} to compare with `{}`",
                    describe_type(f.ty, None),
                    f.name
                ),
                format!("{ptr}/value"),
            ));
        }
    }
}
