//! Structured output (issue 60): an `llm` node whose output field declares
//! `properties` asks the model for an object of that shape, on the openai
//! wire (`response_format` json_schema, strict) and on the anthropic one (a
//! forced tool), checks the reply, asks once more with the problem named,
//! and fails with `invalid_output` after a second bad reply. A request's
//! value of such a field is checked against its properties too. The same
//! graph runs on every target against the two stubs; the answers and the
//! requests the stubs received are compared across targets.

use std::time::Duration;

use serde_json::{json, Value};
use svc_tests::http::Request;
use svc_tests::messages_stub::{MessagesStub, Turn};
use svc_tests::model_stub::{Attempt, ModelStub};
use svc_tests::service::{alike_on_every_target, build, check_project, compile, Service};

const KEY: &str = "structured-key-7c21";

fn graph() -> Value {
    json!({
        "irVersion": "2.2",
        "id": "structured_calls",
        "security": { "auth": "api_key", "keyEnv": "SVC_API_KEY" },
        "logical": {
            "state": [
                { "name": "text", "type": "string", "required": true },
                { "name": "invoice", "type": "object", "properties": {
                    "customer": { "type": "string", "description": "Who is billed." },
                    "total": { "type": "number" },
                    "lines": { "type": "array", "items": { "type": "object", "properties": {
                        "item": { "type": "string" }, "quantity": { "type": "integer" } } } } } },
                { "name": "verdict", "type": "object", "properties": {
                    "ok": { "type": "boolean" }, "note": { "type": "string" } } }
            ],
            "nodes": [
                { "id": "start", "kind": "start" },
                { "id": "extract", "kind": "llm", "outputKey": "invoice",
                  "prompt": { "system": "You read invoices.", "user": "{{text}}" } },
                { "id": "verify", "kind": "llm", "outputKey": "verdict",
                  "model": { "provider": "anthropic", "name": "claude-stub", "retry": { "maxAttempts": 1 }, "fallbacks": [] },
                  "prompt": { "user": "Check: {{text}}" } },
                { "id": "end", "kind": "end" }
            ],
            "edges": [
                { "from": "start", "to": "extract" },
                { "from": "extract", "to": "verify" },
                { "from": "verify", "to": "end" }
            ],
            "settings": {
                "streaming": true,
                "model": { "provider": "openai", "name": "primary", "retry": { "maxAttempts": 1 } }
            }
        }
    })
}

/// The invoice schema as the compiler sends it: every property required,
/// no others, descriptions kept.
fn invoice_schema() -> Value {
    json!({"type": "object",
        "properties": {
            "customer": {"type": "string", "description": "Who is billed."},
            "total": {"type": "number"},
            "lines": {"type": "array", "items": {"type": "object",
                "properties": {"item": {"type": "string"}, "quantity": {"type": "integer"}},
                "required": ["item", "quantity"], "additionalProperties": false}}},
        "required": ["customer", "total", "lines"], "additionalProperties": false})
}

fn verdict_schema() -> Value {
    json!({"type": "object",
        "properties": {"ok": {"type": "boolean"}, "note": {"type": "string"}},
        "required": ["ok", "note"], "additionalProperties": false})
}

const INVOICE: &str =
    r#"{"customer": "ACME", "total": 12.5, "lines": [{"item": "bolts", "quantity": 3}]}"#;

/// The correction a second ask carries.
fn correction(pointer: &str, problem: &str) -> Value {
    json!({"role": "user", "content": format!(
        "The reply did not match the JSON schema at \"{pointer}\": {problem}. Answer again with only JSON that matches the schema.")})
}

/// The Messages API model: what the request's text asks for. `bad-once`
/// answers a verdict of the wrong type first, `bad-twice` twice.
fn verdicts(req: &Request) -> Turn {
    let body = req.json();
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let text = messages[0]["content"].to_string();
    let retried = messages.len() > 1;
    let input = if text.contains("bad-twice") || (text.contains("bad-once") && !retried) {
        json!({"ok": "yes", "note": "fine"})
    } else {
        json!({"ok": true, "note": "fine"})
    };
    Turn::ToolUse {
        id: "toolu_s1".into(),
        name: "structured_output".into(),
        input,
    }
}

/// What a chat-completions request carries that every target must send alike.
fn openai_sent(req: &Request) -> Value {
    let b = req.json();
    json!({"model": b["model"], "messages": b["messages"], "response_format": b["response_format"],
           "tools": b["tools"], "stream": b["stream"].as_bool().unwrap_or(false)})
}

