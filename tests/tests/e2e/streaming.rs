//! Streaming (docs/http-contract.md, "Streaming"), end to end on every
//! target that builds `fixtures/valid/streaming_chat.graph.json`: the
//! service streams a run to httpx-sse (a third-party SSE client,
//! `tests/clients/sse_client.py`) while a loopback chat-completions stub
//! streams the model's text, and the stream is held to the JSON answer of
//! the same request: the same final result, the same error code and status.
//! A target that does not stream yet must refuse the document by name.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use svc_tests::http::{Reply, Request, Stub};
use svc_tests::service::{check_project, compile, require_platform, run_shell, Service};

const KEY: &str = "stream-key-5e1d";

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/valid/streaming_chat.graph.json")
}

/// What the model stub is asked: the last user message.
fn prompt(req: &Request) -> String {
    req.json()["messages"]
        .as_array()
        .and_then(|m| m.last())
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_string()
}

/// The model: "Hello!\nsecond", streamed in two pieces when asked for a
/// stream; a question with `fail` is refused (500), with `break` its stream
/// stops before `[DONE]`, with `slow` it streams 40 pieces 100 ms apart.
fn model(cut: Arc<Mutex<Option<Instant>>>) -> Stub {
    Stub::start(move |req| {
        let (asked, streamed) = (prompt(req), req.json()["stream"] == json!(true));
        if asked.contains("fail") {
            return Reply::Json(500, "{}".into());
        }
        if !streamed {
            let reply = json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": "Hello!\nsecond"}}]});
            return Reply::Json(200, reply.to_string());
        }
        let (pieces, done, cut) = if asked.contains("break") {
            (vec![(Duration::ZERO, "Hel".to_string())], false, None)
        } else if asked.contains("slow") {
            let pieces = (0..40)
                .map(|i| (Duration::from_millis(100), format!("t{i} ")))
                .collect();
            (pieces, true, Some(cut.clone()))
        } else {
            let pieces = vec![
                (Duration::ZERO, "Hel".to_string()),
                (Duration::from_millis(20), "lo!\nsecond".to_string()),
            ];
            (pieces, true, None)
        };
        Reply::Stream { pieces, done, cut }
    })
    .expect("model stub")
}

/// The answer to a streamed request as httpx-sse read it: the first line's
/// status and content type, then the events (or a refusal's JSON body).
struct Streamed {
    status: u64,
    content_type: String,
    lines: Vec<Value>,
}

fn stream(service: &Service, state: Value, stop_after_tokens: usize) -> Streamed {
    let client = Path::new(env!("CARGO_MANIFEST_DIR")).join("clients/sse_client.py");
    let out = Command::new("python")
        .arg(client)
        .arg(format!("http://127.0.0.1:{}/invoke", service.port))
        .arg(KEY)
        .arg(json!({ "state": state }).to_string())
        .arg(stop_after_tokens.to_string())
        .output()
        .expect("python runs the SSE client");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the SSE client failed: {}\n{text}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut lines = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("a JSON line"));
    let head = lines.next().expect("the answer's status line");
    Streamed {
        status: head["status"].as_u64().unwrap_or_default(),
        content_type: head["content_type"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        lines: lines.collect(),
    }
}

fn invoke_json(service: &Service, state: Value) -> (u16, Value) {
    let headers = [("Content-Type", "application/json"), ("X-API-Key", KEY)];
    let body = json!({ "state": state }).to_string();
    let r = service
        .send("POST", "/invoke", &headers, body.as_bytes())
        .expect("the service answers");
    (r.status, r.json())
}

/// The events' types, each with its node when it has one.
fn outline(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .map(|e| match e["data"]["node"].as_str() {
            Some(node) => format!("{}:{node}", e["event"].as_str().unwrap_or_default()),
            None => e["event"].as_str().unwrap_or_default().to_string(),
        })
        .collect()
}

