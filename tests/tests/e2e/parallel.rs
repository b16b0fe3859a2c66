//! Parallel branches and map (issue 61) on every target, against a model
//! stub whose calls wait, fail and notice a client that hangs up: branches
//! overlap, their writes meet in declared order whatever order they finish
//! in, the first failing branch in declared order answers and cancels the
//! later ones (the stub sees their calls cut), a map keeps item order, its
//! lowest failing index answers with `details.item`, `maxConcurrency` and
//! `maxItems` hold, and a streamed run tags its branches' events. The
//! answers are compared across targets.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use svc_tests::http::{Holds, Reply, Request, Stub};
use svc_tests::model_stub::completion;
use svc_tests::service::{alike_on_every_target, build, check_project, compile, Service};

const KEY: &str = "parallel-key-5e1d";

/// Three branches, each a model call then a note; then a map over
/// `items` whose child asks the model about its item.
fn graph() -> Value {
    let branch = |id: &str, field: &str| {
        json!([
            { "id": format!("l{id}"), "kind": "llm", "outputKey": format!("r{id}"), "prompt": { "user": format!("{{{{{field}}}}}") } },
            { "id": format!("n{id}"), "kind": "response_template", "template": format!("{id} done"), "outputKey": "notes" }
        ])
    };
    let mut nodes = vec![
        json!({ "id": "start", "kind": "start" }),
        json!({ "id": "fan", "kind": "parallel", "branches": ["la", "lb", "lc"], "join": "merge" }),
    ];
    for (id, field) in [("a", "a"), ("b", "b"), ("c", "c")] {
        nodes.extend(branch(id, field).as_array().cloned().unwrap_or_default());
    }
    nodes.extend([
        json!({ "id": "merge", "kind": "join" }),
        json!({ "id": "each", "kind": "map", "over": "items", "itemField": "item", "output": "answer",
                "outputKey": "answers", "maxConcurrency": 2, "maxItems": 5,
                "graph": {
                    "irVersion": "2.2", "id": "ask_one",
                    "logical": {
                        "state": [
                            { "name": "item", "type": "string", "required": true },
                            { "name": "answer", "type": "string" }
                        ],
                        "nodes": [
                            { "id": "start", "kind": "start" },
                            { "id": "ask", "kind": "llm", "outputKey": "answer", "prompt": { "user": "{{item}}" } },
                            { "id": "end", "kind": "end" }
                        ],
                        "edges": [ { "from": "start", "to": "ask" }, { "from": "ask", "to": "end" } ],
                        "settings": { "model": { "provider": "openai", "name": "m", "retry": { "maxAttempts": 1 } } }
                    }
                } }),
        json!({ "id": "end", "kind": "end" }),
    ]);
    let mut edges = vec![json!({ "from": "start", "to": "fan" })];
    for id in ["a", "b", "c"] {
        edges.push(json!({ "from": format!("l{id}"), "to": format!("n{id}") }));
        edges.push(json!({ "from": format!("n{id}"), "to": "merge" }));
    }
    edges.push(json!({ "from": "merge", "to": "each" }));
    edges.push(json!({ "from": "each", "to": "end" }));
    json!({
        "irVersion": "2.2",
        "id": "fan_out",
        "security": { "auth": "api_key", "keyEnv": "SVC_API_KEY" },
        "logical": {
            "state": [
                { "name": "a", "type": "string", "default": "wait 0 A" },
                { "name": "b", "type": "string", "default": "wait 0 B" },
                { "name": "c", "type": "string", "default": "wait 0 C" },
                { "name": "ra", "type": "string" },
                { "name": "rb", "type": "string" },
                { "name": "rc", "type": "string" },
                { "name": "notes", "type": "array", "items": { "type": "string" }, "reducer": "append", "default": [] },
                { "name": "items", "type": "array", "items": { "type": "string" }, "default": [] },
                { "name": "answers", "type": "array", "items": { "type": "string" } }
            ],
            "nodes": nodes,
            "edges": edges,
            "settings": {
                "streaming": true,
                "requestTimeoutMs": 20000,
                "model": { "provider": "openai", "name": "m", "retry": { "maxAttempts": 1 } }
            }
        }
    })
}

