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
    w.line("// fillFields fills {{field}} placeholders as templates do.");
    w.block(
        "func fillFields(template string, state State) string {",
        "}",
        |w| {
            w.line(format!("return {fill}(template, state)"));
        },
    );
    w.blank();
    let text = rt(&mut w, "Text");
    w.line("// text renders a state value as templates do.");
    w.block("func text(v any) string {", "}", |w| {
        w.line(format!("return {text}(v)"));
    });
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
    w.line("// upstreamError is the node's upstream_error for reason.");
    w.block(
        "func upstreamError(node, reason, message string) *Error {",
        "}",
        |w| {
            w.line(format!("return {upstream_error}(node, reason, message)"));
        },
    );
    if upstream {
        let max = rt(&mut w, "MaxUpstreamBytes");
        w.blank()
            .line("// MaxUpstreamBytes is the most of a reply the client reads.")
            .line(format!("const MaxUpstreamBytes = {max}"));
        let resolve = rt(&mut w, "ResolveURL");
        w.blank()
            .line("// resolveURL is raw with env:NAME read and {{field}} filled.");
        w.block(
            "func resolveURL(node, service, raw string, state State) (string, error) {",
            "}",
            |w| {
                w.line(format!("return {resolve}(node, service, raw, state)"));
            },
        );
        w.blank();
        let call = rt(&mut w, "UpstreamCall");
        let context = w.name("context", "Context");
        w.line("// upstreamCall is one call of the HTTP client of HTTP tools and models.")
            .line(format!("type upstreamCall {call}"))
            .blank()
            .line("// post sends the call; every failure is an upstream_error.");
        w.block(
            format!("func (c upstreamCall) post(ctx {context}) (any, error) {{"),
            "}",
            |w| {
                w.line(format!("return {call}(c).Post(ctx)"));
            },
        );
    }
    File::text(
        "internal/graph/connectors.go",
        w.finish_file("package graph\n\n"),
    )
}
