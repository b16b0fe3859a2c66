//! `POST /api/run` and `POST /api/run/stop` against real toolchains: go
//! and python-svc built from the designer's cache, compared, reused after
//! an edit that changes no code, rebuilt (only where needed) after one
//! that does, resumed after an interrupt, streamed as NDJSON, and stopped,
//! also by the designer's own exit.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use svc_tests::http::{send, Reply, Stub};
use svc_tests::service::{require_jdk21, require_tool};

use super::{fixture, Designer};

/// A first python-svc build installs its dependencies into the designer's
/// venv.
const RUN_LIMIT: Duration = Duration::from_secs(900);

/// A copy of a fixture made unique (its `name`), so that this run's cache
/// keys are new and the first build is a real one.
fn unique_copy(name: &str, dir: &Path) -> std::path::PathBuf {
    let mut doc: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture(name)).unwrap()).unwrap();
    let nonce: u128 = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    doc["name"] = json!(format!("run test {nonce}"));
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    path
}

impl Designer {
    pub(super) fn run(&self, body: &Value) -> Value {
        let r = send(
            self.port,
            "POST",
            "/api/run",
            &[
                ("X-Svc-Token", self.token.as_str()),
                ("Content-Type", "application/json"),
            ],
            body.to_string().as_bytes(),
            RUN_LIMIT,
        )
        .unwrap();
        assert_eq!(r.status, 200, "{}", r.text());
        r.json()
    }

    pub(super) fn model(&self) -> Value {
        self.get("/api/document").json()["model"].clone()
    }
}

/// The flat node `id` of a model.
fn node_mut<'a>(model: &'a mut Value, id: &str) -> &'a mut Value {
    model["nodes"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|n| n["node"]["id"] == id)
        .unwrap()
}

fn answers(port: u64) -> bool {
    std::net::TcpStream::connect(("127.0.0.1", u16::try_from(port).unwrap())).is_ok()
}

fn gone(pid: u64) -> bool {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    // Gone, or a zombie nobody has reaped yet (it runs nothing).
    status.is_empty() || status.contains("State:\tZ")
}

