//! The shared HTTP contract suite (`docs/http-contract.md`).
//!
//! Target-neutral: [`run`] takes a platform, compiles the contract
//! fixtures with that platform's backend, starts each generated service
//! from its manifest's commands on a loopback port, and sends the same
//! requests expecting the same statuses, error codes and results on every
//! target. Failures are collected and reported together.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::http::{Closing, Reply, Response, Stub};
use crate::service::{compile, expect_refusal, Service};

const KEY: &str = "contract-key-5f2a";

/// Collected results of one suite run.
struct Suite {
    platform: String,
    failures: Vec<String>,
    checks: usize,
}

impl Suite {
    fn check(&mut self, name: &str, ok: bool, detail: impl FnOnce() -> String) {
        self.checks += 1;
        if !ok {
            self.failures
                .push(format!("[{}] {name}: {}", self.platform, detail()));
        }
    }

    /// Checks status, the JSON content type and, for errors, the envelope
    /// and code. Returns the parsed body.
    fn expect(
        &mut self,
        name: &str,
        r: std::io::Result<Response>,
        status: u16,
        code: Option<&str>,
    ) -> Value {
        let r = match r {
            Ok(r) => r,
            Err(e) => {
                self.check(name, false, || format!("request failed: {e}"));
                return Value::Null;
            }
        };
        let body = r.json();
        self.check(name, r.status == status, || {
            format!("status {} (want {status}): {}", r.status, r.text())
        });
        let ct = r.header("content-type").unwrap_or_default().to_string();
        self.check(name, ct.starts_with("application/json"), || {
            format!("Content-Type {ct:?}")
        });
        if let Some(code) = code {
            let got = body["error"]["code"].as_str().unwrap_or_default();
            self.check(name, got == code, || {
                format!("error code {got:?} (want {code:?}): {body}")
            });
            let msg = body["error"]["message"].as_str().unwrap_or_default();
            self.check(name, !msg.is_empty(), || {
                format!("error without a message: {body}")
            });
        }
        body
    }

    /// Checks a `200` whose body is exactly `want`, with the result's
    /// fields in `want`'s order: the state's declared order on every target
    /// (`serde_json`'s map equality ignores order, so it is compared apart).
    fn expect_result(&mut self, name: &str, r: std::io::Result<Response>, want: &Value) {
        let b = self.expect(name, r, 200, None);
        self.check(name, &b == want, || format!("{b} (want {want})"));
        let keys = |v: &Value| -> Vec<String> {
            v["result"]
                .as_object()
                .map(|m| m.keys().cloned().collect())
                .unwrap_or_default()
        };
        self.check(name, keys(&b) == keys(want), || {
            format!(
                "result fields in the order {:?} (want {:?})",
                keys(&b),
                keys(want)
            )
        });
    }
}

/// What `contract_core` answers to `{"state": {"text": "Ada"}}`.
fn ada_result() -> Value {
    json!({"result": {"text": "Ada", "mode": "normal", "count": 1, "tags": ["seen"], "reply": "Hello, Ada! count=1"}})
}

fn fixture(name: &str) -> std::path::PathBuf {
    crate::fixtures()
        .join("valid")
        .join(format!("{name}.graph.json"))
}

fn json_headers(key: Option<&str>) -> Vec<(&'static str, String)> {
    let mut h = vec![("Content-Type", "application/json".to_string())];
    if let Some(k) = key {
        h.push(("X-API-Key", k.to_string()));
    }
    h
}

