//! Agents and the Python-only node kinds, end to end: a graph with workers
//! (a native and an HTTP tool), supervisors (`llm` and `custom` routers), a
//! remote agent calling a second compiled service, an intent_classifier and
//! a rag node over a folder of Markdown files is compiled for python-svc,
//! its own tests run, and the service is driven over HTTP. Every model call
//! goes to a loopback chat-completions stub that scripts replies in the
//! standard `tool_calls` format; guardrails and policies added to the
//! project the way a user would answer with their contract codes.

use std::path::Path;
use std::time::Duration;

use super::agents::model_reply;
use serde_json::{json, Value};
use svc_tests::http::{Reply, Request, Stub};
use svc_tests::service::{check_project, compile, require_python_sdk, Project, Service};

const KEY: &str = "agents-key-7c1d";
const PEER_KEY: &str = "peer-key-93ab";

fn graph() -> Value {
    let agent_node = |id: &str, agent: &str| json!({"id": id, "kind": "agent", "agent": agent, "input": "{{question}}", "outputKey": "answer"});
    let modes = [
        ("team", "ask_team"),
        ("pipeline", "ask_pipeline"),
        ("vault", "ask_vault"),
        ("loop", "ask_looper"),
        ("rounds", "ask_spinner"),
        ("peer", "ask_peer"),
        ("intent", "classify"),
        ("rag", "search"),
        ("sub_path", "sub_path"),
        ("sub_embedded", "sub_embedded"),
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
        json!({"id": "search", "kind": "rag", "query": "{{question}}", "documents": "docs", "topK": 2,
               "outputKey": "passages"}),
        json!({"id": "sub_path", "kind": "subgraph", "graph": "parts/summary.graph.json",
               "input": {"topic": "question"}, "output": {"answer": "summary"}}),
        json!({"id": "sub_embedded", "kind": "subgraph", "graph": embedded_child(),
               "input": {"q": "question"}, "output": {"answer": "r"}}),
        json!({"id": "end", "kind": "end"}),
    ];
    let mut edges = vec![json!({"from": "start", "to": "route"})];
    for n in &nodes[2..nodes.len() - 1] {
        edges.push(json!({"from": n["id"], "to": "end"}));
    }
    json!({
        "irVersion": "2.2",
        "id": "agents_demo",
        "target": {"platform": "python-svc"},
        "logical": {
            "state": [
                {"name": "question", "type": "string", "required": true},
                {"name": "mode", "type": "string", "default": "worker"},
                {"name": "answer", "type": "string", "default": ""},
                {"name": "intent", "type": "string", "default": ""},
                {"name": "passages", "type": "array", "items": {"type": "object"}, "default": []}
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
        "bodiesByPlatform": {"python-svc": {
            "lookup": "return {\"word\": state.get(\"word\"), \"meaning\": \"money back\"}",
            "pipeline": "if state[\"round\"] == 0:\n    return \"researcher\"\nif state[\"last_member\"] == \"researcher\":\n    return \"writer\"\nreturn \"finish\"",
            "spinner": "return \"writer\""
        }}
    })
}

/// A child read from a file: its own worker `writer` and tool `lookup`
/// (ids the parent uses too) under a custom supervisor, and a scratch field
/// the parent never sees.
fn path_child() -> Value {
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
        "bodiesByPlatform": {"python-svc": {
            "lookup": "return {\"child\": True}",
            // Written with the child's own ids, though they are registered with a prefix.
            "team": "if state[\"last_member\"] is None:\n    return \"writer\"\nassert state[\"last_member\"] == \"writer\"\nreturn \"finish\""
        }}
    })
}

fn embedded_child() -> Value {
    json!({
        "irVersion": "2.2",
        "id": "echo",
        "logical": {
            "state": [{"name": "q", "type": "string", "required": true}, {"name": "r", "type": "string"}],
            "nodes": [{"id": "start", "kind": "start"},
                      {"id": "say", "kind": "response_template", "template": "embedded {{q}}", "outputKey": "r"},
                      {"id": "end", "kind": "end"}],
            "edges": [{"from": "start", "to": "say"}, {"from": "say", "to": "end"}]
        }
    })
}

fn peer_graph() -> Value {
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
        "bodiesByPlatform": {"python-svc": {"say": "return {\"answer\": \"peer says \" + state[\"question\"]}"}}
    })
}

fn write_json(path: &Path, v: &Value) {
    std::fs::write(path, serde_json::to_string_pretty(v).unwrap()).unwrap();
}

