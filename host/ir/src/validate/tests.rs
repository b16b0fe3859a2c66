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
