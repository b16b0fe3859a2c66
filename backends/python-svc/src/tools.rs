//! `<scope>/tools/`: one module per entry of `logical.tools`, each
//! registering the tool with the SDK, so tool nodes, LLM nodes and agents
//! call it by its registered name. Native tools define `tool(state)`, HTTP
//! and MCP tools a `TOOL` definition.

use std::collections::BTreeMap;

use svc_backend_sdk::ir::{Document, ToolKind};
use svc_backend_sdk::writer::CodeWriter;
use svc_backend_sdk::{Diagnostic, File};

use crate::py::{
    indent_body, module, module_file, package_init, quote, suite, write_expr, Expr, RUNTIME,
};
use crate::scope::Scope;

/// The modules of `<scope>/tools/` and its `__init__.py`.
pub fn files(doc: &Document, scope: &Scope) -> Result<Vec<File>, Vec<Diagnostic>> {
    let mut out = Vec::new();
    let mut missing = Vec::new();
    let mut modules = Vec::new();
    for (i, t) in doc.logical.tools.iter().enumerate() {
        let m = module(&t.id);
        let name = scope.name(&t.id);
        let description = t.description.as_deref();
        let text = match &t.kind {
            ToolKind::Native => {
                let Some(body) = doc.body("python-svc", &t.id) else {
                    missing.push(
                        Diagnostic::error(
                            &svc_backend_sdk::ir::codes::MISSING_BODY,
                            format!("native tool `{}` has no python-svc body", t.id),
                        )
                        .at(scope.at(&format!("/logical/tools/{i}"))),
                    );
                    continue;
                };
                native_module(&name, description, body)
            }
            ToolKind::Http {
                endpoint,
                timeout_ms,
                headers,
            } => http_module(&name, description, endpoint, *timeout_ms, headers),
            ToolKind::Mcp { server, tool, .. } => {
                mcp_module(&name, &scope.name(server), tool, description)
            }
        };
        modules.push(m.clone());
        out.push(File::text(format!("{}/tools/{m}.py", scope.dir), text));
    }
    out.push(File::text(
        format!("{}/tools/__init__.py", scope.dir),
        package_init("The tools of the graph, one module each.", &modules),
    ));
    if missing.is_empty() {
        Ok(out)
    } else {
        Err(missing)
    }
}

/// `@tool("id", arguments="object", ...)`: the model's arguments arrive as
/// the one `state` dict, as a tool node's input does.
fn tool_decorator(w: &mut CodeWriter, id: &str, description: Option<&str>) -> Expr {
    let mut args = vec![
        Expr::atom(quote(id)),
        Expr::kw("arguments", Expr::atom(quote("object"))),
    ];
    if let Some(d) = description {
        args.push(Expr::kw("description", Expr::atom(quote(d))));
    }
    Expr::call(w.name("svc", "tool"), args)
}

fn native_module(id: &str, description: Option<&str>, body: &str) -> String {
    let mut w = CodeWriter::python();
    let decorator = tool_decorator(&mut w, id, description);
    write_expr(&mut w, 0, "@", &decorator, "");
    let any = w.name("typing", "Any");
    suite(&mut w, format!("def tool(state: dict) -> {any}:"), |w| {
        w.lines(&indent_body(body, 0));
    });
    module_file(
        &format!("The native tool `{id}`: `state` is the tool input, the return value its result."),
        w,
    )
}

fn http_module(
    id: &str,
    description: Option<&str>,
    endpoint: &str,
    timeout_ms: u64,
    headers: &BTreeMap<String, String>,
) -> String {
    let mut w = CodeWriter::python();
    let mut args = vec![
        Expr::atom(quote(endpoint)),
        Expr::kw("timeout_ms", Expr::atom(timeout_ms.to_string())),
    ];
    if !headers.is_empty() {
        args.push(Expr::kw(
            "headers",
            Expr::Dict(
                headers
                    .iter()
                    .map(|(k, v)| (quote(k), Expr::atom(quote(v))))
                    .collect(),
            ),
        ));
    }
    let tool = Expr::call(w.name(RUNTIME, "HttpTool"), args);
    // Registered, so agents and LLM nodes can call it too.
    let mut register = vec![Expr::atom(quote(id)), tool];
    if let Some(d) = description {
        register.push(Expr::kw("description", Expr::atom(quote(d))));
    }
    let registered = Expr::call(w.name(RUNTIME, "register_http_tool"), register);
    write_expr(&mut w, 0, "TOOL = ", &registered, "");
    module_file(
        &format!("The HTTP registry tool `{id}`: its input is POSTed as JSON."),
        w,
    )
}

/// An MCP tool: registered so agents and LLM nodes can call it, and so the
/// service checks at start-up that its server offers it.
fn mcp_module(id: &str, server: &str, tool: &str, description: Option<&str>) -> String {
    let mut w = CodeWriter::python();
    let mut args = vec![
        Expr::atom(quote(id)),
        Expr::atom(quote(server)),
        Expr::atom(quote(tool)),
    ];
    if let Some(d) = description {
        args.push(Expr::kw("description", Expr::atom(quote(d))));
    }
    let register = Expr::call(w.name("svc.mcp_client", "register_mcp_tool"), args);
    write_expr(&mut w, 0, "TOOL = ", &register, "");
    module_file(
        &format!("The MCP tool `{id}`: `{tool}` on the MCP server `{server}`."),
        w,
    )
}
