//! What every backend's generated README starts with and how it shows a
//! first request; each backend writes the rest of its own README.

use svc_ir::Document;

use crate::writer::CodeWriter;

/// A Markdown writer for a README, with its heading (the graph's name, else
/// its id) and the graph's description.
pub fn start(doc: &Document) -> CodeWriter {
    let mut w = CodeWriter::text("    ");
    let title = doc.name.as_deref().unwrap_or(&doc.id);
    w.line(format!("# {title}")).blank();
    if let Some(d) = &doc.description {
        w.lines(d).blank();
    }
    w
}

/// A shell block that checks `/health` and sends `body` to `/invoke` on
/// `port`, with `header` (a credential's `-H ...`, or "") on the request.
pub fn first_request(w: &mut CodeWriter, port: u16, header: &str, body: &str) {
    w.line("```sh")
        .line(format!("curl -s localhost:{port}/health"))
        .line(format!(
            "curl -s localhost:{port}/invoke -H 'Content-Type: application/json'{header} -d '{body}'"
        ))
        .line("```");
}
