use super::*;
use serde_json::json;
use std::path::Path;

fn fixtures() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures")
}

#[test]
fn the_published_schema_is_current() {
    let path = fixtures().join("schema/svc-tests.schema.json");
    let current = json_schema();
    if std::env::var_os("SVC_UPDATE_DOCS").is_some() {
        std::fs::write(&path, &current).unwrap_or_else(|e| panic!("{e}"));
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == current,
        "{} is stale: run `SVC_UPDATE_DOCS=1 cargo test -p svc-cli --lib test_cases` and commit it",
        path.display()
    );
}

/// Every value reachable in `v`, each with a way to rebuild `v` with
/// another value in its place: the mutations of a file.
fn mutations(v: &Value, out: &mut Vec<Value>, rebuild: &dyn Fn(Value) -> Value) {
    let palette = [
        json!(null),
        json!(true),
        json!(0),
        json!(99),
        json!(100),
        json!(599),
        json!(600),
        json!(600000),
        json!(600001),
        json!(1.5),
        json!(-1),
        json!(65536),
        json!(""),
        json!("x"),
        json!([]),
        json!([{}]),
        json!({}),
        json!({"status": 200}),
        json!([{"status": 700}]),
        json!({"text": "t"}),
        json!([{"name": "n"}]),
    ];
    for p in &palette {
        out.push(rebuild(p.clone()));
    }
    match v {
        Value::Object(map) => {
            let mut extra = map.clone();
            extra.insert("unknownKey".into(), json!(1));
            out.push(rebuild(Value::Object(extra)));
            for key in map.keys() {
                let mut without = map.clone();
                without.remove(key);
                out.push(rebuild(Value::Object(without)));
                let child_rebuild = |c: Value| {
                    let mut m = map.clone();
                    m.insert(key.clone(), c);
                    rebuild(Value::Object(m))
                };
                mutations(&map[key], out, &child_rebuild);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                let child_rebuild = |c: Value| {
                    let mut a = items.clone();
                    a[i] = c;
                    rebuild(Value::Array(a))
                };
                mutations(item, out, &child_rebuild);
            }
        }
        _ => {}
    }
}

/// The schema made into code at build time accepts exactly what the
/// schema compiled at run time accepts, on every fixture test file and
/// on thousands of mutations of them (each value replaced by a palette
/// of wrong ones and bounds, keys dropped, unknown keys added), so the
/// fast check loosens nothing.
#[test]
fn the_built_schema_agrees_with_the_run_time_one() {
    let schema: Value = serde_json::from_str(&json_schema()).unwrap_or_default();
    let checker =
        svc_packs::schema::ConfigSchema::compile(schema).unwrap_or_else(|e| panic!("{e}"));
    let mut checked = 0;
    let (mut valid, mut invalid) = (0, 0);
    for entry in std::fs::read_dir(fixtures().join("valid"))
        .into_iter()
        .flatten()
        .flatten()
    {
        let path = entry.path();
        if !path.to_string_lossy().ends_with(".tests.json") {
            continue;
        }
        let file: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap_or_default())
            .unwrap_or_default();
        let mut all = vec![file.clone()];
        mutations(&file, &mut all, &|v| v);
        for v in &all {
            let run_time = checker.check(v).is_empty();
            assert_eq!(
                PublishedSchema::is_valid(v),
                run_time,
                "{}: {v}",
                path.display()
            );
            if run_time {
                valid += 1
            } else {
                invalid += 1
            }
            checked += 1;
        }
    }
    assert!(
        checked > 5_000 && valid > 500 && invalid > 2_000,
        "{checked} checked, {valid} valid"
    );
}

#[test]
fn every_fixture_test_file_reads_against_its_graph() {
    let mut seen = 0;
    for entry in std::fs::read_dir(fixtures().join("valid"))
        .into_iter()
        .flatten()
        .flatten()
    {
        let path = entry.path();
        let name = path.to_string_lossy().into_owned();
        let Some(graph) = name.strip_suffix(".tests.json") else {
            continue;
        };
        let document: Value = serde_json::from_str(
            &std::fs::read_to_string(format!("{graph}.graph.json")).unwrap_or_default(),
        )
        .unwrap_or_default();
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let read = read(
            &name,
            &text,
            &Graph {
                document: &document,
            },
            &[],
        );
        assert!(read.is_ok(), "{name}: {:?}", read.err());
        seen += 1;
    }
    assert!(seen >= 6, "{seen} test files");
}

