//! A streamed `POST /invoke` as a third-party client reads it: httpx-sse,
//! through `tests/clients/sse_client.py`.

use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};

/// The answer to a streamed request: the first line's status and content
/// type, then the events (`{"event", "data"}` each; or a refusal's JSON
/// body).
pub struct Streamed {
    pub status: u64,
    pub content_type: String,
    pub lines: Vec<Value>,
}

/// Streams a run of `state` from the service on `port` with the API key
/// `key`; the client leaves after `stop_after_tokens` tokens (0: reads to
/// the end).
pub fn stream(
    port: u16,
    key: &str,
    state: Value,
    stop_after_tokens: usize,
) -> Result<Streamed, String> {
    let client = Path::new(env!("CARGO_MANIFEST_DIR")).join("clients/sse_client.py");
    let out = Command::new("python")
        .arg(client)
        .arg(format!("http://127.0.0.1:{port}/invoke"))
        .arg(key)
        .arg(json!({ "state": state }).to_string())
        .arg(stop_after_tokens.to_string())
        .output()
        .map_err(|e| format!("python runs the SSE client: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        return Err(format!(
            "the SSE client failed: {}\n{text}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let mut lines = Vec::new();
    for line in text.lines() {
        lines.push(
            serde_json::from_str::<Value>(line)
                .map_err(|e| format!("not a JSON line ({e}): {line}"))?,
        );
    }
    if lines.is_empty() {
        return Err(format!("no status line from the SSE client: {text}"));
    }
    let head = lines.remove(0);
    Ok(Streamed {
        status: head["status"].as_u64().unwrap_or_default(),
        content_type: head["content_type"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        lines,
    })
}
