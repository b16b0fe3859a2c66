//! A hitl node: its class renders the payload a person is shown when the
//! run pauses there (`GraphRun.hitl`, which throws the Interrupt that
//! ThreadRun keeps); on the resumed run the step writes the person's value,
//! checked against `outputKey`'s type, instead.

use svc_backend_sdk::ir::HitlNode;
use svc_backend_sdk::writer::CodeWriter;
use svc_backend_sdk::Diagnostic;

use super::tool::input_value;
use super::{node_class, run_method};
use crate::java::{quote, runtime};
use crate::scope::Scope;

pub fn class(scope: &Scope, class: &str, id: &str, h: &HitlNode) -> Result<String, Diagnostic> {
    if !scope.is_root() {
        return Err(Diagnostic::error(
            &svc_backend_sdk::ir::codes::UNSUPPORTED,
            format!(
                "hitl node `{id}` is inside a subgraph; java-svc pauses and resumes the document's own graph only"
            ),
        )
        .node(id)
        .hint("move the hitl node into the parent graph"));
    }
    let mut w = CodeWriter::java();
    let values = runtime(&mut w, "Values");
    // As a tool's input: a lone `{{field}}` keeps the field's value and type.
    let entries: Vec<String> = h
        .payload
        .iter()
        .map(|(k, v)| format!("{}, {}", quote(k), input_value(&mut w, v)))
        .collect();
    Ok(node_class(
        w,
        scope,
        class,
        &format!(
            "The hitl node {}: the payload a person is shown when the run pauses there for a value of {}.",
            quote(id),
            quote(&h.output_key)
        ),
        &[],
        |w| {
            run_method(w, false, |w| {
                w.line(format!("return {values}.map({});", entries.join(", ")));
            });
        },
    ))
}
