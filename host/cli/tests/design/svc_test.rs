//! `svc test`: the fixtures' test files pass on every target (or are
//! skipped where a target refuses the graph, with its reason), a wrong
//! case fails naming the case, the target and the first differing field,
//! a broken test file is a diagnostic, the JUnit file reads with a
//! standard JUnit reader, and the projects `svc compile` writes run the
//! cases as their own tests (go test, pytest, JUnit).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use super::fixture;

fn svc_test(doc: &Path, extra: &[&str]) -> (Output, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_svc"))
        .arg("test")
        .arg(doc)
        .args(extra)
        .env("SVC_CACHE_DIR", svc_tests::service::cache_dir())
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out, text)
}

/// support_triage as `triage.graph.json` in `dir`, with `cases` as its
/// test file.
fn triage_with_cases(dir: &Path, cases: &str) -> PathBuf {
    let doc = dir.join("triage.graph.json");
    std::fs::copy(fixture("support_triage.graph.json"), &doc).unwrap();
    std::fs::write(dir.join("triage.tests.json"), cases).unwrap();
    doc
}

/// The table row of a case: its marks per target, in the header's order.
fn row<'a>(table: &'a str, case: &str) -> Vec<&'a str> {
    let line = table
        .lines()
        .find(|l| l.starts_with(case) && l[case.len()..].starts_with("  "))
        .unwrap_or_else(|| panic!("no row for `{case}` in\n{table}"));
    line[case.len()..].split_whitespace().collect()
}