/// The model: a prompt `wait <ms> [fail <status>] <text>` is held that
/// long (watching for a client that hangs up), then answered with the text
/// or failed with the status. A streamed call gets its text as one piece.
fn model(holds: Arc<Holds>) -> Stub {
    Stub::start(move |req: &Request| {
        let body = req.json();
        let prompt = body["messages"]
            .as_array()
            .and_then(|m| m.last())
            .and_then(|m| m["content"].as_str())
            .unwrap_or_default()
            .to_string();
        let mut words = prompt.split_whitespace().peekable();
        let (mut wait, mut status) = (0u64, 200u16);
        while let Some(w) = words.peek().copied() {
            match w {
                "wait" => {
                    words.next();
                    wait = words.next().and_then(|n| n.parse().ok()).unwrap_or(0);
                }
                "fail" => {
                    words.next();
                    status = words.next().and_then(|n| n.parse().ok()).unwrap_or(400);
                }
                _ => break,
            }
        }
        let text: Vec<&str> = words.collect();
        let text = text.join(" ");
        if body["stream"].as_bool() == Some(true) && status == 200 {
            return Reply::Stream {
                pieces: vec![(Duration::from_millis(wait), text)],
                done: true,
                cut: None,
            };
        }
        let body = if status == 200 {
            completion(&text, Some((1, 1)))
        } else {
            json!({"error": {"message": format!("scripted {status}")}}).to_string()
        };
        Reply::Held {
            delay: Duration::from_millis(wait),
            status,
            body,
            holds: holds.clone(),
        }
    })
    .expect("the model stub starts")
}

#[test]
fn branches_and_maps_run_at_once_and_answer_alike_on_every_target() {
    alike_on_every_target(run);
}

