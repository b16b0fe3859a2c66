//! The `client` fixture of `tests/test_service.py`: the service's own
//! credential and checkpointer, every upstream pointed at its stand-in
//! (see `upstream.rs`), then FastAPI's TestClient.

use svc_backend_sdk::ir::{Auth, CheckpointerKind, Document};
use svc_backend_sdk::writer::CodeWriter;

use super::upstream::Upstreams;
use crate::py::{module, quote, suite, top_level_gap, write_expr, Expr};

pub(super) fn client(w: &mut CodeWriter, doc: &Document, u: &Upstreams) {
    top_level_gap(w);
    let pytest = "pytest";
    w.import(pytest);
    w.line(format!("@{pytest}.fixture"));
    let checkpointer = &doc.logical.settings.checkpointer;
    let signature = match checkpointer.kind {
        CheckpointerKind::Sqlite => "def client(monkeypatch, tmp_path):",
        _ => "def client(monkeypatch):",
    };
    suite(w, signature, |w| {
        if doc.security.auth != Auth::None {
            w.line(format!(
                "monkeypatch.setenv({}, KEY)",
                quote(&doc.security.key_env)
            ));
        }
        // The A2A callers' tokens (settings.a2a.tokens), one of its own each:
        // the service does not start without them.
        for (i, t) in doc.logical.settings.a2a.tokens.iter().enumerate() {
            w.line(format!(
                "monkeypatch.setenv({}, {})",
                quote(&t.token_env),
                quote(&format!("a2a-test-token-{i}"))
            ));
        }
        match (checkpointer.kind, checkpointer.env()) {
            // Each test gets a database file of its own.
            (CheckpointerKind::Sqlite, Some(env)) => {
                w.line(format!(
                    "monkeypatch.setenv({}, str(tmp_path / \"threads.db\"))",
                    quote(env)
                ));
            }
            // A PostgreSQL server is the tester's to give.
            (CheckpointerKind::Postgres, Some(env)) => {
                let os = "os";
                w.import(os);
                let why = format!(
                    "{env} is not set: point it at a PostgreSQL database to run the service's tests"
                );
                let skip = Expr::call(format!("{pytest}.skip"), vec![Expr::atom(quote(&why))]);
                suite(
                    w,
                    format!("if not {os}.environ.get({}):", quote(env)),
                    |w| {
                        write_expr(w, 2, "", &skip, "");
                    },
                );
            }
            _ => {}
        }
        // Stand-ins replace registered agents' URLs and MCP servers: the
        // project registers them on import, so import it first.
        let literal_url = |url: Option<&str>| url.is_some_and(|u| !u.starts_with("env:"));
        if !u.mcp_servers.is_empty()
            || u.remotes.iter().any(|(_, _, url, _)| literal_url(*url))
            || u.a2a_agents
                .iter()
                .any(|(_, card, _)| literal_url(Some(card)))
        {
            w.import("importlib");
            w.line("importlib.import_module(\"app\")");
        }
        if u.served() {
            let server = w.name("http.server", "ThreadingHTTPServer");
            w.line(format!("server = {server}((\"127.0.0.1\", 0), Upstream)"));
            w.line(
                "serve = {\"target\": server.serve_forever, \"kwargs\": {\"poll_interval\": 0.05}}",
            );
            w.import("threading");
            w.line("threading.Thread(**serve, daemon=True).start()");
            w.line("base = f\"http://127.0.0.1:{server.server_port}\"");
            for var in &u.embedding_envs {
                if u.models.iter().any(|(url, _, _)| url == var) {
                    continue;
                }
                w.line(format!(
                    "monkeypatch.setenv({}, base + \"/v1\")",
                    quote(var)
                ));
            }
            for (id, service, url, _) in &u.remotes {
                let path = quote(&format!("/remote/{id}"));
                let (url_env, key_env) =
                    svc_backend_sdk::environment::remote_service_env(service, *url);
                match url {
                    Some(u) if !u.starts_with("env:") => {
                        let get = w.name("svc.registry", "get");
                        w.line(format!(
                            "monkeypatch.setitem({get}(\"agents\", {}).meta, \"url\", base + {path})",
                            quote(id)
                        ));
                    }
                    _ => {
                        w.line(format!(
                            "monkeypatch.setenv({}, base + {path})",
                            quote(&url_env)
                        ));
                    }
                }
                w.line(format!(
                    "monkeypatch.setenv({}, \"stub-key\")",
                    quote(&key_env)
                ));
            }
            for (url, key, path) in &u.models {
                w.line(format!(
                    "monkeypatch.setenv({}, base + {})",
                    quote(url),
                    quote(path)
                ));
                w.line(format!("monkeypatch.setenv({}, \"stub-key\")", quote(key)));
            }
            for (_, scope, id, endpoint) in &u.http {
                let path = quote(&format!("/tools/{}", scope.name(id)));
                match endpoint.strip_prefix("env:") {
                    Some(var) => {
                        w.line(format!("monkeypatch.setenv({}, base + {path})", quote(var)));
                    }
                    None => {
                        let replace = w.name("dataclasses", "replace");
                        let tool = format!("{}.{}", w.name(&scope.package, "tools"), module(id));
                        w.line(format!(
                            "stub_tool = {replace}({tool}.TOOL, endpoint=base + {path})"
                        ));
                        w.line(format!("monkeypatch.setattr({tool}, \"TOOL\", stub_tool)"));
                        // Agents call the registered tool: point it at the stub too.
                        let register = w.name("svc.runtime", "register_http_tool");
                        w.line(format!("{register}({}, stub_tool)", quote(&scope.name(id))));
                    }
                }
            }
        }
        if !u.a2a_agents.is_empty() {
            // Every A2A agent's card is the stand-in's (tests/a2a_stub.py).
            let start = w.name("a2a_stub", "start");
            w.line(format!("a2a_base, a2a_stop = {start}()"));
            for (id, card_url, service) in &u.a2a_agents {
                match card_url.strip_prefix("env:") {
                    Some(var) => {
                        w.line(format!("monkeypatch.setenv({}, a2a_base)", quote(var)));
                    }
                    None => {
                        let get = w.name("svc.registry", "get");
                        w.line(format!(
                            "monkeypatch.setitem({get}(\"agents\", {}).meta, \"agent_card_url\", a2a_base)",
                            quote(id)
                        ));
                    }
                }
                if let Some(service) = service {
                    let (_, key_env) =
                        svc_backend_sdk::environment::remote_service_env(service, None);
                    w.line(format!(
                        "monkeypatch.setenv({}, \"stub-key\")",
                        quote(&key_env)
                    ));
                }
            }
        }
        // `env:NAME` values of connector configs point at the stub.
        for (node, var) in &u.connector_env {
            w.line(format!(
                "monkeypatch.setenv({}, base + {})",
                quote(var),
                quote(&format!("/connectors/{node}"))
            ));
        }
        if !u.mcp_servers.is_empty() {
            // Every MCP server becomes tests/mcp_stub.py over stdio, started by
            // the service like the real one; the project registers its
            // servers on import, so the stubs replace them afterwards.
            let server = w.name("svc.mcp_client", "McpServer");
            let register = w.name("svc.mcp_client", "register_mcp_server");
            let sys = "sys";
            w.import(sys);
            w.line("stub = str(ROOT / \"tests\" / \"mcp_stub.py\")");
            for id in &u.mcp_servers {
                let stand_in = Expr::call(
                    server.clone(),
                    vec![
                        Expr::atom(quote(id)),
                        Expr::atom("\"stdio\""),
                        Expr::kw("command", Expr::atom(format!("{sys}.executable"))),
                        Expr::kw("args", Expr::atom("(stub,)")),
                    ],
                );
                write_expr(w, 1, "", &Expr::call(register.clone(), vec![stand_in]), "");
            }
        }
        let client = w.name("fastapi.testclient", "TestClient");
        let create_app = w.name("svc.server", "create_app");
        suite(
            w,
            format!("with {client}({create_app}(root=ROOT)) as test_client:"),
            |w| {
                w.line("yield test_client");
            },
        );
        if u.served() {
            w.line("server.shutdown()");
        }
        if !u.a2a_agents.is_empty() {
            w.line("a2a_stop()");
        }
    });
}
