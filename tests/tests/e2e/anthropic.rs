//! `provider: anthropic` (issue 60): one graph whose model is Anthropic's
//! Messages API, on every target, against a stub of that API. Each target
//! must send the API's headers (`x-api-key`, `anthropic-version`), the
//! system prompt as `system`, `max_tokens` (the API requires it), the
//! messages and tools in the API's form through a tool-use round, read a
//! streamed reply's events as tokens, and count the usage the API reports.
//! The answers and the requests are compared across the targets.

use std::time::Duration;

use serde_json::{json, Value};
use svc_tests::http::{Reply, Request, Stub};
use svc_tests::messages_stub::{MessagesStub, Turn};
use svc_tests::service::{alike_on_every_target, build, compile, Service};

const KEY: &str = "anthropic-service-key-3c1d";
const MODEL_KEY: &str = "sk-ant-stub-77e2";

/// An `llm` node with a system prompt, and one with a bound HTTP tool,
/// chosen by `mode`; the model's settings name no variables, so the
/// provider's own (`ANTHROPIC_BASE_URL`, `ANTHROPIC_API_KEY`) are used,
/// and no `maxTokens`, so the API's required `max_tokens` is the default.
fn graph() -> Value {
    json!({
        "irVersion": "2.2",
        "id": "anthropic_calls",
        "security": { "auth": "api_key", "keyEnv": "SVC_API_KEY" },
        "logical": {
            "state": [
                { "name": "question", "type": "string", "required": true },
                { "name": "mode", "type": "string" },
                { "name": "reply", "type": "string" }
            ],
            "tools": [
                { "id": "crm", "kind": "http", "endpoint": "env:CRM_URL", "description": "Asks the CRM." }
            ],
            "nodes": [
                { "id": "start", "kind": "start" },
                { "id": "route", "kind": "router", "branches": [
                    { "when": { "field": "mode", "op": "eq", "value": "tools" }, "to": "look_up" },
                    { "to": "answer" } ] },
                { "id": "answer", "kind": "llm", "outputKey": "reply",
                  "prompt": { "system": "You are terse.", "user": "{{question}}" } },
                { "id": "look_up", "kind": "llm", "outputKey": "reply", "boundToolIds": ["crm"],
                  "prompt": { "system": "You look up.", "user": "{{question}}" } },
                { "id": "end", "kind": "end" }
            ],
            "edges": [
                { "from": "start", "to": "route" },
                { "from": "answer", "to": "end" },
                { "from": "look_up", "to": "end" }
            ],
            "settings": {
                "streaming": true,
                "model": { "provider": "anthropic", "name": "claude-stub" }
            }
        }
    })
}

/// The model: the tool-use node asks the CRM once, then answers with what
/// it got; every other request is answered in words.
fn script(req: &Request) -> Turn {
    let body = req.json();
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let results: Vec<String> = messages
        .iter()
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .filter(|b| b["type"] == "tool_result")
        .map(|b| b["content"].as_str().unwrap_or_default().to_string())
        .collect();
    if body["system"] == "You look up." {
        if results.is_empty() {
            return Turn::ToolUse {
                id: "toolu_01".into(),
                name: "crm".into(),
                input: json!({"q": "refund"}),
            };
        }
        return Turn::Text(format!("found: {}", results.join(" + ")));
    }
    Turn::Text("Hello from the Messages API".into())
}

#[test]
fn the_anthropic_provider_is_called_alike_on_every_target() {
    alike_on_every_target(run);
}

/// What a request to the Messages API carries that every target must send
/// alike.
fn sent(req: &Request) -> Value {
    let body = req.json();
    json!({
        "path": req.path,
        "x-api-key": req.header("x-api-key"),
        "anthropic-version": req.header("anthropic-version"),
        "authorization": req.header("authorization"),
        "model": body["model"],
        "max_tokens": body["max_tokens"],
        "system": body["system"],
        "messages": body["messages"],
        "tools": body["tools"],
        "stream": body["stream"].as_bool().unwrap_or(false),
    })
}

