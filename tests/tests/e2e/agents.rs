//! Agents on every target, end to end: one graph with workers (a native and
//! an HTTP tool), supervisors (`llm` and `custom` routers), a remote agent
//! calling a second compiled service on another target (go calls java-svc,
//! java-svc and python-svc call go), an intent_classifier and an `llm` node
//! with bound tools, a rag node over a folder of Markdown files and
//! subgraphs (by path and embedded, with their own agents, tools, roles and
//! step limits) is compiled for go, java-svc and python-svc, each
//! project's own tests run, and each service is driven over HTTP against one
//! scripted chat-completions stub (standard `tool_calls` replies). Every
//! target must give python-svc's answers, errors and model requests.

use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};
use svc_tests::http::{Reply, Request, Stub};
use svc_tests::service::{build, check_project, compile, require_platform, Project, Service};

const KEY: &str = "agents-key-0b4e";
const PEER_KEY: &str = "peer-key-61fa";
const PLATFORMS: [&str; 3] = ["go", "java-svc", "python-svc"];

pub fn tool_call(id: &str, name: &str, arguments: Value) -> Value {
    json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments.to_string()}})
}

fn text_of(m: Option<&Value>) -> String {
    m.and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_string()
}

/// The scripted model: each agent is told apart by its instructions.
pub fn model_reply(req: &Request) -> Reply {
    let body = req.json();
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let system = text_of(messages.first().filter(|m| m["role"] == "system"));
    let user = text_of(messages.iter().rev().find(|m| m["role"] == "user"));
    let tool_results: Vec<String> = messages
        .iter()
        .filter(|m| m["role"] == "tool")
        .filter_map(|m| m["content"].as_str().map(str::to_string))
        .collect();
    let answer = |content: String| json!({"role": "assistant", "content": content});
    let message = if system.contains("You research.") {
        if tool_results.is_empty() {
            json!({"role": "assistant", "content": null, "tool_calls": [
                tool_call("c1", "lookup", json!({"word": "refund"})),
                tool_call("c2", "crm", json!({"q": "refund"}))]})
        } else {
            answer(format!("researched: {}", tool_results.join(" + ")))
        }
    } else if system.contains("You look up.") {
        if tool_results.is_empty() {
            json!({"role": "assistant", "content": null,
                   "tool_calls": [tool_call("b1", "lookup", json!({"word": user}))]})
        } else {
            answer(format!("looked up: {}", tool_results.join(" + ")))
        }
    } else if system.contains("You summarize.") {
        answer(format!("summary: {user}"))
    } else if system.contains("You write.") {
        answer(format!("written: {}", user.replace('\n', " | ")))
    } else if system.contains("You loop.") {
        json!({"role": "assistant", "content": null,
               "tool_calls": [tool_call("l1", "lookup", json!({"word": "again"}))]})
    } else if system.contains("Route the task.") {
        let next = if user.contains("writer answered") {
            "finish"
        } else if user.contains("researcher answered") {
            " Writer\n"
        } else {
            "researcher"
        };
        answer(next.to_string())
    } else if system.contains("billing") {
        let intent = if user.contains("refund") {
            " Billing\n"
        } else if user.contains("ship") {
            "shipping"
        } else {
            "no idea"
        };
        answer(intent.to_string())
    } else {
        answer("unexpected".to_string())
    };
    Reply::Json(
        200,
        json!({"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}).to_string(),
    )
}

pub fn graph() -> Value {
    let agent_node = |id: &str, agent: &str| json!({"id": id, "kind": "agent", "agent": agent, "input": "{{question}}", "outputKey": "answer"});
    let modes = [
        ("team", "ask_team"),
        ("pipeline", "ask_pipeline"),
        ("vault", "ask_vault"),
        ("loop", "ask_looper"),
        ("rounds", "ask_spinner"),
        ("peer", "ask_peer"),
        ("intent", "classify"),
        ("bound", "look_up"),
        ("rag", "search"),
        ("sub_path", "sub_path"),
        ("sub_embedded", "sub_embedded"),
        ("sub_vault", "sub_vault"),
        ("sub_limit", "sub_limit"),
        ("sub_missing", "sub_missing"),
    ];
    let mut branches: Vec<Value> = modes
        .iter()
        .map(|(mode, to)| json!({"when": {"field": "mode", "op": "eq", "value": mode}, "to": to}))
        .collect();
    branches.push(json!({"to": "ask_worker"}));
    let nodes = vec![
        json!({"id": "start", "kind": "start"}),
        json!({"id": "route", "kind": "router", "branches": branches}),
        agent_node("ask_worker", "researcher"),
        agent_node("ask_team", "team"),
        agent_node("ask_pipeline", "pipeline"),
        json!({"id": "ask_vault", "kind": "agent", "agent": "vault", "input": "{{question}}",
               "outputKey": "answer", "callerRoles": ["support"]}),
        agent_node("ask_looper", "looper"),
        agent_node("ask_spinner", "spinner"),
        agent_node("ask_peer", "peer"),
        json!({"id": "classify", "kind": "intent_classifier", "input": "{{question}}",
               "intents": [{"name": "billing", "description": "invoices and refunds", "examples": ["Where is my refund?"]},
                           {"name": "shipping", "description": "parcels"}],
               "outputKey": "intent"}),
        json!({"id": "look_up", "kind": "llm", "prompt": {"system": "You look up.", "user": "{{question}}"},
               "boundToolIds": ["lookup"], "outputKey": "answer"}),
        json!({"id": "search", "kind": "rag", "query": "{{question}}", "documents": "docs", "topK": 2,
               "outputKey": "passages"}),
        json!({"id": "sub_path", "kind": "subgraph", "graph": "parts/summary.graph.json",
               "input": {"topic": "question"}, "output": {"answer": "summary"}}),
        subgraph(
            "sub_embedded",
            &[(
                "say",
                json!({"kind": "response_template", "template": "embedded {{q}}", "outputKey": "r"}),
            )],
            json!({}),
        ),
        subgraph(
            "sub_vault",
            &[(
                "ask",
                json!({"kind": "agent", "agent": "vault", "input": "{{q}}", "outputKey": "r"}),
            )],
            json!({"agents": [{"id": "vault", "kind": "worker", "instructions": "You guard.", "roles": ["admin"]}],
                        "settings": {"model": {"provider": "openai", "name": "stub-model"}}}),
        ),
        subgraph(
            "sub_limit",
            &[
                (
                    "one",
                    json!({"kind": "response_template", "template": "1", "outputKey": "r"}),
                ),
                (
                    "two",
                    json!({"kind": "response_template", "template": "2", "outputKey": "r"}),
                ),
            ],
            json!({"settings": {"maxSteps": 1}}),
        ),
        json!({"id": "sub_missing", "kind": "subgraph", "graph": child("missing", &[("say", json!({"kind": "response_template", "template": "{{q}}", "outputKey": "r"}))], json!({})),
               "input": {"q": "note"}, "output": {"answer": "r"}}),
        json!({"id": "end", "kind": "end"}),
    ];
    let mut edges = vec![json!({"from": "start", "to": "route"})];
    for n in &nodes[2..nodes.len() - 1] {
        edges.push(json!({"from": n["id"], "to": "end"}));
    }
    json!({
        "irVersion": "2.2",
        "id": "agents_everywhere",
        "target": {"platform": "python-svc"},
        "logical": {
            "state": [
                {"name": "question", "type": "string", "required": true},
                {"name": "mode", "type": "string", "default": "worker"},
                {"name": "answer", "type": "string", "default": ""},
                {"name": "intent", "type": "string", "default": ""},
                {"name": "passages", "type": "array", "items": {"type": "object"}, "default": []},
                {"name": "note", "type": "string"}
            ],
            "nodes": nodes,
            "edges": edges,
            "tools": [
                {"id": "lookup", "kind": "native", "description": "Looks a word up."},
                {"id": "crm", "kind": "http", "endpoint": "env:CRM_URL", "description": "Asks the CRM."}
            ],
            "agents": [
                {"id": "researcher", "kind": "worker", "description": "finds facts",
                 "instructions": "You research.", "toolIds": ["lookup", "crm"]},
                {"id": "writer", "kind": "worker", "description": "writes the answer", "instructions": "You write."},
                {"id": "team", "kind": "supervisor", "members": ["researcher", "writer"], "router": "llm",
                 "instructions": "Route the task."},
                {"id": "pipeline", "kind": "supervisor", "members": ["researcher", "writer"], "router": "custom"},
                {"id": "vault", "kind": "worker", "instructions": "You guard.", "roles": ["admin"]},
                {"id": "looper", "kind": "worker", "instructions": "You loop.", "toolIds": ["lookup"], "maxTurns": 2},
                {"id": "spinner", "kind": "supervisor", "members": ["writer"], "router": "custom", "maxRounds": 2},
                {"id": "peer", "kind": "remote", "service": "peer", "url": "env:PEER_URL",
                 "inputField": "question", "outputField": "answer"}
            ],
            "settings": {"model": {"provider": "openai", "name": "stub-model"}}
        },
        // The tool's keys in sorted order: go writes a map's keys sorted
        // when it feeds a result to the model, python-svc and java-svc in
        // their order (docs/ir-reference.md, "Agents").
        "bodiesByPlatform": {
            "python-svc": {
                "lookup": "return {\"meaning\": \"money back\", \"word\": state.get(\"word\")}",
                "pipeline": "if state[\"round\"] == 0:\n    return \"researcher\"\nif state[\"last_member\"] == \"researcher\":\n    return \"writer\"\nreturn \"finish\"",
                "spinner": "return \"writer\""
            },
            "go": {
                "lookup": "return State{\"meaning\": \"money back\", \"word\": state[\"word\"]}, nil",
                "pipeline": "if state.Int(\"round\") == 0 {\n\treturn \"researcher\", nil\n}\nif state.String(\"last_member\") == \"researcher\" {\n\treturn \"writer\", nil\n}\nreturn \"finish\", nil",
                "spinner": "return \"writer\", nil"
            },
            "java-svc": {
                "lookup": "Map<String, Object> found = new LinkedHashMap<>();\nfound.put(\"meaning\", \"money back\");\nfound.put(\"word\", state.get(\"word\"));\nresult = found;",
                "pipeline": "if (((Number) state.get(\"round\")).intValue() == 0) {\n    result = \"researcher\";\n} else if (\"researcher\".equals(state.get(\"last_member\"))) {\n    result = \"writer\";\n} else {\n    result = \"finish\";\n}",
                "spinner": "result = \"writer\";"
            }
        }
    })
}

/// An embedded child graph `id` over `q` (required) and `r`, running
/// `nodes` in a row; `logical` adds to its `logical` object.
fn child(id: &str, nodes: &[(&str, Value)], logical: Value) -> Value {
    let mut all = vec![json!({"id": "start", "kind": "start"})];
    for (node_id, node) in nodes {
        let mut node = node.clone();
        node["id"] = json!(node_id);
        all.push(node);
    }
    all.push(json!({"id": "end", "kind": "end"}));
    let edges: Vec<Value> = all
        .windows(2)
        .map(|pair| json!({"from": pair[0]["id"], "to": pair[1]["id"]}))
        .collect();
    let mut graph = json!({
        "irVersion": "2.2",
        "id": id,
        "logical": {
            "state": [{"name": "q", "type": "string", "required": true}, {"name": "r", "type": "string"}],
            "nodes": all,
            "edges": edges
        }
    });
    if let Value::Object(extra) = logical {
        for (k, v) in extra {
            graph["logical"][k] = v;
        }
    }
    graph
}

/// A subgraph node `id` embedding a child that maps `question` to `q` and
/// `r` back to `answer`.
fn subgraph(id: &str, nodes: &[(&str, Value)], logical: Value) -> Value {
    json!({"id": id, "kind": "subgraph", "graph": child(id, nodes, logical),
           "input": {"q": "question"}, "output": {"answer": "r"}})
}

/// A child read from a file: its own worker `writer` and tool `lookup`
/// (ids the parent uses too) under a custom supervisor, and a scratch field
/// the parent never sees. The bodies name members by the child's own ids,
/// though they are registered with the subgraph's prefix.
pub fn path_child() -> Value {
    json!({
        "irVersion": "2.2",
        "id": "summary",
        "logical": {
            "state": [{"name": "topic", "type": "string", "required": true},
                      {"name": "scratch", "type": "string", "default": ""},
                      {"name": "summary", "type": "string"}],
            "nodes": [{"id": "start", "kind": "start"},
                      {"id": "pad", "kind": "response_template", "template": "scratch {{topic}}", "outputKey": "scratch"},
                      {"id": "write", "kind": "agent", "agent": "team", "input": "{{scratch}}", "outputKey": "summary"},
                      {"id": "end", "kind": "end"}],
            "edges": [{"from": "start", "to": "pad"}, {"from": "pad", "to": "write"}, {"from": "write", "to": "end"}],
            "tools": [{"id": "lookup", "kind": "native"}],
            "agents": [{"id": "writer", "kind": "worker", "instructions": "You summarize.", "toolIds": ["lookup"]},
                       {"id": "team", "kind": "supervisor", "members": ["writer"], "router": "custom"}],
            "settings": {"model": {"provider": "openai", "name": "stub-model"}}
        },
        "bodiesByPlatform": {
            "python-svc": {
                "lookup": "return {\"child\": True}",
                "team": "if state[\"last_member\"] is None:\n    return \"writer\"\nassert state[\"last_member\"] == \"writer\"\nreturn \"finish\""
            },
            "go": {
                "lookup": "return State{\"child\": true}, nil",
                "team": "if state.String(\"last_member\") == \"\" {\n\treturn \"writer\", nil\n}\nif state.String(\"last_member\") != \"writer\" {\n\treturn \"\", fmt.Errorf(\"last member %q\", state.String(\"last_member\"))\n}\nreturn \"finish\", nil"
            },
            "java-svc": {
                "lookup": "result = Map.of(\"child\", true);",
                "team": "if (state.get(\"last_member\") == null) {\n    result = \"writer\";\n} else if (\"writer\".equals(state.get(\"last_member\"))) {\n    result = \"finish\";\n} else {\n    throw new IllegalStateException(\"last member \" + state.get(\"last_member\"));\n}"
            }
        }
    })
}

/// The service a remote agent calls: another compiled graph.
pub fn peer_graph() -> Value {
    json!({
        "irVersion": "2.2",
        "id": "peer_service",
        "logical": {
            "state": [{"name": "question", "type": "string", "required": true},
                      {"name": "answer", "type": "string"}],
            "nodes": [{"id": "start", "kind": "start"},
                      {"id": "say", "kind": "function", "outputKey": "answer"},
                      {"id": "end", "kind": "end"}],
            "edges": [{"from": "start", "to": "say"}, {"from": "say", "to": "end"}]
        },
        "bodiesByPlatform": {
            "python-svc": {"say": "return {\"answer\": \"peer says \" + state[\"question\"]}"},
            "go": {"say": "return State{\"answer\": \"peer says \" + state.String(\"question\")}, nil"},
            "java-svc": {"say": "result = \"peer says \" + state.get(\"question\");"}
        }
    })
}

pub fn write_json(path: &Path, v: &Value) {
    std::fs::write(path, serde_json::to_string_pretty(v).unwrap()).unwrap();
}

/// Compiles `doc` for `platform`, runs the project's own checks and builds it.
fn built(platform: &str, doc: &Path) -> Project {
    let project = compile(platform, doc).unwrap_or_else(|d| panic!("{platform}: {d:?}"));
    check_project(&project, platform).unwrap_or_else(|e| panic!("{platform}: {e}"));
    build(&project).unwrap_or_else(|e| panic!("{platform}: {e}"));
    project
}

/// The peer each target's remote agent calls: a service on another target.
fn peer_platform(platform: &str) -> &'static str {
    if platform == "go" {
        "java-svc"
    } else {
        "go"
    }
}

/// What one target answered to every request of the test, by request.
fn drive(
    platform: &str,
    project: &Project,
    peer_port: u16,
    llm: &Stub,
    crm: &Stub,
) -> Vec<(String, Value)> {
    let peer_url = format!("http://127.0.0.1:{peer_port}");
    let llm_url = format!("{}/v1", llm.url());
    let crm_url = format!("{}/crm", crm.url());
    let env = [
        ("SVC_API_KEY", KEY),
        ("OPENAI_BASE_URL", llm_url.as_str()),
        ("OPENAI_API_KEY", "stub-key"),
        ("CRM_URL", crm_url.as_str()),
        ("PEER_URL", peer_url.as_str()),
        ("PEER_API_KEY", PEER_KEY),
    ];
    let s = Service::launch(project, &env, Duration::from_secs(120))
        .unwrap_or_else(|e| panic!("{platform}: {e}"));
    let invoke = |question: &str, mode: &str| {
        let body = json!({"state": {"question": question, "mode": mode}}).to_string();
        let r = s
            .send(
                "POST",
                "/invoke",
                &[("Content-Type", "application/json"), ("X-API-Key", KEY)],
                body.as_bytes(),
            )
            .unwrap_or_else(|e| panic!("{platform}: {e}"));
        (r.status, r.json())
    };
    let mut answers = Vec::new();
    let mut record = |what: &str, (status, body): (u16, Value)| {
        answers.push((what.to_string(), json!({"status": status, "body": body})));
        body
    };

    // A worker calls a native and an HTTP tool, then answers; only its
    // answer reaches the state.
    let before = llm.received().len();
    let body = record("worker", invoke("What is a refund?", "worker"));
    let result = body["result"]
        .as_object()
        .unwrap_or_else(|| panic!("{platform}: {body}"));
    let mut keys: Vec<&str> = result.keys().map(String::as_str).collect();
    keys.sort();
    assert_eq!(
        keys,
        ["answer", "intent", "mode", "note", "passages", "question"],
        "{platform}"
    );
    assert_eq!(
        result["answer"],
        "researched: {\"meaning\": \"money back\", \"word\": \"refund\"} + {\"asked\": {\"q\": \"refund\"}, \"source\": \"crm\"}",
        "{platform}"
    );
    assert_eq!(
        crm.received().last().unwrap().json(),
        json!({"q": "refund"})
    );
    let calls = llm.received();
    let first = calls[before].json();
    assert_eq!(
        first["tools"],
        json!([
            {"type": "function", "function": {"name": "lookup", "description": "Looks a word up.", "parameters": {"type": "object"}}},
            {"type": "function", "function": {"name": "crm", "description": "Asks the CRM.", "parameters": {"type": "object"}}}
        ]),
        "{platform}"
    );
    assert_eq!(first["model"], "stub-model", "{platform}");
    // The second call carries the conversation: the calls, then each result.
    let second = calls[before + 1].json();
    let roles: Vec<&str> = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        ["system", "user", "assistant", "tool", "tool"],
        "{platform}"
    );
    assert_eq!(second["messages"][3]["tool_call_id"], "c1", "{platform}");
    assert_eq!(
        second["messages"][3]["content"], "{\"meaning\": \"money back\", \"word\": \"refund\"}",
        "{platform}"
    );

    // Supervisors: the model routes (researcher, writer, finish), and a
    // custom body routes the same way; the answer is the last member's.
    for mode in ["team", "pipeline"] {
        let before = llm.received().len();
        let body = record(mode, invoke("What is a refund?", mode));
        let answer = body["result"]["answer"].as_str().unwrap_or_default();
        assert!(
            answer.starts_with("written: What is a refund? |  | researched: "),
            "{platform} {mode}: {body}"
        );
        let calls = llm.received().len() - before;
        assert_eq!(
            calls,
            if mode == "team" { 6 } else { 3 },
            "{platform} {mode}"
        );
    }
    let routing = llm
        .received()
        .iter()
        .rev()
        .map(Request::json)
        .find(|b| {
            b["messages"][0]["content"]
                .as_str()
                .unwrap_or("")
                .starts_with("Route the task.")
        })
        .unwrap_or_else(|| panic!("{platform}: no routing call"));
    assert_eq!(
        routing["messages"][0]["content"],
        "Route the task.\nAnswer with exactly one of these names:\n- researcher: finds facts\n- writer: writes the answer\n- finish: the task is done",
        "{platform}"
    );
    assert!(routing.get("tools").is_none(), "{platform}: {routing}");

    // The roles and the limits, with python-svc's details.
    for (mode, agent, reason) in [
        ("vault", "vault", "forbidden"),
        ("loop", "looper", "max_turns"),
        ("rounds", "spinner", "max_rounds"),
    ] {
        let body = record(mode, invoke("anything", mode));
        assert_eq!(
            body["error"]["code"], "execution_error",
            "{platform}: {body}"
        );
        assert_eq!(
            body["error"]["details"],
            json!({"node": agent, "reason": reason}),
            "{platform}: {body}"
        );
    }

    // A remote agent: a service on another target, with its key.
    let body = record("peer", invoke("Hello", "peer"));
    assert_eq!(
        body["result"]["answer"], "peer says Hello",
        "{platform}: {body}"
    );

    // intent_classifier: a matching reply (trimmed, any case) and not.
    let body = record("billing", invoke("Where is my refund?", "intent"));
    assert_eq!(body["result"]["intent"], "billing", "{platform}: {body}");
    let body = record("other", invoke("Good morning", "intent"));
    assert_eq!(body["result"]["intent"], "other", "{platform}: {body}");

    // An llm node with a bound tool: the same loop, with no agent.
    let body = record("bound", invoke("Hi", "bound"));
    assert_eq!(
        body["result"]["answer"], "looked up: {\"meaning\": \"money back\", \"word\": \"Hi\"}",
        "{platform}: {body}"
    );

    // rag over the folder: ranked passages, best first, at most topK, with
    // python-svc's BM25 scores.
    let body = record(
        "rag",
        invoke("refunds paid within days of a request", "rag"),
    );
    let passages = body["result"]["passages"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let ids: Vec<&str> = passages.iter().filter_map(|p| p["id"].as_str()).collect();
    assert_eq!(
        ids,
        ["refunds.md", "more/returns.txt"],
        "{platform}: {body}"
    );
    let scores: Vec<f64> = passages
        .iter()
        .filter_map(|p| p["score"].as_f64())
        .collect();
    assert!(
        (scores[0] - 4.878471367329767).abs() < 1e-12,
        "{platform}: {scores:?}"
    );
    assert!(
        (scores[1] - 1.9560453273963314).abs() < 1e-12,
        "{platform}: {scores:?}"
    );
    let body = record("no passage", invoke("zebra", "rag"));
    assert_eq!(body["result"]["passages"], json!([]), "{platform}: {body}");

    // Subgraphs, by path and embedded: only `output` reaches the parent;
    // the child's tools and agents carry the subgraph's prefix.
    let before = llm.received().len();
    let body = record("sub_path", invoke("Hello", "sub_path"));
    assert_eq!(
        body["result"]["answer"], "summary: scratch Hello",
        "{platform}: {body}"
    );
    assert!(
        body["result"].get("scratch").is_none() && body["result"].get("topic").is_none(),
        "{platform}: {body}"
    );
    let calls = llm.received();
    assert_eq!(
        calls.len() - before,
        1,
        "{platform}: the custom router asks no model"
    );
    let child_call = calls[before].json();
    assert_eq!(
        child_call["tools"][0]["function"]["name"], "sub_path__lookup",
        "{platform}: {child_call}"
    );
    assert_eq!(child_call["model"], "stub-model", "{platform}");
    let body = record("sub_embedded", invoke("Hello", "sub_embedded"));
    assert_eq!(
        body["result"]["answer"], "embedded Hello",
        "{platform}: {body}"
    );
    // A child's roles, step limit and required fields, named as python-svc
    // names them.
    for (mode, code, details) in [
        (
            "sub_vault",
            "execution_error",
            json!({"node": "sub_vault__vault", "reason": "forbidden"}),
        ),
        ("sub_limit", "step_limit_exceeded", json!({"maxSteps": 1})),
        (
            "sub_missing",
            "execution_error",
            json!({"node": "sub_missing"}),
        ),
    ] {
        let body = record(mode, invoke("Hello", mode));
        assert_eq!(
            (&body["error"]["code"], &body["error"]["details"]),
            (&json!(code), &details),
            "{platform}: {body}"
        );
    }
    let body = invoke("Hello", "sub_missing").1;
    assert_eq!(
        body["error"]["message"], "subgraph \"sub_missing\": required state field \"q\" is missing",
        "{platform}: {body}"
    );
    answers
}

/// The rag node's folder: Markdown and text files, and one it skips.
pub fn write_documents(dir: &Path) {
    let docs = dir.join("docs");
    std::fs::create_dir_all(docs.join("more")).unwrap();
    let files = [
        (
            "refunds.md",
            "# Refunds\n\nRefunds are paid within 14 days of the request.",
        ),
        (
            "shipping.md",
            "# Shipping\n\nParcels leave the warehouse every weekday.",
        ),
        (
            "more/returns.txt",
            "Returns of a refund request need the receipt.",
        ),
        ("notes.json", "{\"not\": \"a document\"}"),
    ];
    for (name, text) in files {
        std::fs::write(docs.join(name), text).unwrap();
    }
}

#[test]
fn every_target_runs_agents_as_python_svc_does() {
    let dir = tempfile::tempdir().unwrap();
    let main_doc = dir.path().join("agents.graph.json");
    let peer_doc = dir.path().join("peer.graph.json");
    write_json(&main_doc, &graph());
    write_json(&peer_doc, &peer_graph());
    std::fs::create_dir_all(dir.path().join("parts")).unwrap();
    write_json(&dir.path().join("parts/summary.graph.json"), &path_child());
    write_documents(dir.path());
    let llm = Stub::start(model_reply).unwrap();
    let crm = Stub::start(|req| {
        Reply::Json(
            200,
            json!({"asked": req.json(), "source": "crm"}).to_string(),
        )
    })
    .unwrap();

    let mut answers: Vec<(&str, Vec<(String, Value)>)> = Vec::new();
    // Each peer is built and started once, then called by every target
    // that uses it.
    let mut peers: Vec<(&str, Project, Service)> = Vec::new();
    for platform in PLATFORMS {
        let peer_platform = peer_platform(platform);
        if !require_platform(platform) || !require_platform(peer_platform) {
            continue;
        }
        if !peers.iter().any(|(p, _, _)| *p == peer_platform) {
            let project = built(peer_platform, &peer_doc);
            let service = Service::launch(
                &project,
                &[("SVC_API_KEY", PEER_KEY)],
                Duration::from_secs(120),
            )
            .unwrap_or_else(|e| panic!("{peer_platform}: {e}"));
            peers.push((peer_platform, project, service));
        }
        let peer_port = peers
            .iter()
            .find(|(p, _, _)| *p == peer_platform)
            .map(|(_, _, s)| s.port)
            .unwrap_or_default();
        let project = built(platform, &main_doc);
        answers.push((platform, drive(platform, &project, peer_port, &llm, &crm)));
        eprintln!("{platform}: agents answered as python-svc's do (peer on {peer_platform})");
    }
    // Error messages may differ in wording; everything else is python-svc's.
    let comparable = |answers: &[(String, Value)]| -> Vec<(String, Value)> {
        answers
            .iter()
            .map(|(what, v)| {
                let mut v = v.clone();
                if let Some(e) = v["body"]["error"].as_object_mut() {
                    e.remove("message");
                }
                (what.clone(), v)
            })
            .collect()
    };
    if let Some((_, python)) = answers.iter().find(|(p, _)| *p == "python-svc") {
        let python = comparable(python);
        for (platform, theirs) in &answers {
            assert_eq!(
                comparable(theirs),
                python,
                "{platform} answers differently from python-svc"
            );
        }
    }
}
