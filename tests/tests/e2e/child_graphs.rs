//! A subgraph's child with a model provider and an MCP server of its own,
//! on every target (issue 58, item 3): the child's `settings.model` names
//! other base-URL and key variables than its parent's, so its model calls
//! go to a second stub with its own key while the parent's go to the first;
//! its MCP server (the official SDK's `MCPServer` over stdio, registered as
//! `research__files`) is started with the service, serves the child's tool
//! node and worker agent, and stops with it. go, java-svc and python-svc
//! must give the same answers.

use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};
use svc_tests::http::{Reply, Request, Stub};
use svc_tests::service::{
    build, check_project, compile, require_platform, require_python_sdk, Service,
};

use crate::mcp::FILES_SERVER;

const KEY: &str = "child-graphs-key-7c1d";
const PARENT_KEY: &str = "parent-model-key";
const CHILD_KEY: &str = "child-model-key";

fn graph(server_script: &Path) -> Value {
    let child = json!({
        "irVersion": "2.2",
        "id": "research",
        "logical": {
            "state": [
                {"name": "topic", "type": "string", "required": true},
                {"name": "mode", "type": "string", "default": "read"},
                {"name": "found", "type": "object", "default": {}},
                {"name": "summary", "type": "string", "default": ""}
            ],
            "nodes": [
                {"id": "start", "kind": "start"},
                {"id": "route", "kind": "router", "branches": [
                    {"when": {"field": "mode", "op": "eq", "value": "explode"}, "to": "boom"},
                    {"when": {"field": "mode", "op": "eq", "value": "pid"}, "to": "who"},
                    {"to": "read"}]},
                {"id": "read", "kind": "tool", "toolId": "read_file", "input": {"path": "{{topic}}"}, "outputKey": "found"},
                {"id": "summarize", "kind": "agent", "agent": "reader", "input": "Summarize {{topic}}", "outputKey": "summary"},
                {"id": "boom", "kind": "tool", "toolId": "explode", "input": {"reason": "{{topic}}"}, "outputKey": "summary"},
                {"id": "who", "kind": "tool", "toolId": "pid", "input": {}, "outputKey": "summary"},
                {"id": "end", "kind": "end"}
            ],
            "edges": [
                {"from": "start", "to": "route"},
                {"from": "read", "to": "summarize"},
                {"from": "summarize", "to": "end"},
                {"from": "boom", "to": "end"},
                {"from": "who", "to": "end"}
            ],
            "tools": [
                {"id": "read_file", "kind": "mcp", "server": "files", "tool": "read_file", "description": "Reads a file."},
                {"id": "explode", "kind": "mcp", "server": "files", "tool": "explode"},
                {"id": "pid", "kind": "mcp", "server": "files", "tool": "pid"}
            ],
            "mcpServers": [
                {"id": "files", "transport": "stdio", "command": "python",
                 "args": [server_script.display().to_string()],
                 "env": {"FILES_TOKEN": "${MCP_FILES_TOKEN}"}, "timeoutMs": 10000}
            ],
            "agents": [
                {"id": "reader", "kind": "worker", "instructions": "You read files.", "toolIds": ["read_file"]}
            ],
            "settings": {"model": {"provider": "openai", "name": "research-model",
                                   "baseUrlEnv": "RESEARCH_MODEL_URL", "apiKeyEnv": "RESEARCH_MODEL_KEY"}}
        }
    });
    json!({
        "irVersion": "2.2",
        "id": "child_graphs",
        "logical": {
            "state": [
                {"name": "question", "type": "string", "required": true},
                {"name": "mode", "type": "string", "default": "read"},
                {"name": "draft", "type": "string", "default": ""},
                {"name": "record", "type": "object", "default": {}},
                {"name": "answer", "type": "string", "default": ""}
            ],
            "nodes": [
                {"id": "start", "kind": "start"},
                {"id": "draft", "kind": "llm", "prompt": {"user": "Draft: {{question}}"}, "outputKey": "draft"},
                {"id": "research", "kind": "subgraph", "graph": child,
                 "input": {"topic": "question", "mode": "mode"},
                 "output": {"record": "found", "answer": "summary"}},
                {"id": "end", "kind": "end"}
            ],
            "edges": [
                {"from": "start", "to": "draft"},
                {"from": "draft", "to": "research"},
                {"from": "research", "to": "end"}
            ],
            "settings": {"model": {"provider": "openai", "name": "parent-model"}}
        }
    })
}

/// The parent's model: one reply naming what it was asked.
fn parent_model(req: &Request) -> Reply {
    let body = req.json();
    let user = body["messages"][0]["content"].as_str().unwrap_or_default();
    let message = json!({"role": "assistant", "content": format!("parent drafted ({user})")});
    Reply::Json(200, json!({"choices": [{"message": message}]}).to_string())
}

/// The child's model: the worker calls its tool (`read_file`, registered
/// as `research__read_file`), then answers with what the tool gave it.
fn child_model(req: &Request) -> Reply {
    let body = req.json();
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let tool_result = messages
        .iter()
        .find(|m| m["role"] == "tool")
        .and_then(|m| m["content"].as_str())
        .map(str::to_string);
    let message = match tool_result {
        None => json!({"role": "assistant", "content": null, "tool_calls": [{
            "id": "t1", "type": "function",
            "function": {"name": "research__read_file", "arguments": "{\"path\": \"notes.txt\"}"}}]}),
        Some(text) => json!({"role": "assistant", "content": format!("child read: {text}")}),
    };
    Reply::Json(200, json!({"choices": [{"message": message}]}).to_string())
}