/// The three cases on one target; returns the answers and the requests.
fn run(platform: &'static str) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let doc = dir.path().join("anthropic_calls.graph.json");
    std::fs::write(&doc, graph().to_string()).unwrap();
    let project = compile(platform, &doc).unwrap_or_else(|d| panic!("{platform}: {d:?}"));
    build(&project).unwrap_or_else(|e| panic!("{platform}: {e}"));
    let model = MessagesStub::start(script).unwrap();
    let crm = Stub::start(|req: &Request| {
        Reply::Json(
            200,
            json!({"asked": req.json(), "source": "crm"}).to_string(),
        )
    })
    .unwrap();
    let (model_url, crm_url) = (model.url(), crm.url());
    let env = [
        ("SVC_API_KEY", KEY),
        ("ANTHROPIC_BASE_URL", model_url.as_str()),
        ("ANTHROPIC_API_KEY", MODEL_KEY),
        ("CRM_URL", crm_url.as_str()),
    ];
    let service = Service::launch(&project, &env, Duration::from_secs(120))
        .unwrap_or_else(|e| panic!("{platform}: {e}"));
    let ask = |state: Value, accept: &str| {
        let body = json!({ "state": state }).to_string();
        service
            .send(
                "POST",
                "/invoke",
                &[
                    ("Content-Type", "application/json"),
                    ("Accept", accept),
                    ("X-API-Key", KEY),
                ],
                body.as_bytes(),
            )
            .unwrap_or_else(|e| panic!("{platform}: {e}"))
    };
    let usage = |calls: u64| {
        let (input, output) = svc_tests::messages_stub::USAGE;
        json!({"inputTokens": calls * input, "outputTokens": calls * output, "modelCalls": calls, "attempts": calls})
    };

    // A plain reply: the headers, the system prompt, the default max_tokens.
    let r = ask(json!({"question": "Hi"}), "application/json");
    let plain = r.json();
    assert_eq!(r.status, 200, "{platform}: {plain}");
    assert_eq!(
        plain["result"]["reply"], "Hello from the Messages API",
        "{platform}"
    );
    assert_eq!(plain["usage"], usage(1), "{platform}: {plain}");
    let requests = model.received();
    assert_eq!(requests.len(), 1, "{platform}");
    let first = sent(&requests[0]);
    assert_eq!(
        first,
        json!({"path": "/v1/messages", "x-api-key": MODEL_KEY, "anthropic-version": "2023-06-01",
               "authorization": null, "model": "claude-stub", "max_tokens": 4096,
               "system": "You are terse.", "messages": [{"role": "user", "content": "Hi"}],
               "tools": null, "stream": false}),
        "{platform}"
    );

    // A tool-use round: the tool as the API's tool, the call and its
    // result in the API's blocks, then the answer.
    let r = ask(
        json!({"question": "refund?", "mode": "tools"}),
        "application/json",
    );
    let tools = r.json();
    assert_eq!(r.status, 200, "{platform}: {tools}");
    assert_eq!(tools["usage"], usage(2), "{platform}: {tools}");
    let round: Vec<Value> = model.received()[1..].iter().map(sent).collect();
    assert_eq!(round.len(), 2, "{platform}: {round:?}");
    assert_eq!(
        round[0]["tools"],
        json!([{"name": "crm", "description": "Asks the CRM.", "input_schema": {"type": "object"}}]),
        "{platform}"
    );
    assert_eq!(
        round[1]["messages"][1],
        json!({"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_01", "name": "crm", "input": {"q": "refund"}}]}),
        "{platform}"
    );
    let result = &round[1]["messages"][2]["content"][0];
    assert_eq!(
        (result["type"].clone(), result["tool_use_id"].clone()),
        (json!("tool_result"), json!("toolu_01")),
        "{platform}: {round:?}"
    );
    assert_eq!(crm.received().len(), 1, "{platform}");

    // A streamed reply: the text's pieces as tokens, the usage at the end.
    let r = ask(json!({"question": "Stream it"}), "text/event-stream");
    assert_eq!(r.status, 200, "{platform}: {}", r.text());
    let events: Vec<Value> = r
        .text()
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter_map(|d| serde_json::from_str(d).ok())
        .collect();
    let tokens: String = events
        .iter()
        .filter(|e| e["type"] == "token")
        .map(|e| e["data"]["delta"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(
        tokens, "Hello from the Messages API",
        "{platform}: {events:?}"
    );
    let finished = &events
        .iter()
        .find(|e| e["type"] == "run_finished")
        .unwrap_or_else(|| panic!("{platform}: no run_finished in {events:?}"))["data"];
    assert_eq!(finished["usage"], usage(1), "{platform}: {finished}");
    let streamed = model.received().last().map(sent).unwrap();
    assert_eq!(streamed["stream"], true, "{platform}: {streamed}");

    json!({
        "answers": [plain, tools, finished["result"]],
        "requests": model.received().iter().map(sent).collect::<Vec<_>>(),
        "crm": crm.received().iter().map(Request::json).collect::<Vec<_>>(),
    })
}
