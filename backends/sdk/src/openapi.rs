//! `openapi.json`: the OpenAPI 3.1 document of a generated service, the
//! same for every backend but what a platform adds (python-svc's
//! policies and guardrails). Each backend writes it into the project and
//! serves it at `GET /openapi.json` without a credential.
//!
//! It describes `POST /invoke` with the graph's own state (types, required
//! fields, defaults), every error status with its codes and the contract's
//! envelope, `GET /health`, and the security scheme of `security.auth`
//! (`docs/http-contract.md`). Built from ordered JSON, so two compiles give
//! the same bytes.

use serde_json::{json, Map, Value};
use svc_ir::{Auth, CheckpointerKind, Document, FieldType, ItemType, StateField};

/// The document as written into the project (pretty, final newline).
pub fn document(doc: &Document, platform: &str) -> String {
    let mut text = serde_json::to_string_pretty(&value(doc, platform)).unwrap_or_default();
    text.push('\n');
    text
}

fn item_schema(ty: FieldType, items: Option<&ItemType>) -> Value {
    match ty {
        FieldType::String => json!({"type": "string"}),
        // Every target reads integers as 64-bit.
        FieldType::Integer => json!({"type": "integer", "format": "int64",
            "minimum": i64::MIN, "maximum": i64::MAX}),
        FieldType::Number => json!({"type": "number"}),
        FieldType::Boolean => json!({"type": "boolean"}),
        FieldType::Object => json!({"type": "object"}),
        FieldType::Array => match items {
            Some(i) => json!({"type": "array", "items": item_schema(i.ty, i.items.as_deref())}),
            None => json!({"type": "array"}),
        },
        FieldType::Messages => {
            json!({"type": "array", "items": {"$ref": "#/components/schemas/Message"}})
        }
    }
}

fn field_schema(f: &StateField) -> Value {
    let mut s = item_schema(f.ty, f.items.as_ref());
    if let Value::Object(o) = &mut s {
        if let Some(d) = &f.description {
            o.insert("description".into(), json!(d));
        }
        if let Some(d) = &f.default {
            o.insert("default".into(), d.clone());
        }
    }
    s
}

/// The request's state: the declared fields, the required ones required,
/// nothing else.
fn state_schema(doc: &Document) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for f in &doc.logical.state {
        let mut schema = field_schema(f);
        if f.required {
            required.push(json!(f.name));
        } else {
            // `null` counts as absent: the field takes its default.
            nullable(&mut schema);
        }
        properties.insert(f.name.clone(), schema);
    }
    let mut s = json!({
        "type": "object",
        "description": "The graph's state fields; unknown fields are refused (422 invalid_state).",
        "properties": properties,
        "additionalProperties": false,
    });
    if !required.is_empty() {
        s["required"] = Value::Array(required);
    }
    s
}

/// `{"type": T}` becomes `{"type": [T, "null"]}`.
fn nullable(schema: &mut Value) {
    let ty = schema["type"].clone();
    schema["type"] = json!([ty, "null"]);
}

/// The final state: every declared field, each possibly null (a field
/// without a default that no node wrote).
fn result_schema(doc: &Document) -> Value {
    let mut properties = Map::new();
    for f in &doc.logical.state {
        let mut s = item_schema(f.ty, f.items.as_ref());
        nullable(&mut s);
        properties.insert(f.name.clone(), s);
    }
    json!({"type": "object", "properties": properties})
}

/// `(status, description, codes)` a call to `/invoke` may answer; `threads`
/// when the service keeps the graph's threads (every target, for a graph
/// with a checkpointer).
fn errors(
    doc: &Document,
    python: bool,
    threads: bool,
) -> Vec<(u16, &'static str, Vec<&'static str>)> {
    let mut out = vec![(
        400,
        "The body is not JSON, breaks a request JSON rule or has no usable request form",
        vec!["bad_request"],
    )];
    if doc.security.auth != Auth::None {
        out.push((
            401,
            "The credential is missing or wrong",
            vec!["unauthorized"],
        ));
    }
    if python {
        out.push((
            403,
            "A business policy denied the run",
            vec!["policy_denied"],
        ));
    }
    if threads {
        out.push((
            404,
            "The resumed thread is unknown or expired",
            vec!["thread_not_found"],
        ));
        out.push((
            409,
            "The thread is not paused, or a run on it is under way",
            vec!["not_interrupted", "thread_busy"],
        ));
    }
    out.push((413, "The body is over 1 MiB", vec!["payload_too_large"]));
    out.push((
        415,
        "Content-Type is not application/json",
        vec!["unsupported_media_type"],
    ));
    let mut unprocessable = vec!["invalid_state"];
    let mut failed = vec!["execution_error", "step_limit_exceeded"];
    if python {
        unprocessable.push("input_blocked");
        failed.push("output_blocked");
    }
    out.push((
        422,
        "An unknown field, a wrong type or a missing required field",
        unprocessable,
    ));
    out.push((500, "The run failed", failed));
    out.push((
        502,
        "An upstream service (an HTTP tool, the model, an MCP server, an agent) failed",
        vec!["upstream_error"],
    ));
    if threads && doc.logical.settings.checkpointer.env().is_some() {
        out.push((
            503,
            "The durable checkpointer's database cannot be reached (the threads wait there)",
            vec!["checkpointer_unavailable"],
        ));
    }
    out.push((
        504,
        "The run passed settings.requestTimeoutMs",
        vec!["deadline_exceeded"],
    ));
    out
}