fn problems(text: &str) -> Vec<String> {
    let document = json!({"logical": {
        "nodes": [{"id": "start"}, {"id": "classify"}, {"id": "end"}],
        "tools": [{"id": "crm", "kind": "http", "endpoint": "env:CRM_URL"},
                  {"id": "fixed", "kind": "http", "endpoint": "https://example.com/x"}]
    }});
    match read(
        "t.tests.json",
        text,
        &Graph {
            document: &document,
        },
        &["CRM_URL".to_string()],
    ) {
        Ok(_) => Vec::new(),
        Err(diags) => diags
            .iter()
            .map(|d| {
                let p = d
                    .position
                    .map(|p| format!("{}:{}", p.line, p.column))
                    .unwrap_or_default();
                format!(
                    "{p} {} {} {}",
                    d.code,
                    d.pointer.as_deref().unwrap_or(""),
                    d.message
                )
            })
            .collect(),
    }
}

#[test]
fn mcp_replies_name_a_server_that_can_be_stood_in_for() {
    let document = json!({"logical": {"nodes": [], "mcpServers": [
        {"id": "web", "transport": "streamable_http", "url": "env:WEB_MCP"},
        {"id": "fixed", "transport": "streamable_http", "url": "https://mcp.example.com"},
        {"id": "files", "transport": "stdio", "command": "mcp-files"}
    ]}});
    let text = r#"{"cases": [{"name": "a", "request": {"state": {}}, "mcp": {
  "web": {"search": {"json": {"n": 1}}, "empty": [{"isError": true}]},
  "fixed": {"x": {"text": "t"}}, "files": {"x": {"text": "t"}}, "wbe": {"x": {"text": "t"}}}}]}"#;
    let got: Vec<String> = read(
        "t.tests.json",
        text,
        &Graph {
            document: &document,
        },
        &[],
    )
    .err()
    .unwrap_or_default()
    .iter()
    .map(|d| format!("{} {}", d.pointer.as_deref().unwrap_or(""), d.message))
    .collect();
    assert_eq!(
        got,
        [
            "/cases/0/mcp/files MCP server `files` (stdio) cannot be pointed at a stand-in",
            "/cases/0/mcp/fixed MCP server `fixed` (streamable_http) cannot be pointed at a stand-in",
            "/cases/0/mcp/wbe the graph has no MCP server `wbe`",
            "/cases/0/mcp/web/empty a reply of MCP tool `web/empty` has no `text` and no `json`",
        ],
        "{got:#?}"
    );
}

