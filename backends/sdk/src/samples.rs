//! Values for the tests a backend generates: a request state that fills
//! every required field, a value of the wrong type for a field, and what a
//! stub answers for an HTTP tool. Every backend's tests use the same ones,
//! so the generated suites agree across platforms.

use serde_json::{json, Map, Value};
use svc_ir::ToolNode;
use svc_ir::{Document, FieldType, ItemType, NodeKind, StateField};

/// The chat completion a generated project's own tests answer every model
/// call with: `finish` when a supervisor of any graph is routed by the
/// model (it must be told to end, or its run fails with `bad_route`), else
/// two lines of text.
pub fn model_reply(doc: &Document) -> Value {
    let routed = crate::subgraphs::any_graph(doc, |d| {
        d.logical.agents.iter().any(|a| {
            matches!(
                a.kind,
                svc_ir::AgentKind::Supervisor {
                    router: svc_ir::SupervisorRouter::Llm,
                    ..
                }
            )
        })
    });
    let content = match structured_sample(doc, "openai") {
        Some(object) => object.to_string(),
        None if routed => "finish".into(),
        None => "first idea\nsecond idea".into(),
    };
    json!({"choices": [{"message": {"role": "assistant", "content": content}}]})
}

/// The Messages API reply (`provider: anthropic`) a generated project's
/// own tests answer with: [`model_reply`]'s text as one text block, or a
/// structured-output node's object as the input of its forced tool.
pub fn messages_reply(doc: &Document) -> Value {
    let usage = json!({"input_tokens": 0, "output_tokens": 0});
    if let Some(object) = structured_sample(doc, "anthropic") {
        return json!({"type": "message", "role": "assistant",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": "structured_output", "input": object}],
            "stop_reason": "tool_use", "usage": usage});
    }
    let text = model_reply(doc)["choices"][0]["message"]["content"].clone();
    json!({"type": "message", "role": "assistant", "content": [{"type": "text", "text": text}],
           "stop_reason": "end_turn", "usage": usage})
}

/// Whether a model of `doc` (its settings, a node, an agent, a fallback, a
/// child graph's) is of `provider`.
pub fn calls_provider(doc: &Document, provider: &str) -> bool {
    let key = format!("feature:model.provider.{provider}");
    svc_ir::requirements(doc).iter().any(|r| r.key() == key)
}