/// A JUnit reader that is not ours (Python's junitparser): per suite, its
/// name and (tests, failures, skipped); per case, classname, name and
/// result.
fn read_junit(path: &Path) -> serde_json::Value {
    let script = r#"
import json, sys
from junitparser import JUnitXml, Failure, Skipped
xml = JUnitXml.fromfile(sys.argv[1])
out = []
for suite in xml:
    cases = []
    for case in suite:
        kind = "pass"
        msg = ""
        for r in case.result:
            kind = "failure" if isinstance(r, Failure) else "skipped" if isinstance(r, Skipped) else "other"
            msg = r.message or ""
        cases.append({"classname": case.classname, "name": case.name, "result": kind, "message": msg})
    out.append({"name": suite.name, "tests": suite.tests, "failures": suite.failures, "skipped": suite.skipped, "cases": cases})
print(json.dumps(out))
"#;
    let out = Command::new("python3")
        .args(["-c", script])
        .arg(path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "junitparser (tests/requirements.txt) failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The targets in the order `svc test` reports them.
const TARGETS: [&str; 3] = ["go", "java-svc", "python-svc"];

/// Every valid fixture with a test file runs its cases with `svc test`:
/// each target whose `.expect.json` says `ok` passes them all, each that
/// refuses the graph as `unsupported` skips them (svc test says why), and a
/// target that refuses it otherwise (a body missing for it, a body that does
/// not parse) is left out of `--platform`. Two fixtures run at a time: a
/// run waits on builds and services as much as it computes.
#[test]
fn the_fixtures_cases_pass_on_every_target_that_takes_the_graph() {
    if std::env::var_os("CI").is_none() && Command::new("mvn").arg("-v").output().is_err() {
        eprintln!("skipped: no Maven for java-svc");
        return;
    }
    let mut graphs: Vec<String> = std::fs::read_dir(fixture(""))
        .unwrap()
        .filter_map(|e| {
            let name = e.ok()?.file_name().to_string_lossy().into_owned();
            Some(name.strip_suffix(".tests.json")?.to_string())
        })
        .collect();
    graphs.sort();
    assert!(
        graphs.len() >= 31,
        "only {} test files: {graphs:?}",
        graphs.len()
    );
    let dir = tempfile::tempdir().unwrap();
    let queue = std::sync::Mutex::new(graphs.iter());
    let failures = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let Some(graph) = queue.lock().unwrap().next() else {
                    return;
                };
                let started = std::time::Instant::now();
                let outcome = fixture_cases(graph, dir.path());
                eprintln!("{graph}: {:.1} s", started.elapsed().as_secs_f64());
                if let Err(e) = outcome {
                    failures.lock().unwrap().push(format!("{graph}: {e}"));
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Runs `svc test` on one fixture's cases and checks its table and JUnit
/// file against what the fixture's `.expect.json` says of each target.
fn fixture_cases(graph: &str, dir: &Path) -> Result<(), String> {
    let expect: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(fixture(&format!("{graph}.expect.json"))).unwrap(),
    )
    .unwrap();
    // Each target's mark: pass, skipped (refused as unsupported), or none.
    let marks: Vec<(&str, &str)> = TARGETS
        .iter()
        .filter_map(|&t| match &expect["platforms"][t] {
            serde_json::Value::String(ok) if ok == "ok" => Some((t, "pass")),
            serde_json::Value::Array(refusals)
                if refusals.iter().all(|r| r["code"] == "unsupported") =>
            {
                Some((t, "skipped"))
            }
            _ => None,
        })
        .collect();
    if !marks.iter().any(|(_, m)| *m == "pass") {
        return Err("no target runs the cases: the fixture needs no test file".into());
    }
    let platforms: Vec<&str> = marks.iter().map(|(t, _)| *t).collect();
    let junit = dir.join(format!("{graph}.xml"));
    let doc = fixture(&format!("{graph}.graph.json"));
    let (out, text) = svc_test(
        &doc,
        &[
            "--platform",
            &platforms.join(","),
            "--junit",
            junit.to_str().unwrap(),
        ],
    );
    if !out.status.success() {
        return Err(text);
    }
    let cases: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(fixture(&format!("{graph}.tests.json"))).unwrap(),
    )
    .unwrap();
    let cases = cases["cases"].as_array().unwrap();
    let want: Vec<&str> = marks.iter().map(|(_, m)| *m).collect();
    for case in cases {
        let name = case["name"].as_str().unwrap();
        if row(&text, name) != want {
            return Err(format!("{name}: expected {want:?}\n{text}"));
        }
    }
    for (target, mark) in &marks {
        if *mark == "skipped" && !text.contains(&format!("{target}: {target} refuses the graph:")) {
            return Err(format!("{target} is skipped without its reason\n{text}"));
        }
    }
    let suites = read_junit(&junit);
    let suites = suites.as_array().unwrap();
    if suites.len() != marks.len() {
        return Err(format!("{} JUnit suites: {suites:?}", suites.len()));
    }
    for (s, (_, mark)) in suites.iter().zip(&marks) {
        let skipped = if *mark == "skipped" { cases.len() } else { 0 };
        if s["failures"] != 0
            || s["tests"].as_u64() != Some(cases.len() as u64)
            || s["skipped"].as_u64() != Some(skipped as u64)
        {
            return Err(format!("JUnit suite {s}"));
        }
    }
    Ok(())
}

/// A target that refuses the graph skips its cases, naming the refusal and
/// where it is (go refuses `tracing.register_on_build`, LangSmith's); with
/// no target left to run them, `svc test` fails.
#[test]
fn a_target_that_refuses_the_graph_skips_its_cases_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let mut graph: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("bearer_auth.graph.json")).unwrap())
            .unwrap();
    graph["logical"]["settings"] =
        serde_json::json!({"tracing": {"enabled": true, "register_on_build": true}});
    let text = serde_json::to_string_pretty(&graph).unwrap();
    let line = 1 + text
        .lines()
        .position(|l| l.contains("register_on_build"))
        .unwrap();
    let doc = dir.path().join("refused.graph.json");
    std::fs::write(&doc, text).unwrap();
    std::fs::copy(
        fixture("bearer_auth.tests.json"),
        dir.path().join("refused.tests.json"),
    )
    .unwrap();
    let junit = dir.path().join("refused.xml");
    let (out, text) = svc_test(
        &doc,
        &["--platform", "go", "--junit", junit.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("no target ran the cases"), "{text}");
    assert!(
        text.contains("go: go refuses the graph:")
            && text.contains(&format!("refused.graph.json:{line}:")),
        "{text}"
    );
    let suites = read_junit(&junit);
    let go = &suites.as_array().unwrap()[0];
    assert_eq!(go["skipped"], 2, "{go}");
    assert_eq!(go["cases"][0]["result"], "skipped", "{go}");
}

