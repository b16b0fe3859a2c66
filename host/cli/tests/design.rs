#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)] // test code

//! `svc design`'s server and API over HTTP: the loopback checks, the token,
//! loading and saving (lossless, refused over a file changed on disk),
//! validation, capabilities, export to a folder (only inside the
//! document's, `export`) and to a zip; its runs (`run`), whose services
//! go also when the designer is killed (`killed`); and `svc test`, which
//! shares how runs build and start services (`svc_test`).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};
use svc_tests::http::{send, Response};

#[cfg(unix)]
#[path = "design/export.rs"]
mod export;
#[cfg(unix)]
#[path = "design/killed.rs"]
mod killed;
#[path = "design/run.rs"]
mod run;
#[path = "design/svc_test.rs"]
mod svc_test;

const LIMIT: Duration = Duration::from_secs(60);

/// A running `svc design`; stopped when dropped.
struct Designer {
    child: Child,
    port: u16,
    token: String,
}

impl Drop for Designer {
    /// SIGTERM first, so that it stops the services it started.
    fn drop(&mut self) {
        if let Ok(Some(_)) = self.child.try_wait() {
            return;
        }
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let started = std::time::Instant::now();
        while started.elapsed() < Duration::from_secs(10) {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/valid")
        .join(name)
}

impl Designer {
    fn start(doc: &Path) -> Designer {
        let mut child = Command::new(env!("CARGO_BIN_EXE_svc"))
            .arg("design")
            .arg(doc)
            .arg("--no-open")
            // The tests' compiled components, and the runs' projects and
            // python-svc venv (kept between test runs) beside them.
            .env("SVC_CACHE_DIR", svc_tests::service::cache_dir())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        // "svc design: editing DOC at http://127.0.0.1:PORT/?token=TOKEN"
        let url = line.trim().rsplit(' ').next().unwrap().to_string();
        let rest = url.strip_prefix("http://127.0.0.1:").unwrap();
        let (port, token) = rest.split_once("/?token=").unwrap();
        Designer {
            child,
            port: port.parse().unwrap(),
            token: token.to_string(),
        }
    }

    fn call(&self, method: &str, path: &str, headers: &[(&str, &str)], body: &Value) -> Response {
        let mut all = vec![
            ("X-Svc-Token", self.token.as_str()),
            ("Content-Type", "application/json"),
        ];
        all.extend_from_slice(headers);
        let bytes = if body.is_null() {
            Vec::new()
        } else {
            body.to_string().into_bytes()
        };
        send(self.port, method, path, &all, &bytes, LIMIT).unwrap()
    }

    fn get(&self, path: &str) -> Response {
        self.call("GET", path, &[], &Value::Null)
    }
}

/// A raw request, to send a Host header of our choosing.
fn raw(port: u16, request: &str) -> String {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(LIMIT)).unwrap();
    s.write_all(request.as_bytes()).unwrap();
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    out
}

#[test]
fn the_server_answers_only_its_own_page_with_the_token() {
    let dir = tempfile::tempdir().unwrap();
    let doc = dir.path().join("triage.graph.json");
    std::fs::copy(fixture("support_triage.graph.json"), &doc).unwrap();
    let d = Designer::start(&doc);

    // The app is public (it holds no data); it says not to leak its address.
    let page = send(d.port, "GET", "/", &[], b"", LIMIT).unwrap();
    assert_eq!(page.status, 200);
    assert!(page
        .header("content-type")
        .unwrap()
        .starts_with("text/html"));
    assert_eq!(page.header("referrer-policy"), Some("no-referrer"));
    assert!(page
        .header("content-security-policy")
        .unwrap()
        .contains("default-src 'self'"));
    assert_eq!(
        send(d.port, "GET", "/nope.js", &[], b"", LIMIT)
            .unwrap()
            .status,
        404
    );

    // DNS rebinding: another Host is refused, even with the token.
    let reply = raw(
        d.port,
        &format!(
            "GET /api/session HTTP/1.1\r\nHost: attacker.example:{}\r\nX-Svc-Token: {}\r\nConnection: close\r\n\r\n",
            d.port, d.token
        ),
    );
    assert!(reply.starts_with("HTTP/1.1 403"), "{reply}");
    assert!(reply.contains("bad_host"), "{reply}");
    // A cross-site request is refused.
    let r = d.call(
        "GET",
        "/api/session",
        &[("Origin", "http://attacker.example")],
        &Value::Null,
    );
    assert_eq!(r.status, 403, "{}", r.text());
    // The page's own origin is fine; no token is not.
    let r = d.call(
        "GET",
        "/api/session",
        &[("Origin", &format!("http://localhost:{}", d.port))],
        &Value::Null,
    );
    assert_eq!(r.status, 200, "{}", r.text());
    // The designer's release, and the compiler that serves it.
    let session = r.json();
    assert_eq!(session["version"], "0.4.0");
    assert_eq!(session["svc"], "0.3.2");
    assert_eq!(session["specification"], "2.2.0");
    let r = send(d.port, "GET", "/api/session", &[], b"", LIMIT).unwrap();
    assert_eq!(r.status, 401);
    let r = send(
        d.port,
        "PUT",
        "/api/document",
        &[("X-Svc-Token", "0000")],
        b"{}",
        LIMIT,
    )
    .unwrap();
    assert_eq!(r.status, 401);
    assert_eq!(d.get("/api/nothing").status, 404);
    assert_eq!(
        d.call("DELETE", "/api/document", &[], &Value::Null).status,
        405
    );
}

#[test]
fn saving_is_lossless_and_never_overwrites_a_changed_file() {
    let dir = tempfile::tempdir().unwrap();
    let doc = dir.path().join("triage.graph.json");
    let original = std::fs::read(fixture("support_triage.graph.json")).unwrap();
    std::fs::write(&doc, &original).unwrap();
    let d = Designer::start(&doc);

    let loaded = d.get("/api/document");
    assert_eq!(loaded.status, 200, "{}", loaded.text());
    let body = loaded.json();
    let etag = body["etag"].as_str().unwrap().to_string();
    assert_eq!(body["diagnostics"], json!([]));
    let model = body["model"].clone();

    // Saved without edits: the same bytes.
    let r = d.call(
        "PUT",
        "/api/document",
        &[("If-Match", &etag)],
        &json!({"model": model}),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(std::fs::read(&doc).unwrap(), original);
    assert_eq!(r.json()["etag"], etag.as_str());

    // Changed on disk meanwhile: refused, and the file is left alone.
    let edited_elsewhere = String::from_utf8(original.clone())
        .unwrap()
        .replace("Support triage", "Support triage (edited)");
    std::fs::write(&doc, &edited_elsewhere).unwrap();
    let mut moved = model.clone();
    moved["nodes"][1]["position"] = json!({"x": 500, "y": 10});
    let r = d.call(
        "PUT",
        "/api/document",
        &[("If-Match", &etag)],
        &json!({"model": moved}),
    );
    assert_eq!(r.status, 412, "{}", r.text());
    assert_eq!(r.json()["error"]["code"], "changed_on_disk");
    assert_eq!(std::fs::read_to_string(&doc).unwrap(), edited_elsewhere);
    // Without a precondition: refused too.
    let r = d.call("PUT", "/api/document", &[], &json!({"model": moved}));
    assert_eq!(r.status, 428, "{}", r.text());

    // Reloaded, then saved with the move: one line differs.
    let body = d.get("/api/document").json();
    let etag = body["etag"].as_str().unwrap().to_string();
    let mut model = body["model"].clone();
    let classify = model["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .position(|n| n["node"]["id"] == "classify")
        .unwrap();
    model["nodes"][classify]["position"] = json!({"x": 480.2, "y": 96.7});
    let r = d.call(
        "PUT",
        "/api/document",
        &[("If-Match", &etag)],
        &json!({"model": model}),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let saved = std::fs::read_to_string(&doc).unwrap();
    let diff: Vec<_> = edited_elsewhere
        .lines()
        .zip(saved.lines())
        .filter(|(a, b)| a != b)
        .map(|(_, b)| b.trim().to_string())
        .collect();
    assert_eq!(diff, vec!["\"classify\": { \"x\": 480, \"y\": 97 }"]);
}

#[test]
fn a_new_file_and_an_unreadable_one() {
    let dir = tempfile::tempdir().unwrap();
    let doc = dir.path().join("fresh.graph.json");
    let d = Designer::start(&doc);
    let body = d.get("/api/document").json();
    assert_eq!(body["etag"], Value::Null);
    assert_eq!(body["model"]["document"]["id"], "fresh");
    // A new file is created only with If-None-Match: *.
    let r = d.call(
        "PUT",
        "/api/document",
        &[("If-None-Match", "*")],
        &json!({"model": body["model"]}),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let out = Command::new(env!("CARGO_BIN_EXE_svc"))
        .args(["compile", "--platform", "go", "--format", "json", "--out"])
        .arg(dir.path().join("out"))
        .arg(&doc)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    // Saving over it again as new: the file exists now.
    let r = d.call(
        "PUT",
        "/api/document",
        &[("If-None-Match", "*")],
        &json!({"model": body["model"]}),
    );
    assert_eq!(r.status, 412, "{}", r.text());
    drop(d);

    let broken = dir.path().join("broken.graph.json");
    std::fs::write(
        &broken,
        "{\"irVersion\": \"2.2\", \"id\": \"a\", \"id\": \"b\"}",
    )
    .unwrap();
    let d = Designer::start(&broken);
    let r = d.get("/api/document");
    assert_eq!(r.status, 422, "{}", r.text());
    let diag = &r.json()["diagnostics"][0];
    assert_eq!(diag["code"], "json-syntax", "{diag}");
    assert!(diag["position"]["line"].is_number(), "{diag}");
}

#[test]
fn validation_capabilities_and_export() {
    let dir = tempfile::tempdir().unwrap();
    let doc = dir.path().join("triage.graph.json");
    std::fs::copy(fixture("support_triage.graph.json"), &doc).unwrap();
    let d = Designer::start(&doc);
    let model = d.get("/api/document").json()["model"].clone();

    let r = d.call(
        "POST",
        "/api/validate",
        &[],
        &json!({"model": model, "platform": "go"}),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["diagnostics"], json!([]));
    assert!(r.json()["ms"].is_number());

    // Without its Go body, the node is named, with the pointer and position.
    let mut broken = model.clone();
    let classify = broken["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .position(|n| n["node"]["id"] == "classify")
        .unwrap();
    broken["nodes"][classify]["bodies"]
        .as_object_mut()
        .unwrap()
        .remove("go");
    let r = d.call(
        "POST",
        "/api/validate",
        &[],
        &json!({"model": broken, "platform": "go"}),
    );
    let diags = r.json()["diagnostics"].clone();
    assert_eq!(diags.as_array().unwrap().len(), 1, "{diags}");
    assert_eq!(diags[0]["code"], "missing-body", "{diags}");
    assert_eq!(diags[0]["node"], "classify", "{diags}");
    assert!(
        diags[0]["position"]["line"].as_u64().unwrap() > 1,
        "{diags}"
    );
    // The same document is fine for another platform's body.
    let r = d.call(
        "POST",
        "/api/validate",
        &[],
        &json!({"model": broken, "platform": "python-svc"}),
    );
    assert_eq!(r.json()["diagnostics"], json!([]), "{}", r.text());
    let r = d.call(
        "POST",
        "/api/validate",
        &[],
        &json!({"model": model, "platform": "cobol"}),
    );
    assert_eq!(r.status, 400);
    let r = d.call("POST", "/api/validate", &[], &json!({"model": 1}));
    assert_eq!(r.status, 400);

    // Capabilities come from the backends themselves.
    let caps = d.get("/api/capabilities").json();
    // The palette offers what each target builds: agents, subgraphs and
    // hitl everywhere; a refusal comes with the backend's reason.
    for platform in ["go", "java-svc", "python-svc"] {
        let kinds = caps[platform]["capabilities"]["nodeKinds"]
            .as_array()
            .unwrap();
        for kind in ["agent", "intent_classifier", "rag", "subgraph", "hitl"] {
            assert!(kinds.contains(&json!(kind)), "{platform}: {kinds:?}");
        }
    }
    let java = &caps["java-svc"]["capabilities"];
    assert!(
        java["auth"].as_array().unwrap().contains(&json!("bearer")),
        "{java}"
    );
    assert!(java["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["requirement"] == "feature:tracing.register"));
    assert!(d.get("/api/connectors").json()["connectors"].is_array());

    // Export to a folder (relative to the document), then again over it.
    let request = json!({"model": model, "platform": "go", "dir": "out-go"});
    let r = d.call("POST", "/api/export", &[], &request);
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(dir.path().join("out-go/go.mod").is_file());
    assert_eq!(d.call("POST", "/api/export", &[], &request).status, 200);
    // A folder that is not an export is never replaced.
    std::fs::create_dir(dir.path().join("mine")).unwrap();
    std::fs::write(dir.path().join("mine/notes.txt"), "keep").unwrap();
    let r = d.call(
        "POST",
        "/api/export",
        &[],
        &json!({"model": model, "platform": "go", "dir": "mine"}),
    );
    assert_eq!(r.status, 422, "{}", r.text());
    assert_eq!(r.json()["diagnostics"][0]["code"], "out-not-empty");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("mine/notes.txt")).unwrap(),
        "keep"
    );
    // A document that does not compile is not exported.
    let r = d.call(
        "POST",
        "/api/export",
        &[],
        &json!({"model": broken, "platform": "go", "dir": "out-broken"}),
    );
    assert_eq!(r.status, 422);
    assert!(!dir.path().join("out-broken").exists());

    // Export as a zip: the same files.
    let r = d.call(
        "POST",
        "/api/export",
        &[],
        &json!({"model": model, "platform": "java-svc", "zip": true}),
    );
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("application/zip"));
    let entries = svc_pack_zip::read(&r.body, &svc_pack_zip::Limits::default()).unwrap();
    assert!(
        entries.iter().any(|e| e.path == "pom.xml"),
        "{:?}",
        entries.iter().map(|e| &e.path).collect::<Vec<_>>()
    );
}
