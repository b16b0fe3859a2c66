//! `tests/test_service.py`: pytest tests that drive the generated service
//! through the HTTP contract with FastAPI's TestClient. Model and HTTP tool
//! calls go to a stub server the tests start on loopback.

use serde_json::{json, Value};
use svc_backend_sdk::ir::{
    AgentKind, Auth, CheckpointerKind, Document, FieldType, NodeKind, RagNode, Retriever,
    SupervisorRouter, ToolKind,
};
use svc_backend_sdk::samples::{bad_requests, sample_state, tool_reply};
use svc_backend_sdk::writer::CodeWriter;

use crate::py::{ident, module, module_file, quote, suite, top_level_gap, write_expr, Expr};
use crate::scope::{all_graphs, Scope};

/// A JSON text as a Python string literal.
fn js(v: &Value) -> String {
    quote(&v.to_string())
}

/// A test function: two blank lines, its `def`, its body.
fn test_def(w: &mut CodeWriter, signature: &str, body: impl FnOnce(&mut CodeWriter)) {
    top_level_gap(w);
    suite(w, format!("def {signature}:"), body);
}

/// `tests/mcp_stub.py`: one MCP server (the SDK's `MCPServer`, over stdio)
/// offering every MCP tool the graph names, each answering with what it
/// was called with, so the project's tests run without the real servers.
pub fn mcp_stub(doc: &Document) -> Option<String> {
    // Each MCP tool name with the argument names tool nodes pass it.
    let mut tools: std::collections::BTreeMap<&str, std::collections::BTreeSet<&str>> =
        std::collections::BTreeMap::new();
    for (d, _) in all_graphs(doc) {
        for t in &d.logical.tools {
            if let ToolKind::Mcp { tool, .. } = &t.kind {
                let params = tools.entry(tool.as_str()).or_default();
                for n in &d.logical.nodes {
                    if let NodeKind::Tool { tool_id, input, .. } = &n.kind {
                        if *tool_id == t.id {
                            // Other keys are ignored by the stub's argument model.
                            params.extend(input.keys().map(String::as_str).filter(|k| {
                                svc_backend_sdk::ir::is_identifier(k) && ident(k) == *k
                            }));
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

/// Skill ids of the A2A agents, subgraphs' included (`None` when the
/// graph calls no A2A agent).
fn a2a_skills(doc: &Document) -> Option<Vec<String>> {
    let mut any = false;
    let mut skills = std::collections::BTreeSet::new();
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

/// `tests/a2a_stub.py`: a stand-in for the graph's A2A agents, built from
/// a2a-sdk's own server parts (its card and JSON-RPC route factories, its
/// request handler), started on loopback by the tests. It answers every
/// message with "stub answer" and refuses a call whose key is wrong.
pub fn a2a_stub(doc: &Document) -> Option<String> {
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

pub fn service_tests(doc: &Document) -> String {
    let auth = doc.security.auth;
    let graphs = all_graphs(doc);
    let llm = all_graphs(doc).iter().any(|(d, _)| d.has_llm_nodes());
    // (its graph, its scope, tool id, endpoint) of every HTTP tool, subgraphs' included.
    let http: Vec<(&Document, &Scope, &str, &str)> = graphs
        .iter()
        .flat_map(|(d, scope)| d.http_tools().map(move |(id, e)| (*d, scope, id, e)))
        .collect();
    let connector_env = svc_backend_sdk::connectors::env_refs(doc);
    // (registered name, service, url, output field) of every remote agent.
    let remotes: Vec<(String, &str, Option<&str>, &str)> = graphs
        .iter()
        .flat_map(|(d, scope)| {
            d.logical.agents.iter().filter_map(move |a| match &a.kind {
                AgentKind::Remote {
                    service,
                    url,
                    output_field,
                    ..
                } => Some((
                    scope.name(&a.id),
                    service.as_str(),
                    url.as_deref(),
                    output_field.as_str(),
                )),
                _ => None,
            })
        })
        .collect();
    // (registered name, card URL, service) of every A2A agent.
    let a2a_agents: Vec<(String, &str, Option<&str>)> = graphs
        .iter()
        .flat_map(|(d, scope)| {
            d.logical.agents.iter().filter_map(move |a| match &a.kind {
                AgentKind::A2a {
                    agent_card_url,
                    service,
                    ..
                } => Some((
                    scope.name(&a.id),
                    agent_card_url.as_str(),
                    service.as_deref(),
                )),
                _ => None,
            })
        })
        .collect();
    // The base-URL variables of embedding retrievers.
    let mut embedding_envs: Vec<String> = graphs
        .iter()
        .flat_map(|(d, _)| d.logical.nodes.iter())
        .filter_map(|n| match &n.kind {
            NodeKind::Rag(RagNode {
                retriever: Retriever::Embedding { base_url_env, .. },
                ..
            }) => Some(
                base_url_env
                    .clone()
                    .unwrap_or_else(svc_backend_sdk::ir::default_base_url_env),
            ),
            _ => None,
        })
        .collect();
    embedding_envs.sort();
    embedding_envs.dedup();
    // A supervisor routed by the model must be told to finish.
    let routes_by_model = graphs
        .iter()
        .flat_map(|(d, _)| d.logical.agents.iter())
        .any(|a| {
            matches!(
                a.kind,
                AgentKind::Supervisor {
                    router: SupervisorRouter::Llm,
                    ..
                }
            )
        });
    // Registered names of every MCP server, subgraphs' included.
    let mcp_servers: Vec<String> = graphs
        .iter()
        .flat_map(|(d, scope)| d.logical.mcp_servers.iter().map(move |m| scope.name(&m.id)))
        .collect();
    let stub = llm
        || !http.is_empty()
        || !connector_env.is_empty()
        || !remotes.is_empty()
        || !embedding_envs.is_empty();
    let sample = Value::Object(sample_state(doc));
    let envelope = json!({ "state": sample });
    let mut w = CodeWriter::python();

    let path = w.name("pathlib", "Path");
    w.line(format!("ROOT = {path}(__file__).resolve().parent.parent"));
    w.line("KEY = \"test-credential-0123\"");
    let header = match auth {
        Auth::None => "{}",
        Auth::ApiKey => "{\"X-API-Key\": KEY}",
        Auth::Bearer => "{\"Authorization\": f\"Bearer {KEY}\"}",
    };
    w.line(format!("AUTH = {header}"));
    w.line(format!("SAMPLE = {}", js(&envelope)));

    if stub {
        top_level_gap(&mut w);
        let handler = w.name("http.server", "BaseHTTPRequestHandler");
        suite(&mut w, format!("class Upstream({handler}):"), |w| {
            w.line(
                "\"\"\"Answers model and HTTP tool calls, so tests never reach the network.\"\"\"",
            );
            w.blank();
            suite(w, "def do_POST(self):", |w| {
                let read = "self.rfile.read(int(self.headers.get(\"Content-Length\") or 0))";
                if embedding_envs.is_empty() {
                    w.line(read);
                } else {
                    w.line(format!("data = {read}"));
                }
                let content = if routes_by_model {
                    "finish"
                } else {
                    "first idea\nsecond idea"
                };
                let mut replies = vec![(
                    "\"/v1/chat/completions\"".to_string(),
                    js(
                        &json!({"choices": [{"message": {"role": "assistant", "content": content}}]}),
                    ),
                )];
                for (id, _, _, output) in &remotes {
                    replies.push((
                        quote(&format!("/remote/{id}/invoke")),
                        js(&json!({"result": {*output: "stub answer"}})),
                    ));
                }
                for (d, scope, id, _) in &http {
                    let path = format!("/tools/{}", scope.name(id));
                    replies.push((quote(&path), js(&tool_reply(d, id))));
                }
                for (node, _) in &connector_env {
                    replies.push((quote(&format!("/connectors/{node}")), quote("{}")));
                }
                let dict = Expr::Dict(
                    replies
                        .into_iter()
                        .map(|(k, v)| (k, Expr::atom(v)))
                        .collect(),
                );
                write_expr(w, 2, "replies = ", &dict, "");
                w.line("body = replies.get(self.path)");
                if !embedding_envs.is_empty() {
                    // One vector per input text, so retrieval has something to rank.
                    let json_mod = w.name("json", "loads");
                    suite(w, "if self.path == \"/v1/embeddings\":", |w| {
                        w.line(format!("texts = {json_mod}(data)[\"input\"]"));
                        w.line("vectors = [[1.0, float(len(t))] for t in texts]");
                        w.line("data = [{\"index\": i, \"embedding\": v} for i, v in enumerate(vectors)]");
                        let dumps = w.name("json", "dumps");
                        w.line(format!("body = {dumps}({{\"data\": data}})"));
                    });
                }
                w.line("self.send_response(200 if body else 404)");
                w.line("self.send_header(\"Content-Type\", \"application/json\")");
                w.line("self.end_headers()");
                w.line("self.wfile.write((body or \"{}\").encode())");
            });
            w.blank();
            suite(w, "def log_message(self, *args):", |w| {
                w.line("pass");
            });
        });
    }

    top_level_gap(&mut w);
    let pytest = "pytest";
    w.import(pytest);
    w.line(format!("@{pytest}.fixture"));
    let checkpointer = &doc.logical.settings.checkpointer;
    let signature = match checkpointer.kind {
        CheckpointerKind::Sqlite => "def client(monkeypatch, tmp_path):",
        _ => "def client(monkeypatch):",
    };
    suite(&mut w, signature, |w| {
        if auth != Auth::None {
            w.line(format!(
                "monkeypatch.setenv({}, KEY)",
                quote(&doc.security.key_env)
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
        if !mcp_servers.is_empty()
            || remotes.iter().any(|(_, _, url, _)| literal_url(*url))
            || a2a_agents
                .iter()
                .any(|(_, card, _)| literal_url(Some(card)))
        {
            w.import("importlib");
            w.line("importlib.import_module(\"app\")");
        }
        if stub {
            let server = w.name("http.server", "ThreadingHTTPServer");
            w.line(format!("server = {server}((\"127.0.0.1\", 0), Upstream)"));
            w.line(
                "serve = {\"target\": server.serve_forever, \"kwargs\": {\"poll_interval\": 0.05}}",
            );
            w.import("threading");
            w.line("threading.Thread(**serve, daemon=True).start()");
            w.line("base = f\"http://127.0.0.1:{server.server_port}\"");
            for var in &embedding_envs {
                if llm
                    && doc
                        .logical
                        .settings
                        .model
                        .as_ref()
                        .is_some_and(|m| m.base_url_env == *var)
                {
                    continue;
                }
                w.line(format!(
                    "monkeypatch.setenv({}, base + \"/v1\")",
                    quote(var)
                ));
            }
            for (id, service, url, _) in &remotes {
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
            if llm {
                if let Some(m) = &doc.logical.settings.model {
                    w.line(format!(
                        "monkeypatch.setenv({}, base + \"/v1\")",
                        quote(&m.base_url_env)
                    ));
                    w.line(format!(
                        "monkeypatch.setenv({}, \"stub-key\")",
                        quote(&m.api_key_env)
                    ));
                }
            }
            for (_, scope, id, endpoint) in &http {
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
        if !a2a_agents.is_empty() {
            // Every A2A agent's card is the stand-in's (tests/a2a_stub.py).
            let start = w.name("a2a_stub", "start");
            w.line(format!("a2a_base, a2a_stop = {start}()"));
            for (id, card_url, service) in &a2a_agents {
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
        for (node, var) in &connector_env {
            w.line(format!(
                "monkeypatch.setenv({}, base + {})",
                quote(var),
                quote(&format!("/connectors/{node}"))
            ));
        }
        if !mcp_servers.is_empty() {
            // Every MCP server becomes tests/mcp_stub.py over stdio, started by
            // the service like the real one; the project registers its
            // servers on import, so the stubs replace them afterwards.
            let server = w.name("svc.mcp_client", "McpServer");
            let register = w.name("svc.mcp_client", "register_mcp_server");
            let sys = "sys";
            w.import(sys);
            w.line("stub = str(ROOT / \"tests\" / \"mcp_stub.py\")");
            for id in &mcp_servers {
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
        if stub {
            w.line("server.shutdown()");
        }
        if !a2a_agents.is_empty() {
            w.line("a2a_stop()");
        }
    });

    test_def(
        &mut w,
        "post(client, body, headers=None, content_type=\"application/json\")",
        |w| {
            w.line("headers = {\"Content-Type\": content_type, **AUTH, **(headers or {})}");
            w.line("return client.post(\"/invoke\", content=body, headers=headers)");
        },
    );
    test_def(&mut w, "test_health_needs_no_credential(client)", |w| {
        w.line("r = client.get(\"/health\")");
        w.line("assert r.status_code == 200");
        w.line("assert r.json() == {\"status\": \"ok\"}");
    });
    test_def(
        &mut w,
        "test_openapi_is_public_and_describes_invoke(client)",
        |w| {
            w.line("r = client.get(\"/openapi.json\")");
            w.line("assert r.status_code == 200");
            w.line("assert r.json()[\"openapi\"] == \"3.1.0\"");
            w.line("assert \"/invoke\" in r.json()[\"paths\"]");
        },
    );
    test_def(&mut w, "test_unknown_path_and_wrong_method(client)", |w| {
        w.line("r = client.get(\"/nowhere\", headers=AUTH)");
        w.line("assert r.status_code == 404");
        w.line("assert r.json()[\"error\"][\"code\"] == \"not_found\"");
        w.line("r = client.get(\"/invoke\", headers=AUTH)");
        w.line("assert r.status_code == 405");
        w.line("assert r.json()[\"error\"][\"code\"] == \"method_not_allowed\"");
    });
    if auth != Auth::None {
        let wrong_header = match auth {
            Auth::Bearer => "\"Authorization\": \"Bearer wrong-credential\"",
            _ => "\"X-API-Key\": \"wrong-credential\"",
        };
        test_def(&mut w, "test_credential_is_required(client)", |w| {
            w.line("headers = {\"Content-Type\": \"application/json\"}");
            w.line("r = client.post(\"/invoke\", content=SAMPLE, headers=headers)");
            w.line("assert r.status_code == 401");
            w.line("assert r.json()[\"error\"][\"code\"] == \"unauthorized\"");
            if auth == Auth::Bearer {
                w.line("assert r.headers[\"WWW-Authenticate\"] == \"Bearer\"");
            }
            w.line(format!("wrong = {{**headers, {wrong_header}}}"));
            w.line("r = client.post(\"/invoke\", content=SAMPLE, headers=wrong)");
            w.line("assert r.status_code == 401");
            w.line("assert \"wrong-credential\" not in r.text");
        });
    }

    let cases: Vec<Expr> = bad_requests(doc)
        .iter()
        .map(|c| {
            Expr::Tuple(vec![
                Expr::atom(quote(&c.name)),
                Expr::atom(quote(&c.content_type)),
                Expr::atom(quote(&c.body)),
                Expr::atom(c.status.to_string()),
                Expr::atom(quote(&c.code)),
                Expr::atom(
                    c.field
                        .as_deref()
                        .map(quote)
                        .unwrap_or_else(|| "None".into()),
                ),
            ])
        })
        .collect();
    top_level_gap(&mut w);
    write_expr(&mut w, 0, "BAD_REQUESTS = ", &Expr::List(cases), "");
    top_level_gap(&mut w);
    w.line(format!(
        "@{pytest}.mark.parametrize(\"name,content_type,body,status,code,field\", BAD_REQUESTS)"
    ));
    suite(
        &mut w,
        "def test_bad_requests(client, name, content_type, body, status, code, field):",
        |w| {
            w.line("r = post(client, body, content_type=content_type)");
            w.line("assert r.status_code == status, name");
            w.line("error = r.json()[\"error\"]");
            w.line("assert error[\"code\"] == code, name");
            suite(w, "if field:", |w| {
                w.line("assert error[\"details\"][\"field\"] == field, name");
            });
        },
    );
    let json = "json";
    w.import(json);
    test_def(&mut w, "test_body_over_one_mib_is_refused(client)", |w| {
        w.line(format!(
            "body = {json}.dumps({{\"state\": {{\"x\": \"a\" * (1 << 20)}}}})"
        ));
        w.line("r = post(client, body)");
        w.line("assert r.status_code == 413");
        w.line("assert r.json()[\"error\"][\"code\"] == \"payload_too_large\"");
    });
    let fields = Expr::List(
        doc.logical
            .state
            .iter()
            .map(|f| Expr::atom(quote(&f.name)))
            .collect(),
    );
    // Each hitl node's answer when the run pauses there, by its field's type.
    let resumes: Vec<(String, Expr)> = doc
        .logical
        .nodes
        .iter()
        .filter_map(|n| match &n.kind {
            NodeKind::Hitl(h) => {
                let value = match doc.state_field(&h.output_key).map(|f| f.ty) {
                    Some(FieldType::Integer) => json!(1),
                    Some(FieldType::Number) => json!(1.5),
                    Some(FieldType::Boolean) => json!(true),
                    Some(FieldType::Object) => json!({"approved": true}),
                    Some(FieldType::Array) => json!([]),
                    Some(FieldType::Messages) => json!([{"role": "user", "content": "approved"}]),
                    _ => json!("approved"),
                };
                Some((quote(&n.id), crate::py::literal(&value)))
            }
            _ => None,
        })
        .collect();
    if !resumes.is_empty() {
        top_level_gap(&mut w);
        write_expr(&mut w, 0, "RESUME = ", &Expr::Dict(resumes), "");
    }
    let pauses = doc
        .logical
        .nodes
        .iter()
        .any(|n| matches!(n.kind, NodeKind::Hitl(_)));
    test_def(&mut w, "test_invoke_runs_the_graph(client)", move |w| {
        w.line("r = post(client, SAMPLE)");
        w.line("assert r.status_code == 200, r.text");
        if pauses {
            // A paused run is resumed with each reviewer's answer in turn.
            suite(w, "while \"interrupt\" in r.json():", |w| {
                w.line("paused = r.json()");
                w.line("answer = RESUME[paused[\"interrupt\"][\"node\"]]");
                w.line("body = {\"threadId\": paused[\"threadId\"], \"resume\": answer}");
                w.line("r = post(client, json.dumps(body))");
                w.line("assert r.status_code == 200, r.text");
            });
        }
        w.line("result = r.json()[\"result\"]");
        write_expr(w, 1, "for field in ", &fields, ":");
        w.indent();
        w.line("assert field in result, field");
        w.dedent();
    });
    if let Some(m) = doc
        .state_field("messages")
        .filter(|f| f.ty == FieldType::Messages)
    {
        let required_others = doc
            .logical
            .state
            .iter()
            .any(|f| f.required && f.name != m.name);
        if !required_others {
            test_def(&mut w, "test_messages_form(client)", |w| {
                w.line(format!(
                    "body = {json}.dumps({{\"messages\": [{{\"role\": \"user\", \"content\": \"Hello\"}}]}})"
                ));
                w.line("r = post(client, body)");
                w.line("assert r.status_code == 200, r.text");
                w.line("assert r.json()[\"result\"][\"messages\"][0][\"content\"] == \"Hello\"");
            });
        }
    }
    module_file("Drive the service through the svc HTTP contract.", w)
}
