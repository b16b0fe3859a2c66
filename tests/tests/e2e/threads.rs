//! Human in the loop on every target: one compiled graph with two `hitl`
//! nodes is paused and resumed over HTTP (`docs/http-contract.md`,
//! "Interrupt and resume"): each interrupt in turn, a wrong-typed answer,
//! an unknown thread, a second resume of one interrupt, two threads side by
//! side, the credential still required, and a paused run streamed (ending
//! with `interrupted`) and resumed streamed (starting with `resumed`);
//! every target answers the same.

use std::time::Duration;

use serde_json::{json, Value};
use svc_tests::service::{build, check_project, compile, require_platform, Service};

/// The targets that keep threads.
pub(crate) const THREADED: [&str; 3] = ["go", "python-svc", "java-svc"];

const KEY: &str = "hitl-key-0b7e";

/// The graph of these tests with `settings.checkpointer` (the durable
/// checkpointers' tests use it too).
pub(crate) fn graph(checkpointer: Value) -> Value {
    json!({
        "irVersion": "2.2",
        "id": "hitl_demo",
        "logical": {
            "state": [
                {"name": "question", "type": "string", "required": true},
                {"name": "draft", "type": "string", "default": ""},
                {"name": "approved", "type": "boolean", "default": false},
                {"name": "note", "type": "string", "default": ""},
                {"name": "reply", "type": "string", "default": ""}
            ],
            "nodes": [
                {"id": "start", "kind": "start"},
                {"id": "write", "kind": "response_template", "template": "Draft for {{question}}", "outputKey": "draft"},
                {"id": "approve", "kind": "hitl", "payload": {"draft": "{{draft}}", "ask": "Approve?"}, "outputKey": "approved"},
                {"id": "route", "kind": "router", "branches": [
                    {"when": {"field": "approved", "op": "truthy"}, "to": "comment"},
                    {"to": "reject"}]},
                {"id": "comment", "kind": "hitl", "payload": {"ask": "Any note on {{question}}?"}, "outputKey": "note"},
                {"id": "done", "kind": "response_template", "template": "{{draft}} ({{note}})", "outputKey": "reply"},
                {"id": "reject", "kind": "response_template", "template": "rejected", "outputKey": "reply"},
                {"id": "end", "kind": "end"}
            ],
            "edges": [
                {"from": "start", "to": "write"},
                {"from": "write", "to": "approve"},
                {"from": "approve", "to": "route"},
                {"from": "comment", "to": "done"},
                {"from": "done", "to": "end"},
                {"from": "reject", "to": "end"}
            ],
            "settings": {"checkpointer": checkpointer, "streaming": true}
        }
    })
}

#[test]
fn every_target_pauses_and_resumes_threads_over_http() {
    let dir = tempfile::tempdir().unwrap();
    let doc = dir.path().join("hitl.graph.json");
    std::fs::write(&doc, graph(json!({"type": "memory"})).to_string()).unwrap();
    for platform in THREADED {
        if require_platform(platform) {
            threads_over_http(platform, &doc);
            eprintln!("{platform}: paused and resumed threads as the contract says");
        }
    }
}

