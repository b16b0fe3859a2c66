//! MCP clients (issue 36): the servers of every graph's `logical.mcpServers`
//! and its tools of kind `mcp`, called through the runtime's package
//! `mcp` (svc.dev/runtime/mcp) on the official Go SDK. `internal/graph/mcp_servers.go`
//! lists them by registered name; the service opens a session to each
//! before it listens and checks that each offers the tools the graph
//! declares on it (graph.Start).

use svc_backend_sdk::ir::{Document, McpTransport, ToolKind};
use svc_backend_sdk::subgraphs::all_graphs;
use svc_backend_sdk::writer::CodeWriter;
use svc_backend_sdk::File;

use crate::golang::{quote, rt, RUNTIME_MCP};
use crate::nodes::tool_name;

/// `map[string]string{...}`, or nil when empty.
fn string_map(m: &std::collections::BTreeMap<String, String>) -> Option<String> {
    (!m.is_empty()).then(|| {
        format!(
            "map[string]string{{{}}}",
            m.iter()
                .map(|(k, v)| format!("{}: {}", quote(k), quote(v)))
                .collect::<Vec<_>>()
                .join(", ")
        )
    })
}

/// `internal/graph/mcp_servers.go`.
pub fn servers_file(doc: &Document) -> File {
    let mut w = CodeWriter::go();
    let mut servers = Vec::new();
    let mut tools = Vec::new();
    for (d, scope) in all_graphs(doc) {
        for s in &d.logical.mcp_servers {
            let mut fields = vec![format!("ID: {}", quote(&scope.name(&s.id)))];
            let timeout = match &s.transport {
                McpTransport::Stdio {
                    command,
                    args,
                    env,
                    timeout_ms,
                } => {
                    fields.push("Transport: \"stdio\"".into());
                    fields.push(format!("Command: {}", quote(command)));
                    if !args.is_empty() {
                        let args: Vec<String> = args.iter().map(|a| quote(a)).collect();
                        fields.push(format!("Args: []string{{{}}}", args.join(", ")));
                    }
                    if let Some(env) = string_map(env) {
                        fields.push(format!("Env: {env}"));
                    }
                    timeout_ms
                }
                McpTransport::Sse {
                    url,
                    timeout_ms,
                    headers,
                }
                | McpTransport::StreamableHttp {
                    url,
                    timeout_ms,
                    headers,
                } => {
                    fields.push(format!("Transport: {}", quote(s.transport.name())));
                    fields.push(format!("URL: {}", quote(url)));
                    if let Some(headers) = string_map(headers) {
                        fields.push(format!("Headers: {headers}"));
                    }
                    timeout_ms
                }
            };
            if let Some(ms) = timeout {
                fields.push(format!("Timeout: {}({ms})", rt(&mut w, "Millis")));
            }
            servers.push(format!("{{{}}},", fields.join(", ")));
        }
        for t in &d.logical.tools {
            if matches!(t.kind, ToolKind::Mcp { .. }) {
                tools.push(tool_name(&scope.name(&t.id)));
            }
        }
    }
    tools.sort();
    w.line("// mcpServers are the MCP servers of logical.mcpServers; their sessions open");
    w.line("// when the service starts.");
    let server = w.name(RUNTIME_MCP, "Server");
    w.block(format!("var mcpServers = []{server}{{"), "}", |w| {
        for s in &servers {
            w.line(s);
        }
    });
    w.blank();
    w.line("// mcpTools are the MCP tools of the graph, which their servers must list");
    w.line("// when the service starts.");
    let tool = w.name(RUNTIME_MCP, "Tool");
    w.line(format!("var mcpTools = []{tool}{{{}}}", tools.join(", ")));
    w.blank();
    w.line("// The servers and tools runs call (the runtime's mcp package).");
    w.block("func init() {", "}", |w| {
        let register = w.name(RUNTIME_MCP, "Register");
        w.line(format!("{register}(mcpServers, mcpTools)"));
    });
    File::text(
        "internal/graph/mcp_servers.go",
        w.finish_file("package graph\n\n"),
    )
}