fn post(s: &Service, headers: &[(&'static str, String)], body: &str) -> std::io::Result<Response> {
    let h: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
    s.send("POST", "/invoke", &h, body.as_bytes())
}

/// Runs the whole suite for `platform`; `Err` lists every failure.
pub fn run(platform: &str) -> Result<usize, String> {
    let mut suite = Suite {
        platform: platform.to_string(),
        failures: Vec::new(),
        checks: 0,
    };
    let ready = Duration::from_secs(120);
    core(&mut suite, ready)?;
    append_text(&mut suite, ready)?;
    upstream(&mut suite, ready)?;
    bearer(&mut suite, ready)?;
    no_auth(&mut suite, ready)?;
    settings(&mut suite, ready)?;
    if suite.failures.is_empty() {
        Ok(suite.checks)
    } else {
        Err(format!(
            "{} of {} contract checks failed:\n{}",
            suite.failures.len(),
            suite.checks,
            suite.failures.join("\n")
        ))
    }
}

/// `settings.server` and `settings.logging` as a target honours them
/// (docs/ir-reference.md, "What each target does with each setting"):
/// started without SVC_HOST and SVC_PORT, the service listens where the
/// document says, and it logs at the level and in the format it names.
fn settings(t: &mut Suite, ready: Duration) -> Result<(), String> {
    for (level, format) in [("debug", "json"), ("error", "text")] {
        let port = crate::http::free_port().map_err(|e| e.to_string())?;
        let doc = json!({
            "irVersion": "2.2",
            "id": "settings_honoured",
            "security": {"auth": "none"},
            "logical": {
                "state": [{"name": "text", "type": "string", "required": true},
                          {"name": "reply", "type": "string"}],
                "nodes": [{"id": "start", "kind": "start"},
                          {"id": "echo", "kind": "response_template", "template": "<{{text}}>", "outputKey": "reply"},
                          {"id": "end", "kind": "end"}],
                "edges": [{"from": "start", "to": "echo"}, {"from": "echo", "to": "end"}],
                "settings": {
                    "server": {"host": "127.0.0.1", "port": port},
                    "logging": {"level": level, "format": format}
                }
            }
        });
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let path = dir.path().join("settings_honoured.graph.json");
        std::fs::write(&path, doc.to_string()).map_err(|e| e.to_string())?;
        let project = compile(&t.platform, &path).map_err(|d| format!("compile: {d:?}"))?;
        for step in ["setup", "build"] {
            crate::service::run_shell(
                project.path(),
                &project.command(step),
                &[],
                Duration::from_secs(600),
            )?;
        }
        let name = format!("settings.server and settings.logging {level}/{format}");
        let s = match Service::launch_at(&project, port, &[], ready) {
            Ok(s) => s,
            Err(e) => {
                t.check(&name, false, || {
                    format!("no service at the document's port {port}: {e}")
                });
                continue;
            }
        };
        t.expect_result(
            &format!("{name}: /invoke at the document's address"),
            post(&s, &json_headers(None), r#"{"state": {"text": "a"}}"#),
            &json!({"result": {"text": "a", "reply": "<a>"}}),
        );
        // Let a buffered log line reach the file before it is read.
        std::thread::sleep(Duration::from_millis(300));
        let output = s.output();
        drop(s);
        let lines: Vec<&str> = output.lines().filter(|l| !l.trim().is_empty()).collect();
        if format == "json" {
            let entries: Vec<Value> = lines
                .iter()
                .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                .filter(Value::is_object)
                .collect();
            t.check(
                &format!("{name}: every log line is a JSON object"),
                !lines.is_empty() && entries.len() == lines.len(),
                || output.clone(),
            );
            // Some entry is at debug level, whatever the target names the key
            // (`level`, Spring's ECS `log.level`).
            let debug = entries.iter().any(|e| has_level(e, "debug"));
            t.check(&format!("{name}: debug entries are logged"), debug, || {
                output.clone()
            });
        } else {
            let below = lines
                .iter()
                .any(|l| l.contains("INFO") || l.contains("DEBUG"));
            t.check(
                &format!("{name}: nothing below error is logged"),
                !below,
                || output.clone(),
            );
        }
    }
    Ok(())
}

/// Whether a JSON log entry has, at any depth, a `...level...` key of
/// value `level` (any case).
fn has_level(entry: &Value, level: &str) -> bool {
    entry.as_object().is_some_and(|o| {
        o.iter().any(|(k, v)| {
            (k.to_ascii_lowercase().contains("level")
                && v.as_str().is_some_and(|v| v.eq_ignore_ascii_case(level)))
                || has_level(v, level)
        })
    })
}

fn compiled(platform: &str, name: &str) -> Result<crate::service::Project, String> {
    compile(platform, &fixture(name)).map_err(|d| {
        format!(
            "{name} does not compile for {platform}:\n{}",
            d.iter()
                .map(svc_ir::Diagnostic::render)
                .collect::<Vec<_>>()
                .join("\n")
        )
    })
}

/// Auth, every bad input, results, isolation, a panic, the step limit and
/// the deadline, against `contract_core`.
fn core(t: &mut Suite, ready: Duration) -> Result<(), String> {
    let project = compiled(&t.platform, "contract_core")?;
    let s = Service::start(&project, &[("SVC_API_KEY", KEY)], ready)?;
    let ok = json_headers(Some(KEY));

    let body = t.expect(
        "health without a key",
        s.send("GET", "/health", &[], b""),
        200,
        None,
    );
    t.check("health body", body == json!({"status": "ok"}), || {
        body.to_string()
    });
    openapi(t, &s, project.path(), "apiKey");
    container_health_check(t, &s, project.path());
    t.expect(
        "unknown path",
        s.send("GET", "/nowhere", &[("X-API-Key", KEY)], b""),
        404,
        Some("not_found"),
    );
    // Runtime counts are served only with SVC_DEBUG_RUNTIME=1 (e2e streaming).
    t.expect(
        "GET /debug/runtime without SVC_DEBUG_RUNTIME",
        s.send("GET", "/debug/runtime", &[("X-API-Key", KEY)], b""),
        404,
        Some("not_found"),
    );
    t.expect(
        "GET /invoke",
        s.send("GET", "/invoke", &[("X-API-Key", KEY)], b""),
        405,
        Some("method_not_allowed"),
    );

    let good = r#"{"state": {"text": "Ada"}}"#;
    t.expect(
        "missing key",
        post(&s, &json_headers(None), good),
        401,
        Some("unauthorized"),
    );
    let wrong = t.expect(
        "wrong key",
        post(&s, &json_headers(Some("not-the-key")), good),
        401,
        Some("unauthorized"),
    );
    t.check(
        "a wrong key is not echoed",
        !wrong.to_string().contains("not-the-key"),
        || wrong.to_string(),
    );

    let text_plain = vec![
        ("Content-Type", "text/plain".to_string()),
        ("X-API-Key", KEY.to_string()),
    ];
    t.expect(
        "wrong content type",
        post(&s, &text_plain, good),
        415,
        Some("unsupported_media_type"),
    );
    t.expect(
        "not JSON",
        post(&s, &ok, "{\"state\": "),
        400,
        Some("bad_request"),
    );
    t.expect(
        "not an object",
        post(&s, &ok, "[1, 2]"),
        400,
        Some("bad_request"),
    );
    t.expect(
        "state is not an object",
        post(&s, &ok, r#"{"state": "Ada"}"#),
        400,
        Some("bad_request"),
    );
    t.expect(
        "mixed forms",
        post(&s, &ok, r#"{"state": {"text": "Ada"}, "input": "Ada"}"#),
        400,
        Some("bad_request"),
    );
    let big = format!(r#"{{"state": {{"text": "{}"}}}}"#, "a".repeat(1024 * 1024));
    t.check(
        "the big body is 1 MiB + 1 byte or more",
        big.len() > 1024 * 1024,
        || big.len().to_string(),
    );
    t.expect(
        "body over 1 MiB",
        post(&s, &ok, &big),
        413,
        Some("payload_too_large"),
    );

    whole_bodies(t, &s);
    request_json(t, &s);

    for (name, body, field) in [
        (
            "unknown field",
            r#"{"state": {"text": "Ada", "bogus": 1}}"#,
            "bogus",
        ),
        ("wrong type", r#"{"state": {"text": 5}}"#, "text"),
        (
            "wrong integer type",
            r#"{"state": {"text": "Ada", "count": "one"}}"#,
            "count",
        ),
        ("missing required field", r#"{"state": {}}"#, "text"),
    ] {
        let b = t.expect(name, post(&s, &ok, body), 422, Some("invalid_state"));
        t.check(name, b["error"]["details"]["field"] == field, || {
            format!("details.field: {b}")
        });
    }

    let expected = ada_result();
    for round in ["first run", "second run (no state shared between requests)"] {
        t.expect_result(round, post(&s, &ok, good), &expected);
    }
    let with_defaults = json!({"result": {"text": "Bo", "mode": "normal", "count": 5, "tags": ["a", "seen"], "reply": "Hello, Bo! count=5"}});
    t.expect_result(
        "given values, append reducer",
        post(
            &s,
            &ok,
            r#"{"state": {"text": "Bo", "count": 4, "tags": ["a"]}}"#,
        ),
        &with_defaults,
    );

    let b = t.expect(
        "a panicking node",
        post(&s, &ok, r#"{"state": {"text": "panic"}}"#),
        500,
        Some("execution_error"),
    );
    t.check(
        "panic names the node",
        b["error"]["details"]["node"] == "prepare",
        || b.to_string(),
    );
    let text = b.to_string();
    for leak in [
        "goroutine",
        "Traceback",
        "at java.",
        ".go:",
        ".py\"",
        "Exception in",
    ] {
        t.check("no stack trace in the body", !text.contains(leak), || {
            text.clone()
        });
    }
    t.expect(
        "a loop past maxSteps",
        post(&s, &ok, r#"{"state": {"text": "Ada", "mode": "loop"}}"#),
        500,
        Some("step_limit_exceeded"),
    );
    let started = Instant::now();
    t.expect(
        "past the deadline",
        post(&s, &ok, r#"{"state": {"text": "sleep"}}"#),
        504,
        Some("deadline_exceeded"),
    );
    let took = started.elapsed();
    t.check(
        "the deadline answers in time",
        took < Duration::from_millis(2500),
        || format!("took {took:?}"),
    );
    // The service is still healthy after all of that.
    t.expect_result("still serving", post(&s, &ok, good), &expected);

    legacy(t, &s);
    drop(s);

    match expect_refusal(&project, Duration::from_secs(60)) {
        Ok(out) => t.check(
            "refuses to start without its key",
            out.contains("SVC_API_KEY"),
            || format!("the refusal does not name SVC_API_KEY:\n{out}"),
        ),
        Err(e) => t.check("refuses to start without its key", false, || e),
    }
    Ok(())
}

/// Bodies over the limit sent by a client that writes everything before it
/// reads (urllib, Java's HttpClient, curl without `Expect`): the answer must
/// reach it, not a connection reset.
fn whole_bodies(t: &mut Suite, s: &Service) {
    for (name, size) in [("1.5 MiB", 3 << 19), ("8 MiB", 8 << 20)] {
        let prefix = r#"{"state": {"text": ""#;
        let suffix = r#""}}"#;
        let body = format!(
            "{prefix}{}{suffix}",
            "a".repeat(size - prefix.len() - suffix.len())
        );
        let ok = [("Content-Type", "application/json"), ("X-API-Key", KEY)];
        t.expect(
            &format!("{name} body written whole, then read"),
            s.send_whole("/invoke", &ok, body.as_bytes()),
            413,
            Some("payload_too_large"),
        );
        t.expect(
            &format!("{name} body written whole, with a wrong key"),
            s.send_whole(
                "/invoke",
                &[("Content-Type", "application/json"), ("X-API-Key", "wrong")],
                body.as_bytes(),
            ),
            401,
            Some("unauthorized"),
        );
    }
    // The service still answers on a new connection.
    let b = t.expect(
        "still serving after large bodies",
        post(s, &json_headers(Some(KEY)), r#"{"state": {"text": "Ada"}}"#),
        200,
        None,
    );
    t.check(
        "still serving after large bodies",
        b["result"]["text"] == "Ada",
        || b.to_string(),
    );
}

/// The contract's "Request JSON" (`docs/http-contract.md`): hostile JSON gets the same answer on every
/// target, and never reaches a node.
fn request_json(t: &mut Suite, s: &Service) {
    // A whole number with a fraction or an exponent is the integer it equals.
    let b = t.expect(
        "2.0 is the integer 2",
        post(
            s,
            &json_headers(Some(KEY)),
            r#"{"state": {"text": "Ada", "count": 2.0}}"#,
        ),
        200,
        None,
    );
    t.check("2.0 counted as 2", b["result"]["count"] == 3, || {
        b.to_string()
    });
    let b = t.expect(
        "1e1 is the integer 10",
        post(
            s,
            &json_headers(Some(KEY)),
            r#"{"state": {"text": "Ada", "count": 1e1}}"#,
        ),
        200,
        None,
    );
    t.check("1e1 counted as 10", b["result"]["count"] == 11, || {
        b.to_string()
    });
    t.expect(
        "2.5 is not an integer",
        post(
            s,
            &json_headers(Some(KEY)),
            r#"{"state": {"text": "Ada", "count": 2.5}}"#,
        ),
        422,
        Some("invalid_state"),
    );
    let ok = json_headers(Some(KEY));
    let send = |body: &[u8]| {
        let h: Vec<(&str, &str)> = ok.iter().map(|(k, v)| (*k, v.as_str())).collect();
        s.send("POST", "/invoke", &h, body)
    };
    let nested = |levels: usize| {
        // {"state": {"text": "Ada", "tags": [[...]]}}: the body is level 1,
        // state 2, tags 3; `levels` is the depth of the innermost array.
        let arrays = levels - 2;
        format!(
            r#"{{"state": {{"text": "Ada", "tags": {}{}}}}}"#,
            "[".repeat(arrays),
            "]".repeat(arrays)
        )
    };
    let mut bad: Vec<(&str, Vec<u8>)> = vec![
        (
            "invalid UTF-8",
            b"{\"state\": {\"text\": \"Ad\xff\xfea\"}}".to_vec(),
        ),
        (
            "invalid UTF-8 in a key",
            b"{\"state\": {\"te\xc3\x28xt\": \"Ada\"}}".to_vec(),
        ),
        (
            "a lone high surrogate escape",
            br#"{"state": {"text": "\ud800"}}"#.to_vec(),
        ),
        (
            "a lone low surrogate escape",
            br#"{"state": {"text": "a\udc00b"}}"#.to_vec(),
        ),
        (
            "a high surrogate followed by a non-surrogate escape",
            br#"{"state": {"text": "\ud800\u0041"}}"#.to_vec(),
        ),
        (
            "a number above the double range",
            br#"{"state": {"text": "Ada", "count": 1e400}}"#.to_vec(),
        ),
        (
            "a number below the double range",
            br#"{"state": {"text": "Ada", "count": -1.5e309}}"#.to_vec(),
        ),
        (
            "an integer of 400 digits",
            format!(
                r#"{{"state": {{"text": "Ada", "count": 1{}}}}}"#,
                "0".repeat(400)
            )
            .into_bytes(),
        ),
        (
            "a duplicate top-level key",
            br#"{"state": {"text": "Ada"}, "state": {"text": "Bo"}}"#.to_vec(),
        ),
        (
            "a duplicate key in a nested value",
            br#"{"state": {"text": "Ada", "tags": [{"a": 1, "a": 2}]}}"#.to_vec(),
        ),
    ];
    bad.push(("129 levels of nesting", nested(129).into_bytes()));
    bad.push(("100,000 levels of nesting", {
        let mut b = br#"{"state": {"text": "Ada", "tags": "#.to_vec();
        b.extend(std::iter::repeat_n(b'[', 100_000));
        b.extend(std::iter::repeat_n(b']', 100_000));
        b.extend_from_slice(b"}}");
        b
    }));
    for (name, body) in &bad {
        let b = t.expect(name, send(body), 400, Some("bad_request"));
        t.check(name, b["error"]["details"]["field"].is_null(), || {
            format!("names a field: {b}")
        });
    }

    let b = t.expect(
        "a duplicate state field",
        send(br#"{"state": {"text": "Ada", "count": 1, "count": 2}}"#),
        400,
        Some("bad_request"),
    );
    t.check(
        "a duplicate state field is named",
        b["error"]["details"]["field"] == "count",
        || format!("details.field: {b}"),
    );

    // At the limit the body is read, and the state check answers.
    let b = t.expect(
        "128 levels of nesting reach the state check",
        send(nested(128).as_bytes()),
        422,
        Some("invalid_state"),
    );
    t.check(
        "128 levels: the field is named",
        b["error"]["details"]["field"] == "tags",
        || b.to_string(),
    );

    let mut bom = b"\xef\xbb\xbf".to_vec();
    bom.extend_from_slice(br#"{"state": {"text": "Ada"}}"#);
    t.expect_result(
        "a leading byte-order mark is ignored",
        send(&bom),
        &ada_result(),
    );
    let b = t.expect(
        "a surrogate pair is a character",
        send(br#"{"state": {"text": "\ud83d\ude00"}}"#),
        200,
        None,
    );
    t.check(
        "a surrogate pair is a character",
        b["result"]["text"] == "\u{1F600}",
        || b.to_string(),
    );
}

/// Text written to `append` fields: one item per round in an array of
/// strings, one assistant message per round in a messages field.
fn append_text(t: &mut Suite, ready: Duration) -> Result<(), String> {
    let project = compiled(&t.platform, "append_text")?;
    let s = Service::start(&project, &[("SVC_API_KEY", KEY)], ready)?;
    let ok = json_headers(Some(KEY));
    let said = |n: u32| json!({"role": "assistant", "content": format!("said {n}")});
    let expected = json!({"result": {
        "rounds": 3,
        "lines": ["round 1", "round 2", "round 3"],
        "chat": [said(1), said(2), said(3)],
        "next": "stop"
    }});
    t.expect_result(
        "appending text",
        post(&s, &ok, r#"{"state": {}}"#),
        &expected,
    );
    let want = json!({"result": {
        "rounds": 3,
        "lines": ["given", "round 2", "round 3"],
        "chat": [{"role": "user", "content": "hi"}, said(2), said(3)],
        "next": "stop"
    }});
    t.expect_result(
        "appending text after given items",
        post(
            &s,
            &ok,
            r#"{"state": {"rounds": 1, "lines": ["given"], "chat": [{"role": "user", "content": "hi"}]}}"#,
        ),
        &want,
    );
    Ok(())
}

/// The command of the Dockerfile's HEALTHCHECK (exec form), run here
/// against the live service: 0 while it answers, non-zero once nothing
/// listens on the port. Paths under the image's `/app/` are the build's
/// `target/app/` (java-svc's extracted jar).
fn container_health_check(t: &mut Suite, s: &Service, dir: &std::path::Path) {
    let Ok(dockerfile) = std::fs::read_to_string(dir.join("Dockerfile")) else {
        t.check("a Dockerfile", false, || dir.display().to_string());
        return;
    };
    let Some(argv) = healthcheck_argv(&dockerfile) else {
        // Go's image (distroless) has no shell or tool to run one.
        t.check("a HEALTHCHECK", t.platform == "go", || dockerfile.clone());
        return;
    };
    let argv: Vec<String> = argv
        .iter()
        .map(|a| match a.strip_prefix("/app/") {
            Some(rest) => dir.join("target/app").join(rest).display().to_string(),
            None => a.clone(),
        })
        .collect();
    let run = |port: u16| {
        let mut cmd = std::process::Command::new(&argv[0]);
        if argv[0] == "java" {
            if let Some(home) = std::env::var_os("JAVA_HOME") {
                cmd = std::process::Command::new(std::path::Path::new(&home).join("bin/java"));
            }
        }
        cmd.args(&argv[1..])
            .env("SVC_PORT", port.to_string())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .map(|st| st.success())
    };
    let live = run(s.port);
    t.check(
        "the HEALTHCHECK passes while the service runs",
        matches!(live, Ok(true)),
        || format!("{argv:?}: {live:?}"),
    );
    let closed = crate::http::free_port()
        .map_err(|e| e.to_string())
        .and_then(|p| run(p).map_err(|e| e.to_string()));
    t.check(
        "the HEALTHCHECK fails where nothing listens",
        matches!(closed, Ok(false)),
        || format!("{argv:?}: {closed:?}"),
    );
}

/// The exec-form command of a Dockerfile's `HEALTHCHECK ... CMD [...]`.
pub fn healthcheck_argv(dockerfile: &str) -> Option<Vec<String>> {
    let joined = dockerfile.replace("\\\n", " ");
    let line = joined.lines().find(|l| l.starts_with("HEALTHCHECK "))?;
    let json = &line[line.find("CMD [")? + 4..];
    serde_json::from_str(json).ok()
}

/// The request forms each platform keeps for older clients.
fn legacy(t: &mut Suite, s: &Service) {
    let ok = json_headers(Some(KEY));
    match t.platform.as_str() {
        "go" => {
            t.expect_result(
                "raw state (Go legacy)",
                post(s, &ok, r#"{"text": "Ada"}"#),
                &ada_result()["result"],
            );
        }
        "java-svc" => {
            let b = t.expect(
                "input (Java legacy)",
                post(s, &ok, r#"{"input": "Ada"}"#),
                200,
                None,
            );
            t.check(
                "legacy output",
                b["output"] == "Hello, Ada! count=1",
                || b.to_string(),
            );
            t.check("legacy state", b["state"]["count"] == 1, || b.to_string());
            let b = t.expect(
                "query (Java legacy)",
                post(s, &ok, r#"{"query": "Bo"}"#),
                200,
                None,
            );
            t.check(
                "legacy query output",
                b["output"] == "Hello, Bo! count=1",
                || b.to_string(),
            );
        }
        _ => {}
    }
}

/// An HTTP tool and LLM nodes against local stubs: results, the shape of
/// what is sent, and each upstream failure with its reason.
fn upstream(t: &mut Suite, ready: Duration) -> Result<(), String> {
    let tool = Stub::start(|req| {
        let mode = req.json()["mode"].as_str().unwrap_or_default().to_string();
        match mode.as_str() {
            "slow" => Reply::Slow(Duration::from_secs(3), "{}".into()),
            "status" => Reply::Json(503, r#"{"error": "down"}"#.into()),
            "invalid_json" => Reply::Json(200, "{not json".into()),
            "too_large" => Reply::Json(200, format!("\"{}\"", "a".repeat(4 * 1024 * 1024 + 16))),
            "hangup" => Reply::Hangup,
            _ => Reply::Json(200, json!({"mode": mode, "source": "stub"}).to_string()),
        }
    })
    .map_err(|e| e.to_string())?;
    let llm = Stub::start(|req| {
        let body = req.json();
        let text = body["messages"].to_string();
        if text.contains("llm-status") {
            return Reply::Json(500, r#"{"error": {"message": "provider down"}}"#.into());
        }
        let user = body["messages"]
            .as_array()
            .and_then(|m| m.last())
            .map(|m| m["content"].to_string())
            .unwrap_or_default();
        let content = if user.contains("Ideas") {
            "first\n\n  second\n"
        } else {
            "stub answer"
        };
        Reply::Json(
            200,
            json!({"choices": [{"message": {"role": "assistant", "content": content}}]})
                .to_string(),
        )
    })
    .map_err(|e| e.to_string())?;

    let project = compiled(&t.platform, "contract_upstream")?;
    let tool_url = format!("{}/tool", tool.url());
    let llm_url = format!("{}/v1", llm.url());
    let s = Service::start(
        &project,
        &[
            ("CONTRACT_TOOL_URL", &tool_url),
            ("CONTRACT_MODEL_URL", &llm_url),
            ("CONTRACT_MODEL_KEY", "stub-key"),
        ],
        ready,
    )?;
    let h = json_headers(None);
    // The stub reports no usage: two calls of one attempt each, 0 tokens.
    let want = json!({"result": {"question": "ok", "persona": "", "record": {"mode": "ok", "source": "stub"},
        "answer": "stub answer", "ideas": ["first", "second"]},
        "usage": {"inputTokens": 0, "outputTokens": 0, "modelCalls": 2, "attempts": 2}});
    t.expect_result(
        "tool and LLM results (scalar and list shape)",
        post(&s, &h, r#"{"state": {"question": "ok"}}"#),
        &want,
    );

    let calls = llm.received();
    t.check("two model calls", calls.len() == 2, || {
        format!("{} calls", calls.len())
    });
    if let Some(first) = calls.first() {
        let body = first.json();
        t.check(
            "the model is called at /chat/completions",
            first.path.ends_with("/v1/chat/completions"),
            || first.path.clone(),
        );
        t.check(
            "the provider key is sent",
            first.header("authorization") == Some("Bearer stub-key"),
            || format!("{:?}", first.header("authorization")),
        );
        // settings.model, with the variables it names (not OpenAI's defaults).
        t.check(
            "the model name, temperature and max tokens are sent",
            body["model"] == "stub-model"
                && body["temperature"] == 0.25
                && body["max_tokens"] == 64,
            || body.to_string(),
        );
        t.check(
            "an empty system part is not sent",
            body["messages"] == json!([{"role": "user", "content": "Q: ok"}]),
            || body["messages"].to_string(),
        );
    }
    let sent = tool.received();
    t.check(
        "the tool gets its input as JSON",
        sent.first()
            .is_some_and(|r| r.json() == json!({"mode": "ok"})),
        || format!("{:?}", sent.first().map(|r| r.json())),
    );

    for (mode, node, reason) in [
        ("slow", "lookup", "timeout"),
        ("status", "lookup", "status"),
        ("invalid_json", "lookup", "invalid_json"),
        ("too_large", "lookup", "too_large"),
        ("hangup", "lookup", "connect"),
        ("llm-status", "ask", "status"),
    ] {
        let name = format!("upstream failure `{mode}`");
        let b = t.expect(
            &name,
            post(&s, &h, &format!(r#"{{"state": {{"question": "{mode}"}}}}"#)),
            502,
            Some("upstream_error"),
        );
        let d = &b["error"]["details"];
        t.check(&name, d["node"] == node && d["reason"] == reason, || {
            format!("details {d} (want node {node}, reason {reason})")
        });
        if mode == "llm-status" {
            // A 500 is retried: the default three attempts, all spent; the
            // envelope carries the run's usage (the tool call made none).
            t.check(
                "a model failing past its retries names the model and the attempts",
                d["model"] == "stub-model"
                    && d["attempts"] == 3
                    && b["usage"]
                        == json!({"inputTokens": 0, "outputTokens": 0, "modelCalls": 1, "attempts": 3}),
                || b.to_string(),
            );
        }
    }
    drop(s);

    // The tool endpoint's variable unset: the call fails as `connect`.
    let s = Service::launch(&project, &[("CONTRACT_MODEL_URL", &llm_url)], ready)?;
    let b = t.expect(
        "unset endpoint variable",
        post(&s, &h, r#"{"state": {"question": "ok"}}"#),
        502,
        Some("upstream_error"),
    );
    t.check(
        "unset endpoint variable",
        b["error"]["details"]["reason"] == "connect",
        || b.to_string(),
    );
    drop(s);
    closing_upstream(t, &project, ready)
}

/// Runs of `contract_upstream` in a row against an upstream that answers
/// `HTTP/1.0` and closes each connection after its reply, as Python's
/// `http.server` does: a client must not send another call on that
/// connection. java-svc's HTTP client kept it for the next call, which
/// failed as `502 connect` a few times in a hundred calls. A run makes three
/// calls (the tool, then two model calls), so 250 runs make 500 model calls,
/// enough for a 1% loss to show. Then runs against a server that closes 5 ms
/// after each reply, where a client that reuses the connection fails almost
/// every run. Each call reaches the upstream once, and none asks it to
/// upgrade (the JDK asks for `h2c` unless told to speak HTTP/1.1).
fn closing_upstream(
    t: &mut Suite,
    project: &crate::service::Project,
    ready: Duration,
) -> Result<(), String> {
    for (delay, runs) in [(Duration::ZERO, 250), (Duration::from_millis(5), 40)] {
        let stub = Stub::start_closing(Closing::Http10(delay), |req| {
            let reply = if req.path.ends_with("/chat/completions") {
                json!({"choices": [{"message": {"role": "assistant", "content": "stub answer"}}]})
            } else {
                json!({"mode": "ok", "source": "stub"})
            };
            Reply::Json(200, reply.to_string())
        })
        .map_err(|e| e.to_string())?;
        let tool_url = format!("{}/tool", stub.url());
        let llm_url = format!("{}/v1", stub.url());
        let s = Service::launch(
            project,
            &[
                ("CONTRACT_TOOL_URL", &tool_url),
                ("CONTRACT_MODEL_URL", &llm_url),
                ("CONTRACT_MODEL_KEY", "stub-key"),
            ],
            ready,
        )?;
        let name = format!("{runs} runs, HTTP/1.0 upstream closing {delay:?} after each reply");
        let h = json_headers(None);
        let mut failed: BTreeMap<String, usize> = BTreeMap::new();
        for _ in 0..runs {
            let outcome = match post(&s, &h, r#"{"state": {"question": "ok"}}"#) {
                Ok(r) if r.status == 200 => continue,
                Ok(r) => {
                    let b = r.json();
                    let d = &b["error"]["details"];
                    format!("{} node {} reason {}", r.status, d["node"], d["reason"])
                }
                Err(e) => format!("request failed: {e}"),
            };
            *failed.entry(outcome).or_default() += 1;
        }
        t.check(&name, failed.is_empty(), || {
            let n: usize = failed.values().sum();
            format!("{n} runs failed: {failed:?}")
        });
        let calls = stub.received();
        t.check(&name, calls.len() == 3 * runs, || {
            format!("the upstream got {} calls (want {})", calls.len(), 3 * runs)
        });
        let upgrade = calls.iter().find_map(|c| c.header("upgrade"));
        t.check(&name, upgrade.is_none(), || {
            format!("a call asks the upstream to upgrade: Upgrade: {upgrade:?}")
        });
    }
    Ok(())
}

/// `bearer` where the platform offers it; a compile-time refusal where not.
fn bearer(t: &mut Suite, ready: Duration) -> Result<(), String> {
    let project = match compile(&t.platform, &fixture("bearer_auth")) {
        Ok(p) => p,
        Err(diags) => {
            let refused = diags
                .iter()
                .any(|d| d.code == "unsupported" && d.message.contains("bearer"));
            t.check("bearer refused at compile time", refused, || {
                diags
                    .iter()
                    .map(svc_ir::Diagnostic::render)
                    .collect::<Vec<_>>()
                    .join("\n")
            });
            return Ok(());
        }
    };
    let s = Service::start(&project, &[("SVC_TOKEN", "tok-123")], ready)?;
    openapi(t, &s, project.path(), "bearer");
    let body = r#"{"state": {"text": "hi"}}"#;
    let ct = ("Content-Type", "application/json");
    match s.send("POST", "/invoke", &[ct], body.as_bytes()) {
        Ok(r) => {
            t.check("bearer 401", r.status == 401, || r.text());
            t.check(
                "WWW-Authenticate: Bearer",
                r.header("www-authenticate") == Some("Bearer"),
                || format!("{:?}", r.headers),
            );
        }
        Err(e) => t.check("bearer 401", false, || e.to_string()),
    }
    t.expect(
        "an API key is not a bearer token",
        s.send(
            "POST",
            "/invoke",
            &[ct, ("X-API-Key", "tok-123")],
            body.as_bytes(),
        ),
        401,
        Some("unauthorized"),
    );
    let b = t.expect(
        "bearer token",
        s.send(
            "POST",
            "/invoke",
            &[ct, ("Authorization", "Bearer tok-123")],
            body.as_bytes(),
        ),
        200,
        None,
    );
    t.check("bearer result", b["result"]["echo"] == "hi", || {
        b.to_string()
    });
    Ok(())
}

/// `GET /openapi.json` without a credential: the project's own
/// `openapi.json`, an OpenAPI 3.1 document of `/invoke` (with the graph's
/// state) and `/health` under the service's security scheme.
fn openapi(t: &mut Suite, s: &Service, project: &std::path::Path, scheme: &str) {
    let r = s.send("GET", "/openapi.json", &[], b"");
    let served = t.expect("openapi.json without a key", r, 200, None);
    let written = std::fs::read_to_string(project.join("openapi.json"))
        .ok()
        .and_then(|text| serde_json::from_str::<Value>(&text).ok());
    t.check(
        "openapi.json is the project's file",
        written.as_ref() == Some(&served),
        || format!("served {served}, written {written:?}"),
    );
    t.check("OpenAPI 3.1", served["openapi"] == "3.1.0", || {
        served["openapi"].to_string()
    });
    let invoke = &served["paths"]["/invoke"]["post"];
    t.check(
        "openapi: /invoke with the state schema",
        invoke["responses"]["200"].is_object()
            && invoke["responses"]["422"].is_object()
            && served["components"]["schemas"]["State"]["properties"].is_object(),
        || invoke.to_string(),
    );
    t.check(
        "openapi: the security scheme",
        served["components"]["securitySchemes"][scheme].is_object()
            && invoke["security"] == json!([{ scheme: [] }]),
        || served["components"].to_string(),
    );
    t.check(
        "openapi: /health is public",
        served["paths"]["/health"]["get"]["security"] == json!([]),
        || served["paths"]["/health"].to_string(),
    );
}

/// `security.auth: none` serves without any credential configured.
fn no_auth(t: &mut Suite, ready: Duration) -> Result<(), String> {
    let project = compiled(&t.platform, "minimal")?;
    let s = Service::start(&project, &[], ready)?;
    let b = t.expect(
        "auth none",
        post(&s, &json_headers(None), r#"{"state": {"text": "x"}}"#),
        200,
        None,
    );
    t.check(
        "auth none result",
        b == json!({"result": {"text": "x"}}),
        || b.to_string(),
    );
    Ok(())
}
