//! Model calls that fail (issue 60): the same graph on every target against
//! a model stub that fails on purpose, per attempt. Each target must retry
//! what the rules retry (429 with `Retry-After`, 503, a timeout, a cut
//! reply), never what they do not (400, a body that is not JSON), wait as
//! they say (`Retry-After` obeyed up to `maxDelayMs`, jittered delays
//! within their cap), fall back to the next model once a model's attempts
//! are spent, and answer the last failure with `details.model` and
//! `details.attempts`. Every answer carries the run's `usage`, and a
//! `settings.budget` of tokens stops the run. The stub records the attempts
//! and when they came; the targets' answers are compared with each other.

use std::time::{Duration, SystemTime};

use serde_json::{json, Value};
use svc_tests::model_stub::{Attempt, ModelStub};
use svc_tests::service::{alike_on_every_target, build, check_project, compile, Service};

const KEY: &str = "model-calls-key-51f0";

/// One attempt may take 1 s; the primary model is tried 3 times, 100 ms
/// apart at first, never more than 1.5 s; then `backup`, twice. A second
/// node then asks `second` once (no retry, no fallback); the run may spend
/// 100 tokens.
fn graph() -> Value {
    json!({
        "irVersion": "2.2",
        "id": "model_calls",
        "security": { "auth": "api_key", "keyEnv": "SVC_API_KEY" },
        "logical": {
            "state": [
                { "name": "question", "type": "string", "required": true },
                { "name": "reply", "type": "string" },
                { "name": "summary", "type": "string" }
            ],
            "nodes": [
                { "id": "start", "kind": "start" },
                { "id": "answer", "kind": "llm", "outputKey": "reply", "prompt": { "user": "{{question}}" } },
                { "id": "summarize", "kind": "llm", "outputKey": "summary", "prompt": { "user": "Summarize: {{reply}}" },
                  "model": { "provider": "openai", "name": "second", "retry": { "maxAttempts": 1 }, "fallbacks": [] } },
                { "id": "end", "kind": "end" }
            ],
            "edges": [
                { "from": "start", "to": "answer" },
                { "from": "answer", "to": "summarize" },
                { "from": "summarize", "to": "end" }
            ],
            "settings": {
                "requestTimeoutMs": 20000,
                "budget": { "maxTokens": 100 },
                "model": {
                    "provider": "openai", "name": "primary", "timeoutMs": 1000,
                    "retry": { "maxAttempts": 3, "initialDelayMs": 100, "maxDelayMs": 1500 },
                    "fallbacks": [ { "provider": "openai", "name": "backup",
                        "retry": { "maxAttempts": 2, "initialDelayMs": 50, "maxDelayMs": 200 } } ]
                }
            }
        }
    })
}

/// What a service's wait adds to a delay the rules ask for: the next
/// attempt's request has to be built and sent (a loaded machine, a JIT).
const SLACK: Duration = Duration::from_millis(600);

#[test]
fn failed_model_calls_are_retried_and_fall_back_alike_on_every_target() {
    alike_on_every_target(run);
}

