//! `router`: picks the next node from its branches, each with a condition
//! on a state field (`when`) but the last, the default.

use serde_json::Value;

use super::fields::ReadValue;
use super::{Here, KindRules};
use crate::diag::Diagnostic;
use crate::json::Node as JNode;
use crate::model::{Document, FieldType};
use crate::read::Reader;
use crate::requirements::Requirement;
use crate::validate::{describe_type, value_matches, Validator};

crate::kind_fields! {
    /// A node that picks the next one; routers have no outgoing edges.
    pub struct RouterNode {
        branches: Vec<Branch> = required("branches"),
    }
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Branch {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub when: Option<Condition>,
    pub to: String,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Condition {
    pub field: String,
    pub op: Op,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<Value>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    Eq,
    Ne,
    Gt,
    Ge,
    Lt,
    Le,
    In,
    Exists,
    Truthy,
}

impl Op {
    pub const ALL: [Op; 9] = [
        Op::Eq,
        Op::Ne,
        Op::Gt,
        Op::Ge,
        Op::Lt,
        Op::Le,
        Op::In,
        Op::Exists,
        Op::Truthy,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Op::Eq => "eq",
            Op::Ne => "ne",
            Op::Gt => "gt",
            Op::Ge => "ge",
            Op::Lt => "lt",
            Op::Le => "le",
            Op::In => "in",
            Op::Exists => "exists",
            Op::Truthy => "truthy",
        }
    }

    /// Whether the operator compares against a `value`.
    pub fn takes_value(self) -> bool {
        !matches!(self, Op::Exists | Op::Truthy)
    }

    pub fn is_ordering(self) -> bool {
        matches!(self, Op::Gt | Op::Ge | Op::Lt | Op::Le)
    }
}

impl ReadValue for Branch {
    fn read(r: &mut Reader, n: &JNode, p: &str) -> Option<Self> {
        let mut o = r.object(n, p)?;
        let when = o.field("when").and_then(|(n, p)| {
            let mut c = r.object(n, &p)?;
            let w = "a condition";
            let field = r.req_str(&mut c, "field", w);
            let op = match c.field("op") {
                Some((on, op)) => {
                    let names: Vec<(&'static str, Op)> =
                        Op::ALL.iter().map(|o| (o.as_str(), *o)).collect();
                    r.enumerated(on, &op, "condition operator", &names)
                }
                None => {
                    r.missing(&c, "op", w);
                    None
                }
            };
            let value = c.field("value").map(|(n, _)| n.to_value());
            r.finish(c, w);
            Some(Condition {
                field,
                op: op?,
                value,
            })
        });
        let to = r.req_str(&mut o, "to", "a branch");
        r.finish(o, "a branch");
        Some(Branch { when, to })
    }
}

impl KindRules for RouterNode {
    fn validate<'a>(&'a self, v: &mut Validator<'a>, here: &Here<'a>) {
        let (at, id) = (here.at.as_str(), here.id);
        if self.branches.is_empty() {
            v.err(
                Diagnostic::error(&ROUTER_DEFAULT, format!("router `{}` has no branches", id))
                    .at(format!("{at}/branches"))
                    .node(id)
                    .hint("end the list with a default branch: { \"to\": \"<node id>\" }"),
            );
            return;
        }
        let last = self.branches.len() - 1;
        for (j, b) in self.branches.iter().enumerate() {
            let bptr = format!("{at}/branches/{j}");
            match (&b.when, j == last) {
                (Some(_), true) => v.err(
                    Diagnostic::error(
                        &ROUTER_DEFAULT,
                        format!("the last branch of router `{}` has a condition; it must be the unconditional default", id),
                    )
                    .at(format!("{bptr}/when"))
                    .node(id)
                    .hint("add a final branch without `when`"),
                ),
                (None, false) => v.err(
                    Diagnostic::error(
                        &ROUTER_DEFAULT,
                        format!("branch {j} of router `{}` has no condition but is not last; branches after it could never run", id),
                    )
                    .at(bptr.clone())
                    .node(id)
                    .hint("move the default branch to the end"),
                ),
                _ => {}
            }
            if let Some(c) = &b.when {
                condition(v, c, format!("{bptr}/when"), id);
            }
        }
    }

    /// Each condition needs its operator and its field's type.
    fn requirements(&self, doc: &Document, at: &str, out: &mut Vec<Requirement>) {
        for (j, b) in self.branches.iter().enumerate() {
            let Some(c) = &b.when else { continue };
            let cptr = format!("{at}/branches/{j}/when");
            out.push(Requirement::feature(
                &format!("router.op.{}", c.op.as_str()),
                format!("{cptr}/op"),
            ));
            if let Some(f) = doc.state_field(&c.field) {
                out.push(Requirement::feature(
                    &format!("router.field.{}", f.ty.as_str()),
                    format!("{cptr}/field"),
                ));
            }
        }
    }
}

fn condition(v: &mut Validator<'_>, c: &Condition, ptr: String, node: &str) {
    if !v.check_field_ref(
        &c.field,
        format!("{ptr}/field"),
        Some(node),
        "condition field",
    ) {
        return;
    }
    let Some(f) = v.field(&c.field) else {
        return;
    };
    let op = c.op.as_str();
    let scalar = matches!(
        f.ty,
        FieldType::String | FieldType::Integer | FieldType::Number | FieldType::Boolean
    );
    let fail =
        |msg: String, at: String| Diagnostic::error(&INVALID_CONDITION, msg).at(at).node(node);
    if !c.op.takes_value() {
        if c.value.is_some() {
            v.err(fail(
                format!("`{op}` takes no `value`"),
                format!("{ptr}/value"),
            ));
        }
        return;
    }
    let Some(value) = &c.value else {
        v.err(fail(format!("`{op}` needs a `value` to compare with"), ptr));
        return;
    };
    if !scalar {
        v.err(fail(
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
        v.err(fail(
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
            v.err(fail(
                "`in` needs a list `value`".into(),
                format!("{ptr}/value"),
            ));
            return;
        }
        (_, v) => vec![v],
    };
    if values.iter().any(|v| !value_matches(f.ty, None, v)) {
        v.err(fail(
            format!(
                "the `value` of this condition must be {} to compare with `{}`",
                describe_type(f.ty, None),
                f.name
            ),
            format!("{ptr}/value"),
        ));
    }
}

crate::diagnostic_codes! {
    /// A router branch's condition does not fit its operator or its field's type.
    ///
    /// A condition `{ "field", "op", "value" }` compares a state field. `exists` and `truthy` take no `value`; the others need one. Comparisons work on scalar fields (`string`, `integer`, `number`, `boolean`); ordering (`gt`, `ge`, `lt`, `le`) does not apply to booleans; `in` takes a list; and the value (or each list item) must have the field's type.
    ///
    /// Change the operator, the value, or compare another field.
    ///
    /// # Example
    ///
    /// `fixtures/invalid/condition_value_type.graph.json` (`count` is an `integer`):
    ///
    /// ```json
    /// "when": { "field": "count", "op": "gt", "value": "ten" }
    /// ```
    ///
    /// # Fix
    ///
    /// ```json
    /// "when": { "field": "count", "op": "gt", "value": 10 }
    /// ```
    pub INVALID_CONDITION = "invalid-condition", group "nodes";

    /// A router has no branches, lacks a final unconditional branch, or has one before the end.
    ///
    /// A router evaluates its `branches` in order and takes the first whose `when` holds. The last branch must be the unconditional default (no `when`), so that a run always has somewhere to go; a branch without `when` anywhere else would shadow every branch after it.
    ///
    /// End the list with `{ "to": "<node id>" }` and give every other branch a condition.
    ///
    /// # Example
    ///
    /// `fixtures/invalid/router_without_default.graph.json` (and `router_default_not_last.graph.json`):
    ///
    /// ```json
    /// "branches": [
    ///   { "when": { "field": "question", "op": "exists" }, "to": "end" }
    /// ]
    /// ```
    ///
    /// # Fix
    ///
    /// ```json
    /// "branches": [
    ///   { "when": { "field": "question", "op": "exists" }, "to": "end" },
    ///   { "to": "end" }
    /// ]
    /// ```
    pub ROUTER_DEFAULT = "router-default", group "nodes";
}
