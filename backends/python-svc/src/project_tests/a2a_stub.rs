//! `tests/a2a_stub.py`, for a graph that calls A2A agents.

use std::collections::BTreeSet;

use svc_backend_sdk::ir::{AgentKind, Document};
use svc_backend_sdk::writer::CodeWriter;

use crate::py::{module_file, quote, suite, top_level_gap, write_expr, Expr};
use crate::scope::all_graphs;

/// Skill ids of the A2A agents, subgraphs' included (`None` when the
/// graph calls no A2A agent).
fn a2a_skills(doc: &Document) -> Option<Vec<String>> {
    let mut any = false;
    let mut skills = BTreeSet::new();
    for (d, _) in all_graphs(doc) {
        for a in &d.logical.agents {
            if let AgentKind::A2a { skill_id, .. } = &a.kind {
                any = true;
                skills.extend(skill_id.clone());
            }
        }
    }
    any.then(|| {
        if skills.is_empty() {
            skills.insert("answer".to_string());
        }
        skills.into_iter().collect()
    })
}

/// A stand-in for the graph's A2A agents, built from a2a-sdk's own server
/// parts (its card and JSON-RPC route factories, its request handler),
/// started on loopback by the tests. It answers every message with "stub
/// answer" and refuses a call whose key is wrong.
pub(super) fn module(doc: &Document) -> Option<String> {
    let skills = a2a_skills(doc)?;
    let mut w = CodeWriter::python();
    let executor = w.name("a2a.server.agent_execution", "AgentExecutor");
    let middleware = w.name("starlette.middleware.base", "BaseHTTPMiddleware");
    let response = w.name("starlette.responses", "JSONResponse");
    w.line("KEY = \"stub-key\"");
    write_expr(
        &mut w,
        0,
        "SKILLS = ",
        &Expr::List(skills.iter().map(|s| Expr::atom(quote(s))).collect()),
        "",
    );
    top_level_gap(&mut w);
    suite(&mut w, format!("class Peer({executor}):"), |w| {
        w.line("\"\"\"Answers each message at once.\"\"\"");
        w.blank();
        suite(w, "async def execute(self, context, event_queue):", |w| {
            let message = w.name("a2a.helpers.proto_helpers", "new_text_message");
            w.line(format!(
                "await event_queue.enqueue_event({message}(\"stub answer\"))"
            ));
        });
        w.blank();
        suite(w, "async def cancel(self, context, event_queue):", |w| {
            w.line("raise NotImplementedError(\"the stand-in answers at once\")");
        });
    });
    top_level_gap(&mut w);
    suite(&mut w, format!("class WrongKey({middleware}):"), |w| {
        w.line("\"\"\"Refuses a call that carries a wrong key, as a real peer would.\"\"\"");
        w.blank();
        suite(w, "async def dispatch(self, request, call_next):", |w| {
            w.line("key = request.headers.get(\"x-api-key\")");
            suite(w, "if key is not None and key != KEY:", |w| {
                w.line(format!(
                    "return {response}({{\"error\": \"wrong X-API-Key\"}}, status_code=401)"
                ));
            });
            w.line("return await call_next(request)");
        });
    });
    top_level_gap(&mut w);
    suite(&mut w, "def skill(skill_id):", |w| {
        let skill = w.name("a2a.types.a2a_pb2", "AgentSkill");
        w.line(format!(
            "return {skill}(id=skill_id, name=skill_id, description=\"stand-in\", tags=[\"test\"])"
        ));
    });
    top_level_gap(&mut w);
    suite(&mut w, "def card(endpoint):", |w| {
        let card = w.name("a2a.types.a2a_pb2", "AgentCard");
        let interface = w.name("a2a.types.a2a_pb2", "AgentInterface");
        let capabilities = w.name("a2a.types.a2a_pb2", "AgentCapabilities");
        let scheme = w.name("a2a.types.a2a_pb2", "SecurityScheme");
        let api_key = w.name("a2a.types.a2a_pb2", "APIKeySecurityScheme");
        let requirement = w.name("a2a.types.a2a_pb2", "SecurityRequirement");
        w.line(format!(
            "key = {api_key}(location=\"header\", name=\"X-API-Key\")"
        ));
        let interface = Expr::call(
            interface,
            vec![
                Expr::kw("url", Expr::atom("endpoint")),
                Expr::kw("protocol_binding", Expr::atom("\"JSONRPC\"")),
                Expr::kw("protocol_version", Expr::atom("\"1.0\"")),
            ],
        );
        let call = Expr::call(
            card,
            vec![
                Expr::kw("name", Expr::atom("\"stand-in peer\"")),
                Expr::kw("description", Expr::atom("\"Answers the tests.\"")),
                Expr::kw("version", Expr::atom("\"1.0.0\"")),
                Expr::kw("supported_interfaces", Expr::List(vec![interface])),
                Expr::kw(
                    "capabilities",
                    Expr::atom(format!("{capabilities}(streaming=False)")),
                ),
                Expr::kw(
                    "security_schemes",
                    Expr::atom(format!(
                        "{{\"key\": {scheme}(api_key_security_scheme=key)}}"
                    )),
                ),
                Expr::kw(
                    "security_requirements",
                    Expr::atom(format!("[{requirement}(schemes={{\"key\": {{}}}})]")),
                ),
                Expr::kw("default_input_modes", Expr::atom("[\"text/plain\"]")),
                Expr::kw("default_output_modes", Expr::atom("[\"text/plain\"]")),
                Expr::kw("skills", Expr::atom("[skill(s) for s in SKILLS]")),
            ],
        );
        write_expr(w, 1, "return ", &call, "");
    });
    top_level_gap(&mut w);
    suite(&mut w, "def start():", |w| {
        w.line(
            "\"\"\"Serves the stand-in on a free loopback port; returns (base URL, stop).\"\"\"",
        );
        w.import("socket");
        w.line("sock = socket.socket()");
        w.line("sock.bind((\"127.0.0.1\", 0))");
        w.line("base = f\"http://127.0.0.1:{sock.getsockname()[1]}\"");
        w.line("served = card(base + \"/a2a\")");
        let handler = w.name("a2a.server.request_handlers", "DefaultRequestHandler");
        let store = w.name("a2a.server.tasks", "InMemoryTaskStore");
        w.line(format!("handler = {handler}(Peer(), {store}(), served)"));
        let card_routes = w.name("a2a.server.routes", "create_agent_card_routes");
        let rpc_routes = w.name("a2a.server.routes", "create_jsonrpc_routes");
        let routes = Expr::List(vec![
            Expr::atom(format!("*{card_routes}(served)")),
            Expr::atom(format!("*{rpc_routes}(handler, \"/a2a\")")),
        ]);
        write_expr(w, 1, "routes = ", &routes, "");
        let app = w.name("starlette.applications", "Starlette");
        let mw = w.name("starlette.middleware", "Middleware");
        w.line(format!(
            "app = {app}(routes=routes, middleware=[{mw}(WrongKey)])"
        ));
        w.import("uvicorn");
        w.line("server = uvicorn.Server(uvicorn.Config(app, log_config=None, access_log=False))");
        w.import("threading");
        let thread = Expr::call(
            "threading.Thread",
            vec![
                Expr::kw("target", Expr::atom("server.run")),
                Expr::kw("kwargs", Expr::atom("{\"sockets\": [sock]}")),
                Expr::kw("daemon", Expr::atom("True")),
            ],
        );
        write_expr(w, 1, "thread = ", &thread, "");
        w.line("thread.start()");
        w.import("time");
        w.line("deadline = time.monotonic() + 10");
        suite(w, "while not server.started:", |w| {
            suite(
                w,
                "if not thread.is_alive() or time.monotonic() > deadline:",
                |w| {
                    w.line("raise RuntimeError(\"the stand-in A2A peer did not start\")");
                },
            );
            w.line("time.sleep(0.02)");
        });
        w.blank();
        suite(w, "def stop():", |w| {
            w.line("server.should_exit = True");
            w.line("thread.join(10)");
        });
        w.blank();
        w.line("return base, stop");
    });
    Some(module_file(
        "A stand-in for the graph's A2A agents in the project's tests, built from a2a-sdk's own server parts: every message gets \"stub answer\".",
        w,
    ))
}
