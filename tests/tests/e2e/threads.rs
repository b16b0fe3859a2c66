//! Human in the loop on every target that keeps threads (go and python-svc;
//! java-svc refuses `hitl` by name for now): one compiled graph with two
//! `hitl` nodes is paused and resumed over HTTP (`docs/http-contract.md`,
//! "Interrupt and resume"): each interrupt in turn, a wrong-typed answer,
//! an unknown thread, a second resume of one interrupt, two threads side by
//! side, and the credential still required; every target answers the same.

use std::time::Duration;

use serde_json::{json, Value};
use svc_tests::service::{check_project, compile, require_platform, Service};

/// The targets that keep threads; java-svc refuses the graph by name.
pub(crate) const THREADED: [&str; 2] = ["go", "python-svc"];

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
            "settings": {"checkpointer": checkpointer}
        }
    })
}

#[test]
fn every_target_pauses_and_resumes_threads_over_http() {
    let dir = tempfile::tempdir().unwrap();
    let doc = dir.path().join("hitl.graph.json");
    std::fs::write(&doc, graph(json!({"type": "memory"})).to_string()).unwrap();
    let Err(refused) = compile("java-svc", &doc) else {
        panic!("java-svc does not keep threads yet, and must refuse the graph");
    };
    assert!(
        refused
            .iter()
            .any(|d| d.code == "unsupported" && d.pointer.as_deref() == Some("/logical/nodes/2")),
        "{refused:?}"
    );
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
    drop(s);
}
