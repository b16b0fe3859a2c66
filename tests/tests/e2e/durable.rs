//! Durable threads on every target (`docs/http-contract.md`, "Where threads
//! live"): the graph of the e2e test `threads` compiled with a `postgres`
//! checkpointer runs as two replicas sharing one real PostgreSQL database
//! (an interrupt on one resumed on the other, two resumes of one interrupt
//! at once, a replica restarted, the database stopped and started again),
//! and with a `sqlite` checkpointer, restarted between interrupt and resume.
//! go and java-svc keep threads in the same tables (docs/threads-schema.md):
//! a replica of each shares one database, PostgreSQL and SQLite.

use std::time::Duration;

use serde_json::{json, Value};
use svc_tests::http;
use svc_tests::postgres::{require_postgres, Postgres};
use svc_tests::service::{
    build, check_project_with, compile, expect_refusal_with, require_platform, Project, Service,
};

use crate::threads::{graph, THREADED};

const KEY: &str = "durable-key-5c1d";
const READY: Duration = Duration::from_secs(120);

fn project(platform: &str, checkpointer: Value, dir: &std::path::Path) -> Project {
    let doc = dir.join("durable.graph.json");
    std::fs::write(&doc, graph(checkpointer).to_string()).unwrap();
    compile(platform, &doc).expect("the graph compiles")
}

fn post(port: u16, body: &Value) -> (u16, Value) {
    let r = http::send(
        port,
        "POST",
        "/invoke",
        &[("Content-Type", "application/json"), ("X-API-Key", KEY)],
        body.to_string().as_bytes(),
        Duration::from_secs(30),
    )
    .unwrap();
    (r.status, r.json())
}

/// A new thread paused at its first interrupt; returns its id.
fn paused(port: u16, question: &str) -> String {
    let (status, body) = post(port, &json!({"state": {"question": question}}));
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["interrupt"]["node"], "approve", "{body}");
    body["threadId"].as_str().unwrap().to_string()
}

fn assert_error(got: (u16, Value), status: u16, code: &str) {
    assert_eq!(
        (got.0, got.1["error"]["code"].clone()),
        (status, json!(code)),
        "{}",
        got.1
    );
}

#[test]
fn postgres_threads_across_replicas_restarts_and_outages() {
    if !require_postgres() {
        return;
    }
    let mut pg = Postgres::start().unwrap();
    let mut built = Vec::new();
    for platform in THREADED {
        if require_platform(platform) {
            built.push((platform, postgres_threads(platform, &mut pg)));
            eprintln!("{platform}: threads on PostgreSQL across replicas, restarts and outages");
        }
    }
    let url = pg.create_database("shared").unwrap();
    shared_by_go_and_java(&built, &[("DEMO_DB_URL", url.as_str())]);
}

/// A replica of go and one of java-svc on one database: a thread paused on
/// either resumes on the other, once, and of two resumes at once exactly
/// one runs.
fn shared_by_go_and_java(built: &[(&str, Project)], env: &[(&str, &str)]) {
    let find = |platform: &str| {
        built
            .iter()
            .find(|(p, _)| *p == platform)
            .map(|(_, project)| project)
    };
    let (Some(go), Some(java)) = (find("go"), find("java-svc")) else {
        return;
    };
    let env: Vec<(&str, &str)> = [("SVC_API_KEY", KEY)]
        .into_iter()
        .chain(env.iter().copied())
        .collect();
    let g = Service::launch(go, &env, READY).unwrap();
    let j = Service::launch(java, &env, READY).unwrap();
    for (first, second, name) in [(&g, &j, "go to java-svc"), (&j, &g, "java-svc to go")] {
        let thread = paused(first.port, name);
        let (status, next) = post(second.port, &json!({"threadId": thread, "resume": true}));
        assert_eq!(status, 200, "{name}: {next}");
        assert_eq!(
            next["interrupt"]["value"],
            json!({"ask": format!("Any note on {name}?")}),
            "{name}: {next}"
        );
        assert_error(
            post(second.port, &json!({"threadId": thread, "resume": 1})),
            422,
            "invalid_state",
        );
        let (status, done) = post(first.port, &json!({"threadId": thread, "resume": "both"}));
        assert_eq!(status, 200, "{name}: {done}");
        assert_eq!(
            done["result"]["reply"],
            format!("Draft for {name} (both)"),
            "{name}: {done}"
        );
        assert_error(
            post(second.port, &json!({"threadId": thread, "resume": "again"})),
            409,
            "not_interrupted",
        );
    }
    for round in 0..3 {
        let thread = paused(j.port, &format!("mixed race {round}"));
        let body = json!({"threadId": thread, "resume": false});
        let (rg, rj) = std::thread::scope(|s| {
            let tg = s.spawn(|| post(g.port, &body));
            let tj = s.spawn(|| post(j.port, &body));
            (tg.join().unwrap(), tj.join().unwrap())
        });
        let mut statuses = [rg.0, rj.0];
        statuses.sort();
        assert_eq!(statuses, [200, 409], "{} / {}", rg.1, rj.1);
    }
    eprintln!("go and java-svc: replicas of both share threads");
}