/// Every event's envelope: `id` and `seq` count from 1, one run id, the
/// type repeated; and exactly one terminal event, the last.
fn check_envelopes(platform: &str, events: &[Value]) {
    let run_id = events[0]["data"]["run_id"].clone();
    assert!(
        run_id.as_str().is_some_and(|r| !r.is_empty()),
        "{platform}: {events:?}"
    );
    for (i, e) in events.iter().enumerate() {
        let seq = i as u64 + 1;
        assert_eq!(e["id"], json!(seq.to_string()), "{platform}: {e}");
        assert_eq!(e["data"]["seq"], json!(seq), "{platform}: {e}");
        assert_eq!(e["data"]["type"], e["event"], "{platform}: {e}");
        assert_eq!(e["data"]["run_id"], run_id, "{platform}: {e}");
    }
    let terminal = ["run_finished", "run_failed", "interrupted"];
    let ends: Vec<usize> = events
        .iter()
        .enumerate()
        .filter(|(_, e)| terminal.contains(&e["event"].as_str().unwrap_or_default()))
        .map(|(i, _)| i)
        .collect();
    assert_eq!(
        ends,
        [events.len() - 1],
        "{platform}: {:?}",
        outline(events)
    );
}

fn streams(platform: &str) {
    let project = match compile(platform, &fixture()) {
        Ok(p) => p,
        Err(diags) => {
            // Only a target that does not stream yet may refuse, and by name.
            assert!(
                diags.iter().any(|d| d.code == "unsupported"
                    && d.pointer.as_deref() == Some("/logical/settings/streaming")),
                "{platform}: {diags:?}"
            );
            eprintln!("{platform}: does not stream yet (refused at /logical/settings/streaming)");
            return;
        }
    };
    if !require_platform(platform) {
        return;
    }
    check_project(&project, platform).unwrap_or_else(|e| panic!("{platform}: {e}"));
    run_shell(
        project.path(),
        &project.command("build"),
        &[],
        Duration::from_secs(600),
    )
    .unwrap_or_else(|e| panic!("{platform}: {e}"));
    let cut = Arc::new(Mutex::new(None));
    let stub = model(cut.clone());
    let url = format!("{}/v1", stub.url());
    let env = [("SVC_API_KEY", KEY), ("STREAM_MODEL_URL", url.as_str())];
    let service = Service::launch(&project, &env, Duration::from_secs(120))
        .unwrap_or_else(|e| panic!("{platform}: {e}"));

    // The JSON answer, which the stream must agree with.
    let hi = json!({"question": "Hi"});
    let (status, answer) = invoke_json(&service, hi.clone());
    assert_eq!(status, 200, "{platform}: {answer}");
    let result = answer["result"].clone();
    assert_eq!(result["reply"], "Hello!\nsecond", "{platform}: {answer}");
    assert_eq!(
        result["ideas"],
        json!(["Hello!", "second"]),
        "{platform}: {answer}"
    );
    assert_eq!(
        result["message"], "Hi: Hello!\nsecond",
        "{platform}: {answer}"
    );

    // What asks for a stream: `text/event-stream` listed with a quality
    // above 0, in any case; `*/*` alone does not.
    let body = json!({ "state": hi }).to_string();
    for (accept, streams) in [
        ("*/*", false),
        ("text/event-stream;q=0", false),
        ("application/json, TEXT/Event-Stream; q=0.5", true),
    ] {
        let headers = [
            ("Content-Type", "application/json"),
            ("X-API-Key", KEY),
            ("Accept", accept),
        ];
        let r = service
            .send("POST", "/invoke", &headers, body.as_bytes())
            .expect("the service answers");
        let content_type = r.header("content-type").unwrap_or_default();
        assert_eq!(r.status, 200, "{platform}: {accept}");
        assert_eq!(
            content_type.starts_with("text/event-stream"),
            streams,
            "{platform}: Accept: {accept} answered {content_type}"
        );
        if !streams {
            assert_eq!(r.json(), answer, "{platform}: {accept}");
        }
    }

    // The same request, streamed.
    let s = stream(&service, hi, 0);
    assert_eq!(s.status, 200, "{platform}: {:?}", s.lines);
    assert!(
        s.content_type.starts_with("text/event-stream"),
        "{platform}: {}",
        s.content_type
    );
    check_envelopes(platform, &s.lines);
    assert_eq!(
        outline(&s.lines),
        [
            "run_started",
            "node_started:answer",
            "token:answer",
            "token:answer",
            "node_finished:answer",
            "node_started:brainstorm",
            "token:brainstorm",
            "token:brainstorm",
            "node_finished:brainstorm",
            "node_started:route",
            "node_finished:route",
            "node_started:format",
            "node_finished:format",
            "run_finished",
        ],
        "{platform}"
    );
    let data = |i: usize| s.lines[i]["data"]["data"].clone();
    assert_eq!(data(0)["state"]["question"], "Hi", "{platform}");
    assert_eq!(data(1), json!({"kind": "llm"}), "{platform}");
    let tokens: String = [2, 3]
        .iter()
        .map(|&i| data(i)["delta"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(tokens, "Hello!\nsecond", "{platform}");
    assert_eq!(
        data(4),
        json!({"kind": "llm", "patch": {"reply": "Hello!\nsecond"}}),
        "{platform}"
    );
    assert_eq!(
        data(8)["patch"],
        json!({"ideas": ["Hello!", "second"]}),
        "{platform}"
    );
    assert_eq!(
        data(10),
        json!({"kind": "router", "patch": {}}),
        "{platform}"
    );
    assert_eq!(data(12)["kind"], "response_template", "{platform}");
    assert_eq!(data(13), json!({"result": result}), "{platform}");

    // Refused before the run: JSON, as without the header.
    let s = stream(&service, json!({"mode": "loop"}), 0);
    assert_eq!(s.status, 422, "{platform}: {:?}", s.lines);
    assert!(
        s.content_type.starts_with("application/json"),
        "{platform}: {}",
        s.content_type
    );
    assert_eq!(
        s.lines[0]["error"]["code"], "invalid_state",
        "{platform}: {:?}",
        s.lines
    );

    // Failures during the run end the stream with the JSON answer's error.
    for (state, code) in [
        (json!({"question": "fail"}), "upstream_error"),
        (
            json!({"question": "Hi", "mode": "loop"}),
            "step_limit_exceeded",
        ),
    ] {
        let (status, answer) = invoke_json(&service, state.clone());
        assert_eq!(answer["error"]["code"], code, "{platform}: {answer}");
        let s = stream(&service, state, 0);
        check_envelopes(platform, &s.lines);
        let last = &s.lines[s.lines.len() - 1]["data"];
        assert_eq!(last["type"], "run_failed", "{platform}: {last}");
        assert_eq!(last["data"]["status"], json!(status), "{platform}: {last}");
        assert_eq!(
            last["data"]["code"], answer["error"]["code"],
            "{platform}: {last}"
        );
        assert_eq!(
            last["data"]["details"], answer["error"]["details"],
            "{platform}: {last}"
        );
    }

    // A model stream that stops before [DONE] is an upstream_error.
    let s = stream(&service, json!({"question": "break"}), 0);
    let last = &s.lines[s.lines.len() - 1]["data"];
    assert_eq!(last["data"]["code"], "upstream_error", "{platform}: {last}");
    assert_eq!(
        last["data"]["details"]["reason"], "connect",
        "{platform}: {last}"
    );
    assert_eq!(
        last["data"]["details"]["node"], "answer",
        "{platform}: {last}"
    );

    // A client that leaves mid-token: the model call is cut within a
    // second and no node after it runs.
    let s = stream(&service, json!({"question": "slow"}), 2);
    let left = Instant::now();
    assert_eq!(
        outline(&s.lines).last().map(String::as_str),
        Some("token:answer"),
        "{platform}"
    );
    let deadline = left + Duration::from_secs(3);
    let cut_at = loop {
        if let Some(at) = *cut.lock().expect("lock") {
            break at;
        }
        assert!(
            Instant::now() < deadline,
            "{platform}: the model stream went on after the client left"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let waited = cut_at.saturating_duration_since(left);
    assert!(
        waited < Duration::from_secs(1),
        "{platform}: the model call was cut {waited:?} after the client left"
    );
    std::thread::sleep(Duration::from_millis(500));
    let later = stub
        .received()
        .iter()
        .filter(|r| prompt(r).contains("Ideas for slow"))
        .count();
    assert_eq!(later, 0, "{platform}: a node ran after the client left");
    eprintln!("{platform}: streamed; the model call was cut {waited:?} after the client left");
}

#[test]
fn every_target_streams_a_run_as_its_json_answer_says() {
    let sse = Command::new("python")
        .args(["-c", "import httpx_sse"])
        .status();
    if !sse.is_ok_and(|s| s.success()) {
        assert!(
            std::env::var("CI").is_err(),
            "httpx-sse is not installed, and CI=true: pip install -r tests/requirements.txt"
        );
        eprintln!("skipping: httpx-sse is not installed");
        return;
    }
    for platform in ["go", "java-svc", "python-svc"] {
        streams(platform);
    }
}