/// An embedded subgraph's HTTP tools and MCP servers are the graph's
/// for the stand-ins, at any depth; a child's tool with its parent's id
/// and a fixed endpoint cannot be scripted.
#[test]
fn a_subgraphs_tools_and_servers_are_stood_in_for() {
    let child = |tools: Value, servers: Value, nodes: Value| {
        json!({"id": "c", "kind": "subgraph", "graph": {"logical": {
            "nodes": nodes, "tools": tools, "mcpServers": servers}}})
    };
    let grandchild = child(
        json!([{"id": "deep", "kind": "http", "endpoint": "env:DEEP_URL"}]),
        json!([{"id": "files", "transport": "stdio"}]),
        json!([]),
    );
    let document = json!({"logical": {
    "tools": [{"id": "crm", "kind": "http", "endpoint": "env:CRM_URL"},
              {"id": "geo", "kind": "http", "endpoint": "env:GEO_URL"}],
    "nodes": [child(
        json!([{"id": "crm", "kind": "http", "endpoint": "env:CHILD_CRM_URL"},
               {"id": "geo", "kind": "http", "endpoint": "https://geo.example.com"},
               {"id": "web", "kind": "mcp", "server": "search", "tool": "find"}]),
        json!([{"id": "search", "transport": "streamable_http", "url": "env:SEARCH_URL"}]),
        json!([grandchild]),
    )]}});
    let graph = Graph {
        document: &document,
    };
    assert_eq!(
        graph.http_tools(),
        [
            ("crm", "env:CRM_URL"),
            ("geo", "env:GEO_URL"),
            ("crm", "env:CHILD_CRM_URL"),
            ("geo", "https://geo.example.com"),
            ("deep", "env:DEEP_URL"),
        ]
    );
    assert_eq!(
        graph.mcp_servers(),
        [
            ("search", "streamable_http", "env:SEARCH_URL"),
            ("files", "stdio", "")
        ]
    );
    assert_eq!(graph.mcp_tools(), [("search", "find")]);
    let text = r#"{"cases": [{"name": "a", "request": {"state": {}},
  "tools": {"crm": [{}, {}], "deep": {}, "geo": {}}, "mcp": {"search": {"find": {"text": "t"}}}}]}"#;
    let got: Vec<String> = read("t.tests.json", text, &graph, &[])
        .err()
        .unwrap_or_default()
        .iter()
        .map(|d| format!("{} {}", d.pointer.as_deref().unwrap_or(""), d.message))
        .collect();
    assert_eq!(
        got,
        ["/cases/0/tools/geo tool `geo` calls the fixed endpoint `https://geo.example.com`, which a test cannot point at its stand-in"],
        "{got:#?}"
    );
}

#[test]
fn shape_errors_point_at_the_value_with_a_guess() {
    let text = "{\"cases\": [\n  {\"name\": \"a\", \"request\": {\"state\": {}},\n   \"expect\": {\"stauts\": 200}}\n]}";
    assert_eq!(
        problems(text),
        ["3:15 test-file /cases/0/expect/stauts unknown field `stauts` (did you mean `status`?)"]
    );
    let p = problems("{\"cases\": []}");
    assert!(
        p.len() == 1 && p[0].starts_with("1:2 test-file /cases [] has less than 1 item"),
        "{p:?}"
    );
    let p = problems("{\"cases\": [{\"name\": \"a\", \"request\": {\"state\": {}}, \"tools\": {\"crm\": {\"status\": 7}}}]}");
    assert!(
        p.len() == 1 && p[0].contains("test-file /cases/0/tools/crm"),
        "{p:?}"
    );
    let p = problems("{\"cases\": [{\"name\": \"a\", \"name\": \"b\"}]}");
    assert!(p.len() == 1 && p[0].contains("json-syntax"), "{p:?}");
}

#[test]
fn references_are_checked_against_the_graph_and_the_earlier_cases() {
    let text = r#"{"env": {"CRM_URL": "x", "1BAD": "y"}, "cases": [
  {"name": "a", "request": {"state": {}}, "expect": {"visited": ["clasify"], "interrupt": {"node": "nope"}}},
  {"name": "a", "request": {"threadOf": "b", "resume": 1}, "tools": {"crn": {}, "fixed": {}}},
  {"name": "c", "request": {"resume": 1}, "model": [{"when": "x"}]},
  {"name": "d", "request": {}, "expect": {"error": {}, "result": {}}}
]}"#;
    let p = problems(text);
    let expected = [
        "1:26 test-reference /env/1BAD `1BAD` is not a variable name",
        "1:10 test-reference /env/CRM_URL `CRM_URL` is set by `svc test` itself",
        "2:54 test-reference /cases/0/expect/visited `visited` is read from the run's events",
        "2:66 test-reference /cases/0/expect/visited/0 the graph has no node `clasify`",
        "2:92 test-reference /cases/0/expect/interrupt/node the graph has no node `nope`",
        "3:4 test-reference /cases/1/name a case named `a` comes earlier",
        "3:29 test-reference /cases/1/request/threadOf no earlier case is named `b`",
        "3:70 test-reference /cases/1/tools/crn the graph has no HTTP tool `crn`",
        "3:81 test-reference /cases/1/tools/fixed tool `fixed` calls the fixed endpoint",
        "4:29 test-reference /cases/2/request/resume `resume` needs `threadOf`",
        "4:53 test-reference /cases/2/model/0 a model reply has no `content`, `toolCalls`, `status` or `cut`",
        "5:17 test-reference /cases/3/request the request has neither `state` nor `resume`",
        "5:43 test-reference /cases/3/expect/error an answer is an error, a result or an interrupt",
    ];
    assert_eq!(p.len(), expected.len(), "{p:#?}");
    for (got, want) in p.iter().zip(expected) {
        assert!(
            got.starts_with(want),
            "{got}\n  does not start with\n{want}"
        );
    }
}