#[test]
fn a_run_compares_go_and_python_svc_and_reuses_its_cache() {
    // The designer makes python-svc's venv itself: Go and a Python are
    // all it needs.
    if !require_tool("go") || !require_tool("python3") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = Designer::start(&unique_copy("support_triage.graph.json", dir.path()));
    let model = d.model();
    let request = json!({"state": {"question": "Where is my invoice?"}});

    // Both targets built from scratch, the same answer.
    let first =
        d.run(&json!({"model": model, "platforms": ["go", "python-svc"], "request": request}));
    for p in ["go", "python-svc"] {
        let r = &first["runs"][p];
        assert_eq!(r["status"], 200, "{p}: {r}");
        assert_eq!(r["body"]["result"]["category"], "billing", "{p}: {r}");
        assert_eq!(r["build"]["reused"], false, "{p}: {r}");
        println!("first build of {p}: {} ms", r["build"]["ms"]);
    }
    assert_eq!(first["differences"], json!([]));

    // Moved and reordered, not changed: the same project and service.
    let mut same = model.clone();
    same["nodes"][1]["position"] = json!({"x": 777, "y": 5});
    let node = same["nodes"][1]["node"].as_object().unwrap().clone();
    let reversed: serde_json::Map<String, Value> = node.into_iter().rev().collect();
    same["nodes"][1]["node"] = Value::Object(reversed);
    let again = d.run(&json!({"model": same, "platforms": ["go"], "request": request}));
    assert_eq!(again["runs"]["go"]["build"]["reused"], true, "{again}");
    assert_eq!(again["runs"]["go"]["pid"], first["runs"]["go"]["pid"]);

    // A Go body changed: go rebuilds and answers otherwise; python-svc
    // keeps its project and its service.
    let mut edited = model.clone();
    node_mut(&mut edited, "classify")["bodies"]["go"] =
        json!("return State{\"category\": \"general\"}, nil");
    let started = Instant::now();
    let changed =
        d.run(&json!({"model": edited, "platforms": ["go", "python-svc"], "request": request}));
    println!(
        "go body edit to answer: {} ms",
        started.elapsed().as_millis()
    );
    assert_eq!(changed["runs"]["go"]["build"]["reused"], false);
    assert_eq!(changed["runs"]["python-svc"]["build"]["reused"], true);
    assert_eq!(
        changed["runs"]["python-svc"]["pid"],
        first["runs"]["python-svc"]["pid"]
    );
    assert_ne!(changed["runs"]["go"]["pid"], first["runs"]["go"]["pid"]);
    assert!(
        gone(first["runs"]["go"]["pid"].as_u64().unwrap()),
        "the old go service still runs"
    );
    let category = changed["differences"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["field"] == "/result/category")
        .unwrap_or_else(|| panic!("{changed}"));
    assert_eq!(
        category["values"],
        json!({"go": "general", "python-svc": "billing"})
    );

    // A body that does not build: the failure names the node and line.
    let mut broken = model.clone();
    let classify = node_mut(&mut broken, "classify");
    let body = classify["bodies"]["go"].as_str().unwrap().to_string();
    classify["bodies"]["go"] = json!(format!("{body}\nreturn nope, nil"));
    let failed = d.run(&json!({"model": broken, "platforms": ["go"], "request": request}));
    let go = &failed["runs"]["go"];
    assert_eq!(go["phase"], "build", "{go}");
    assert_eq!(go["error"]["code"], "build_failed");
    let place = go["locations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["message"].as_str().unwrap_or("").contains("nope"))
        .unwrap_or_else(|| panic!("{go}"));
    assert_eq!(place["node"], "classify");
    assert_eq!(place["line"], body.lines().count() + 1);

    // Bad requests say what is wrong.
    for (bad, why) in [
        (
            json!({"model": model, "platforms": [], "request": request}),
            "platforms",
        ),
        (
            json!({"model": model, "platforms": ["cobol"], "request": request}),
            "cobol",
        ),
        (
            json!({"model": model, "platforms": ["go"], "request": "hi"}),
            "request",
        ),
        (
            json!({"model": model, "platforms": ["go"], "request": request, "llm": {"mode": "provider", "env": {"A-B": "x"}}}),
            "A-B",
        ),
    ] {
        let r = d.call("POST", "/api/run", &[], &bad);
        assert_eq!(r.status, 400, "{}", r.text());
        assert!(r.text().contains(why), "{}", r.text());
    }

    // Stop: every service the designer started, and only on POST.
    assert_eq!(
        d.call("GET", "/api/run/stop", &[], &Value::Null).status,
        405
    );
    let stopped = d.call("POST", "/api/run/stop", &[], &json!({}));
    assert_eq!(stopped.status, 200);
    let stopped = stopped.json()["stopped"].clone();
    assert!(
        stopped.as_array().unwrap().contains(&json!("python-svc")),
        "{stopped}"
    );
    let python = &changed["runs"]["python-svc"];
    assert!(!answers(python["port"].as_u64().unwrap()));
    assert!(gone(python["pid"].as_u64().unwrap()));
}

#[test]
fn a_paused_run_resumes_on_every_target_and_the_designers_exit_stops_every_service() {
    if !require_tool("go") || !require_tool("python3") || !require_jdk21() {
        return;
    }
    let targets = ["go", "python-svc", "java-svc"];
    let dir = tempfile::tempdir().unwrap();
    let mut d = Designer::start(&unique_copy("hitl_node.graph.json", dir.path()));
    let model = d.model();
    let thread = format!("t{}", std::process::id());

    // The run's progress, asked for while it goes: each target's phases
    // arrive before the answer does.
    let id = format!("p{}", std::process::id());
    let body = json!({"model": model, "platforms": targets, "progress": id,
           "request": {"state": {"question": "ship it?"}, "threadId": thread}});
    let (port, token) = (d.port, d.token.clone());
    let post = std::thread::spawn(move || {
        let headers = [
            ("X-Svc-Token", token.as_str()),
            ("Content-Type", "application/json"),
        ];
        let r = send(
            port,
            "POST",
            "/api/run",
            &headers,
            body.to_string().as_bytes(),
            RUN_LIMIT,
        );
        (Instant::now(), r.unwrap())
    });
    let (mut lines, mut after, mut first_seen) = (Vec::<Value>::new(), 0, None);
    loop {
        let r = d.get(&format!("/api/run/progress?id={id}&after={after}"));
        assert_eq!(r.status, 200, "{}", r.text());
        let r = r.json();
        let new = r["lines"].as_array().unwrap();
        if !new.is_empty() && first_seen.is_none() {
            first_seen = Some(Instant::now());
        }
        lines.extend(new.iter().cloned());
        after = r["next"].as_u64().unwrap() as usize;
        if r["done"] == true {
            break;
        }
    }
    let (answered, r) = post.join().unwrap();
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(
        first_seen.unwrap() < answered,
        "no progress before the answer"
    );
    assert_eq!(d.get("/api/run/progress").status, 400);
    let phases = |p: &str| -> Vec<Value> {
        lines
            .iter()
            .filter(|l| l["platform"] == p && l["type"] == "phase")
            .map(|l| l["phase"].clone())
            .collect()
    };
    let done = r.json();
    for p in targets {
        assert_eq!(phases(p).first(), Some(&json!("compile")), "{p}: {done}");
        assert_eq!(phases(p).last(), Some(&json!("run")), "{p}: {done}");
    }
    for p in targets {
        let body = &done["runs"][p]["body"];
        assert_eq!(body["interrupt"]["node"], "review", "{p}: {body}");
        assert_eq!(
            body["interrupt"]["value"]["question"],
            "Approve the answer to ship it??"
        );
        assert_eq!(body["threadId"], thread.as_str());
    }
    assert_eq!(done["differences"], json!([]));

    // Resumed with the reviewer's value, on each, through the same call.
    let resumed = d.run(&json!({"model": model, "platforms": targets,
        "request": {"threadId": thread, "resume": "approved"}}));
    for p in targets {
        assert_eq!(resumed["runs"][p]["status"], 200, "{resumed}");
        assert_eq!(resumed["runs"][p]["body"]["result"]["answer"], "approved");
    }

    // The designer stopped as a process manager (or Ctrl+C) would: no
    // service is left.
    let services: Vec<(u64, u64)> = targets
        .iter()
        .map(|p| {
            let r = &resumed["runs"][*p];
            (r["pid"].as_u64().unwrap(), r["port"].as_u64().unwrap())
        })
        .collect();
    let status = std::process::Command::new("kill")
        .args(["-TERM", &d.child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let started = Instant::now();
    while d.child.try_wait().unwrap().is_none() {
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "svc design did not exit on SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    for (pid, port) in services {
        assert!(
            gone(pid),
            "service {pid} still runs after the designer stopped"
        );
        assert!(!answers(port));
    }
}

#[test]
fn the_echo_model_streams_its_tokens_as_events() {
    if !require_tool("go") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = Designer::start(&unique_copy("streaming_chat.graph.json", dir.path()));
    let r = d.run(&json!({"model": d.model(), "platforms": ["go"],
        "request": {"state": {"question": "hello"}}}));
    let go = &r["runs"]["go"];
    assert_eq!(go["status"], 200, "{go}");
    assert_eq!(go["body"]["result"]["reply"], "echo: Q: hello");
    let tokens: String = go["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"] == "token" && e["node"] == "answer")
        .filter_map(|e| e["data"]["delta"].as_str())
        .collect();
    assert_eq!(tokens, "echo: Q: hello");
}

#[test]
fn with_the_documents_provider_the_services_get_the_panels_variables() {
    if !require_tool("go") {
        return;
    }
    let provider = Stub::start(|_| {
        Reply::Json(
            200,
            json!({"id": "x", "object": "chat.completion", "created": 0, "model": "m",
                   "choices": [{"index": 0, "message": {"role": "assistant", "content": "[\"from the provider\"]"}, "finish_reason": "stop"}],
                   "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})
            .to_string(),
        )
    })
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let d = Designer::start(&unique_copy("llm_chat.graph.json", dir.path()));
    let r = d.run(&json!({"model": d.model(), "platforms": ["go"],
        "request": {"state": {"question": "hello"}},
        "llm": {"mode": "provider", "env": {
            "OPENAI_BASE_URL": format!("{}/v1", provider.url()),
            "OPENAI_API_KEY": "typed-in-the-panel"}}}));
    assert_eq!(r["runs"]["go"]["status"], 200, "{r}");
    let calls = provider.received();
    assert!(!calls.is_empty(), "the provider was not called");
    for call in calls {
        assert!(call.path.ends_with("/v1/chat/completions"), "{}", call.path);
        assert_eq!(
            call.header("authorization"),
            Some("Bearer typed-in-the-panel")
        );
    }
    // Nothing of it is written to the document.
    let saved = std::fs::read_to_string(dir.path().join("llm_chat.graph.json")).unwrap();
    assert!(!saved.contains("typed-in-the-panel"));
}
