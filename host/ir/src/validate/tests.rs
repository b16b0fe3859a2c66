use crate::SourceFile;

/// A document whose node `write` writes to `out`, declared as `field`.
fn check(field: &str, node: &str) -> Result<(), Vec<String>> {
    let text = format!(
        r#"{{"irVersion": "2", "id": "t", "logical": {{
            "state": [{{"name": "q", "type": "string", "required": true}}, {field}],
            "nodes": [{{"id": "start", "kind": "start"}}, {node}, {{"id": "end", "kind": "end"}}],
            "edges": [{{"from": "start", "to": "write"}}, {{"from": "write", "to": "end"}}],
            "settings": {{"model": {{"provider": "openai", "name": "m"}}}}}}}}"#
    );
    SourceFile::new("t.graph.json", text)
        .parse()
        .map(|_| ())
        .map_err(|d| d.into_iter().map(|d| d.message).collect())
}

const TEMPLATE: &str =
    r#"{"id": "write", "kind": "response_template", "template": "{{q}}", "outputKey": "out"}"#;
const LLM: &str =
    r#"{"id": "write", "kind": "llm", "prompt": {"user": "{{q}}"}, "outputKey": "out"}"#;

#[test]
fn text_goes_to_strings_messages_and_append_arrays_of_strings() {
    for field in [
        r#"{"name": "out", "type": "string"}"#,
        r#"{"name": "out", "type": "messages", "reducer": "append"}"#,
        r#"{"name": "out", "type": "messages"}"#,
        r#"{"name": "out", "type": "array", "items": {"type": "string"}, "reducer": "append"}"#,
        r#"{"name": "out", "type": "array", "reducer": "append"}"#,
    ] {
        for node in [TEMPLATE, LLM] {
            assert_eq!(check(field, node), Ok(()), "{field} {node}");
        }
    }
}

#[test]
fn text_into_other_fields_is_refused_naming_the_type() {
    for (field, named) in [
        (
            r#"{"name": "out", "type": "array", "items": {"type": "integer"}, "reducer": "append"}"#,
            "an `append` array of `integer`",
        ),
        (
            r#"{"name": "out", "type": "array", "items": {"type": "string"}}"#,
            "an `array` of `string`",
        ),
        (
            r#"{"name": "out", "type": "integer"}"#,
            "an `integer` field",
        ),
    ] {
        for node in [TEMPLATE, LLM] {
            let errors = check(field, node).expect_err(field);
            assert!(
                errors.iter().any(|e| e.contains(named)),
                "{errors:?} should name {named}"
            );
        }
    }
}

/// The errors of a minimal document with these `settings`.
fn settings_errors(settings: &str) -> Vec<String> {
    let text = format!(
        r#"{{"irVersion": "2", "id": "t", "logical": {{
            "state": [], "nodes": [{{"id": "start", "kind": "start"}}, {{"id": "end", "kind": "end"}}],
            "edges": [{{"from": "start", "to": "end"}}], "settings": {settings}}}}}"#
    );
    SourceFile::new("t.graph.json", text)
        .parse()
        .err()
        .unwrap_or_default()
        .into_iter()
        .map(|d| d.message)
        .collect()
}