/// The user's own guardrails and policies, added the way `svc new` projects
/// grow them: a module per component, imported by its package.
fn add_guardrails_and_policies(project: &Project) {
    let app = project.path().join("app");
    std::fs::write(
        app.join("guardrails/checks.py"),
        "\"\"\"Checks added by the team.\"\"\"\n\nfrom svc import input_guardrail, output_guardrail\n\n\n\
         @input_guardrail(\"no_forbidden_words\")\ndef no_forbidden_words(state: dict) -> bool:\n    \
         return \"forbidden\" not in state.get(\"question\", \"\")\n\n\n\
         @output_guardrail(\"no_shipping_talk\")\ndef no_shipping_talk(state: dict) -> bool:\n    \
         return state.get(\"intent\") != \"shipping\"\n",
    )
    .unwrap();
    std::fs::write(
        app.join("guardrails/__init__.py"),
        "\"\"\"Guardrails.\"\"\"\n\nfrom . import checks  # noqa: F401\n",
    )
    .unwrap();
    std::fs::write(
        app.join("policies/rules.py"),
        "\"\"\"Policies added by the team.\"\"\"\n\nfrom svc import business_policy\n\n\n\
         @business_policy(\"no_run\", priority=10)\ndef no_run(context: dict) -> str:\n    \
         state = context.get(\"state\") or {}\n    \
         return \"deny\" if \"deny-run\" in state.get(\"question\", \"\") else \"allow\"\n\n\n\
         @business_policy(\"no_writer_delegation\", priority=1)\ndef no_writer(context: dict) -> str:\n    \
         if context[\"action\"] == \"delegate\" and context[\"agent\"] == \"writer\":\n        \
         return \"deny\" if \"no-writer\" in context[\"task\"] else \"allow\"\n    \
         return \"allow\"\n",
    )
    .unwrap();
    std::fs::write(
        app.join("policies/__init__.py"),
        "\"\"\"Policies.\"\"\"\n\nfrom . import rules  # noqa: F401\n",
    )
    .unwrap();
}

