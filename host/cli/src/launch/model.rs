//! The stand-in model: an OpenAI-compatible chat-completions endpoint on
//! loopback. With no script it echoes the last user message (the
//! designer's offline model, so that a graph with `llm` nodes can be
//! tried without a provider's key); with a script (`svc test`) it answers
//! each call with the next scripted reply: the first unused one whose
//! `when` is part of the last user message, else the first unused one
//! without `when`. Each request is a call's attempt: a scripted failure
//! (a status, a reply cut halfway) uses up one reply as a reply does, so
//! the retry takes the next. A call the script has no reply for is
//! answered 500 and remembered, for the test to report. Streamed calls get
//! the same text (or tool calls) as chunks, then the usage.
//! `/v1/embeddings` answers every text with its letter counts
//! ([`letters`]), unscripted.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};

use super::http1::{self, Reply};

/// One scripted reply: what one request gets, after `delay`.
#[derive(Debug, Clone, PartialEq)]
pub struct Scripted {
    /// Answers only a call whose last user message contains this.
    pub when: Option<String>,
    pub answer: Answer,
    pub delay: Duration,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// A chat completion; `usage` `(input, output)` replaces the counted
    /// words.
    Reply {
        content: Option<String>,
        tool_calls: Vec<ToolCall>,
        usage: Option<(u64, u64)>,
    },
    /// A failed attempt: this status, with a `Retry-After` when given.
    Status {
        status: u16,
        retry_after: Option<String>,
    },
    /// A failed attempt: the reply is cut on its way and the connection
    /// closed (see [`cut`]).
    Cut,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: Value,
}

/// What the stand-in answers, and what it saw.
#[derive(Default)]
struct Script {
    /// `None`: echo. Each reply with whether it was used.
    replies: Option<Vec<(Scripted, bool)>>,
    calls: usize,
    /// Calls that found no reply.
    unanswered: Vec<String>,
}

/// A running stand-in model; stops when dropped with its owner.
pub struct Model {
    /// `http://127.0.0.1:<port>/v1`, what a service's base-URL variable
    /// gets.
    pub base_url: String,
    /// The key the services must send (a fresh one per session).
    pub key: String,
    script: Arc<Mutex<Script>>,
    _server: http1::Server,
}

/// What a case's script left behind.
pub struct Seen {
    pub calls: usize,
    pub unanswered: Vec<String>,
    /// Scripted replies no call used.
    pub unused: usize,
}

impl Model {
    pub fn start(key: String) -> Result<Model, String> {
        let expected = format!("Bearer {key}");
        let script = Arc::new(Mutex::new(Script::default()));
        let shared = Arc::clone(&script);
        let server = http1::serve("the stand-in model", move |request| {
            answer(request, &expected, &shared)
        })?;
        Ok(Model {
            base_url: format!("http://127.0.0.1:{}/v1", server.port),
            key,
            script,
            _server: server,
        })
    }

    fn held(&self) -> std::sync::MutexGuard<'_, Script> {
        self.script.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Answers the next calls from `replies` (`None`: echo), forgetting
    /// what earlier calls saw.
    pub fn script(&self, replies: Option<Vec<Scripted>>) {
        *self.held() = Script {
            replies: replies.map(|r| r.into_iter().map(|s| (s, false)).collect()),
            ..Script::default()
        };
    }

    /// What the calls since [`Model::script`] did.
    pub fn seen(&self) -> Seen {
        let s = self.held();
        Seen {
            calls: s.calls,
            unanswered: s.unanswered.clone(),
            unused: s
                .replies
                .as_ref()
                .map_or(0, |r| r.iter().filter(|(_, used)| !used).count()),
        }
    }
}

fn answer(request: &http1::Request, expected: &str, script: &Mutex<Script>) -> Reply {
    let path = &request.path;
    let post = request.method == "POST";
    let call = serde_json::from_slice::<Value>(&request.body);
    if request.header("Authorization") != Some(expected) {
        json_reply(401, error("the stand-in model of svc needs its key: this service was not started by `svc design` or `svc test`"))
    } else if post && path.ends_with("/embeddings") {
        match call {
            Ok(call) => embeddings(&call),
            _ => json_reply(400, error("the request is not JSON")),
        }
    } else if !post || !path.ends_with("/chat/completions") {
        json_reply(404, error(&format!(
            "the stand-in model serves only POST /v1/chat/completions and /v1/embeddings, not {} {path}: run with a provider for other calls",
            request.method
        )))
    } else {
        match call {
            Ok(call) => {
                let mut held = script.lock().unwrap_or_else(|p| p.into_inner());
                respond(&call, &mut held)
            }
            _ => json_reply(400, error("the request is not JSON")),
        }
    }
}