#[test]
fn a_wrong_case_fails_naming_the_case_the_target_and_the_first_difference() {
    let dir = tempfile::tempdir().unwrap();
    let doc = triage_with_cases(
        dir.path(),
        r#"{"cases": [
  {"name": "billing", "request": {"state": {"question": "my invoice"}}, "expect": {"result": {"category": "billing"}}},
  {"name": "wrongly billing", "request": {"state": {"question": "a password"}}, "expect": {"result": {"category": "billing"}}},
  {"name": "wrong status", "request": {"state": {}}, "expect": {"status": 400}}
]}"#,
    );
    let junit = dir.path().join("out.xml");
    let (out, text) = svc_test(
        &doc,
        &[
            "--platform",
            "go,python-svc",
            "--junit",
            junit.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert_eq!(row(&text, "billing"), ["pass", "pass"], "{text}");
    assert_eq!(row(&text, "wrongly billing"), ["FAIL", "FAIL"], "{text}");
    for platform in ["go", "python-svc"] {
        assert!(
            text.contains(&format!(
                "case `wrongly billing` on {platform}: /result/category: expected \"billing\", got \"general\""
            )),
            "{text}"
        );
        assert!(
            text.contains(&format!(
                "case `wrong status` on {platform}: status: expected 400, got 422 (invalid_state:"
            )),
            "{text}"
        );
    }
    assert!(text.contains("2 passed, 4 failed, 0 skipped"), "{text}");
    let suites = read_junit(&junit);
    let go = &suites[0];
    assert_eq!(go["failures"], 2, "{go}");
    assert_eq!(go["cases"][1]["classname"], "go");
    assert_eq!(go["cases"][1]["result"], "failure");
    assert_eq!(
        go["cases"][1]["message"],
        "/result/category: expected \"billing\", got \"general\""
    );

    // A model reply the graph never asks for fails the case too.
    std::fs::write(
        dir.path().join("triage.tests.json"),
        r#"{"cases": [{"name": "unused reply", "request": {"state": {"question": "q"}}, "model": [{"content": "x"}]}]}"#,
    )
    .unwrap();
    let (out, text) = svc_test(&doc, &["--platform", "go"]);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("case `unused reply` on go: 1 scripted model reply went unused (the graph made 0 model calls)"),
        "{text}"
    );
}

#[test]
fn a_broken_test_file_is_a_diagnostic_and_nothing_runs() {
    let dir = tempfile::tempdir().unwrap();
    let doc = triage_with_cases(dir.path(), "{\"cases\": [\n  {\"name\": \"a\", \"request\": {\"state\": {}}, \"expect\": {\"visited\": [\"clasify\"]}}\n]}");
    let (out, text) = svc_test(&doc, &["--platform", "go"]);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains("error[test-reference]"), "{text}");
    assert!(text.contains("triage.tests.json:2:"), "{text}");
    assert!(text.contains("did you mean `classify`?"), "{text}");
    assert!(!text.contains("case "), "nothing ran:\n{text}");

    let (out, text) = svc_test(&dir.path().join("missing.graph.json"), &[]);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains("cannot read"), "{text}");
    std::fs::remove_file(dir.path().join("triage.tests.json")).unwrap();
    let (out, text) = svc_test(&doc, &[]);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(
        text.contains("cannot read the test file") && text.contains("triage.tests.json"),
        "{text}"
    );
}

#[test]
fn the_generated_projects_run_the_cases_as_their_own_tests() {
    let dir = tempfile::tempdir().unwrap();
    let doc = triage_with_cases(
        dir.path(),
        r#"{"cases": [
  {"name": "billing", "request": {"state": {"question": "my invoice"}}, "expect": {"result": {"category": "billing"}}},
  {"name": "wrongly billing", "request": {"state": {"question": "a password"}}, "expect": {"result": {"category": "billing"}}},
  {"name": "required", "request": {"state": {}}, "expect": {"status": 422, "error": {"code": "invalid_state"}}}
]}"#,
    );
    // python-svc's project runs in the run cache's venv, which a run of
    // `svc test` on python-svc makes (with the SDK and pytest).
    let (out, text) = svc_test(&doc, &["--platform", "python-svc"]);
    assert_eq!(out.status.code(), Some(1), "{text}");
    let difference = "/result/category: expected \"billing\", got \"general\"";
    for platform in ["go", "python-svc", "java-svc"] {
        let project = dir.path().join(platform);
        let (ok, log) = project_cases(&doc, platform, &project);
        assert!(!ok, "{platform}: the wrong case must fail\n{log}");
        assert!(log.contains(difference), "{platform}:\n{log}");
        match platform {
            "go" => {
                for passed in ["TestCases/billing ", "TestCases/required "] {
                    assert!(log.contains(&format!("--- PASS: {passed}")), "{log}");
                }
                assert!(
                    log.contains("--- FAIL: TestCases/wrongly_billing "),
                    "{log}"
                );
            }
            "python-svc" => {
                assert!(
                    log.contains("PASSED tests/test_svc_cases.py::test_case[billing]"),
                    "{log}"
                );
                assert!(
                    log.contains("PASSED tests/test_svc_cases.py::test_case[required]"),
                    "{log}"
                );
                assert!(
                    log.contains("FAILED tests/test_svc_cases.py::test_case[wrongly billing]"),
                    "{log}"
                );
            }
            _ => {
                let report =
                    std::fs::read_to_string(project.join(
                        "target/surefire-reports/TEST-com.svc.support_triage.SvcCasesTests.xml",
                    ))
                    .unwrap_or_else(|e| panic!("{e}\n{log}"));
                assert!(
                    report.contains(r#"tests="3""#) && report.contains(r#"failures="1""#),
                    "{report}"
                );
                assert!(
                    log.contains(&format!("case `wrongly billing`: {difference}")),
                    "{log}"
                );
            }
        }
    }
}