/// The cases on one target: each scripts the stub, asks once, and checks
/// what the stub saw; the answers (status, code and details, or result) are
/// returned for comparison with the other targets.
fn run(platform: &'static str) -> Vec<(&'static str, Value)> {
    let dir = tempfile::tempdir().unwrap();
    let doc = dir.path().join("model_calls.graph.json");
    std::fs::write(&doc, graph().to_string()).unwrap();
    let project = compile(platform, &doc).unwrap_or_else(|d| panic!("{platform}: {d:?}"));
    check_project(&project, platform).unwrap_or_else(|e| panic!("{platform}: {e}"));
    build(&project).unwrap_or_else(|e| panic!("{platform}: {e}"));
    let stub = ModelStub::start().unwrap();
    let url = stub.url();
    let env = [
        ("SVC_API_KEY", KEY),
        ("OPENAI_BASE_URL", url.as_str()),
        ("OPENAI_API_KEY", "k"),
    ];
    let service = Service::launch(&project, &env, Duration::from_secs(120))
        .unwrap_or_else(|e| panic!("{platform}: {e}"));
    let ask = |case: &str| -> Value {
        let body = json!({"state": {"question": case}}).to_string();
        let r = service
            .send(
                "POST",
                "/invoke",
                &[("Content-Type", "application/json"), ("X-API-Key", KEY)],
                body.as_bytes(),
            )
            .unwrap_or_else(|e| panic!("{platform} {case}: {e}"));
        let body = r.json();
        let usage = body["usage"].clone();
        match r.status {
            200 => json!({"status": 200, "reply": body["result"]["reply"], "usage": usage}),
            status => {
                let mut details = body["error"]["details"].clone();
                assert!(
                    !body["error"]["message"]
                        .as_str()
                        .unwrap_or_default()
                        .is_empty(),
                    "{platform} {case}: {body}"
                );
                // The status text is each provider's own.
                if let Some(d) = details.as_object_mut() {
                    d.remove("message");
                }
                json!({"status": status, "code": body["error"]["code"], "details": details, "usage": usage})
            }
        }
    };
    let mut answers = Vec::new();
    let primary = |n: usize| vec!["primary".to_string(); n];
    // What the run asked the model: calls and attempts (the stub's default
    // replies report no tokens).
    let usage = |calls: u64, attempts: u64| json!({"inputTokens": 0, "outputTokens": 0, "modelCalls": calls, "attempts": attempts});
    let then_second = |models: Vec<String>| [models, vec!["second".to_string()]].concat();
    let status = |s: u16| Attempt::Status(s, None);

    // A 429 asking for 1 s: the second attempt comes after it (the jittered
    // delay from 100 ms is shorter), within maxDelayMs.
    stub.script("primary", vec![Attempt::Status(429, Some("1".into()))]);
    let a = ask("retry-after");
    assert_eq!(
        a,
        json!({"status": 200, "reply": "ok (primary)", "usage": usage(2, 3)}),
        "{platform}"
    );
    assert_eq!(stub.models(), then_second(primary(2)), "{platform}");
    let gap = stub.gaps()[0];
    assert!(
        gap >= Duration::from_millis(990),
        "{platform}: waited {gap:?} for Retry-After: 1"
    );
    assert!(
        gap <= Duration::from_millis(1500) + SLACK,
        "{platform}: waited {gap:?}"
    );
    answers.push(("retry-after", a));

    // Retry-After as an HTTP date 2 s ahead (whole seconds: 1 to 2 s from
    // now), capped at maxDelayMs.
    let date = httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(2));
    stub.script("primary", vec![Attempt::Status(503, Some(date))]);
    let a = ask("retry-after-date");
    assert_eq!(
        a,
        json!({"status": 200, "reply": "ok (primary)", "usage": usage(2, 3)}),
        "{platform}"
    );
    let gap = stub.gaps()[0];
    assert!(
        gap >= Duration::from_millis(900),
        "{platform}: waited {gap:?} for a date"
    );
    assert!(
        gap <= Duration::from_millis(1500) + SLACK,
        "{platform}: waited {gap:?}"
    );
    answers.push(("retry-after-date", a));

    // Three 503s spend the primary's attempts, jittered within 100 ms and
    // 200 ms; then the backup answers at once.
    stub.script("primary", vec![status(503), status(503), status(503)]);
    let a = ask("fallback");
    assert_eq!(
        a,
        json!({"status": 200, "reply": "ok (backup)", "usage": usage(2, 5)}),
        "{platform}"
    );
    assert_eq!(
        stub.models(),
        then_second([primary(3), vec!["backup".into()]].concat()),
        "{platform}"
    );
    let gaps = stub.gaps();
    for (gap, cap) in gaps.iter().zip([100, 200, 0, 0]) {
        assert!(
            *gap <= Duration::from_millis(cap) + SLACK,
            "{platform}: gaps {gaps:?}"
        );
    }
    answers.push(("fallback", a));

    // A 400 is never retried, and the backup is not tried.
    stub.script("primary", vec![status(400)]);
    let a = ask("never-retried");
    assert_eq!(a["status"], 502, "{platform}: {a}");
    assert_eq!(a["details"]["model"], "primary", "{platform}: {a}");
    assert_eq!(a["details"]["attempts"], 1, "{platform}: {a}");
    assert_eq!(a["usage"], usage(1, 1), "{platform}: {a}");
    assert_eq!(stub.models(), primary(1), "{platform}");
    answers.push(("never-retried", a));

    // Every attempt of both models fails: the last failure answers, with
    // the backup's name and all five attempts.
    stub.script("primary", vec![status(503), status(503), status(503)]);
    stub.script("backup", vec![status(500), status(502)]);
    let a = ask("all-spent");
    assert_eq!(a["status"], 502, "{platform}: {a}");
    assert_eq!(a["code"], "upstream_error", "{platform}: {a}");
    assert_eq!(a["details"]["reason"], "status", "{platform}: {a}");
    assert_eq!(a["details"]["status"], 502, "{platform}: {a}");
    assert_eq!(a["details"]["model"], "backup", "{platform}: {a}");
    assert_eq!(a["details"]["attempts"], 5, "{platform}: {a}");
    assert_eq!(a["usage"], usage(1, 5), "{platform}: {a}");
    answers.push(("all-spent", a));

    // An attempt slower than timeoutMs (1 s) is cut then, and retried.
    stub.script(
        "primary",
        vec![Attempt::Slow(Duration::from_secs(3), "late".into())],
    );
    let a = ask("timeout");
    assert_eq!(
        a,
        json!({"status": 200, "reply": "ok (primary)", "usage": usage(2, 3)}),
        "{platform}"
    );
    assert_eq!(stub.models(), then_second(primary(2)), "{platform}");
    let gap = stub.gaps()[0];
    assert!(
        gap >= Duration::from_millis(990),
        "{platform}: the slow attempt lasted {gap:?}"
    );
    assert!(
        gap < Duration::from_millis(2500),
        "{platform}: not cut at timeoutMs ({gap:?})"
    );
    answers.push(("timeout", a));

    // A reply cut halfway is retried.
    stub.script("primary", vec![Attempt::Cut]);
    let a = ask("cut");
    assert_eq!(
        a,
        json!({"status": 200, "reply": "ok (primary)", "usage": usage(2, 3)}),
        "{platform}"
    );
    assert_eq!(stub.models(), then_second(primary(2)), "{platform}");
    answers.push(("cut", a));

    // A reply that is not JSON is not retried.
    stub.script("primary", vec![Attempt::Malformed]);
    let a = ask("malformed");
    assert_eq!(a["status"], 502, "{platform}: {a}");
    assert_eq!(a["details"]["reason"], "invalid_json", "{platform}: {a}");
    assert_eq!(a["details"]["attempts"], 1, "{platform}: {a}");
    assert_eq!(stub.models(), primary(1), "{platform}");
    answers.push(("malformed", a));

    // The tokens the provider reports are summed over the run.
    stub.script(
        "primary",
        vec![Attempt::Answer("counted".into(), Some((3, 5)))],
    );
    stub.script(
        "second",
        vec![Attempt::Answer("short".into(), Some((7, 11)))],
    );
    let a = ask("usage");
    let counted = json!({"inputTokens": 10, "outputTokens": 16, "modelCalls": 2, "attempts": 2});
    assert_eq!(
        a,
        json!({"status": 200, "reply": "counted", "usage": counted}),
        "{platform}"
    );
    answers.push(("usage", a));

    // The first reply spends the whole budget (100 tokens): the second call
    // does not start.
    stub.script(
        "primary",
        vec![Attempt::Answer("all of it".into(), Some((40, 60)))],
    );
    let a = ask("budget-reached");
    assert_eq!(a["status"], 500, "{platform}: {a}");
    assert_eq!(a["code"], "execution_error", "{platform}: {a}");
    let d = &a["details"];
    assert_eq!(
        (
            &d["reason"],
            &d["budget"],
            &d["limit"],
            &d["used"],
            &d["node"]
        ),
        (
            &json!("budget_exceeded"),
            &json!("maxTokens"),
            &json!(100),
            &json!(100),
            &json!("summarize")
        ),
        "{platform}: {a}"
    );
    assert_eq!(
        stub.models(),
        primary(1),
        "{platform}: the second call started"
    );
    answers.push(("budget-reached", a));

    // A reply past the budget fails the run as it comes.
    stub.script(
        "primary",
        vec![Attempt::Answer("too much".into(), Some((60, 50)))],
    );
    let a = ask("budget-passed");
    assert_eq!(a["status"], 500, "{platform}: {a}");
    assert_eq!(a["details"]["used"], 110, "{platform}: {a}");
    assert_eq!(a["details"]["node"], "answer", "{platform}: {a}");
    assert_eq!(stub.models(), primary(1), "{platform}");
    answers.push(("budget-passed", a));

    service.terminate(Duration::from_secs(10)).ok();
    eprintln!("{platform}: model calls retried and fell back as the rules say");
    answers
}
