//! `internal/graph/connectors.go`: what connector code calls of the runtime
//! (marketplace/README.md, "Runtime helpers"), under the names connectors
//! are written against, each delegating to the runtime's exported one. A
//! connector's code sits in the project's own package, beside the graph,
//! and packs built for svc 0.1 call these names.

use svc_backend_sdk::writer::CodeWriter;
use svc_backend_sdk::File;

use crate::golang::rt;

/// The delegates; `upstream` adds the HTTP client's (`svc-runtime:upstream`).
pub fn delegates(upstream: bool) -> File {
    let mut w = CodeWriter::go();
    w.line("// Connector code calls the runtime by the names marketplace/README.md gives it")
        .line("// (\"Runtime helpers\"); each delegates to the runtime's own.")
        .blank();
    let fill = rt(&mut w, "FillFields");
    delegate(
        &mut w,
        "fillFields fills {{field}} placeholders as templates do.",
        "fillFields(template string, state State) string",
        format!("{fill}(template, state)"),
    );
    w.blank();
    let text = rt(&mut w, "Text");
    delegate(
        &mut w,
        "text renders a state value as templates do.",
        "text(v any) string",
        format!("{text}(v)"),
    );
    w.blank();
    let error = rt(&mut w, "Error");
    w.line("// Error is the runtime's contract error: its code, message and details.")
        .line(format!("type Error = {error}"))
        .blank();
    w.line("// The reasons of an upstream_error.");
    w.block("const (", ")", |w| {
        let reasons = [
            "ReasonTimeout",
            "ReasonStatus",
            "ReasonInvalidJSON",
            "ReasonTooLarge",
            "ReasonConnect",
        ];
        // Aligned as gofmt aligns them.
        let width = reasons.iter().map(|r| r.len()).max().unwrap_or(0);
        for name in reasons {
            let value = rt(w, name);
            w.line(format!("{name:<width$} = {value}"));
        }
    });
    w.blank();
    let upstream_error = rt(&mut w, "UpstreamError");
    delegate(
        &mut w,
        "upstreamError is the node's upstream_error for reason.",
        "upstreamError(node, reason, message string) *Error",
        format!("{upstream_error}(node, reason, message)"),
    );
    if upstream {
        let max = rt(&mut w, "MaxUpstreamBytes");
        w.blank()
            .line("// MaxUpstreamBytes is the most of a reply the client reads.")
            .line(format!("const MaxUpstreamBytes = {max}"))
            .blank();
        let resolve = rt(&mut w, "ResolveURL");
        delegate(
            &mut w,
            "resolveURL is raw with env:NAME read and {{field}} filled.",
            "resolveURL(node, service, raw string, state State) (string, error)",
            format!("{resolve}(node, service, raw, state)"),
        );
        w.blank();
        let call = rt(&mut w, "UpstreamCall");
        let context = w.name("context", "Context");
        w.line("// upstreamCall is one call of the HTTP client of HTTP tools and models.")
            .line(format!("type upstreamCall {call}"))
            .blank();
        delegate(
            &mut w,
            "post sends the call; every failure is an upstream_error.",
            &format!("(c upstreamCall) post(ctx {context}) (any, error)"),
            format!("{call}(c).Post(ctx)"),
        );
    }
    File::text(
        "internal/graph/connectors.go",
        w.finish_file("package graph\n\n"),
    )
}

/// `func <signature>` returning `call`, under its doc comment.
fn delegate(w: &mut CodeWriter, comment: &str, signature: &str, call: String) {
    w.line(format!("// {comment}"));
    w.block(format!("func {signature} {{"), "}", |w| {
        w.line(format!("return {call}"));
    });
}