fn run(platform: &'static str) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let doc = dir.path().join("fan_out.graph.json");
    std::fs::write(&doc, graph().to_string()).unwrap();
    let project = compile(platform, &doc).unwrap_or_else(|d| panic!("{platform}: {d:?}"));
    check_project(&project, platform).unwrap_or_else(|e| panic!("{platform}: {e}"));
    build(&project).unwrap_or_else(|e| panic!("{platform}: {e}"));
    let holds = Arc::new(Holds::default());
    let stub = model(holds.clone());
    let url = format!("{}/v1", stub.url());
    let env = [
        ("SVC_API_KEY", KEY),
        ("OPENAI_BASE_URL", url.as_str()),
        ("OPENAI_API_KEY", "k"),
    ];
    let service = Service::launch(&project, &env, Duration::from_secs(120))
        .unwrap_or_else(|e| panic!("{platform}: {e}"));
    let ask = |state: Value| -> (Value, Duration) {
        let body = json!({ "state": state }).to_string();
        let started = Instant::now();
        let r = service
            .send(
                "POST",
                "/invoke",
                &[("Content-Type", "application/json"), ("X-API-Key", KEY)],
                body.as_bytes(),
            )
            .unwrap_or_else(|e| panic!("{platform}: {e}"));
        let took = started.elapsed();
        let b = r.json();
        let answer = match r.status {
            200 => json!({"status": 200, "result": b["result"], "usage": b["usage"]}),
            s => json!({"status": s, "code": b["error"]["code"], "details": b["error"]["details"]}),
        };
        (answer, took)
    };
    let mut answers = Vec::new();
    // Warm: the first run of a JVM is slow for reasons of its own.
    ask(json!({}));

    // Three branches that wait 600, 400 and 200 ms overlap: about one wait,
    // not their sum; they finish in reverse order, and their notes meet in
    // the order of `branches`.
    let (a, took) = ask(json!({"a": "wait 600 A", "b": "wait 400 B", "c": "wait 200 C"}));
    assert_eq!(a["status"], 200, "{platform}: {a}");
    assert_eq!(
        a["result"]["notes"],
        json!(["a done", "b done", "c done"]),
        "{platform}: {a}"
    );
    assert_eq!(
        (&a["result"]["ra"], &a["result"]["rb"], &a["result"]["rc"]),
        (&json!("A"), &json!("B"), &json!("C")),
        "{platform}: {a}"
    );
    assert!(
        took < Duration::from_millis(1100),
        "{platform}: branches of 600, 400 and 200 ms took {took:?}, as if one after another"
    );
    assert_eq!(a["usage"]["modelCalls"], 3, "{platform}: {a}");
    answers.push(a);

    // A later-declared branch failing first loses to an earlier one that
    // fails later; the branch between them is cancelled, its call cut.
    let cut_before = holds.hung_up.load(Ordering::SeqCst);
    let (a, took) = ask(json!({"a": "wait 500 fail 400 A", "b": "wait 5000 B", "c": "fail 400 C"}));
    assert_eq!(a["status"], 502, "{platform}: {a}");
    assert_eq!(a["details"]["node"], "la", "{platform}: {a}");
    assert!(
        took < Duration::from_millis(3000),
        "{platform}: the cancelled branch was waited for ({took:?})"
    );
    let cut_by = Instant::now() + Duration::from_secs(3);
    while holds.hung_up.load(Ordering::SeqCst) == cut_before && Instant::now() < cut_by {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(
        holds.hung_up.load(Ordering::SeqCst),
        cut_before + 1,
        "{platform}: the stub did not see branch b's call cut"
    );
    answers.push(a);

    // A map keeps the order of its items, whichever finishes first, and
    // never holds more than maxConcurrency (2) calls at once.
    holds.most.store(0, Ordering::SeqCst);
    let (a, _) = ask(
        json!({"items": ["wait 300 one", "wait 100 two", "wait 0 three", "wait 200 four", "wait 50 five"]}),
    );
    assert_eq!(a["status"], 200, "{platform}: {a}");
    assert_eq!(
        a["result"]["answers"],
        json!(["one", "two", "three", "four", "five"]),
        "{platform}: {a}"
    );
    assert_eq!(
        holds.most.load(Ordering::SeqCst),
        2,
        "{platform}: the map's calls at once"
    );
    assert_eq!(a["usage"]["modelCalls"], 8, "{platform}: {a}");
    answers.push(a);

    // Its lowest failing index answers, with details.item.
    let (a, _) = ask(json!({"items": ["wait 300 fail 400 x", "fail 400 y", "wait 2000 z"]}));
    assert_eq!(a["status"], 502, "{platform}: {a}");
    assert_eq!(a["details"]["item"], 0, "{platform}: {a}");
    answers.push(a);

    // More items than maxItems (5): nothing runs.
    let (a, _) = ask(json!({"items": ["1", "2", "3", "4", "5", "6"]}));
    assert_eq!(a["status"], 500, "{platform}: {a}");
    assert_eq!(a["details"]["reason"], "too_many_items", "{platform}: {a}");
    answers.push(a);

    // Streamed: the branches' events carry their branch, between the
    // parallel node's events and the join's.
    let events = svc_tests::sse::stream(
        service.port,
        KEY,
        json!({"a": "wait 200 A", "b": "wait 0 B"}),
        0,
    )
    .unwrap_or_else(|e| panic!("{platform}: {e}"))
    .lines;
    let outline: Vec<String> = events
        .iter()
        .filter(|e| e["data"]["node"].is_string())
        .map(|e| {
            format!(
                "{}:{}:{}",
                e["event"].as_str().unwrap_or_default(),
                e["data"]["node"].as_str().unwrap_or_default(),
                e["data"]["branch"].as_str().unwrap_or("-")
            )
        })
        .collect();
    let position = |s: &str| {
        outline
            .iter()
            .position(|o| o == s)
            .unwrap_or_else(|| panic!("{platform}: no {s} in {outline:?}"))
    };
    assert_eq!(position("node_started:fan:-"), 0, "{platform}: {outline:?}");
    let finished = position("node_finished:fan:-");
    for b in ["a", "b", "c"] {
        let started = position(&format!("node_started:l{b}:l{b}"));
        let noted = position(&format!("node_finished:n{b}:l{b}"));
        assert!(
            started < noted && noted < finished,
            "{platform}: {outline:?}"
        );
    }
    assert_eq!(
        outline[finished + 1..finished + 3],
        ["node_started:merge:-", "node_finished:merge:-"],
        "{platform}: {outline:?}"
    );
    let mut tagged: Vec<&String> = outline[1..finished].iter().collect();
    tagged.sort();
    answers.push(json!({"streamed": tagged, "patch": events.iter()
        .find(|e| e["event"] == "node_finished" && e["data"]["node"] == "fan")
        .map(|e| e["data"]["data"]["patch"].clone())}));
    Value::Array(answers)
}
