//! One file per tool: `internal/graph/tool_<id>.go`.

use svc_backend_sdk::ir::{Document, ToolKind};
use svc_backend_sdk::subgraphs::GraphScope;
use svc_backend_sdk::writer::CodeWriter;
use svc_backend_sdk::{Diagnostic, File};

use super::{go_file, place_body, signature, tool_name};
use crate::golang::{file_stem, quote, rt, RUNTIME_MCP};

/// The tools of the graph at `scope`, named by their registered names.
pub fn files(doc: &Document, scope: &GraphScope) -> Result<Vec<File>, Vec<Diagnostic>> {
    let mut out = Vec::new();
    let mut missing = Vec::new();
    for (i, t) in doc.logical.tools.iter().enumerate() {
        let name = scope.name(&t.id);
        let path = format!("internal/graph/{}.go", file_stem("tool", &name));
        let mut body = CodeWriter::go();
        match &t.kind {
            ToolKind::Native => {
                let Some(src) = doc.body("go", &t.id) else {
                    missing.push(
                        Diagnostic::error(
                            &svc_backend_sdk::ir::codes::MISSING_BODY,
                            format!("native tool `{}` has no go body", t.id),
                        )
                        .at(scope.at(&format!("/logical/tools/{i}"))),
                    );
                    continue;
                };
                body.line(format!(
                    "// {} is the native tool {}: state is the tool input, the returned State is its result.",
                    tool_name(&name),
                    quote(&name)
                ));
                let open = signature(&mut body, &tool_name(&name));
                body.block(open, "}", |w| place_body(w, src));
                out.push(go_file(path, body));
            }
            ToolKind::Http {
                endpoint,
                timeout_ms,
                headers,
            } => {
                let headers = if headers.is_empty() {
                    "nil".to_string()
                } else {
                    format!(
                        "map[string]string{{{}}}",
                        headers
                            .iter()
                            .map(|(k, v)| format!("{}: {}", quote(k), quote(v)))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                };
                body.line(format!(
                    "// {} is the HTTP registry tool {}.",
                    tool_name(&name),
                    quote(&name)
                ));
                let (tool, millis) = (rt(&mut body, "HTTPTool"), rt(&mut body, "Millis"));
                body.line(format!(
                    "var {} = {tool}{{ID: {}, Endpoint: {}, Timeout: {millis}({timeout_ms}), Headers: {headers}}}",
                    tool_name(&name),
                    quote(&name),
                    quote(endpoint)
                ));
                out.push(go_file(path, body));
            }
            ToolKind::Mcp { server, tool, .. } => {
                let server = scope.name(server);
                body.line(format!(
                    "// {} is the MCP tool {}: {} on the MCP server {}.",
                    tool_name(&name),
                    quote(&name),
                    quote(tool),
                    quote(&server)
                ));
                let mcp_tool = body.name(RUNTIME_MCP, "Tool");
                body.line(format!(
                    "var {} = {mcp_tool}{{Server: {}, Tool: {}}}",
                    tool_name(&name),
                    quote(&server),
                    quote(tool)
                ));
                out.push(go_file(path, body));
            }
        }
    }
    if missing.is_empty() {
        Ok(out)
    } else {
        Err(missing)
    }
}