fn postgres_threads(platform: &str, pg: &mut Postgres) -> Project {
    let dir = tempfile::tempdir().unwrap();
    let url = pg
        .create_database(&format!("threads_{}", platform.replace('-', "_")))
        .unwrap();
    let project = project(
        platform,
        json!({"type": "postgres", "urlEnv": "DEMO_DB_URL"}),
        dir.path(),
    );
    // The project's own tests run against the database too.
    let test_url = pg
        .create_database(&format!("project_tests_{}", platform.replace('-', "_")))
        .unwrap();
    check_project_with(&project, platform, &[("DEMO_DB_URL", &test_url)]).unwrap();
    build(&project).unwrap();

    // Without its variable, or with a database that is not there, it does
    // not start, and says which variable.
    let refused = expect_refusal_with(&project, &[("SVC_API_KEY", KEY)], READY).unwrap();
    assert!(refused.contains("DEMO_DB_URL"), "{platform}: {refused}");
    let nowhere = format!(
        "postgresql://svc@127.0.0.1:{}/threads",
        http::free_port().unwrap()
    );
    let refused = expect_refusal_with(
        &project,
        &[("SVC_API_KEY", KEY), ("DEMO_DB_URL", &nowhere)],
        READY,
    )
    .unwrap();
    assert!(refused.contains("DEMO_DB_URL"), "{platform}: {refused}");
    assert!(
        !refused.contains(&nowhere),
        "{platform}: the URL is a secret: {refused}"
    );

    let env = [("SVC_API_KEY", KEY), ("DEMO_DB_URL", url.as_str())];
    let a = Service::launch(&project, &env, READY).unwrap();
    let mut b = Service::launch(&project, &env, READY).unwrap();

    // Interrupt on A, resume on B, finish on A.
    let thread = paused(a.port, "A");
    let (status, next) = post(b.port, &json!({"threadId": thread, "resume": true}));
    assert_eq!(status, 200, "{next}");
    assert_eq!(
        next["interrupt"]["value"],
        json!({"ask": "Any note on A?"}),
        "{next}"
    );
    let (status, done) = post(a.port, &json!({"threadId": thread, "resume": "fine"}));
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["result"]["reply"], "Draft for A (fine)", "{done}");
    assert_error(
        post(b.port, &json!({"threadId": thread, "resume": "again"})),
        409,
        "not_interrupted",
    );

    // Two resumes of one interrupt, one on each replica, at the same time: one runs.
    for round in 0..3 {
        let thread = paused(a.port, &format!("race {round}"));
        let body = json!({"threadId": thread, "resume": false});
        let (ra, rb) = std::thread::scope(|s| {
            let ta = s.spawn(|| post(a.port, &body));
            let tb = s.spawn(|| post(b.port, &body));
            (ta.join().unwrap(), tb.join().unwrap())
        });
        let mut statuses = [ra.0, rb.0];
        statuses.sort();
        assert_eq!(statuses, [200, 409], "{} / {}", ra.1, rb.1);
        let (won, lost) = if ra.0 == 200 { (ra, rb) } else { (rb, ra) };
        assert_eq!(won.1["result"]["reply"], "rejected", "{}", won.1);
        assert_eq!(lost.1["error"]["code"], "not_interrupted", "{}", lost.1);
    }

    // A replica restarted between interrupt and resume loses nothing.
    let thread = paused(b.port, "restart");
    b.terminate(Duration::from_secs(20)).unwrap();
    b = Service::launch(&project, &env, READY).unwrap();
    let (status, next) = post(b.port, &json!({"threadId": thread, "resume": true}));
    assert_eq!(status, 200, "{next}");
    assert_eq!(next["interrupt"]["node"], "comment", "{next}");

    // The database goes away: 503, and the thread waits for it.
    pg.stop().unwrap();
    assert_error(
        post(a.port, &json!({"threadId": thread, "resume": "kept"})),
        503,
        "checkpointer_unavailable",
    );
    assert_error(
        post(b.port, &json!({"state": {"question": "lost"}})),
        503,
        "checkpointer_unavailable",
    );
    let health = a.send("GET", "/health", &[], b"").unwrap();
    assert_eq!(health.status, 200, "/health does not need the database");
    pg.resume().unwrap();
    let (status, done) = post(a.port, &json!({"threadId": thread, "resume": "kept"}));
    assert_eq!(status, 200, "{done}");
    assert_eq!(
        done["result"]["reply"], "Draft for restart (kept)",
        "{done}"
    );
    project
}

#[test]
fn sqlite_threads_survive_a_restart() {
    let mut built = Vec::new();
    for platform in THREADED {
        if require_platform(platform) {
            built.push((platform, sqlite_threads(platform)));
            eprintln!("{platform}: threads on SQLite survive a restart");
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("shared.db");
    shared_by_go_and_java(&built, &[("SVC_CHECKPOINT_DB", db.to_str().unwrap())]);
}

fn sqlite_threads(platform: &str) -> Project {
    let dir = tempfile::tempdir().unwrap();
    let project = project(platform, json!({"type": "sqlite"}), dir.path());
    check_project_with(&project, platform, &[]).unwrap();
    build(&project).unwrap();
    let db = dir.path().join("threads.db");
    let env = [
        ("SVC_API_KEY", KEY),
        ("SVC_CHECKPOINT_DB", db.to_str().unwrap()),
    ];

    let first = Service::launch(&project, &env, READY).unwrap();
    let thread = paused(first.port, "S");
    first.terminate(Duration::from_secs(20)).unwrap();

    // Two processes on the file now: either resumes, and only once.
    let one = Service::launch(&project, &env, READY).unwrap();
    let two = Service::launch(&project, &env, READY).unwrap();
    let (status, next) = post(two.port, &json!({"threadId": thread, "resume": true}));
    assert_eq!(status, 200, "{next}");
    assert_eq!(next["interrupt"]["node"], "comment", "{next}");
    assert_error(
        post(one.port, &json!({"threadId": thread, "resume": true})),
        422,
        "invalid_state",
    );
    let (status, done) = post(one.port, &json!({"threadId": thread, "resume": "ok"}));
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["result"]["reply"], "Draft for S (ok)", "{done}");
    assert_error(
        post(two.port, &json!({"threadId": thread, "resume": "ok"})),
        409,
        "not_interrupted",
    );
    project
}