fn anthropic_sent(req: &Request) -> Value {
    let b = req.json();
    json!({"model": b["model"], "messages": b["messages"], "tools": b["tools"],
           "tool_choice": b["tool_choice"], "stream": b["stream"].as_bool().unwrap_or(false)})
}

#[test]
fn structured_output_is_asked_checked_and_asked_again_alike_on_every_target() {
    alike_on_every_target(run);
}

fn run(platform: &'static str) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let doc = dir.path().join("structured_calls.graph.json");
    std::fs::write(&doc, graph().to_string()).unwrap();
    let project = compile(platform, &doc).unwrap_or_else(|d| panic!("{platform}: {d:?}"));
    check_project(&project, platform).unwrap_or_else(|e| panic!("{platform}: {e}"));
    build(&project).unwrap_or_else(|e| panic!("{platform}: {e}"));
    let openai = ModelStub::start().unwrap();
    let anthropic = MessagesStub::start(verdicts).unwrap();
    let (openai_url, anthropic_url) = (openai.url(), anthropic.url());
    let env = [
        ("SVC_API_KEY", KEY),
        ("OPENAI_BASE_URL", openai_url.as_str()),
        ("OPENAI_API_KEY", "k"),
        ("ANTHROPIC_BASE_URL", anthropic_url.as_str()),
        ("ANTHROPIC_API_KEY", "a"),
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
    let answer = |r: &svc_tests::http::Response| {
        let b = r.json();
        match r.status {
            200 => json!({"status": 200, "result": b["result"], "usage": b["usage"]}),
            s => {
                json!({"status": s, "code": b["error"]["code"], "details": b["error"]["details"], "usage": b["usage"]})
            }
        }
    };
    let invoice: Value = serde_json::from_str(INVOICE).unwrap();
    let verdict = json!({"ok": true, "note": "fine"});
    let mut answers = Vec::new();
    let seen_openai = |from: usize| -> Vec<Value> {
        openai.arrivals()[from..]
            .iter()
            .map(|a| openai_sent(&a.request))
            .collect()
    };

    // Valid replies on both wires: one call each, the schemas sent as the
    // providers' strict modes ask.
    openai.script("primary", vec![Attempt::Answer(INVOICE.into(), None)]);
    let sent_before = anthropic.received().len();
    let r = ask(
        json!({"text": "ACME owes 12.50 for 3 bolts."}),
        "application/json",
    );
    let a = answer(&r);
    assert_eq!(a["status"], 200, "{platform}: {a}");
    assert_eq!(a["result"]["invoice"], invoice, "{platform}: {a}");
    assert_eq!(a["result"]["verdict"], verdict, "{platform}: {a}");
    assert_eq!(a["usage"]["modelCalls"], 2, "{platform}: {a}");
    let asked = seen_openai(0);
    assert_eq!(asked.len(), 1, "{platform}: {asked:?}");
    assert_eq!(
        asked[0]["response_format"],
        json!({"type": "json_schema", "json_schema": {"name": "structured_output", "strict": true, "schema": invoice_schema()}}),
        "{platform}"
    );
    assert_eq!(asked[0]["tools"], Value::Null, "{platform}");
    let verify = anthropic_sent(&anthropic.received()[sent_before]);
    assert_eq!(
        verify["tools"],
        json!([{"name": "structured_output", "description": "Answer with this tool's input.", "input_schema": verdict_schema()}]),
        "{platform}"
    );
    assert_eq!(
        verify["tool_choice"],
        json!({"type": "tool", "name": "structured_output"}),
        "{platform}"
    );
    answers.push(a);

    // A bad reply on each wire is asked for once more, the problem named.
    openai.script(
        "primary",
        vec![
            Attempt::Answer(
                r#"{"customer": "ACME", "total": "12.50", "lines": []}"#.into(),
                None,
            ),
            Attempt::Answer(INVOICE.into(), None),
        ],
    );
    let sent_before = anthropic.received().len();
    let r = ask(json!({"text": "bad-once"}), "application/json");
    let a = answer(&r);
    assert_eq!(a["status"], 200, "{platform}: {a}");
    assert_eq!(a["result"]["invoice"], invoice, "{platform}: {a}");
    assert_eq!(a["usage"]["modelCalls"], 4, "{platform}: {a}");
    let asked = seen_openai(0);
    assert_eq!(asked.len(), 2, "{platform}: {asked:?}");
    let again = asked[1]["messages"].as_array().cloned().unwrap_or_default();
    assert_eq!(
        again[again.len() - 2..],
        [
            json!({"role": "assistant", "content": r#"{"customer": "ACME", "total": "12.50", "lines": []}"#}),
            correction("/total", "expected number")
        ],
        "{platform}: {again:?}"
    );
    let verify: Vec<Value> = anthropic.received()[sent_before..]
        .iter()
        .map(anthropic_sent)
        .collect();
    assert_eq!(verify.len(), 2, "{platform}: {verify:?}");
    let last = verify[1]["messages"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        last.last(),
        Some(&correction("/ok", "expected boolean")),
        "{platform}: {last:?}"
    );
    answers.push(a);

    // A second bad reply fails the run, naming where and what.
    openai.script(
        "primary",
        vec![
            Attempt::Answer("Sure! Here is the invoice.".into(), None),
            Attempt::Answer(
                r#"{"customer": "ACME", "total": 12.5, "lines": [{"item": "bolts", "quantity": 2.5}]}"#.into(),
                None,
            ),
        ],
    );
    let r = ask(json!({"text": "twice"}), "application/json");
    let a = answer(&r);
    assert_eq!(a["status"], 502, "{platform}: {a}");
    assert_eq!(a["code"], "upstream_error", "{platform}: {a}");
    let d = &a["details"];
    assert_eq!(
        (
            &d["node"],
            &d["reason"],
            &d["path"],
            &d["problem"],
            &d["model"]
        ),
        (
            &json!("extract"),
            &json!("invalid_output"),
            &json!("/lines/0/quantity"),
            &json!("expected integer"),
            &json!("primary")
        ),
        "{platform}: {a}"
    );
    assert_eq!(a["usage"]["modelCalls"], 2, "{platform}: {a}");
    assert_eq!(
        seen_openai(0)[1]["messages"]
            .as_array()
            .and_then(|m| m.last().cloned()),
        Some(correction("", "not JSON")),
        "{platform}"
    );
    answers.push(a);

    // The same on the Messages API: its tool's input fails twice.
    openai.script("primary", vec![Attempt::Answer(INVOICE.into(), None)]);
    let r = ask(json!({"text": "bad-twice"}), "application/json");
    let a = answer(&r);
    assert_eq!(a["status"], 502, "{platform}: {a}");
    assert_eq!(a["details"]["node"], "verify", "{platform}: {a}");
    assert_eq!(a["details"]["path"], "/ok", "{platform}: {a}");
    assert_eq!(a["details"]["model"], "claude-stub", "{platform}: {a}");
    answers.push(a);

    // A streamed run: a structured node's call is never streamed, so no
    // tokens; its object is in the result.
    openai.script("primary", vec![Attempt::Answer(INVOICE.into(), None)]);
    let r = ask(json!({"text": "stream"}), "text/event-stream");
    assert_eq!(r.status, 200, "{platform}: {}", r.text());
    let events: Vec<Value> = r
        .text()
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter_map(|d| serde_json::from_str(d).ok())
        .collect();
    assert!(
        !events.iter().any(|e| e["type"] == "token"),
        "{platform}: {events:?}"
    );
    let finished = events
        .iter()
        .find(|e| e["type"] == "run_finished")
        .unwrap_or_else(|| panic!("{platform}: no run_finished in {events:?}"));
    assert_eq!(finished["data"]["result"]["invoice"], invoice, "{platform}");
    assert_eq!(seen_openai(0)[0]["stream"], false, "{platform}");
    answers.push(json!({"streamed": finished["data"]["result"]}));

    // A request's value is checked against the field's properties.
    let r = ask(
        json!({"text": "x", "verdict": {"ok": true, "note": "n", "extra": 1}}),
        "application/json",
    );
    let a = answer(&r);
    assert_eq!(a["status"], 422, "{platform}: {a}");
    assert_eq!(
        (&a["code"], &a["details"]["field"], &a["details"]["path"]),
        (&json!("invalid_state"), &json!("verdict"), &json!("/extra")),
        "{platform}: {a}"
    );
    answers.push(a);

    service.terminate(Duration::from_secs(10)).ok();
    json!({
        "answers": answers,
        "openai": openai.arrivals().iter().map(|a| openai_sent(&a.request)).collect::<Vec<_>>(),
        "anthropic": anthropic.received().iter().map(anthropic_sent).collect::<Vec<_>>(),
    })
}