fn error_response(description: &str, codes: &[&str]) -> Value {
    json!({
        "description": description,
        "content": {"application/json": {"schema": {
            "allOf": [{"$ref": "#/components/schemas/Error"}],
            "properties": {"error": {"properties": {"code": {"enum": codes}}}}
        }}}
    })
}

fn value(doc: &Document, platform: &str) -> Value {
    let python = platform == "python-svc";
    let threads = doc.logical.settings.checkpointer.kind != CheckpointerKind::None;
    let (schemes, security) = match doc.security.auth {
        Auth::None => (json!({}), json!([])),
        Auth::ApiKey => (
            json!({"apiKey": {"type": "apiKey", "in": "header", "name": "X-API-Key",
                "description": format!("The key in the service's {} variable", doc.security.key_env)}}),
            json!([{"apiKey": []}]),
        ),
        Auth::Bearer => (
            json!({"bearer": {"type": "http", "scheme": "bearer",
                "description": format!("The token in the service's {} variable", doc.security.key_env)}}),
            json!([{"bearer": []}]),
        ),
    };

    // A body with `state` has nothing else (400 bad_request).
    let mut request = json!({
        "type": "object",
        "properties": {"state": {"$ref": "#/components/schemas/State"}},
        "required": ["state"],
        "additionalProperties": false,
    });
    let mut ok = json!({
        "type": "object",
        "properties": {"result": {"$ref": "#/components/schemas/Result"}},
        "required": ["result"],
    });
    if threads {
        // A new run sends state (threadId optional); a resume sends
        // threadId and resume. A paused run answers interrupt instead of result.
        request = json!({
            "type": "object",
            "properties": {
                "state": {"$ref": "#/components/schemas/State"},
                "threadId": {"type": "string", "minLength": 1},
                "resume": {"description": "The reviewer's value for the paused node"},
            },
            "oneOf": [{"required": ["state"]}, {"required": ["threadId", "resume"]}],
            "additionalProperties": false,
        });
        ok = json!({
            "type": "object",
            "properties": {
                "result": {"$ref": "#/components/schemas/Result"},
                "threadId": {"type": "string"},
                "interrupt": {"type": "object", "properties": {
                    "node": {"type": "string"}, "value": {}}, "required": ["node", "value"]},
            },
            "required": ["threadId"],
        });
    }
    // The legacy forms each platform keeps for older clients
    // (docs/http-contract.md, "Legacy request forms").
    let text_field = doc
        .logical
        .state
        .iter()
        .any(|f| f.required && f.ty == FieldType::String);
    let messages_field = doc
        .logical
        .state
        .iter()
        .any(|f| f.name == "messages" && f.ty == FieldType::Messages);
    match platform {
        // A thread's answer names its thread: no legacy form then.
        "go" if !threads => {
            request = json!({"anyOf": [request, {"$ref": "#/components/schemas/State",
                "description": "legacy: the raw state as the whole body"}]});
            ok = json!({"anyOf": [ok, {"$ref": "#/components/schemas/Result",
                "description": "legacy: the raw final state, for a raw-state request"}]});
        }
        "java-svc" if text_field && !threads => {
            let text = |key: &str| {
                json!({"type": "object", "properties": {key: {"type": "string"}},
                    "required": [key], "additionalProperties": false,
                    "description": "legacy: a text for the first required string field"})
            };
            request = json!({"anyOf": [request, text("input"), text("query")]});
            ok = json!({"anyOf": [ok, {"type": "object", "properties": {
                "output": {"description": "the value of the last written outputKey"},
                "state": {"$ref": "#/components/schemas/Result"}},
                "required": ["output", "state"]}]});
        }
        "python-svc" if messages_field && !threads => {
            request = json!({"anyOf": [request, {"type": "object",
                "properties": {"messages": {"type": "array", "items": {"$ref": "#/components/schemas/Message"}}},
                "required": ["messages"], "additionalProperties": false,
                "description": "legacy: the messages alone"}]});
        }
        _ => {}
    }
    let mut responses = Map::new();
    let mut content = json!({"application/json": {"schema": ok}});
    if doc.logical.settings.streaming {
        // docs/http-contract.md, "Streaming": asked with Accept: text/event-stream.
        content["text/event-stream"] = json!({"schema": {"type": "string",
            "description": "With `Accept: text/event-stream`: the run's events as server-sent events, each `id: <seq>`, `event: <type>` and `data: {\"run_id\", \"seq\", \"type\", \"node\"?, \"data\"}` (types: run_started, resumed, node_started, token, tokens_discarded, node_finished, interrupted, run_finished, run_failed); errors before the run starts are answered as JSON"}});
    }
    responses.insert(
        "200".into(),
        json!({"description": "The run finished", "content": content}),
    );
    for (status, description, codes) in errors(doc, python, threads) {
        responses.insert(status.to_string(), error_response(description, &codes));
    }
    let mut invoke = json!({
        "operationId": "invoke",
        "summary": format!("Run the graph `{}`", doc.id),
        "requestBody": {"required": true, "content": {"application/json": {"schema": request}}},
        "responses": responses,
    });
    if let Some(d) = &doc.description {
        invoke["description"] = json!(d);
    }
    if doc.security.auth != Auth::None {
        invoke["security"] = security;
    }
    let public = |summary: &str, schema: Value| {
        json!({"summary": summary, "security": [], "responses": {"200": {
            "description": "OK", "content": {"application/json": {"schema": schema}}}}})
    };
    let mut components = json!({
        "schemas": {
            "State": state_schema(doc),
            "Result": result_schema(doc),
            "Message": {"type": "object", "properties": {"role": {"type": "string"}, "content": {"type": "string"}},
                        "required": ["role", "content"], "additionalProperties": false},
            "Error": {
                "type": "object",
                "properties": {"error": {
                    "type": "object",
                    "properties": {
                        "code": {"type": "string"},
                        "message": {"type": "string"},
                        "details": {"type": "object"},
                    },
                    "required": ["code", "message"],
                }},
                "required": ["error"],
            },
        },
    });
    if doc.security.auth != Auth::None {
        components["securitySchemes"] = schemes;
    }
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": doc.name.clone().unwrap_or_else(|| doc.id.clone()),
            "version": doc.version,
            "description": format!("The svc HTTP contract of the graph `{}` ({platform}).", doc.id),
        },
        "paths": {
            "/invoke": {"post": invoke},
            "/health": {"get": public("Liveness", json!({"type": "object", "properties": {"status": {"const": "ok"}}, "required": ["status"]}))},
            "/openapi.json": {"get": public("This document", json!({"type": "object"}))},
        },
        "components": components,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // test code
    use super::*;

    fn doc(text: &str) -> Document {
        svc_ir::SourceFile::new("t.graph.json", text)
            .parse()
            .unwrap()
    }

    #[test]
    fn the_state_and_the_scheme_come_from_the_graph() {
        let d = doc(
            r#"{"irVersion": "2.2", "id": "g", "security": {"auth": "bearer"},
            "logical": {"state": [
                {"name": "q", "type": "string", "required": true},
                {"name": "n", "type": "integer", "default": 3},
                {"name": "tags", "type": "array", "items": {"type": "string"}}],
              "nodes": [{"id": "start", "kind": "start"}, {"id": "end", "kind": "end"}],
              "edges": [{"from": "start", "to": "end"}]}}"#,
        );
        let v: Value = serde_json::from_str(&document(&d, "go")).unwrap();
        assert_eq!(v["openapi"], "3.1.0");
        let state = &v["components"]["schemas"]["State"];
        assert_eq!(state["required"], json!(["q"]));
        assert_eq!(state["properties"]["q"], json!({"type": "string"}));
        assert_eq!(
            state["properties"]["n"],
            json!({"type": ["integer", "null"], "format": "int64", "minimum": i64::MIN,
                   "maximum": i64::MAX, "default": 3})
        );
        assert_eq!(
            state["properties"]["tags"]["items"],
            json!({"type": "string"})
        );
        assert_eq!(state["additionalProperties"], false);
        assert_eq!(
            v["components"]["securitySchemes"]["bearer"]["scheme"],
            "bearer"
        );
        assert_eq!(
            v["paths"]["/invoke"]["post"]["security"],
            json!([{"bearer": []}])
        );
        assert_eq!(v["paths"]["/health"]["get"]["security"], json!([]));
        let codes = &v["paths"]["/invoke"]["post"]["responses"]["422"]["content"]
            ["application/json"]["schema"]["properties"]["error"]["properties"]["code"]["enum"];
        assert_eq!(codes, &json!(["invalid_state"]));
        // Deterministic.
        assert_eq!(document(&d, "go"), document(&d, "go"));
    }

    #[test]
    fn no_auth_means_no_scheme_and_python_adds_its_codes() {
        let d = doc(
            r#"{"irVersion": "2.2", "id": "g", "security": {"auth": "none"},
            "logical": {"state": [], "nodes": [{"id": "start", "kind": "start"}, {"id": "end", "kind": "end"}],
              "edges": [{"from": "start", "to": "end"}]}}"#,
        );
        let go: Value = serde_json::from_str(&document(&d, "go")).unwrap();
        assert!(go["components"].get("securitySchemes").is_none());
        assert!(go["paths"]["/invoke"]["post"]["responses"]
            .get("401")
            .is_none());
        let py: Value = serde_json::from_str(&document(&d, "python-svc")).unwrap();
        assert!(py["paths"]["/invoke"]["post"]["responses"]
            .get("403")
            .is_some());
    }
}