/// The designer saves runs as cases (`POST /api/cases`): a paused run, then
/// its resume (which continues the paused case's thread), refusals, and
/// `svc test` then passes on what was saved.
#[test]
fn the_designer_saves_runs_as_cases_that_svc_test_passes() {
    let dir = tempfile::tempdir().unwrap();
    let doc = dir.path().join("review.graph.json");
    std::fs::copy(fixture("hitl_node.graph.json"), &doc).unwrap();
    let d = super::Designer::start(&doc);
    let model = d.model();
    let save = |name: &str, request: &serde_json::Value, run: &serde_json::Value| {
        let body = serde_json::json!({"model": model, "name": name, "request": request,
            "status": run["status"], "body": run["body"]});
        d.call("POST", "/api/cases", &[], &body)
    };
    let paused_request =
        serde_json::json!({"state": {"question": "refund 12 EUR"}, "threadId": "thread-saved-1"});
    let paused =
        d.run(&serde_json::json!({"model": model, "platforms": ["go"], "request": paused_request}));
    let paused = &paused["runs"]["go"];
    assert_eq!(paused["body"]["interrupt"]["node"], "review", "{paused}");

    // A resume before its paused run is a case has no thread to continue.
    let resume_request = serde_json::json!({"threadId": "thread-saved-1", "resume": "approved"});
    let r = save(
        "too early",
        &resume_request,
        &serde_json::json!({"status": 200, "body": {"result": {}}}),
    );
    assert_eq!(r.status, 400, "{}", r.text());
    assert!(
        r.text().contains("save the run that paused it"),
        "{}",
        r.text()
    );

    let r = save("asks for review", &paused_request, paused);
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["cases"], 1);
    let resumed =
        d.run(&serde_json::json!({"model": model, "platforms": ["go"], "request": resume_request}));
    let resumed = &resumed["runs"]["go"];
    assert_eq!(resumed["body"]["result"]["answer"], "approved", "{resumed}");
    let r = save("approved", &resume_request, resumed);
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(
        r.json()["case"]["request"],
        serde_json::json!({"threadOf": "asks for review", "resume": "approved"})
    );
    let r = save("approved", &resume_request, resumed);
    assert_eq!(r.status, 400, "a second case of one name: {}", r.text());

    let saved: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("review.tests.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(saved["cases"].as_array().unwrap().len(), 2, "{saved}");
    let (out, text) = svc_test(&doc, &["--platform", "go"]);
    assert!(out.status.success(), "{text}");
    assert_eq!(row(&text, "asks for review"), ["pass"], "{text}");
    assert_eq!(row(&text, "approved"), ["pass"], "{text}");
}