/// Every target's answers to the same requests, and each held to go's.
#[test]
fn a_child_calls_its_own_model_provider_and_mcp_server_on_every_target() {
    if !require_python_sdk() {
        return;
    }
    let mut answers: Vec<(&str, Vec<(String, Value)>)> = Vec::new();
    for platform in ["go", "java-svc", "python-svc"] {
        if require_platform(platform) {
            answers.push((platform, run(platform)));
            eprintln!("{platform}: the child's model provider and MCP server are its own");
        }
    }
    if let Some(((first, expected), rest)) = answers.split_first() {
        for (platform, got) in rest {
            assert_eq!(
                got.len(),
                expected.len(),
                "{platform} gave {} answers, {first} {}",
                got.len(),
                expected.len()
            );
            for ((what, want), (_, have)) in expected.iter().zip(got) {
                assert_eq!(
                    have, want,
                    "{what}: {platform} answered otherwise than {first}"
                );
            }
        }
    }
}

fn run(platform: &str) -> Vec<(String, Value)> {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("files_server.py");
    std::fs::write(&script, FILES_SERVER).unwrap();
    let doc = dir.path().join("child_graphs.graph.json");
    std::fs::write(&doc, graph(&script).to_string()).unwrap();
    let project = compile(platform, &doc).unwrap_or_else(|d| panic!("{platform}: {d:?}"));
    check_project(&project, platform).unwrap_or_else(|e| panic!("{platform}: {e}"));
    build(&project).unwrap_or_else(|e| panic!("{platform}: {e}"));

    let parent = Stub::start(parent_model).unwrap();
    let child = Stub::start(child_model).unwrap();
    let parent_url = format!("{}/v1", parent.url());
    let child_url = format!("{}/v1", child.url());
    let env = [
        ("SVC_API_KEY", KEY),
        ("OPENAI_BASE_URL", parent_url.as_str()),
        ("OPENAI_API_KEY", PARENT_KEY),
        ("RESEARCH_MODEL_URL", child_url.as_str()),
        ("RESEARCH_MODEL_KEY", CHILD_KEY),
        ("MCP_FILES_TOKEN", "t-123"),
        ("SVC_LEAK_PROBE", "must-not-reach-the-child"),
    ];
    let s = Service::launch(&project, &env, Duration::from_secs(120))
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

    // The parent's llm node calls the parent's provider; the child's tool
    // node and worker call the child's MCP server, and its worker the
    // child's provider, each with its own key.
    let (status, body) = invoke("notes.txt", "read");
    assert_eq!(status, 200, "{platform}: {body}");
    let result = &body["result"];
    assert_eq!(
        result["draft"],
        json!("parent drafted (Draft: notes.txt)"),
        "{platform}: {body}"
    );
    assert_eq!(
        result["record"],
        json!({"path": "notes.txt", "text": "contents of notes.txt", "token": "t-123", "leak": null}),
        "{platform}: {body}"
    );
    let answer = result["answer"].as_str().unwrap_or_default();
    assert!(
        answer.starts_with("child read: ") && answer.contains("contents of notes.txt"),
        "{platform}: {body}"
    );
    answers.push(("read".to_string(), json!({"status": status, "body": body})));

    let to_parent = parent.received();
    let to_child = child.received();
    assert_eq!(to_parent.len(), 1, "{platform}: the parent's provider");
    assert_eq!(to_child.len(), 2, "{platform}: the child's provider");
    for (req, key, model) in to_parent
        .iter()
        .map(|r| (r, PARENT_KEY, "parent-model"))
        .chain(to_child.iter().map(|r| (r, CHILD_KEY, "research-model")))
    {
        assert_eq!(req.path, "/v1/chat/completions", "{platform}");
        assert_eq!(
            req.header("authorization"),
            Some(format!("Bearer {key}").as_str()),
            "{platform}: {model}"
        );
        assert_eq!(req.json()["model"], json!(model), "{platform}");
    }
    // The child's worker was offered the child's tool by its registered name.
    assert_eq!(
        to_child[0].json()["tools"][0]["function"]["name"],
        json!("research__read_file"),
        "{platform}"
    );

    // A tool's error names the node and the server by their registered names.
    let (status, body) = invoke("on purpose", "explode");
    assert_eq!(status, 502, "{platform}: {body}");
    let details = &body["error"]["details"];
    assert_eq!(
        (
            details["node"].clone(),
            details["server"].clone(),
            details["tool"].clone(),
            details["reason"].clone()
        ),
        (
            json!("research__boom"),
            json!("research__files"),
            json!("explode"),
            json!("tool_error")
        ),
        "{platform}: {body}"
    );
    answers.push((
        "explode".to_string(),
        json!({"status": status, "body": body}),
    ));

    // The child's server stops with the service: no process of it is left.
    let (status, body) = invoke("who", "pid");
    assert_eq!(status, 200, "{platform}: {body}");
    let pid: u32 = body["result"]["answer"]
        .as_str()
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("{platform}: {body}"));
    s.terminate(Duration::from_secs(20))
        .unwrap_or_else(|e| panic!("{platform}: {e}"));
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists(),
        "{platform}: the child graph's MCP server {pid} outlived the service"
    );
    answers
}
