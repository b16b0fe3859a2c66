//! A model provider speaking Anthropic's Messages API (`POST /v1/messages`),
//! for the `anthropic` provider of docs/ir-reference.md: a script turns each
//! request into a turn (text, or one tool call), which the stub answers as
//! one message or, when the request asks for `stream`, as the API's events
//! (`message_start`, content blocks and their deltas, `message_delta`,
//! `message_stop`). Every reply reports the same usage, so a test can sum it.

use std::time::Duration;

use serde_json::{json, Value};

use crate::http::{Reply, Request, Stub};

/// The tokens every reply reports: `(input, output)`.
pub const USAGE: (u64, u64) = (12, 5);

/// What the model answers to one request.
#[derive(Debug, Clone)]
pub enum Turn {
    Text(String),
    /// One `tool_use` block.
    ToolUse {
        id: String,
        name: String,
        input: Value,
    },
}

pub struct MessagesStub {
    stub: Stub,
}

impl MessagesStub {
    pub fn start(
        script: impl Fn(&Request) -> Turn + Send + Sync + 'static,
    ) -> std::io::Result<MessagesStub> {
        let stub = Stub::start(move |req: &Request| {
            if req.path != "/v1/messages" {
                let error = json!({"type": "error", "error": {"type": "not_found_error", "message": req.path}});
                return Reply::Json(404, error.to_string());
            }
            let body = req.json();
            let turn = script(req);
            if body["stream"] == true {
                Reply::Events(events(&body["model"], &turn))
            } else {
                Reply::Json(200, message(&body["model"], &turn).to_string())
            }
        })?;
        Ok(MessagesStub { stub })
    }

    /// The base URL a service's `baseUrlEnv` names (without `/v1`, as the
    /// API's SDKs take it).
    pub fn url(&self) -> String {
        self.stub.url()
    }

    pub fn received(&self) -> Vec<Request> {
        self.stub.received()
    }
}

fn stop_reason(turn: &Turn) -> &'static str {
    match turn {
        Turn::Text(_) => "end_turn",
        Turn::ToolUse { .. } => "tool_use",
    }
}

/// The whole reply of a request without `stream`.
fn message(model: &Value, turn: &Turn) -> Value {
    let block = match turn {
        Turn::Text(text) => json!({"type": "text", "text": text}),
        Turn::ToolUse { id, name, input } => {
            json!({"type": "tool_use", "id": id, "name": name, "input": input})
        }
    };
    json!({
        "id": "msg_stub", "type": "message", "role": "assistant", "model": model,
        "content": [block], "stop_reason": stop_reason(turn), "stop_sequence": null,
        "usage": {"input_tokens": USAGE.0, "output_tokens": USAGE.1}
    })
}

/// The reply as the API streams it: a text in pieces of a word each, a
/// tool call's input in two pieces of JSON.
fn events(model: &Value, turn: &Turn) -> Vec<(Duration, String, Value)> {
    let gap = Duration::from_millis(5);
    let event = |name: &str, data: Value| (gap, name.to_string(), data);
    let mut out = vec![
        event(
            "message_start",
            json!({"type": "message_start", "message": {"id": "msg_stub", "type": "message",
                "role": "assistant", "model": model, "content": [], "stop_reason": null,
                "usage": {"input_tokens": USAGE.0, "output_tokens": 1}}}),
        ),
        event("ping", json!({"type": "ping"})),
    ];
    match turn {
        Turn::Text(text) => {
            out.push(event(
                "content_block_start",
                json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            ));
            for piece in text.split_inclusive(' ') {
                out.push(event(
                    "content_block_delta",
                    json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": piece}}),
                ));
            }
        }
        Turn::ToolUse { id, name, input } => {
            out.push(event(
                "content_block_start",
                json!({"type": "content_block_start", "index": 0,
                    "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}),
            ));
            let text = input.to_string();
            let (a, b) = text.split_at(text.len() / 2);
            for piece in [a, b] {
                out.push(event(
                    "content_block_delta",
                    json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": piece}}),
                ));
            }
        }
    }
    out.push(event(
        "content_block_stop",
        json!({"type": "content_block_stop", "index": 0}),
    ));
    out.push(event(
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": stop_reason(turn), "stop_sequence": null},
            "usage": {"output_tokens": USAGE.1}}),
    ));
    out.push(event("message_stop", json!({"type": "message_stop"})));
    out
}
