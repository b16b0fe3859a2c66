//! The offline echo model: an OpenAI-compatible chat-completions endpoint
//! on loopback that answers every call with the last user message, so
//! that a graph with `llm` nodes can be tried without a provider's key.
//! Streamed calls get the same text as chunks, then the usage.

use std::io::Read;
use std::sync::Arc;

use serde_json::{json, Value};

/// A running echo model; stops with the designer.
pub struct Echo {
    /// `http://127.0.0.1:<port>/v1`, what a service's base-URL variable
    /// gets.
    pub base_url: String,
    /// The key the services must send (a fresh one per session).
    pub key: String,
    _server: Arc<tiny_http::Server>,
}

impl Echo {
    pub fn start(key: String) -> Result<Echo, String> {
        let server = tiny_http::Server::http(("127.0.0.1", 0))
            .map_err(|e| format!("cannot start the echo model on loopback: {e}"))?;
        let port = server
            .server_addr()
            .to_ip()
            .map(|a| a.port())
            .ok_or("the echo model has no IP address")?;
        let server = Arc::new(server);
        let serving = Arc::clone(&server);
        let expected = format!("Bearer {key}");
        std::thread::spawn(move || {
            for request in serving.incoming_requests() {
                // Each call on its own thread: a service may call the model
                // from several nodes at once.
                let expected = expected.clone();
                std::thread::spawn(move || answer(request, &expected));
            }
        });
        Ok(Echo {
            base_url: format!("http://127.0.0.1:{port}/v1"),
            key,
            _server: server,
        })
    }
}

fn answer(mut request: tiny_http::Request, expected: &str) {
    let authorized = request
        .headers()
        .iter()
        .any(|h| h.field.equiv("Authorization") && h.value.as_str() == expected);
    let path = request.url().split('?').next().unwrap_or("").to_string();
    let mut body = Vec::new();
    let read = request
        .as_reader()
        .take(16 << 20)
        .read_to_end(&mut body)
        .is_ok();
    let (status, content_type, text) = if !authorized {
        (
            401,
            "application/json",
            error("the echo model of `svc design` needs its key: this service was not started by the designer"),
        )
    } else if request.method() != &tiny_http::Method::Post || !path.ends_with("/chat/completions") {
        (
            404,
            "application/json",
            error(&format!(
                "the echo model serves only POST /v1/chat/completions, not {} {path}: run with a provider for other calls",
                request.method()
            )),
        )
    } else {
        match serde_json::from_slice::<Value>(&body) {
            Ok(call) if read => reply(&call),
            _ => (400, "application/json", error("the request is not JSON")),
        }
    };
    let mut response = tiny_http::Response::from_data(text.into_bytes()).with_status_code(status);
    if let Ok(h) = tiny_http::Header::from_bytes("Content-Type", content_type) {
        response.add_header(h);
    }
    let _ = request.respond(response);
}

fn error(message: &str) -> String {
    json!({"error": {"message": message, "type": "invalid_request_error"}}).to_string()
}

/// The text of the last user message (a string, or the text parts of a
/// list of content parts).
fn last_user_text(call: &Value) -> String {
    let messages = call["messages"].as_array().cloned().unwrap_or_default();
    let Some(last) = messages.iter().rev().find(|m| m["role"] == "user") else {
        return String::new();
    };
    match &last["content"] {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join(" "),
        _ => String::new(),
    }
}

fn reply(call: &Value) -> (u16, &'static str, String) {
    let model = call["model"].as_str().unwrap_or("echo").to_string();
    let text = format!("echo: {}", last_user_text(call));
    let prompt_tokens = call["messages"]
        .as_array()
        .map_or(0, |m| m.iter().map(|m| words(&m["content"])).sum::<usize>());
    let completion_tokens = text.split_whitespace().count();
    let usage = json!({
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    });
    if call["stream"] != true {
        let body = json!({
            "id": "chatcmpl-echo",
            "object": "chat.completion",
            "created": 0,
            "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": usage,
        });
        return (200, "application/json", body.to_string());
    }
    // One chunk per word (with the space that follows it), as a provider
    // streams, then the finish reason, then the usage when asked for.
    let chunk = |delta: Value, finish: Value| {
        json!({
            "id": "chatcmpl-echo",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        })
    };
    let mut events = vec![chunk(
        json!({"role": "assistant", "content": ""}),
        Value::Null,
    )];
    for piece in text.split_inclusive(' ') {
        events.push(chunk(json!({"content": piece}), Value::Null));
    }
    events.push(chunk(json!({}), json!("stop")));
    if call["stream_options"]["include_usage"] == true {
        events.push(json!({
            "id": "chatcmpl-echo",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": model,
            "choices": [],
            "usage": usage,
        }));
    }
    let mut out = String::new();
    for e in events {
        out.push_str(&format!("data: {e}\n\n"));
    }
    out.push_str("data: [DONE]\n\n");
    (200, "text/event-stream", out)
}

fn words(content: &Value) -> usize {
    content.as_str().map_or(0, |s| s.split_whitespace().count())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_echo_repeats_the_last_user_message_whole_or_in_chunks() {
        let call = json!({"model": "m", "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "first"},
            {"role": "assistant", "content": "x"},
            {"role": "user", "content": [{"type": "text", "text": "hello there"}]}
        ]});
        let (status, _, body) = reply(&call);
        assert_eq!(status, 200);
        let v: Value = serde_json::from_str(&body).unwrap_or_default();
        assert_eq!(v["choices"][0]["message"]["content"], "echo: hello there");
        assert_eq!(v["usage"]["completion_tokens"], 3);

        let mut streamed = call.clone();
        streamed["stream"] = json!(true);
        streamed["stream_options"] = json!({"include_usage": true});
        let (_, content_type, sse) = reply(&streamed);
        assert_eq!(content_type, "text/event-stream");
        let chunks: Vec<Value> = sse
            .lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .filter(|d| *d != "[DONE]")
            .filter_map(|d| serde_json::from_str(d).ok())
            .collect();
        let text: String = chunks
            .iter()
            .filter_map(|c| c["choices"][0]["delta"]["content"].as_str())
            .collect();
        assert_eq!(text, "echo: hello there");
        assert_eq!(
            chunks.last().map(|c| c["usage"]["total_tokens"].clone()),
            Some(json!(7))
        );
        assert!(sse.ends_with("data: [DONE]\n\n"));
    }
}
