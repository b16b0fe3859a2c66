//! Stand-ins for a graph's MCP servers (`svc test`): one loopback server
//! whose `/mcp/<server id>` speaks the Model Context Protocol's streamable
//! HTTP transport (JSON-RPC over POST, answered as JSON; no server-sent
//! stream, so `GET` is 405 as the specification allows) with the tools the
//! graph and the test file name, each call answered with what the case
//! scripts for that server and tool. A service reaches it because a test
//! starts it with each such server's `env:NAME` URL variable pointing here.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};

use super::Replies;

/// One scripted answer of an MCP tool: its text and structured content,
/// or an error the tool reports.
#[derive(Debug, Clone, PartialEq)]
pub struct McpReply {
    pub text: Option<String>,
    pub json: Option<Value>,
    pub is_error: bool,
}

#[derive(Default)]
struct Script {
    /// By server, then tool.
    replies: BTreeMap<String, BTreeMap<String, Replies<McpReply>>>,
    calls: BTreeMap<(String, String), usize>,
    unanswered: Vec<String>,
}

pub struct McpServers {
    /// `http://127.0.0.1:<port>`.
    pub base_url: String,
    script: Arc<Mutex<Script>>,
    _server: Arc<tiny_http::Server>,
}

/// The protocol versions the stand-in speaks, newest first; a client
/// asking for another gets the newest (the specification's negotiation).
const VERSIONS: &[&str] = &["2025-06-18", "2025-03-26", "2024-11-05"];

impl McpServers {
    /// Serves `tools`: the tool names each server lists.
    pub fn start(tools: BTreeMap<String, BTreeSet<String>>) -> Result<McpServers, String> {
        let script = Arc::new(Mutex::new(Script::default()));
        let shared = Arc::clone(&script);
        let (server, port) = super::serve("the stand-in MCP servers", move |request| {
            answer(request, &tools, &shared)
        })?;
        Ok(McpServers {
            base_url: format!("http://127.0.0.1:{port}"),
            script,
            _server: server,
        })
    }

    /// The URL server `id`'s variable gets.
    pub fn url(&self, id: &str) -> String {
        format!("{}/mcp/{id}", self.base_url)
    }

    fn held(&self) -> std::sync::MutexGuard<'_, Script> {
        self.script.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The replies of the next calls, forgetting earlier calls.
    pub fn script(&self, replies: BTreeMap<String, BTreeMap<String, Replies<McpReply>>>) {
        *self.held() = Script {
            replies,
            ..Script::default()
        };
    }

    /// The calls since [`McpServers::script`] that had no reply.
    pub fn unanswered(&self) -> Vec<String> {
        self.held().unanswered.clone()
    }
}

fn answer(
    mut request: tiny_http::Request,
    tools: &BTreeMap<String, BTreeSet<String>>,
    script: &Mutex<Script>,
) {
    let path = request.url().split('?').next().unwrap_or("").to_string();
    let server = path.strip_prefix("/mcp/").unwrap_or("").to_string();
    let mut body = Vec::new();
    let _ = request.as_reader().take(16 << 20).read_to_end(&mut body);
    let (status, text) = if !tools.contains_key(&server) {
        (
            404,
            json!({"error": format!("no stand-in MCP server at {path}")}).to_string(),
        )
    } else if request.method() != &tiny_http::Method::Post {
        // No server-to-client stream (GET), and sessions end with the
        // service (DELETE).
        (405, String::new())
    } else {
        match serde_json::from_slice::<Value>(&body) {
            Ok(message) => {
                let mut held = script.lock().unwrap_or_else(|p| p.into_inner());
                match respond(&server, &tools[&server], &message, &mut held) {
                    Some(reply) => (200, reply.to_string()),
                    // A notification or a response: accepted, no body.
                    None => (202, String::new()),
                }
            }
            Err(e) => (
                400,
                json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": format!("not JSON: {e}")}})
                    .to_string(),
            ),
        }
    };
    let mut response = tiny_http::Response::from_data(text.into_bytes()).with_status_code(status);
    if status == 200 || status == 400 || status == 404 {
        if let Ok(h) = tiny_http::Header::from_bytes("Content-Type", "application/json") {
            response.add_header(h);
        }
    }
    let _ = request.respond(response);
}