/// A model reply is a reply or one failed attempt (a status, a cut), each
/// possibly late; what cannot go together is named at its key.
#[test]
fn model_failures_and_usage_are_checked_where_they_are_written() {
    let text = r#"{"cases": [{"name": "a", "request": {"state": {}}, "model": [
  {"status": 503, "retryAfter": "1", "when": "x", "delayMs": 10},
  {"cut": true},
  {"content": "ok", "delayMs": 1500, "usage": {"inputTokens": 3, "outputTokens": 5}},
  {"status": 503, "cut": true},
  {"cut": true, "content": "half", "usage": {"inputTokens": 1, "outputTokens": 1}},
  {"status": 429, "toolCalls": [{"name": "t"}]},
  {"content": "ok", "retryAfter": "2"},
  {"status": 503, "retryAfter": "1\r\nX-Evil: 1"},
  {"delayMs": 5}
]}]}"#;
    let p = problems(text);
    let expected = [
        "5:19 test-reference /cases/0/model/3/cut a failed attempt is answered with a `status` or a `cut`, not both",
        "6:17 test-reference /cases/0/model/4/content a failed attempt (`status` or `cut`) has no reply",
        "6:36 test-reference /cases/0/model/4/usage a failed attempt (`status` or `cut`) has no reply",
        "7:19 test-reference /cases/0/model/5/toolCalls a failed attempt (`status` or `cut`) has no reply",
        "8:21 test-reference /cases/0/model/6/retryAfter `retryAfter` is a header of a `status` reply",
        "9:19 test-reference /cases/0/model/7/retryAfter `retryAfter` is not a header value",
        "10:3 test-reference /cases/0/model/8 a model reply has no `content`, `toolCalls`, `status` or `cut`",
    ];
    assert_eq!(p.len(), expected.len(), "{p:#?}");
    for (got, want) in p.iter().zip(expected) {
        assert!(
            got.starts_with(want),
            "{got}\n  does not start with\n{want}"
        );
    }
    // The shape: a status that is no failure, a negative delay, a usage
    // without its output, an unknown key.
    for (reply, pointer, says) in [
        (
            r#"{"status": 200}"#,
            "/cases/0/model/0/status",
            "less than the minimum of 400",
        ),
        (
            r#"{"status": 600}"#,
            "/cases/0/model/0/status",
            "greater than the maximum of 599",
        ),
        (
            r#"{"cut": true, "delayMs": -1}"#,
            "/cases/0/model/0/delayMs",
            "-1",
        ),
        (
            r#"{"content": "x", "usage": {"inputTokens": 1}}"#,
            "/cases/0/model/0/usage",
            "outputTokens",
        ),
        (
            r#"{"content": "x", "retryafter": "1"}"#,
            "/cases/0/model/0/retryafter",
            "did you mean `retryAfter`?",
        ),
    ] {
        let text = format!(
            r#"{{"cases": [{{"name": "a", "request": {{"state": {{}}}}, "model": [{reply}]}}]}}"#
        );
        let p = problems(&text);
        assert!(
            p.len() == 1 && p[0].contains(&format!("test-file {pointer} ")) && p[0].contains(says),
            "{reply}: {p:?}"
        );
    }
    let p = problems(
        r#"{"cases": [{"name": "a", "request": {"state": {}}, "expect": {"usage": {"attempts": 2, "tokens": 1}}}]}"#,
    );
    assert!(
        p.len() == 1 && p[0].contains("test-file /cases/0/expect/usage/tokens unknown field"),
        "{p:?}"
    );
}
