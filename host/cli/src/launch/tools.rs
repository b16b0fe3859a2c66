//! Stand-ins for a graph's HTTP tools (`svc test`): one loopback server
//! whose `/tools/<id>` answers what the case scripts for tool `<id>`
//! (status, JSON, delay), each tool's replies used in order, a single
//! reply for every call. The service reaches it because a test starts it
//! with each tool's `env:NAME` endpoint variable pointing here.

use std::collections::BTreeMap;
use std::io::Read;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};

use super::Replies;

/// One scripted answer of a tool.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolReply {
    pub status: u16,
    pub json: Value,
    pub delay: Duration,
}

#[derive(Default)]
struct Script {
    replies: BTreeMap<String, Replies<ToolReply>>,
    /// Calls so far per tool, and each call's input.
    calls: BTreeMap<String, Vec<Value>>,
    unanswered: Vec<String>,
}

pub struct Tools {
    /// `http://127.0.0.1:<port>`.
    pub base_url: String,
    script: Arc<Mutex<Script>>,
    _server: Arc<tiny_http::Server>,
}

impl Tools {
    pub fn start() -> Result<Tools, String> {
        let script = Arc::new(Mutex::new(Script::default()));
        let shared = Arc::clone(&script);
        let (server, port) = super::serve("the stand-in tools", move |request| {
            answer(request, &shared)
        })?;
        Ok(Tools {
            base_url: format!("http://127.0.0.1:{port}"),
            script,
            _server: server,
        })
    }

    /// The URL tool `id`'s endpoint variable gets.
    pub fn url(&self, id: &str) -> String {
        format!("{}/tools/{id}", self.base_url)
    }

    fn held(&self) -> std::sync::MutexGuard<'_, Script> {
        self.script.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The replies of the next calls, forgetting earlier calls.
    pub fn script(&self, replies: BTreeMap<String, Replies<ToolReply>>) {
        *self.held() = Script {
            replies,
            ..Script::default()
        };
    }

    /// The inputs each tool was called with since [`Tools::script`], and
    /// the calls that had no reply.
    pub fn seen(&self) -> (BTreeMap<String, Vec<Value>>, Vec<String>) {
        let s = self.held();
        (s.calls.clone(), s.unanswered.clone())
    }
}

fn answer(mut request: tiny_http::Request, script: &Mutex<Script>) {
    let path = request.url().split('?').next().unwrap_or("").to_string();
    let mut body = Vec::new();
    let _ = request.as_reader().take(16 << 20).read_to_end(&mut body);
    let input = serde_json::from_slice::<Value>(&body).unwrap_or(Value::Null);
    let (status, text, delay) = match path.strip_prefix("/tools/") {
        Some(id) if request.method() == &tiny_http::Method::Post => {
            let mut held = script.lock().unwrap_or_else(|p| p.into_inner());
            respond(&mut held, id, input)
        }
        _ => (
            404,
            json!({"error": format!("the stand-in tools serve POST /tools/<id>, not {} {path}", request.method())})
                .to_string(),
            Duration::ZERO,
        ),
    };
    // The delay outside the lock: other calls go on meanwhile.
    std::thread::sleep(delay);
    let mut response = tiny_http::Response::from_data(text.into_bytes()).with_status_code(status);
    if let Ok(h) = tiny_http::Header::from_bytes("Content-Type", "application/json") {
        response.add_header(h);
    }
    let _ = request.respond(response);
}

fn respond(script: &mut Script, id: &str, input: Value) -> (u16, String, Duration) {
    let calls = script.calls.entry(id.to_string()).or_default();
    calls.push(input);
    let n = calls.len();
    let reply = script.replies.get(id).and_then(|r| r.for_call(n)).cloned();
    match reply {
        Some(r) => (r.status, r.json.to_string(), r.delay),
        None => {
            let why = match script.replies.get(id) {
                Some(_) => {
                    format!("tool `{id}` was called {n} times; the case scripts fewer replies")
                }
                None => format!("tool `{id}` was called; the case scripts no reply for it"),
            };
            script.unanswered.push(why.clone());
            (500, json!({"error": why}).to_string(), Duration::ZERO)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(v: i64) -> ToolReply {
        ToolReply {
            status: 200,
            json: json!({"v": v}),
            delay: Duration::ZERO,
        }
    }

    #[test]
    fn replies_are_used_in_order_or_always_and_missing_ones_are_reported() {
        let mut script = Script {
            replies: BTreeMap::from([
                ("a".to_string(), Replies::InOrder(vec![ok(1), ok(2)])),
                ("b".to_string(), Replies::Always(ok(9))),
            ]),
            ..Script::default()
        };
        assert_eq!(respond(&mut script, "a", json!(1)).1, "{\"v\":1}");
        assert_eq!(respond(&mut script, "a", json!(2)).1, "{\"v\":2}");
        assert_eq!(respond(&mut script, "a", json!(3)).0, 500);
        assert_eq!(respond(&mut script, "b", json!(1)).1, "{\"v\":9}");
        assert_eq!(respond(&mut script, "b", json!(1)).1, "{\"v\":9}");
        assert_eq!(respond(&mut script, "c", json!(1)).0, 500);
        assert_eq!(script.calls["a"], vec![json!(1), json!(2), json!(3)]);
        assert_eq!(script.unanswered.len(), 2, "{:?}", script.unanswered);
    }
}