#[test]
fn tracing_log_format_is_the_logging_format_unless_written_otherwise() {
    for ok in [
        r#"{"logging": {"format": "json"}}"#,
        r#"{"logging": {"format": "json"}, "tracing": {"enabled": false}}"#,
        r#"{"logging": {"format": "json"}, "tracing": {"log_format": "json"}}"#,
        r#"{"tracing": {"log_format": "text"}}"#,
    ] {
        assert_eq!(settings_errors(ok), Vec::<String>::new(), "{ok}");
    }
    assert_eq!(
        settings_errors(r#"{"tracing": {"log_format": "json"}}"#),
        ["`tracing.log_format` is `json` but `logging.format` is `text`; both are the format of the service's logs"]
    );
}

/// The (code, pointer) of each error of a document made of `base` with the
/// JSON values of `edits` set at their pointers (a pointer's last segment
/// is created).
fn errors_with(edits: &[(&str, serde_json::Value)]) -> Vec<(String, String)> {
    let mut doc = serde_json::json!({
        "irVersion": "2.2", "id": "t",
        "logical": {
            "state": [{"name": "q", "type": "string", "required": true},
                      {"name": "out", "type": "string"},
                      {"name": "chat", "type": "messages", "reducer": "append"}],
            "nodes": [{"id": "start", "kind": "start"},
                      {"id": "ask", "kind": "llm", "prompt": {"user": "{{q}}"}, "outputKey": "out"},
                      {"id": "f", "kind": "function", "outputKey": "out"},
                      {"id": "end", "kind": "end"}],
            "edges": [{"from": "start", "to": "ask"}, {"from": "ask", "to": "f"}, {"from": "f", "to": "end"}],
            "tools": [{"id": "lookup", "kind": "http", "endpoint": "https://example.com"},
                      {"id": "read", "kind": "mcp", "server": "files", "tool": "read"}],
            "mcpServers": [{"id": "files", "transport": "stdio", "command": "files"}],
            "agents": [{"id": "w", "kind": "worker", "instructions": "w"},
                       {"id": "boss", "kind": "supervisor", "members": ["w"], "router": "custom"}],
            "settings": {"model": {"provider": "openai", "name": "m"}}
        },
        "bodiesByPlatform": {"go": {"f": "return State{}, nil", "boss": "return \"finish\", nil"}}
    });
    for (ptr, value) in edits {
        let (parent, key) = ptr.rsplit_once('/').expect("a pointer");
        let target = doc.pointer_mut(parent).expect(parent);
        match target {
            serde_json::Value::Array(items) => items.push(value.clone()),
            serde_json::Value::Object(m) => {
                m.insert(key.to_string(), value.clone());
            }
            _ => panic!("{parent} is not a container"),
        }
    }
    SourceFile::new("t.graph.json", doc.to_string())
        .parse()
        .err()
        .unwrap_or_default()
        .into_iter()
        .map(|d| (d.code, d.pointer.unwrap_or_default()))
        .collect()
}

#[test]
fn the_base_document_of_these_tests_is_valid() {
    assert_eq!(errors_with(&[]), Vec::<(String, String)>::new());
}

#[test]
fn a_field_that_would_be_kept_and_never_used_is_refused_where_it_is() {
    use serde_json::json;
    let cases: Vec<(&str, serde_json::Value, &str, &str)> = vec![
        (
            "/logical/tools/1/connectionType",
            json!("grpc"),
            "invalid-value",
            "/logical/tools/1/connectionType",
        ),
        (
            "/bodiesByPlatform/go/ask",
            json!("return State{}, nil"),
            "invalid-value",
            "/bodiesByPlatform/go/ask",
        ),
        (
            "/bodiesByPlatform/go/lookup",
            json!("return State{}, nil"),
            "invalid-value",
            "/bodiesByPlatform/go/lookup",
        ),
        (
            "/bodiesByPlatform/go/w",
            json!("return \"\", nil"),
            "invalid-value",
            "/bodiesByPlatform/go/w",
        ),
        (
            "/logical/agents/1/instructions",
            json!("route"),
            "invalid-value",
            "/logical/agents/1/instructions",
        ),
        (
            "/logical/agents/1/model",
            json!({"provider": "openai", "name": "m"}),
            "invalid-value",
            "/logical/agents/1/model",
        ),
        (
            "/logical/nodes/1/replaceMessages",
            json!(true),
            "invalid-value",
            "/logical/nodes/1/replaceMessages",
        ),
        (
            "/logical/state/0/default",
            json!("x"),
            "invalid-value",
            "/logical/state/0/default",
        ),
        (
            "/logical/settings/mcp",
            json!({"toolName": "ask"}),
            "invalid-value",
            "/logical/settings/mcp/toolName",
        ),
        (
            "/logical/settings/a2a",
            json!({"title": "Desk"}),
            "invalid-value",
            "/logical/settings/a2a/title",
        ),
        (
            "/logical/settings/tracing",
            json!({"project": "p"}),
            "invalid-value",
            "/logical/settings/tracing/project",
        ),
        (
            "/logical/settings/tracing",
            json!({"register_on_build": true}),
            "invalid-value",
            "/logical/settings/tracing/register_on_build",
        ),
        (
            "/logical/settings/tracing",
            json!({"trace_nodes": false}),
            "invalid-value",
            "/logical/settings/tracing/trace_nodes",
        ),
        (
            "/logical/settings/model/maxTokens",
            json!(0),
            "out-of-range",
            "/logical/settings/model/maxTokens",
        ),
        (
            "/logical/settings/model/maxTokens",
            json!(2_147_483_648_u64),
            "out-of-range",
            "/logical/settings/model/maxTokens",
        ),
        (
            "/logical/tools/0/timeoutMs",
            json!(0),
            "out-of-range",
            "/logical/tools/0/timeoutMs",
        ),
        (
            "/logical/mcpServers/0/timeoutMs",
            json!(0),
            "out-of-range",
            "/logical/mcpServers/0/timeoutMs",
        ),
    ];
    for (at, value, code, pointer) in cases {
        let got = errors_with(&[(at, value.clone())]);
        assert_eq!(
            got,
            [(code.to_string(), pointer.to_string())],
            "{at} = {value}"
        );
    }
    // `entry` of a connector template: no connector receives one.
    let connector = json!({"id": "c", "kind": "connector", "config": {}});
    let template = json!({"c": {"connector": "svc/webhook", "version": "^0.1", "entry": "post"}});
    assert_eq!(
        errors_with(&[
            ("/logical/nodes/-", connector),
            ("/codegen", json!({"templates": {"go": template}})),
        ])
        .into_iter()
        .filter(|(code, _)| code != "edge-count")
        .collect::<Vec<_>>(),
        [(
            "unsupported".to_string(),
            "/codegen/templates/go/c/entry".to_string()
        )]
    );
    // The same fields where they do something are accepted.
    for (at, value) in [
        ("/logical/tools/1/connectionType", json!("mcp")),
        (
            "/logical/settings/mcp",
            json!({"expose": true, "toolName": "ask"}),
        ),
        (
            "/logical/settings/model/maxTokens",
            json!(2_147_483_647_u64),
        ),
        ("/logical/state/1/default", json!("x")),
        (
            "/logical/settings/tracing",
            json!({"enabled": true, "project": "p", "trace_nodes": false}),
        ),
        (
            "/logical/settings/tracing",
            json!({"enabled": false, "log_format": "text"}),
        ),
    ] {
        assert_eq!(errors_with(&[(at, value.clone())]), [], "{at} = {value}");
    }
}

#[test]
fn a2a_skills_are_named_as_a2a_clients_can_name_them() {
    use serde_json::json;
    let skill = |s: serde_json::Value| {
        errors_with(&[(
            "/logical/settings/a2a",
            json!({"enabled": true, "skills": [s]}),
        )])
    };
    assert_eq!(
        skill(json!({"id": "answer.v1:x", "name": "Answer", "tags": ["faq"]})),
        []
    );
    for (s, pointer) in [
        (
            json!({"id": "an swer", "name": "A"}),
            "/logical/settings/a2a/skills/0/id",
        ),
        (
            json!({"id": "a".repeat(129), "name": "A"}),
            "/logical/settings/a2a/skills/0/id",
        ),
        (
            json!({"id": "a", "name": ""}),
            "/logical/settings/a2a/skills/0/name",
        ),
        (
            json!({"id": "a", "name": "A", "tags": [""]}),
            "/logical/settings/a2a/skills/0/tags/0",
        ),
        (
            json!({"id": "a", "name": "A", "roles": [" "]}),
            "/logical/settings/a2a/skills/0/roles/0",
        ),
    ] {
        let got = skill(s.clone());
        assert_eq!(got.len(), 1, "{s}: {got:?}");
        assert_eq!(got[0].1, pointer, "{s}");
    }
}

#[test]
fn a_child_sets_only_what_a_child_uses() {
    use serde_json::json;
    let child = |settings: serde_json::Value, security: Option<serde_json::Value>| {
        let mut c = json!({"irVersion": "2.2", "id": "c", "logical": {
            "state": [{"name": "q", "type": "string"}],
            "nodes": [{"id": "start", "kind": "start"}, {"id": "end", "kind": "end"}],
            "edges": [{"from": "start", "to": "end"}], "settings": settings}});
        if let Some(s) = security {
            c["security"] = s;
        }
        errors_with(&[(
            "/logical/nodes/-",
            json!({"id": "sub", "kind": "subgraph", "graph": c}),
        )])
        .into_iter()
        .filter(|(code, _)| code == "invalid-value")
        .map(|(_, p)| p)
        .collect::<Vec<_>>()
    };
    assert_eq!(
        child(
            json!({"maxSteps": 3, "model": {"provider": "openai", "name": "m"}}),
            None
        ),
        Vec::<String>::new()
    );
    let at = |k: &str| format!("/logical/nodes/4/graph{k}");
    for (settings, key) in [
        (json!({"streaming": true}), "/logical/settings/streaming"),
        (
            json!({"requestTimeoutMs": 5}),
            "/logical/settings/requestTimeoutMs",
        ),
        (
            json!({"tracing": {"enabled": true}}),
            "/logical/settings/tracing",
        ),
        (
            json!({"logging": {"level": "debug"}}),
            "/logical/settings/logging",
        ),
    ] {
        assert_eq!(child(settings.clone(), None), [at(key)], "{settings}");
    }
    assert_eq!(
        child(json!({}), Some(json!({"auth": "none"}))),
        [at("/security")]
    );
}

/// The codes and pointers of a fixture's diagnostics (none: it is valid).
fn fixture_codes(path: &str) -> Vec<(String, String)> {
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures")
        .join(path);
    let text = std::fs::read_to_string(&file).expect("fixture");
    match SourceFile::new(path, text).parse() {
        Ok(_) => Vec::new(),
        Err(d) => d
            .into_iter()
            .map(|d| (d.code.clone(), d.pointer.unwrap_or_default()))
            .collect(),
    }
}

#[test]
fn parallel_regions_nest_and_map_children_fit() {
    assert_eq!(fixture_codes("valid/parallel_branches.graph.json"), vec![]);
    assert_eq!(fixture_codes("valid/map_items.graph.json"), vec![]);
}

#[test]
fn a_branch_that_leaves_its_region_or_shares_a_write_is_refused() {
    assert_eq!(
        fixture_codes("invalid/parallel_region.graph.json"),
        vec![(
            "parallel-region".to_string(),
            "/logical/nodes/1/branches/0".to_string()
        )]
    );
    assert_eq!(
        fixture_codes("invalid/parallel_write.graph.json"),
        vec![(
            "parallel-write".to_string(),
            "/logical/nodes/10/outputKey".to_string()
        )]
    );
    assert_eq!(
        fixture_codes("invalid/map_item_type.graph.json"),
        vec![(
            "map-type".to_string(),
            "/logical/nodes/1/itemField".to_string()
        )]
    );
}

#[test]
fn branches_are_entered_only_from_their_parallel_and_joins_belong_to_one() {
    let base = |edges: &str, nodes: &str| {
        let text = format!(
            r#"{{"irVersion": "2", "id": "t", "logical": {{
            "state": [{{"name": "q", "type": "string", "required": true}},
                      {{"name": "a", "type": "string"}}, {{"name": "b", "type": "string"}}],
            "nodes": [{{"id": "start", "kind": "start"}},
                {{"id": "fan", "kind": "parallel", "branches": ["x", "y"], "join": "j"}},
                {{"id": "x", "kind": "response_template", "template": "x", "outputKey": "a"}},
                {{"id": "y", "kind": "response_template", "template": "y", "outputKey": "b"}},
                {{"id": "j", "kind": "join"}}{nodes},
                {{"id": "end", "kind": "end"}}],
            "edges": [{{"from": "start", "to": "fan"}}, {{"from": "j", "to": "end"}}{edges}]}}}}"#
        );
        match SourceFile::new("t.graph.json", text).parse() {
            Ok(_) => Vec::new(),
            Err(d) => d.into_iter().map(|d| (d.code.clone(), d.message)).collect(),
        }
    };
    let ok = r#", {"from": "x", "to": "j"}, {"from": "y", "to": "j"}"#;
    assert_eq!(base(ok, ""), vec![]);
    // x leads into y's branch: y is in both, and entered from outside.
    let into = base(
        r#", {"from": "x", "to": "y"}, {"from": "y", "to": "j"}"#,
        "",
    );
    assert!(
        into.iter()
            .any(|(c, m)| c == "parallel-region" && m.contains("x → y")),
        "{into:?}"
    );
    // An edge from outside into the join.
    let side = base(
        &format!(r#"{ok}, {{"from": "z", "to": "j"}}"#),
        r#", {"id": "z", "kind": "response_template", "template": "z", "outputKey": "a"}"#,
    );
    assert!(
        side.iter()
            .any(|(c, m)| c == "parallel-region" && m.contains("z → j")),
        "{side:?}"
    );
    // A parallel with an edge of its own, and a join nobody names.
    let edge = base(&format!(r#"{ok}, {{"from": "fan", "to": "end"}}"#), "");
    assert!(edge.iter().any(|(c, _)| c == "edge-count"), "{edge:?}");
    let orphan = base(
        &format!(r#"{ok}, {{"from": "k", "to": "end"}}"#),
        r#", {"id": "k", "kind": "join"}"#,
    );
    assert!(
        orphan
            .iter()
            .any(|(c, m)| c == "parallel-region" && m.contains("`k`")),
        "{orphan:?}"
    );
    // A hitl inside a branch cannot pause the run.
    let hitl = base(
        r#", {"from": "x", "to": "h"}, {"from": "h", "to": "j"}, {"from": "y", "to": "j"}"#,
        r#", {"id": "h", "kind": "hitl", "outputKey": "a"}"#,
    );
    assert!(
        hitl.iter()
            .any(|(c, m)| c == "unsupported" && m.contains("hitl node `h`")),
        "{hitl:?}"
    );
}

#[test]
fn a_nested_parallel_naming_unknown_nodes_is_reported_not_panicked_on() {
    let text = r#"{"irVersion": "2", "id": "t", "logical": {
        "state": [{"name": "q", "type": "string", "required": true}],
        "nodes": [{"id": "start", "kind": "start"},
            {"id": "fan", "kind": "parallel", "branches": ["x", "y"], "join": "j"},
            {"id": "x", "kind": "parallel", "branches": ["ghost", "y"], "join": "nowhere"},
            {"id": "y", "kind": "join"}, {"id": "j", "kind": "join"},
            {"id": "end", "kind": "end"}],
        "edges": [{"from": "start", "to": "fan"}, {"from": "y", "to": "j"}, {"from": "j", "to": "end"}]}}"#;
    let errors = SourceFile::new("t.graph.json", text.to_string())
        .parse()
        .expect_err("invalid");
    assert!(
        errors.iter().any(|d| d.code == "unresolved-ref"),
        "{errors:?}"
    );
}
