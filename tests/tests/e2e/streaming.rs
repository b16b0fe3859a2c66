//! Streaming (docs/http-contract.md, "Streaming"), end to end on every
//! target that builds `fixtures/valid/streaming_chat.graph.json`: the
//! service streams a run to httpx-sse (a third-party SSE client,
//! `tests/clients/sse_client.py`) while a loopback chat-completions stub
//! streams the model's text, and the stream is held to the JSON answer of
//! the same request: the same final result, the same error code and status.
//! Agents and a tool-calling llm node stream their workers' turns (the stub
//! answers those in chunks with tool-call pieces): what each node writes is
//! the text of its tokens after its last `tokens_discarded`. A target that
//! does not stream yet must refuse the document by name.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use svc_tests::http::{Reply, Request, Stub};
use svc_tests::service::{build, check_project, compile, require_platform, Service};
use svc_tests::sse::Streamed;

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
/// The agents' workers and router are told apart by their instructions
/// ([`agent_reply`]).
fn model(cut: Arc<Mutex<Option<Instant>>>) -> Stub {
    Stub::start(move |req| {
        if let Some(reply) = agent_reply(req, &cut) {
            return reply;
        }
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

fn tool_call(id: &str, word: &str) -> Value {
    json!({"id": id, "type": "function", "function": {"name": "lookup", "arguments": json!({"word": word}).to_string()}})
}

/// What the agents' model calls are answered: the helper says "Let me
/// check." and calls `lookup` twice, then answers with the results; the
/// writer writes; the look-up node calls `lookup` without a word of text
/// first; the router picks helper, writer, finish. A user text with `snap`
/// breaks the helper's first stream after a call's head, with `garble` an
/// `index` is a string, with `dawdle` the final reply comes in 40 pieces
/// 100 ms apart.
fn agent_reply(req: &Request, cut: &Arc<Mutex<Option<Instant>>>) -> Option<Reply> {
    let body = req.json();
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let system = messages
        .first()
        .filter(|m| m["role"] == "system")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_string();
    let user = messages
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_string();
    let results: Vec<String> = messages
        .iter()
        .filter(|m| m["role"] == "tool")
        .filter_map(|m| m["content"].as_str().map(str::to_string))
        .collect();
    let streamed = body["stream"] == json!(true);
    let answer = |text: String| json!({"role": "assistant", "content": text});
    let message = if system.starts_with("Route the task.") {
        // Routing calls never stream.
        if streamed {
            return Some(Reply::Json(500, "{}".into()));
        }
        let next = if user.contains("writer answered") {
            "finish"
        } else if user.contains("helper answered") {
            "writer"
        } else {
            "helper"
        };
        answer(next.to_string())
    } else if system.starts_with("You help.") {
        if results.is_empty() {
            json!({"role": "assistant", "content": "Let me check.",
                   "tool_calls": [tool_call("h1", "refund"), tool_call("h2", "return")]})
        } else {
            answer(format!("helped: {}", results.join(" + ")))
        }
    } else if system.starts_with("You write.") {
        answer(format!("written: {}", user.replace('\n', " | ")))
    } else if system.starts_with("You look up.") {
        if results.is_empty() {
            json!({"role": "assistant", "content": null, "tool_calls": [tool_call("b1", &user)]})
        } else {
            answer(format!("looked up: {}", results.join(" + ")))
        }
    } else {
        return None;
    };
    if !streamed {
        let reply = json!({"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]});
        return Some(Reply::Json(200, reply.to_string()));
    }
    let mut chunks = chunks_of(&message);
    let first_turn = results.is_empty();
    let mut done = true;
    let mut cut_at = None;
    if user.contains("snap") && first_turn {
        // The role, the text and the first call's head; no [DONE].
        chunks.truncate(4);
        done = false;
    } else if user.contains("garble") && first_turn {
        let last = chunks.len() - 2;
        chunks[last].1["choices"][0]["delta"]["tool_calls"][0]["index"] = json!("0");
    } else if user.contains("dawdle") && !first_turn && system.starts_with("You help.") {
        chunks = (0..40)
            .map(|i| {
                let delta = json!({"content": format!("d{i} ")});
                (
                    Duration::from_millis(100),
                    json!({"choices": [{"index": 0, "delta": delta}]}),
                )
            })
            .collect();
        cut_at = Some(cut.clone());
    }
    Some(Reply::Chunks {
        chunks,
        done,
        cut: cut_at,
    })
}

/// A whole assistant message as a provider streams it: the role, the text
/// in two pieces, each call's head (id, type, name), then the calls'
/// arguments in halves, interleaved across calls, and the finish.
fn chunks_of(message: &Value) -> Vec<(Duration, Value)> {
    let chunk = |delta: Value| {
        (
            Duration::ZERO,
            json!({"choices": [{"index": 0, "delta": delta}]}),
        )
    };
    let mut out = vec![chunk(json!({"role": "assistant"}))];
    if let Some(text) = message["content"].as_str().filter(|t| !t.is_empty()) {
        let half = text
            .char_indices()
            .nth(text.chars().count() / 2)
            .map_or(0, |(i, _)| i);
        out.push(chunk(json!({"content": &text[..half]})));
        out.push(chunk(json!({"content": &text[half..]})));
    }
    let calls = message["tool_calls"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for (i, c) in calls.iter().enumerate() {
        out.push(chunk(
            json!({"tool_calls": [{"index": i, "id": c["id"], "type": "function",
            "function": {"name": c["function"]["name"], "arguments": ""}}]}),
        ));
    }
    for part in 0..2 {
        for (i, c) in calls.iter().enumerate() {
            let args = c["function"]["arguments"].as_str().unwrap_or_default();
            let half = args.len() / 2;
            let piece = if part == 0 {
                &args[..half]
            } else {
                &args[half..]
            };
            out.push(chunk(
                json!({"tool_calls": [{"index": i, "function": {"arguments": piece}}]}),
            ));
        }
    }
    let finish = if calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    out.push((
        Duration::ZERO,
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}),
    ));
    out
}

fn stream(service: &Service, state: Value, stop_after_tokens: usize) -> Streamed {
    svc_tests::sse::stream(service.port, KEY, state, stop_after_tokens)
        .unwrap_or_else(|e| panic!("{e}"))
}

fn invoke_json(service: &Service, state: Value) -> (u16, Value) {
    let headers = [("Content-Type", "application/json"), ("X-API-Key", KEY)];
    let body = json!({ "state": state }).to_string();
    let r = service
        .send("POST", "/invoke", &headers, body.as_bytes())
        .expect("the service answers");
    (r.status, r.json())
}

/// The outline of every streamed run of the fixture up to its router: the
/// two llm nodes, two tokens each.
const BEFORE_THE_BRANCH: [&str; 11] = [
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
];

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
    build(&project).unwrap_or_else(|e| panic!("{platform}: {e}"));
    let cut = Arc::new(Mutex::new(None));
    let stub = model(cut.clone());
    let url = format!("{}/v1", stub.url());
    let env = [
        ("SVC_API_KEY", KEY),
        ("STREAM_MODEL_URL", url.as_str()),
        ("SVC_DEBUG_RUNTIME", "1"),
    ];
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
    let mut expected = BEFORE_THE_BRANCH.to_vec();
    expected.extend([
        "node_started:format",
        "node_finished:format",
        "run_finished",
    ]);
    assert_eq!(outline(&s.lines), expected, "{platform}");
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
    // run_finished carries the JSON answer's result and usage.
    assert!(
        answer["usage"]["modelCalls"].as_u64() > Some(0),
        "{platform}: {answer}"
    );
    assert_eq!(
        data(13),
        json!({"result": result, "usage": answer["usage"]}),
        "{platform}"
    );

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
    let waited = cut_after(platform, &cut, left);
    std::thread::sleep(Duration::from_millis(500));
    let later = stub
        .received()
        .iter()
        .filter(|r| prompt(r).contains("Ideas for slow"))
        .count();
    assert_eq!(later, 0, "{platform}: a node ran after the client left");
    eprintln!("{platform}: streamed; the model call was cut {waited:?} after the client left");
    *cut.lock().expect("lock") = None;
    agent_streams(platform, &service, &stub, &cut);
    crate::streaming_leaks::abandoned_streams_leave_nothing(
        platform,
        &service,
        &stub,
        KEY,
        &json!({"question": "slow"}),
    );
}

/// How long after the client `left` the model stub saw its stream cut;
/// the call must be cut within a second.
fn cut_after(platform: &str, cut: &Mutex<Option<Instant>>, left: Instant) -> Duration {
    let deadline = left + Duration::from_secs(3);
    let cut_at = loop {
        if let Some(at) = *cut.lock().expect("lock") {
            break at;
        }
        assert!(
            Instant::now() < deadline,
            "{platform}: the model's stream went on after the client left"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let waited = cut_at.saturating_duration_since(left);
    assert!(
        waited < Duration::from_secs(1),
        "{platform}: the model call was cut {waited:?} after the client left"
    );
    waited
}

/// The text a node wrote by its tokens: its deltas after its last
/// `tokens_discarded`.
fn written_by_tokens(events: &[Value], node: &str) -> String {
    let mine: Vec<&Value> = events
        .iter()
        .filter(|e| e["data"]["node"] == node)
        .collect();
    let from = mine
        .iter()
        .rposition(|e| e["event"] == "tokens_discarded")
        .map_or(0, |i| i + 1);
    mine[from..]
        .iter()
        .filter(|e| e["event"] == "token")
        .filter_map(|e| e["data"]["data"]["delta"].as_str())
        .collect()
}

/// Agents and a tool-calling llm node, streamed: each worker turn streams,
/// text before a tool call is withdrawn, a supervisor withdraws a member's
/// text before the next member; routing calls and a subgraph's child never
/// stream. What each node writes is its tokens' text, as in the JSON answer.
fn agent_streams(
    platform: &str,
    service: &Service,
    stub: &Stub,
    cut: &Arc<Mutex<Option<Instant>>>,
) {
    let question = "What is a refund?";
    let t = |node: &str, n: usize| vec![format!("token:{node}"); n];
    for (mode, node, tail) in [
        (
            "agent",
            "ask",
            [
                t("ask", 2),
                vec!["tokens_discarded:ask".into()],
                t("ask", 2),
            ]
            .concat(),
        ),
        (
            "team",
            "ask_team",
            [
                t("ask_team", 2),
                vec!["tokens_discarded:ask_team".into()],
                t("ask_team", 2),
                vec!["tokens_discarded:ask_team".into()],
                t("ask_team", 2),
            ]
            .concat(),
        ),
        ("tools", "look_up", t("look_up", 2)),
        ("sub", "sub", vec![]),
    ] {
        let state = json!({"question": question, "mode": mode});
        let (status, answer) = invoke_json(service, state.clone());
        assert_eq!(status, 200, "{platform} {mode}: {answer}");
        let json_calls = stub.received().len();
        let s = stream(service, state, 0);
        check_envelopes(platform, &s.lines);
        let mut expected: Vec<String> = BEFORE_THE_BRANCH.iter().map(|e| e.to_string()).collect();
        expected.push(format!("node_started:{node}"));
        expected.extend(tail);
        expected.push(format!("node_finished:{node}"));
        expected.push("run_finished".into());
        assert_eq!(outline(&s.lines), expected, "{platform} {mode}");
        let last = &s.lines[s.lines.len() - 1]["data"]["data"];
        assert_eq!(last["result"], answer["result"], "{platform} {mode}");
        let finished = s
            .lines
            .iter()
            .find(|e| e["event"] == "node_finished" && e["data"]["node"] == node)
            .map(|e| e["data"]["data"].clone())
            .unwrap_or_default();
        let reply = answer["result"]["agent_reply"].clone();
        assert_eq!(
            finished["patch"],
            json!({"agent_reply": reply}),
            "{platform} {mode}"
        );
        if mode != "sub" {
            assert_eq!(
                json!(written_by_tokens(&s.lines, node)),
                reply,
                "{platform} {mode}: the tokens after the last discard are the answer"
            );
        }
        for discard in s.lines.iter().filter(|e| e["event"] == "tokens_discarded") {
            let reason = discard["data"]["data"]["reason"]
                .as_str()
                .unwrap_or_default();
            assert!(
                ["tool_calls", "next_member"].contains(&reason),
                "{platform}: {discard}"
            );
        }
        let reasons: Vec<&str> = s
            .lines
            .iter()
            .filter(|e| e["event"] == "tokens_discarded")
            .filter_map(|e| e["data"]["data"]["reason"].as_str())
            .collect();
        let want: &[&str] = match mode {
            "agent" => &["tool_calls"],
            "team" => &["tool_calls", "next_member"],
            _ => &[],
        };
        assert_eq!(reasons, want, "{platform} {mode}");

        // Workers' turns asked for a stream, routing calls and the child's
        // llm node did not; the turns echoed the same reassembled message.
        let all = stub.received();
        let (json_run, streamed_run) = (&all[..json_calls], &all[json_calls..]);
        let system = |r: &Request| {
            r.json()["messages"][0]["content"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        };
        for r in streamed_run {
            let sys = system(r);
            let body = r.json();
            if ["You help.", "You look up.", "You write."]
                .iter()
                .any(|w| sys.starts_with(w))
            {
                assert_eq!(body["stream"], json!(true), "{platform} {mode}: {sys}");
            } else if sys.starts_with("Route the task.") || sys.starts_with("You are a child.") {
                assert!(body.get("stream").is_none(), "{platform} {mode}: {body}");
            }
        }
        let second_help = |run: &[Request]| {
            run.iter()
                .filter(|r| system(r).starts_with("You help."))
                .nth(1)
                .map(|r| r.json()["messages"][2].clone())
        };
        if mode == "agent" || mode == "team" {
            let echoed = second_help(streamed_run);
            assert!(echoed.is_some(), "{platform} {mode}: no second turn");
            assert_eq!(echoed, second_help(json_run), "{platform} {mode}");
        }
    }

    // A worker's stream that breaks or garbles is the node's upstream error.
    // A stream broken after a token reached the client is not retried, nor
    // one that is not a stream; the tool-calling node's breaks before its
    // first token, so its three attempts are spent.
    for (question, mode, node, reason, attempts) in [
        ("snap", "agent", "helper", "connect", 1),
        ("garble", "agent", "helper", "invalid_json", 1),
        ("snap", "tools", "look_up", "connect", 3),
    ] {
        let s = stream(service, json!({"question": question, "mode": mode}), 0);
        check_envelopes(platform, &s.lines);
        let last = &s.lines[s.lines.len() - 1]["data"]["data"];
        assert_eq!(
            (last["status"].clone(), last["code"].clone()),
            (json!(502), json!("upstream_error")),
            "{platform} {question}: {last}"
        );
        assert_eq!(
            last["details"],
            json!({"node": node, "reason": reason, "model": "stub-model", "attempts": attempts}),
            "{platform} {question}: {last}"
        );
    }

    // A client that leaves during the last member's reply: the call is cut
    // within a second and the supervisor asks nothing more.
    let s = stream(service, json!({"question": "dawdle", "mode": "team"}), 8);
    let left = Instant::now();
    let asked = stub.received().len();
    assert_eq!(
        outline(&s.lines).last().map(String::as_str),
        Some("token:ask_team"),
        "{platform}: {:?}",
        outline(&s.lines)
    );
    let waited = cut_after(platform, cut, left);
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(
        stub.received().len(),
        asked,
        "{platform}: the supervisor went on after the client left"
    );
    eprintln!(
        "{platform}: agents streamed; a worker's call was cut {waited:?} after the client left"
    );
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
    for platform in ["go", "python-svc", "java-svc"] {
        streams(platform);
    }
}