fn threads_over_http(platform: &str, doc: &std::path::Path) {
    let project = compile(platform, doc).expect("the hitl graph compiles");
    check_project(&project, platform).unwrap();
    build(&project).unwrap();
    let s = Service::launch(&project, &[("SVC_API_KEY", KEY)], Duration::from_secs(120)).unwrap();
    let post = |body: Value| {
        let r = s
            .send(
                "POST",
                "/invoke",
                &[("Content-Type", "application/json"), ("X-API-Key", KEY)],
                body.to_string().as_bytes(),
            )
            .unwrap();
        (r.status, r.json())
    };

    // Two threads paused at the first interrupt, each with its own state.
    let (status, a) = post(json!({"state": {"question": "A"}}));
    assert_eq!(status, 200, "{a}");
    assert_eq!(
        a["interrupt"],
        json!({"node": "approve", "value": {"draft": "Draft for A", "ask": "Approve?"}}),
        "{a}"
    );
    assert!(a.get("result").is_none(), "{a}");
    let (status, b) = post(json!({"state": {"question": "B"}, "threadId": "thread-b"}));
    assert_eq!(
        (status, b["threadId"].clone()),
        (200, json!("thread-b")),
        "{b}"
    );
    let thread_a = a["threadId"].as_str().unwrap().to_string();
    assert_ne!(thread_a, "thread-b");

    // A wrong-typed answer is refused and the thread stays paused.
    let (status, e) = post(json!({"threadId": thread_a, "resume": "yes"}));
    assert_eq!(status, 422, "{e}");
    assert_eq!(e["error"]["code"], "invalid_state", "{e}");
    assert_eq!(e["error"]["details"]["field"], "approved", "{e}");

    // A: approve, then the second interrupt, then the note and the result.
    let (status, a2) = post(json!({"threadId": thread_a, "resume": true}));
    assert_eq!(status, 200, "{a2}");
    assert_eq!(
        a2["interrupt"],
        json!({"node": "comment", "value": {"ask": "Any note on A?"}}),
        "{a2}"
    );
    let (status, done) = post(json!({"threadId": thread_a, "resume": "looks good"}));
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["threadId"], json!(thread_a), "{done}");
    assert_eq!(
        done["result"],
        json!({"question": "A", "draft": "Draft for A", "approved": true, "note": "looks good",
               "reply": "Draft for A (looks good)"}),
        "{done}"
    );
    // The finished thread cannot be resumed again.
    let (status, e) = post(json!({"threadId": thread_a, "resume": "again"}));
    assert_eq!(
        (status, e["error"]["code"].clone()),
        (409, json!("not_interrupted")),
        "{e}"
    );

    // B was untouched by A: reject it.
    let (status, b2) = post(json!({"threadId": "thread-b", "resume": false}));
    assert_eq!(status, 200, "{b2}");
    assert_eq!(b2["result"]["reply"], "rejected", "{b2}");
    assert_eq!(b2["result"]["question"], "B", "{b2}");

    // Unknown threads.
    let (status, e) = post(json!({"threadId": "nobody", "resume": true}));
    assert_eq!(
        (status, e["error"]["code"].clone()),
        (404, json!("thread_not_found")),
        "{e}"
    );

    // A resume needs the credential like any run.
    let (status, c) = post(json!({"state": {"question": "C"}}));
    assert_eq!(status, 200, "{c}");
    let body = json!({"threadId": c["threadId"], "resume": true}).to_string();
    let r = s
        .send(
            "POST",
            "/invoke",
            &[("Content-Type", "application/json")],
            body.as_bytes(),
        )
        .unwrap();
    assert_eq!(
        (r.status, r.json()["error"]["code"].clone()),
        (401, json!("unauthorized")),
        "{platform}"
    );
    // ... and the thread is still there for one that has it.
    let (status, c2) = post(json!({"threadId": c["threadId"], "resume": false}));
    assert_eq!(
        (status, c2["result"]["reply"].clone()),
        (200, json!("rejected")),
        "{c2}"
    );

    // Streamed: the pause is the terminal event, and a resume streams from
    // `resumed` to the next pause or the end.
    let streamed = |body: Value| -> (u16, Vec<Value>) {
        let r = s
            .send(
                "POST",
                "/invoke",
                &[
                    ("Content-Type", "application/json"),
                    ("X-API-Key", KEY),
                    ("Accept", "text/event-stream"),
                ],
                body.to_string().as_bytes(),
            )
            .unwrap();
        let events = r
            .text()
            .lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .map(|d| serde_json::from_str(d).unwrap())
            .collect();
        (r.status, events)
    };
    let outline = |events: &[Value]| -> Vec<String> {
        events
            .iter()
            .map(|e| match e["node"].as_str() {
                Some(node) => format!("{}:{node}", e["type"].as_str().unwrap()),
                None => e["type"].as_str().unwrap().to_string(),
            })
            .collect()
    };
    let (status, events) = streamed(json!({"state": {"question": "D"}, "threadId": "thread-d"}));
    assert_eq!(status, 200, "{platform}: {events:?}");
    assert_eq!(
        outline(&events),
        [
            "run_started",
            "node_started:write",
            "node_finished:write",
            "node_started:approve",
            "interrupted:approve"
        ],
        "{platform}: {events:?}"
    );
    assert_eq!(events[0]["data"]["threadId"], "thread-d", "{platform}");
    assert_eq!(
        events[4]["data"],
        json!({"threadId": "thread-d", "value": {"draft": "Draft for D", "ask": "Approve?"}}),
        "{platform}"
    );
    let (status, events) = streamed(json!({"threadId": "thread-d", "resume": true}));
    assert_eq!(status, 200, "{platform}: {events:?}");
    assert_eq!(
        outline(&events),
        [
            "resumed:approve",
            "node_started:approve",
            "node_finished:approve",
            "node_started:route",
            "node_finished:route",
            "node_started:comment",
            "interrupted:comment"
        ],
        "{platform}: {events:?}"
    );
    assert_eq!(
        events[0]["data"],
        json!({"threadId": "thread-d", "resume": true}),
        "{platform}"
    );
    assert_eq!(
        events[2]["data"]["patch"],
        json!({"approved": true}),
        "{platform}"
    );
    let (status, events) = streamed(json!({"threadId": "thread-d", "resume": "ok"}));
    assert_eq!(status, 200, "{platform}: {events:?}");
    let last = events.last().unwrap();
    assert_eq!(
        (
            last["type"].clone(),
            last["data"]["result"]["reply"].clone()
        ),
        (json!("run_finished"), json!("Draft for D (ok)")),
        "{platform}: {events:?}"
    );
    assert_eq!(last["data"]["threadId"], "thread-d", "{platform}");
    // A refused resume is the JSON envelope, not a stream.
    let r = s
        .send(
            "POST",
            "/invoke",
            &[
                ("Content-Type", "application/json"),
                ("X-API-Key", KEY),
                ("Accept", "text/event-stream"),
            ],
            json!({"threadId": "thread-d", "resume": "again"})
                .to_string()
                .as_bytes(),
        )
        .unwrap();
    assert_eq!(
        (r.status, r.json()["error"]["code"].clone()),
        (409, json!("not_interrupted")),
        "{platform}"
    );
    drop(s);
}
