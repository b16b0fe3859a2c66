//! `<scope>/mcp/`: the MCP servers of `logical.mcpServers`, registered
//! with the SDK's client (sessions open at start-up); MCP tools name them.

use std::collections::BTreeMap;

use svc_backend_sdk::ir::{Document, McpTransport};
use svc_backend_sdk::writer::CodeWriter;
use svc_backend_sdk::File;

use crate::py::{module_file, package_init, quote, write_expr, Expr};
use crate::scope::Scope;

/// `<scope>/mcp/servers.py` and the package's `__init__.py`, when the
/// graph names MCP servers (`project.rs` writes the root's `app/mcp/`
/// empty otherwise).
pub fn files(doc: &Document, scope: &Scope) -> Vec<File> {
    if doc.logical.mcp_servers.is_empty() {
        return Vec::new();
    }
    vec![
        File::text(
            format!("{}/mcp/servers.py", scope.dir),
            servers_module(doc, scope),
        ),
        File::text(
            format!("{}/mcp/__init__.py", scope.dir),
            package_init("MCP servers and clients.", &["servers".to_string()]),
        ),
    ]
}

/// `<scope>/mcp/servers.py`: each server registered with the SDK's client.
fn servers_module(doc: &Document, scope: &Scope) -> String {
    let mut w = CodeWriter::python();
    for s in &doc.logical.mcp_servers {
        let mut args = vec![
            Expr::atom(quote(&scope.name(&s.id))),
            Expr::atom(quote(s.transport.name())),
        ];
        let strings = |m: &BTreeMap<String, String>| {
            Expr::Dict(
                m.iter()
                    .map(|(k, v)| (quote(k), Expr::atom(quote(v))))
                    .collect(),
            )
        };
        let timeout = match &s.transport {
            McpTransport::Stdio {
                command,
                args: argv,
                env,
                timeout_ms,
            } => {
                args.push(Expr::kw("command", Expr::atom(quote(command))));
                if !argv.is_empty() {
                    let items = argv.iter().map(|a| Expr::atom(quote(a))).collect();
                    args.push(Expr::kw("args", Expr::Tuple(items)));
                }
                if !env.is_empty() {
                    args.push(Expr::kw("env", strings(env)));
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
                args.push(Expr::kw("url", Expr::atom(quote(url))));
                if !headers.is_empty() {
                    args.push(Expr::kw("headers", strings(headers)));
                }
                timeout_ms
            }
        };
        if let Some(t) = timeout {
            args.push(Expr::kw("timeout_ms", Expr::atom(t.to_string())));
        }
        let server = Expr::call(w.name("svc.mcp_client", "McpServer"), args);
        let register = Expr::call(
            w.name("svc.mcp_client", "register_mcp_server"),
            vec![server],
        );
        write_expr(&mut w, 0, "", &register, "");
    }
    module_file(
        "The MCP servers of the graph; their sessions open when the service starts.",
        w,
    )
}