#[test]
fn python_agents_and_nodes_over_http() {
    if !require_python_sdk() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let docs = dir.path().join("docs");
    std::fs::create_dir_all(docs.join("more")).unwrap();
    std::fs::write(
        docs.join("refunds.md"),
        "# Refunds\n\nRefunds are paid within 14 days of the request.",
    )
    .unwrap();
    std::fs::write(
        docs.join("shipping.md"),
        "# Shipping\n\nParcels leave the warehouse every weekday.",
    )
    .unwrap();
    std::fs::write(
        docs.join("more/returns.txt"),
        "Returns of a refund request need the receipt.",
    )
    .unwrap();
    std::fs::write(docs.join("notes.json"), "{\"not\": \"a document\"}").unwrap();
    std::fs::create_dir_all(dir.path().join("parts")).unwrap();
    write_json(&dir.path().join("parts/summary.graph.json"), &path_child());
    let main_doc = dir.path().join("agents.graph.json");
    let peer_doc = dir.path().join("peer.graph.json");
    write_json(&main_doc, &graph());
    write_json(&peer_doc, &peer_graph());

    let llm = Stub::start(model_reply).unwrap();
    let crm = Stub::start(|req| {
        Reply::Json(
            200,
            json!({"source": "crm", "asked": req.json()}).to_string(),
        )
    })
    .unwrap();

    let peer_project = compile("python-svc", &peer_doc).expect("peer compiles");
    check_project(&peer_project, "python-svc").unwrap();
    let peer = Service::launch(
        &peer_project,
        &[("SVC_API_KEY", PEER_KEY)],
        Duration::from_secs(120),
    )
    .unwrap();

    let project = compile("python-svc", &main_doc).expect("agents graph compiles");
    // The documents were copied into the project at compile time.
    let copied = std::fs::read_to_string(project.path().join("app/documents/search.json")).unwrap();
    let copied: Value = serde_json::from_str(&copied).unwrap();
    let ids: Vec<&str> = copied
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["more/returns.txt", "refunds.md", "shipping.md"]);

    let peer_url = format!("http://127.0.0.1:{}", peer.port);
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
    // The project's own checks first, then the service with the team's
    // guardrails and policies added.
    check_project(&project, "python-svc").unwrap();
    add_guardrails_and_policies(&project);
    let s = Service::launch(&project, &env, Duration::from_secs(120)).unwrap();
    let invoke = |question: &str, mode: &str| {
        let body = json!({"state": {"question": question, "mode": mode}}).to_string();
        let r = s
            .send(
                "POST",
                "/invoke",
                &[("Content-Type", "application/json"), ("X-API-Key", KEY)],
                body.as_bytes(),
            )
            .unwrap();
        (r.status, r.json())
    };
    let error_of = |(status, body): (u16, Value), want_status: u16, code: &str| -> Value {
        assert_eq!(status, want_status, "{body}");
        assert_eq!(body["error"]["code"], code, "{body}");
        body["error"]["details"].clone()
    };

    // A worker calls a native and an HTTP tool, then answers; only its
    // answer reaches the state (no conversation, no tool results).
    let (status, body) = invoke("What is a refund?", "worker");
    assert_eq!(status, 200, "{body}");
    let result = body["result"].as_object().unwrap();
    let mut keys: Vec<&str> = result.keys().map(String::as_str).collect();
    keys.sort();
    assert_eq!(keys, ["answer", "intent", "mode", "passages", "question"]);
    let answer = result["answer"].as_str().unwrap();
    assert!(answer.starts_with("researched: "), "{answer}");
    assert!(answer.contains("money back"), "{answer}");
    assert!(answer.contains("\"source\": \"crm\""), "{answer}");
    let asked = crm.received();
    assert_eq!(asked.last().unwrap().json(), json!({"q": "refund"}));
    let first = llm.received()[0].json();
    let offered: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(offered, ["lookup", "crm"]);
    assert_eq!(first["model"], "stub-model");

    // Supervisors: the model routes (researcher, writer, finish), and a
    // custom body routes the same way; the answer is the last member's.
    for mode in ["team", "pipeline"] {
        let before = llm.received().len();
        let (status, body) = invoke("What is a refund?", mode);
        assert_eq!(status, 200, "{mode}: {body}");
        let answer = body["result"]["answer"].as_str().unwrap();
        assert!(
            answer.starts_with("written: What is a refund? |  | researched: "),
            "{mode}: {answer}"
        );
        let calls = llm.received().len() - before;
        // researcher (2 calls) and writer (1), plus 3 routing calls for `llm`.
        assert_eq!(calls, if mode == "team" { 6 } else { 3 }, "{mode}");
    }
    let routing = llm
        .received()
        .iter()
        .map(Request::json)
        .find(|b| {
            b["messages"][0]["content"]
                .as_str()
                .unwrap_or("")
                .contains("Route the task.")
        })
        .unwrap();
    let prompt = routing["messages"][0]["content"].as_str().unwrap();
    assert!(
        prompt.contains("researcher: finds facts") && prompt.contains("finish"),
        "{prompt}"
    );

    // The limits and the roles.
    let d = error_of(invoke("anything", "vault"), 500, "execution_error");
    assert_eq!(d["reason"], "forbidden", "{d}");
    let d = error_of(invoke("anything", "loop"), 500, "execution_error");
    assert_eq!(d["reason"], "max_turns", "{d}");
    let d = error_of(invoke("anything", "rounds"), 500, "execution_error");
    assert_eq!(d["reason"], "max_rounds", "{d}");

    // A remote agent: the second compiled service, with its key.
    let (status, body) = invoke("Hello", "peer");
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["result"]["answer"], "peer says Hello");

    // intent_classifier: a matching reply (trimmed, any case) and not.
    let (status, body) = invoke("Where is my refund?", "intent");
    assert_eq!(
        (status, body["result"]["intent"].clone()),
        (200, json!("billing")),
        "{body}"
    );
    let (status, body) = invoke("Good morning", "intent");
    assert_eq!(
        (status, body["result"]["intent"].clone()),
        (200, json!("other")),
        "{body}"
    );

    // rag over the folder: ranked passages, best first, at most topK.
    let (status, body) = invoke("refunds paid within days of a request", "rag");
    assert_eq!(status, 200, "{body}");
    let passages = body["result"]["passages"].as_array().unwrap();
    assert_eq!(passages.len(), 2, "{body}");
    assert_eq!(passages[0]["id"], "refunds.md", "{body}");
    let scores: Vec<f64> = passages
        .iter()
        .map(|p| p["score"].as_f64().unwrap())
        .collect();
    assert!(scores[0] > scores[1] && scores[1] > 0.0, "{scores:?}");
    let (status, body) = invoke("zebra", "rag");
    assert_eq!(
        (status, body["result"]["passages"].clone()),
        (200, json!([])),
        "{body}"
    );

    // Subgraphs, by path and embedded: only `output` reaches the parent.
    let before = llm.received().len();
    let (status, body) = invoke("Hello", "sub_path");
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["result"]["answer"], "summary: scratch Hello", "{body}");
    assert!(body["result"].get("scratch").is_none() && body["result"].get("topic").is_none());
    let child_call = llm.received()[before].json();
    assert_eq!(
        child_call["tools"][0]["function"]["name"], "sub_path__lookup",
        "{child_call}"
    );
    let (status, body) = invoke("Hello", "sub_embedded");
    assert_eq!(
        (status, body["result"]["answer"].clone()),
        (200, json!("embedded Hello")),
        "{body}"
    );

    // Guardrails and policies, with their codes and details.
    let d = error_of(invoke("a forbidden word", "worker"), 422, "input_blocked");
    assert_eq!(d["guardrail"], "no_forbidden_words", "{d}");
    let d = error_of(
        invoke("when will you ship", "intent"),
        500,
        "output_blocked",
    );
    assert_eq!(d["guardrail"], "no_shipping_talk", "{d}");
    let d = error_of(invoke("please deny-run", "worker"), 403, "policy_denied");
    assert_eq!(d["policy"], "no_run", "{d}");
    let d = error_of(invoke("no-writer please", "team"), 403, "policy_denied");
    assert_eq!(d["policy"], "no_writer_delegation", "{d}");

    // GET /info shows every agent with its limits.
    let r = s.send("GET", "/info", &[("X-API-Key", KEY)], b"").unwrap();
    let info = r.json();
    assert_eq!(info["agents"]["looper"]["maxTurns"], 2, "{info}");
    assert_eq!(info["agents"]["team"]["maxRounds"], 10, "{info}");
    assert_eq!(info["agents"]["peer"]["kind"], "remote", "{info}");
    drop(s);
    drop(peer);
}