/// A graph that calls a streamable HTTP MCP server: `svc test` stands in
/// for it on every target (each target's official MCP client), a tool call
/// without a scripted reply fails its case, the compiled project's own
/// runner stands in the same way, and a stdio server makes it skip, saying
/// why.
#[test]
fn mcp_servers_are_stood_in_for_on_every_target() {
    if std::env::var_os("CI").is_none() && Command::new("mvn").arg("-v").output().is_err() {
        eprintln!("skipped: no Maven for java-svc");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("mcp_tools.graph.json")).unwrap())
            .unwrap();
    let logical = &mut doc["logical"];
    logical["mcpServers"] = serde_json::json!([
        {"id": "search", "transport": "streamable_http", "url": "env:SEARCH_MCP_URL", "timeoutMs": 10000}
    ]);
    logical["tools"] = serde_json::json!([{"id": "web_search", "kind": "mcp", "server": "search", "tool": "web_search"}]);
    for node in logical["nodes"].as_array_mut().unwrap() {
        if node["kind"] == "tool" {
            node["toolId"] = serde_json::json!("web_search");
            node["input"] = serde_json::json!({"query": "{{question}}"});
        }
    }
    let path = dir.path().join("search.graph.json");
    std::fs::write(&path, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    std::fs::write(
        dir.path().join("search.tests.json"),
        r#"{"cases": [
  {"name": "structured", "request": {"state": {"question": "svc"}}, "mcp": {"search": {"web_search": {"json": {"hits": 3}}}}, "expect": {"result": {"answer": {"hits": 3}}}},
  {"name": "text", "request": {"state": {"question": "svc"}}, "mcp": {"search": {"web_search": {"text": "three hits"}}}, "expect": {"result": {"answer": {"text": "three hits"}}}},
  {"name": "tool error", "request": {"state": {"question": "svc"}}, "mcp": {"search": {"web_search": {"text": "quota", "isError": true}}}, "expect": {"status": 502, "error": {"code": "upstream_error", "details": {"reason": "tool_error"}}}},
  {"name": "unscripted", "request": {"state": {"question": "svc"}}, "expect": {"result": {}}}
]}"#,
    )
    .unwrap();
    let (out, text) = svc_test(&path, &[]);
    assert_eq!(out.status.code(), Some(1), "{text}");
    for case in ["structured", "text", "tool error"] {
        assert_eq!(row(&text, case), ["pass", "pass", "pass"], "{text}");
    }
    assert_eq!(row(&text, "unscripted"), ["FAIL", "FAIL", "FAIL"], "{text}");
    for platform in ["go", "java-svc", "python-svc"] {
        assert!(
            text.contains(&format!(
                "case `unscripted` on {platform}: MCP tool `search/web_search` was called; the case scripts no reply for it"
            )),
            "{text}"
        );
    }

    // The projects' own runners stand in for it the same way.
    for platform in ["go", "python-svc", "java-svc"] {
        let (ok, log) = project_cases(&path, platform, &dir.path().join(platform));
        assert!(!ok, "{platform}: {log}");
        assert!(
            log.contains(
                "MCP tool `search/web_search` was called; the case scripts no reply for it"
            ),
            "{platform}: {log}"
        );
        let passed = match platform {
            "go" => {
                log.contains("--- PASS: TestCases/structured ")
                    && log.contains("--- FAIL: TestCases/unscripted ")
            }
            "python-svc" => {
                log.contains("PASSED tests/test_svc_cases.py::test_case[structured]")
                    && log.contains("3 passed")
            }
            _ => log.contains("Tests run: 4, Failures: 1, Errors: 0"),
        };
        assert!(passed, "{platform}: {log}");
    }

    // A stdio server has no stand-in: svc compile's bundle says so, and the
    // runner skips with that reason.
    let stdio = dir.path().join("files.graph.json");
    std::fs::copy(fixture("mcp_tools.graph.json"), &stdio).unwrap();
    std::fs::write(
        dir.path().join("files.tests.json"),
        r#"{"cases": [{"name": "read", "request": {"state": {"question": "a.txt"}}, "expect": {"result": {}}}]}"#,
    )
    .unwrap();
    let (ok, log) = project_cases(&stdio, "go", &dir.path().join("files-go"));
    assert!(ok, "{log}");
    assert!(
        log.contains("--- SKIP: TestCases")
            && log.contains("MCP server `files` (stdio) has no stand-in"),
        "{log}"
    );
}

/// Compiles `doc` for `platform` into `project` with `svc compile` and runs
/// the cases with the project's own toolchain: whether they passed, and
/// the output. python-svc runs in the run cache's venv, which a `svc test`
/// on python-svc makes.
fn project_cases(doc: &Path, platform: &str, project: &Path) -> (bool, String) {
    let compiled = Command::new(env!("CARGO_BIN_EXE_svc"))
        .arg("compile")
        .arg(doc)
        .arg("--out")
        .arg(project)
        .args(["--platform", platform])
        .output()
        .unwrap();
    assert!(compiled.status.success(), "{compiled:?}");
    let (program, args): (PathBuf, Vec<&str>) = match platform {
        "go" => (
            "go".into(),
            vec!["test", "-v", "-run", "TestCases", "./internal/server"],
        ),
        "python-svc" => (
            svc_tests::service::cache_dir().join("runs/python-venv/bin/python"),
            vec![
                "-m",
                "pytest",
                "-rA",
                "-p",
                "no:cacheprovider",
                "tests/test_svc_cases.py",
            ],
        ),
        _ => (
            "./mvnw".into(),
            vec!["-q", "-B", "test", "-Dtest=SvcCasesTests"],
        ),
    };
    let run = Command::new(&program)
        .args(&args)
        .current_dir(project)
        .output()
        .unwrap_or_else(|e| panic!("{platform}: {}: {e}", program.display()));
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
    (run.status.success(), log)
}
