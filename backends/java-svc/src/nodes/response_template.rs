//! A response template: its text rendered over the state, as a chat
//! message when the output field holds messages.

use svc_backend_sdk::ir::{Document, TextWrite};
use svc_backend_sdk::writer::CodeWriter;

use super::{node_class, render, run_method};
use crate::java::{quote, runtime};
use crate::scope::Scope;

pub fn class(
    doc: &Document,
    scope: &Scope,
    class: &str,
    id: &str,
    template: &str,
    output_key: &str,
) -> String {
    let mut w = CodeWriter::java();
    let text = render(&mut w, template);
    let expr = match doc.state_field(output_key).and_then(|f| f.text_write()) {
        Some(TextWrite::Message) => {
            format!("{}.assistantMessage({text})", runtime(&mut w, "Text"))
        }
        _ => text,
    };
    node_class(
        w,
        scope,
        class,
        &format!("The response template {}.", quote(&scope.name(id))),
        &[],
        |w| {
            run_method(w, false, |w| {
                w.line(format!("return {expr};"));
            });
        },
    )
}