fn json_reply(status: u16, body: String) -> Reply {
    Reply::new(status, "application/json", body)
}

/// The embeddings of `input` (a text or a list of texts): for each, how
/// often each letter a to z occurs in it (either case), and a last 1, so
/// that texts with the same letters are near and no vector is zero. Not
/// scripted: the same text always gets the same vector.
fn embeddings(call: &Value) -> Reply {
    let texts: Vec<&str> = match &call["input"] {
        Value::String(s) => vec![s.as_str()],
        Value::Array(items) => items.iter().map(|t| t.as_str().unwrap_or("")).collect(),
        _ => return json_reply(400, error("`input` must be a text or a list of texts")),
    };
    let data: Vec<Value> = texts
        .iter()
        .enumerate()
        .map(|(i, text)| json!({"object": "embedding", "index": i, "embedding": letters(text)}))
        .collect();
    let body = json!({
        "object": "list",
        "data": data,
        "model": call["model"].as_str().unwrap_or("stand-in"),
        "usage": {"prompt_tokens": 0, "total_tokens": 0},
    });
    json_reply(200, body.to_string())
}

/// The stand-in's embedding of one text (see [`embeddings`]).
fn letters(text: &str) -> Vec<f64> {
    let mut counts = vec![0.0; 27];
    for b in text.bytes() {
        if b.is_ascii_alphabetic() {
            counts[usize::from(b.to_ascii_lowercase() - b'a')] += 1.0;
        }
    }
    counts[26] = 1.0;
    counts
}

fn error(message: &str) -> String {
    json!({"error": {"message": message, "type": "invalid_request_error"}}).to_string()
}

/// The answer to one request: the script's next reply, or the echo.
fn respond(call: &Value, script: &mut Script) -> Reply {
    script.calls += 1;
    let last = last_user_text(call);
    let Some(replies) = script.replies.as_mut() else {
        return reply(call, Some(&format!("echo: {last}")), &[], None);
    };
    let by_text = replies
        .iter()
        .position(|(r, used)| !used && r.when.as_deref().is_some_and(|w| last.contains(w)));
    let next = by_text.or_else(|| {
        replies
            .iter()
            .position(|(r, used)| !used && r.when.is_none())
    });
    match next {
        Some(i) => {
            replies[i].1 = true;
            let r = &replies[i].0;
            let mut answer = match &r.answer {
                Answer::Reply {
                    content,
                    tool_calls,
                    usage,
                } => reply(call, content.as_deref(), tool_calls, *usage),
                Answer::Status {
                    status,
                    retry_after,
                } => {
                    let mut failed = json_reply(*status, error(&format!("scripted {status}")));
                    if let Some(v) = retry_after {
                        failed.headers.push(("Retry-After", v.clone()));
                    }
                    failed
                }
                Answer::Cut => cut(call),
            };
            answer.delay = r.delay;
            answer
        }
        None => {
            let why = format!(
                "model call {} has no scripted reply left (last user message: {})",
                script.calls,
                json!(shorten(&last, 200))
            );
            script.unanswered.push(why.clone());
            json_reply(500, error(&why))
        }
    }
}

/// A reply whose head promises a whole (empty) reply, cut on its way: half
/// the JSON body, or a stream's first event alone (the role: no token
/// reaches the client, and a stream cut after one is not retried).
fn cut(call: &Value) -> Reply {
    let mut whole = reply(call, Some(""), &[], None);
    let sent = match whole.body.find("\n\n") {
        Some(end) => end + 2,
        None => whole.body.len() / 2,
    };
    whole.cut_at = Some(sent);
    whole
}

fn shorten(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}...", &text[..at]),
        None => text.to_string(),
    }
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