/// The JSON-RPC answer to one message (`None` for notifications).
fn respond(
    server: &str,
    tools: &BTreeSet<String>,
    message: &Value,
    script: &mut Script,
) -> Option<Value> {
    let id = message.get("id")?.clone();
    let method = message["method"].as_str()?;
    let params = &message["params"];
    let ok = |result: Value| json!({"jsonrpc": "2.0", "id": id, "result": result});
    let fail = |code: i64, text: String| json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": text}});
    Some(match method {
        "initialize" => {
            let asked = params["protocolVersion"].as_str().unwrap_or_default();
            let version = VERSIONS
                .iter()
                .find(|v| **v == asked)
                .unwrap_or(&VERSIONS[0]);
            ok(json!({
                "protocolVersion": version,
                "capabilities": {"tools": {"listChanged": false}},
                "serverInfo": {"name": format!("svc test stand-in for {server}"), "version": svc_ir::release::SVC},
            }))
        }
        "ping" => ok(json!({})),
        "tools/list" => ok(json!({"tools": tools.iter().map(|name| json!({
            "name": name,
            "description": format!("stand-in for {server}/{name}"),
            "inputSchema": {"type": "object"},
        })).collect::<Vec<_>>()})),
        "tools/call" => {
            let name = params["name"].as_str().unwrap_or_default().to_string();
            if !tools.contains(&name) {
                return Some(fail(-32602, format!("unknown tool `{name}`")));
            }
            let n = {
                let count = script
                    .calls
                    .entry((server.to_string(), name.clone()))
                    .or_default();
                *count += 1;
                *count
            };
            let scripted = script.replies.get(server).and_then(|t| t.get(&name));
            let reply = scripted.and_then(|r| r.for_call(n)).cloned();
            match reply {
                Some(r) => {
                    let text = r.text.clone().unwrap_or_else(|| {
                        r.json.as_ref().map(Value::to_string).unwrap_or_default()
                    });
                    let mut result =
                        json!({"content": [{"type": "text", "text": text}], "isError": r.is_error});
                    if let Some(j) = &r.json {
                        result["structuredContent"] = j.clone();
                    }
                    ok(result)
                }
                None => {
                    let why = match scripted {
                        Some(_) => format!("MCP tool `{server}/{name}` was called {n} times; the case scripts fewer replies"),
                        None => format!("MCP tool `{server}/{name}` was called; the case scripts no reply for it"),
                    };
                    script.unanswered.push(why.clone());
                    ok(json!({"content": [{"type": "text", "text": why}], "isError": true}))
                }
            }
        }
        other => fail(
            -32601,
            format!("the stand-in serves initialize, ping, tools/list and tools/call, not {other}"),
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(script: &mut Script, tool: &str) -> Value {
        let tools = BTreeSet::from(["search".to_string()]);
        respond(
            "web",
            &tools,
            &json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": tool, "arguments": {}}}),
            script,
        )
        .unwrap_or_default()
    }

    #[test]
    fn the_protocol_is_negotiated_tools_listed_and_calls_answered_as_scripted() {
        let tools = BTreeSet::from(["search".to_string()]);
        let mut script = Script::default();
        let init = respond(
            "web",
            &tools,
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-03-26"}}),
            &mut script,
        )
        .unwrap_or_default();
        assert_eq!(init["result"]["protocolVersion"], "2025-03-26");
        let newer = respond("web", &tools, &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2099-01-01"}}), &mut script).unwrap_or_default();
        assert_eq!(newer["result"]["protocolVersion"], VERSIONS[0]);
        assert_eq!(
            respond(
                "web",
                &tools,
                &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
                &mut script
            ),
            None
        );
        let list = respond(
            "web",
            &tools,
            &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
            &mut script,
        )
        .unwrap_or_default();
        assert_eq!(list["result"]["tools"][0]["name"], "search");

        script.replies = BTreeMap::from([(
            "web".to_string(),
            BTreeMap::from([(
                "search".to_string(),
                Replies::InOrder(vec![McpReply {
                    text: None,
                    json: Some(json!({"hits": 2})),
                    is_error: false,
                }]),
            )]),
        )]);
        let first = call(&mut script, "search");
        assert_eq!(first["result"]["structuredContent"], json!({"hits": 2}));
        assert_eq!(first["result"]["content"][0]["text"], "{\"hits\":2}");
        let second = call(&mut script, "search");
        assert_eq!(second["result"]["isError"], true);
        assert_eq!(script.unanswered.len(), 1, "{:?}", script.unanswered);
        assert_eq!(call(&mut script, "nope")["error"]["code"], -32602);
    }
}
