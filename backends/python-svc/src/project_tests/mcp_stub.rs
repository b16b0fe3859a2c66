//! `tests/mcp_stub.py`, for a graph that names MCP tools.

use std::collections::{BTreeMap, BTreeSet};

use svc_backend_sdk::ir::{is_identifier, Document, NodeKind, ToolKind};
use svc_backend_sdk::writer::CodeWriter;

use crate::py::{ident, module_file, quote, suite, top_level_gap, write_expr, Expr};
use crate::scope::all_graphs;
use svc_backend_sdk::ir::ToolNode;

/// One MCP server (the SDK's `MCPServer`, over stdio) offering every MCP
/// tool the graph names, each answering with what it was called with, so
/// the project's tests run without the real servers.
pub(super) fn module(doc: &Document) -> Option<String> {
    // Each MCP tool name with the argument names tool nodes pass it.
    let mut tools: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for (d, _) in all_graphs(doc) {
        for t in &d.logical.tools {
            if let ToolKind::Mcp { tool, .. } = &t.kind {
                let params = tools.entry(tool.as_str()).or_default();
                for n in &d.logical.nodes {
                    if let NodeKind::Tool(ToolNode { tool_id, input, .. }) = &n.kind {
                        if *tool_id == t.id {
                            // Other keys are ignored by the stub's argument model.
                            params.extend(
                                input
                                    .keys()
                                    .map(String::as_str)
                                    .filter(|k| is_identifier(k) && ident(k) == *k),
                            );
                        }
                    }
                }
            }
        }
    }
    if tools.is_empty() {
        return None;
    }
    let mut w = CodeWriter::python();
    let server = w.name("mcp.server.mcpserver", "MCPServer");
    let any = w.name("typing", "Any");
    w.line(format!("stub = {server}(\"svc-test-stub\")"));
    for (i, (tool, params)) in tools.iter().enumerate() {
        top_level_gap(&mut w);
        w.line(format!("@stub.tool(name={})", quote(tool)));
        let signature: Vec<String> = params
            .iter()
            .map(|p| format!("{p}: {any} = None"))
            .collect();
        let arguments = Expr::Dict(
            params
                .iter()
                .map(|p| (quote(p), Expr::atom(p.to_string())))
                .collect(),
        );
        suite(
            &mut w,
            format!("def tool_{i}({}) -> dict:", signature.join(", ")),
            |w| {
                let reply = Expr::Dict(vec![
                    (quote("tool"), Expr::atom(quote(tool))),
                    (quote("arguments"), arguments),
                ]);
                write_expr(w, 1, "return ", &reply, "");
            },
        );
    }
    top_level_gap(&mut w);
    suite(&mut w, "if __name__ == \"__main__\":", |w| {
        w.line("stub.run(\"stdio\")");
    });
    Some(module_file(
        "A stand-in for the graph's MCP servers in the project's tests: every MCP tool answers with what it was called with.",
        w,
    ))
}