/// A chat completion with `text` and `tool_calls`, whole or streamed; its
/// usage is `usage` `(input, output)`, else the words of the messages in
/// and of the text out, and one per tool call.
fn reply(
    call: &Value,
    text: Option<&str>,
    tool_calls: &[ToolCall],
    usage: Option<(u64, u64)>,
) -> Reply {
    let model = call["model"].as_str().unwrap_or("stand-in").to_string();
    let (prompt_tokens, completion_tokens) = usage.unwrap_or_else(|| {
        let words_in = call["messages"]
            .as_array()
            .map_or(0, |m| m.iter().map(|m| words(&m["content"])).sum::<usize>());
        let words_out = text.map_or(0, |t| t.split_whitespace().count()) + tool_calls.len();
        (words_in as u64, words_out as u64)
    });
    let usage = json!({
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    });
    let finish = if tool_calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    let calls_json = |with_index: bool| -> Vec<Value> {
        tool_calls
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let mut v = json!({
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments.to_string()},
                });
                if with_index {
                    v["index"] = json!(i);
                }
                v
            })
            .collect()
    };
    if call["stream"] != true {
        let mut message = json!({"role": "assistant", "content": text});
        if !tool_calls.is_empty() {
            message["tool_calls"] = json!(calls_json(false));
        }
        let body = json!({
            "id": "chatcmpl-svc",
            "object": "chat.completion",
            "created": 0,
            "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": usage,
        });
        return json_reply(200, body.to_string());
    }
    // One chunk per word (with the space that follows it), as a provider
    // streams, then the tool calls, the finish reason, and the usage when
    // asked for.
    let chunk = |delta: Value, finish: Value| {
        json!({
            "id": "chatcmpl-svc",
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
    for piece in text.unwrap_or_default().split_inclusive(' ') {
        events.push(chunk(json!({"content": piece}), Value::Null));
    }
    if !tool_calls.is_empty() {
        events.push(chunk(json!({"tool_calls": calls_json(true)}), Value::Null));
    }
    events.push(chunk(json!({}), json!(finish)));
    if call["stream_options"]["include_usage"] == true {
        events.push(json!({
            "id": "chatcmpl-svc",
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
    Reply::new(200, "text/event-stream", out)
}

fn words(content: &Value) -> usize {
    content.as_str().map_or(0, |s| s.split_whitespace().count())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(r: &Reply) -> Value {
        serde_json::from_str(&r.body).unwrap_or_default()
    }

    /// The data of each event of a streamed reply, but `[DONE]`.
    fn chunks(sse: &str) -> Vec<Value> {
        sse.lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .filter(|d| *d != "[DONE]")
            .filter_map(|d| serde_json::from_str(d).ok())
            .collect()
    }

    #[test]
    fn the_echo_repeats_the_last_user_message_whole_or_in_chunks() {
        let call = json!({"model": "m", "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "first"},
            {"role": "assistant", "content": "x"},
            {"role": "user", "content": [{"type": "text", "text": "hello there"}]}
        ]});
        let r = respond(&call, &mut Script::default());
        assert_eq!(r.status, 200);
        let v = body(&r);
        assert_eq!(v["choices"][0]["message"]["content"], "echo: hello there");
        assert_eq!(v["usage"]["completion_tokens"], 3);

        let mut streamed = call.clone();
        streamed["stream"] = json!(true);
        streamed["stream_options"] = json!({"include_usage": true});
        let r = respond(&streamed, &mut Script::default());
        assert_eq!(r.content_type, "text/event-stream");
        let chunks = chunks(&r.body);
        let text: String = chunks
            .iter()
            .filter_map(|c| c["choices"][0]["delta"]["content"].as_str())
            .collect();
        assert_eq!(text, "echo: hello there");
        assert_eq!(
            chunks.last().map(|c| c["usage"]["total_tokens"].clone()),
            Some(json!(7))
        );
        assert!(r.body.ends_with("data: [DONE]\n\n"));
    }

    #[test]
    fn embeddings_count_letters_in_the_order_of_the_input() {
        let r = embeddings(&json!({"model": "e", "input": ["Ab a!", ""]}));
        assert_eq!(r.status, 200);
        let v = body(&r);
        let first = &v["data"][0]["embedding"];
        assert_eq!(first[0], 2.0);
        assert_eq!(first[1], 1.0);
        assert_eq!(first[26], 1.0);
        assert_eq!(v["data"][1]["index"], 1);
        assert_eq!(v["data"][1]["embedding"][0], 0.0);
        let one = embeddings(&json!({"input": "z"})).body;
        assert!(one.contains("\"index\":0"), "{one}");
        assert_eq!(embeddings(&json!({"input": 3})).status, 400);
    }

    fn scripted(when: Option<&str>, content: Option<&str>, tool: Option<&str>) -> Scripted {
        Scripted {
            when: when.map(str::to_string),
            answer: Answer::Reply {
                content: content.map(str::to_string),
                tool_calls: tool
                    .map(|name| ToolCall {
                        id: "call_1".into(),
                        name: name.into(),
                        arguments: json!({"q": 1}),
                    })
                    .into_iter()
                    .collect(),
                usage: None,
            },
            delay: Duration::ZERO,
        }
    }

    fn user(text: &str) -> Value {
        json!({"model": "m", "messages": [{"role": "user", "content": text}]})
    }

    fn script(replies: Vec<Scripted>) -> Script {
        Script {
            replies: Some(replies.into_iter().map(|s| (s, false)).collect()),
            ..Script::default()
        }
    }

    #[test]
    fn a_script_answers_by_text_first_then_in_order_and_reports_what_it_lacks() {
        let mut script = script(vec![
            scripted(None, Some("first"), None),
            scripted(Some("refund"), None, Some("lookup")),
            scripted(None, Some("second"), None),
        ]);
        let message = |r: Reply| body(&r)["choices"][0]["message"].clone();
        assert_eq!(
            message(respond(&user("hello"), &mut script))["content"],
            "first"
        );
        let call = message(respond(&user("a refund please"), &mut script));
        assert_eq!(call["tool_calls"][0]["function"]["name"], "lookup");
        assert_eq!(call["tool_calls"][0]["function"]["arguments"], "{\"q\":1}");
        // The rule is used up: the next refund call takes the next in order.
        assert_eq!(
            message(respond(&user("refund"), &mut script))["content"],
            "second"
        );
        let r = respond(&user("more"), &mut script);
        assert_eq!(r.status, 500, "{}", r.body);
        assert_eq!(script.calls, 4);
        assert_eq!(script.unanswered.len(), 1);
        assert!(
            script.unanswered[0].contains("model call 4"),
            "{:?}",
            script.unanswered
        );

        let mut streamed = user("refund");
        streamed["stream"] = json!(true);
        let mut script = self::script(vec![scripted(Some("refund"), None, Some("lookup"))]);
        let r = respond(&streamed, &mut script);
        assert_eq!(r.content_type, "text/event-stream");
        assert!(
            r.body.contains("\"tool_calls\":[{\"id\":\"call_1\""),
            "{}",
            r.body
        );
        assert!(
            r.body.contains("\"finish_reason\":\"tool_calls\""),
            "{}",
            r.body
        );
    }

    /// Each failure uses up one reply, by the same rules as a reply: a
    /// status with its Retry-After, a delay, a reply cut halfway; a reply's
    /// usage is the one reported.
    #[test]
    fn failed_attempts_use_up_replies_and_usage_is_reported_as_scripted() {
        let failed = |when: Option<&str>, answer: Answer, ms: u64| Scripted {
            when: when.map(str::to_string),
            answer,
            delay: Duration::from_millis(ms),
        };
        let status = |status, retry_after: Option<&str>| Answer::Status {
            status,
            retry_after: retry_after.map(str::to_string),
        };
        let mut counted = scripted(None, Some("counted"), None);
        if let Answer::Reply { usage, .. } = &mut counted.answer {
            *usage = Some((30, 4));
        }
        let mut script = script(vec![
            failed(None, status(503, None), 0),
            failed(Some("rate"), status(429, Some("2")), 0),
            failed(None, Answer::Cut, 1500),
            counted,
        ]);
        let r = respond(&user("a rate question"), &mut script);
        assert_eq!(
            (r.status, r.headers.clone()),
            (429, vec![("Retry-After", "2".to_string())])
        );
        let r = respond(&user("a rate question"), &mut script);
        assert_eq!((r.status, r.headers.len()), (503, 0));
        let r = respond(&user("x"), &mut script);
        assert_eq!(r.delay, Duration::from_millis(1500));
        let cut = r.cut_at.unwrap_or_default();
        assert!(cut > 0 && cut < r.body.len() / 2 + 1, "{cut} of {}", r.body);
        assert!(serde_json::from_str::<Value>(&r.body[..cut]).is_err());
        let r = respond(&user("x"), &mut script);
        let usage = &body(&r)["usage"];
        assert_eq!(
            (
                &usage["prompt_tokens"],
                &usage["completion_tokens"],
                &usage["total_tokens"]
            ),
            (&json!(30), &json!(4), &json!(34))
        );
        assert_eq!((r.cut_at, r.delay), (None, Duration::ZERO));

        // A stream is cut after its first event, the role: no token.
        let mut streamed = user("x");
        streamed["stream"] = json!(true);
        let r = respond(
            &streamed,
            &mut self::script(vec![failed(None, Answer::Cut, 0)]),
        );
        let sent = &r.body[..r.cut_at.unwrap_or_default()];
        let events = chunks(sent);
        assert_eq!(events.len(), 1, "{sent}");
        assert_eq!(
            events[0]["choices"][0]["delta"],
            json!({"role": "assistant", "content": ""})
        );
        assert!(
            sent.ends_with("\n\n") && sent.len() < r.body.len(),
            "{sent}"
        );
    }
}