/// The variables a generated project's own tests point at their stand-in
/// model: for each graph that asks a model, each provider its models name
/// (the settings', a node's, an agent's, a fallback's), its base-URL and
/// key variables and what follows the stand-in's URL in the first; each
/// triple once, sorted.
pub fn model_stand_ins(doc: &Document) -> Vec<(String, String, &'static str)> {
    let mut out = Vec::new();
    for (d, _) in crate::subgraphs::all_graphs(doc) {
        if !d.has_llm_nodes() {
            continue;
        }
        for r in svc_ir::requirements(d) {
            if let Some(provider) = r.key().strip_prefix("feature:model.provider.") {
                let (url, key) = svc_ir::model_variables(d, provider);
                out.push((url, key, base_url_path(provider)));
            }
        }
        // A fallback may name variables of its own.
        for f in d.logical.settings.model.iter().flat_map(|m| &m.fallbacks) {
            let (url, key) = f.variables(d);
            out.push((url, key, base_url_path(&f.provider)));
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// What a stand-in server's URL is followed by in a provider's base-URL
/// variable: chat-completions variables name the API's `/v1`, the Messages
/// API's the server (the path says `/v1/messages`).
pub fn base_url_path(provider: &str) -> &'static str {
    match provider {
        "anthropic" => "",
        _ => "/v1",
    }
}

/// The reviewer's answer a generated test gives each hitl node of the
/// document's graph when its run pauses there: a value of its
/// `outputKey`'s type, by node id.
pub fn hitl_answers(doc: &Document) -> Vec<(String, Value)> {
    doc.logical
        .nodes
        .iter()
        .filter_map(|n| match &n.kind {
            NodeKind::Hitl(h) => doc
                .state_field(&h.output_key)
                .map(|f| (n.id.clone(), sample(&f.shape()))),
            _ => None,
        })
        .collect()
}

/// A value of the declared type (an object of its `properties` when it
/// declares them).
pub fn sample(t: &ItemType) -> Value {
    match t.ty {
        FieldType::String => json!("example"),
        FieldType::Integer => json!(1),
        FieldType::Number => json!(1.5),
        FieldType::Boolean => json!(true),
        FieldType::Object => match &t.properties {
            Some(props) => Value::Object(
                props
                    .iter()
                    .map(|(name, p)| (name.clone(), sample(p)))
                    .collect(),
            ),
            None => json!({"key": "value"}),
        },
        FieldType::Array => match &t.items {
            Some(it) => json!([sample(it)]),
            None => json!(["example"]),
        },
        FieldType::Messages => json!([{"role": "user", "content": "Hello"}]),
    }
}

/// The object a generated project's own tests answer a structured-output
/// node of `provider` with: a sample of the first such node's field, in
/// any graph of the document (one reply serves every call of a provider,
/// so a second structured node of another shape would need its own).
fn structured_sample(doc: &Document, provider: &str) -> Option<Value> {
    crate::subgraphs::all_graphs(doc)
        .into_iter()
        .find_map(|(d, _)| {
            d.logical.nodes.iter().find_map(|n| match &n.kind {
                NodeKind::Llm(llm)
                    if llm.model.as_ref().map_or("openai", |m| m.provider.as_str()) == provider =>
                {
                    llm.structured_output(d).map(|f| sample(&f.shape()))
                }
                _ => None,
            })
        })
}

/// A value that is not of the field's type.
pub fn wrong_value(f: &StateField) -> Value {
    match f.ty {
        FieldType::String => json!(42),
        _ => json!("not-a-valid-value"),
    }
}

/// A state with every required field.
pub fn sample_state(doc: &Document) -> Map<String, Value> {
    doc.logical
        .state
        .iter()
        .filter(|f| f.required)
        .map(|f| (f.name.clone(), sample(&f.shape())))
        .collect()
}

/// What a stub answers for a tool: a sample of the type the first node
/// using it writes to.
pub fn tool_reply(doc: &Document, tool: &str) -> Value {
    doc.logical
        .nodes
        .iter()
        .find_map(|n| match &n.kind {
            NodeKind::Tool(ToolNode {
                tool_id,
                output_key,
                ..
            }) if tool_id == tool => doc.state_field(output_key),
            _ => None,
        })
        .map(|f| sample(&f.shape()))
        .unwrap_or(json!({"ok": true}))
}

/// The bad requests every generated test suite sends, with the status,
/// error code and `details.field` each must get.
pub fn bad_requests(doc: &Document) -> Vec<BadRequest> {
    let envelope = json!({ "state": sample_state(doc) }).to_string();
    let mut cases = vec![
        BadRequest::new(
            "not JSON",
            "application/json",
            "{",
            400,
            "bad_request",
            None,
        ),
        BadRequest::new(
            "not an object",
            "application/json",
            "[1]",
            400,
            "bad_request",
            None,
        ),
        BadRequest::new(
            "mixed forms",
            "application/json",
            "{\"state\": {}, \"input\": \"x\"}",
            400,
            "bad_request",
            None,
        ),
        BadRequest::new(
            "wrong content type",
            "text/plain",
            &envelope,
            415,
            "unsupported_media_type",
            None,
        ),
        BadRequest::new(
            "unknown field",
            "application/json",
            "{\"state\": {\"svc_no_such_field\": 1}}",
            422,
            "invalid_state",
            Some("svc_no_such_field"),
        ),
    ];
    if let Some(f) = doc.logical.state.first() {
        let mut st = sample_state(doc);
        st.insert(f.name.clone(), wrong_value(f));
        let body = json!({ "state": st }).to_string();
        cases.push(BadRequest::new(
            "wrong type",
            "application/json",
            &body,
            422,
            "invalid_state",
            Some(&f.name),
        ));
    }
    if let Some(f) = doc.logical.state.iter().find(|f| f.required) {
        let mut st = sample_state(doc);
        st.remove(&f.name);
        let body = json!({ "state": st }).to_string();
        cases.push(BadRequest::new(
            "missing required field",
            "application/json",
            &body,
            422,
            "invalid_state",
            Some(&f.name),
        ));
    }
    cases
}

/// One bad request of a generated test suite.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadRequest {
    pub name: String,
    pub content_type: String,
    pub body: String,
    pub status: u16,
    pub code: String,
    pub field: Option<String>,
}

impl BadRequest {
    fn new(
        name: &str,
        content_type: &str,
        body: &str,
        status: u16,
        code: &str,
        field: Option<&str>,
    ) -> Self {
        BadRequest {
            name: name.into(),
            content_type: content_type.into(),
            body: body.into(),
            status,
            code: code.into(),
            field: field.map(str::to_string),
        }
    }
}
