//! MCP end to end on every target: a compiled graph whose tool nodes
//! and worker agent call a real MCP server (the official SDK's `MCPServer`,
//! started over stdio by the service), driven over HTTP: structured
//! content, the declared variable and nothing else in the child, a tool's
//! error, a killed child respawned, no child left after SIGTERM; and a
//! compiled graph published with `settings.mcp.expose`, driven by the
//! official `mcp.Client` over streamable HTTP (A2A publishing:
//! `a2a`).

use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};
use svc_tests::http::{Reply, Request, Stub};
use svc_tests::service::{
    build, check_project, compile, require_platform, require_python_sdk, run_shell, Service,
};

const KEY: &str = "mcp-key-51e0";

/// The MCP server the graph uses, run by the service over stdio.
pub const FILES_SERVER: &str = r#"
import os

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("files")


@server.tool()
def read_file(path: str) -> dict:
    """Reads a file."""
    return {
        "path": path,
        "text": f"contents of {path}",
        "token": os.environ.get("FILES_TOKEN"),
        "leak": os.environ.get("SVC_LEAK_PROBE"),
    }


@server.tool()
def pid() -> str:
    """The server process's id."""
    return str(os.getpid())


@server.tool()
def explode(reason: str) -> str:
    """Always fails (ToolError: MCPServer hides other exceptions' text)."""
    raise ToolError(f"exploded: {reason}")


if __name__ == "__main__":
    server.run("stdio")
"#;

fn graph(server_script: &Path) -> Value {
    json!({
        "irVersion": "2.2",
        "id": "mcp_demo",
        "logical": {
            "state": [
                {"name": "question", "type": "string", "required": true},
                {"name": "mode", "type": "string", "default": "read"},
                {"name": "record", "type": "object", "default": {}},
                {"name": "answer", "type": "string", "default": ""}
            ],
            "nodes": [
                {"id": "start", "kind": "start"},
                {"id": "route", "kind": "router", "branches": [
                    {"when": {"field": "mode", "op": "eq", "value": "explode"}, "to": "boom"},
                    {"when": {"field": "mode", "op": "eq", "value": "agent"}, "to": "ask"},
                    {"when": {"field": "mode", "op": "eq", "value": "pid"}, "to": "who"},
                    {"when": {"field": "mode", "op": "eq", "value": "web"}, "to": "web"},
                    {"when": {"field": "mode", "op": "eq", "value": "sse"}, "to": "add"},
                    {"to": "read"}]},
                {"id": "read", "kind": "tool", "toolId": "read_file", "input": {"path": "{{question}}"}, "outputKey": "record"},
                {"id": "boom", "kind": "tool", "toolId": "explode", "input": {"reason": "{{question}}"}, "outputKey": "answer"},
                {"id": "ask", "kind": "agent", "agent": "reader", "input": "{{question}}", "outputKey": "answer"},
                {"id": "who", "kind": "tool", "toolId": "pid", "input": {}, "outputKey": "answer"},
                {"id": "web", "kind": "tool", "toolId": "web_header", "input": {"name": "authorization"}, "outputKey": "answer"},
                {"id": "add", "kind": "tool", "toolId": "sse_add", "input": {"a": 2, "b": 3}, "outputKey": "record"},
                {"id": "end", "kind": "end"}
            ],
            "edges": [
                {"from": "start", "to": "route"},
                {"from": "read", "to": "end"},
                {"from": "boom", "to": "end"},
                {"from": "ask", "to": "end"},
                {"from": "who", "to": "end"},
                {"from": "web", "to": "end"},
                {"from": "add", "to": "end"}
            ],
            "tools": [
                {"id": "read_file", "kind": "mcp", "server": "files", "tool": "read_file", "description": "Reads a file."},
                {"id": "explode", "kind": "mcp", "server": "files", "tool": "explode"},
                {"id": "pid", "kind": "mcp", "server": "files", "tool": "pid"},
                {"id": "web_header", "kind": "mcp", "server": "web", "tool": "header"},
                {"id": "sse_add", "kind": "mcp", "server": "legacy", "tool": "add"}
            ],
            "mcpServers": [
                {"id": "files", "transport": "stdio", "command": "python",
                 "args": [server_script.display().to_string()],
                 "env": {"FILES_TOKEN": "${MCP_FILES_TOKEN}"}, "timeoutMs": 10000},
                {"id": "web", "transport": "streamable_http", "url": "env:WEB_MCP_URL",
                 "headers": {"Authorization": "Bearer ${WEB_MCP_TOKEN}"}},
                {"id": "legacy", "transport": "sse", "url": "env:SSE_MCP_URL"}
            ],
            "agents": [
                {"id": "reader", "kind": "worker", "instructions": "You read files.", "toolIds": ["read_file"]}
            ],
            "settings": {"model": {"provider": "openai", "name": "stub-model"}}
        }
    })
}

fn exposed_graph() -> Value {
    json!({
        "irVersion": "2.2",
        "id": "mcp_published",
        "logical": {
            "state": [{"name": "question", "type": "string", "required": true},
                      {"name": "answer", "type": "string"}],
            "nodes": [{"id": "start", "kind": "start"},
                      {"id": "say", "kind": "response_template", "template": "You asked: {{question}}", "outputKey": "answer"},
                      {"id": "end", "kind": "end"}],
            "edges": [{"from": "start", "to": "say"}, {"from": "say", "to": "end"}],
            "settings": {
                "mcp": {"expose": true, "toolName": "answer_question"}
            }
        }
    })
}

/// The model: call `read_file` once, then answer with what it returned.
fn model_reply(req: &Request) -> Reply {
    let body = req.json();
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let tool_result = messages
        .iter()
        .find(|m| m["role"] == "tool")
        .and_then(|m| m["content"].as_str())
        .map(str::to_string);
    let message = match tool_result {
        None => json!({"role": "assistant", "content": null, "tool_calls": [{
            "id": "t1", "type": "function",
            "function": {"name": "read_file", "arguments": "{\"path\": \"notes.txt\"}"}}]}),
        Some(text) => json!({"role": "assistant", "content": format!("read: {text}")}),
    };
    Reply::Json(200, json!({"choices": [{"message": message}]}).to_string())
}

/// The official MCP client against the published graph: list, call, and a
/// request without the credential.
const CLIENT: &str = r#"
import asyncio
import json
import sys

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

URL, KEY = sys.argv[1], sys.argv[2]


async def session(headers):
    http = httpx2.AsyncClient(headers=headers, timeout=10)
    return Client(streamable_http_client(URL, http_client=http))


async def main():
    out = {}
    async with await session({"X-API-Key": KEY}) as client:
        tools = await client.list_tools()
        tool = tools.tools[0]
        out["tools"] = [t.name for t in tools.tools]
        out["schema"] = tool.input_schema
        result = await client.call_tool("answer_question", {"question": "Hi"})
        out["result"] = {"structured": result.structured_content, "is_error": result.is_error}
        bad = await client.call_tool("answer_question", {})
        out["bad"] = {"is_error": bad.is_error, "text": [c.text for c in bad.content]}
    try:
        async with await session({}) as client:
            await client.list_tools()
        out["anonymous"] = "allowed"
    except Exception as e:  # the 401 surfaces as a transport error
        out["anonymous"] = f"refused: {type(e).__name__}"
    print(json.dumps(out))


asyncio.run(main())
"#;

/// The MCP tools of one graph on every target that calls MCP servers.
#[test]
fn mcp_tools_on_every_target() {
    if !require_python_sdk() {
        return;
    }
    for platform in ["python-svc", "go", "java-svc"] {
        if require_platform(platform) {
            mcp_tools(platform);
            eprintln!(
                "{platform}: MCP tools over stdio, SSE and streamable HTTP as the contract says"
            );
        }
    }
}

fn mcp_tools(platform: &str) {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("files_server.py");
    std::fs::write(&script, FILES_SERVER).unwrap();
    let doc = dir.path().join("mcp.graph.json");
    std::fs::write(&doc, graph(&script).to_string()).unwrap();
    let llm = Stub::start(model_reply).unwrap();
    let llm_url = format!("{}/v1", llm.url());

    let project = compile(platform, &doc).expect("the MCP graph compiles");
    check_project(&project, platform).unwrap();
    build(&project).unwrap();
    let web = HttpServer::start("streamable_http");
    let legacy = HttpServer::start("sse");
    let web_url = format!("http://127.0.0.1:{}/mcp", web.port);
    let sse_url = format!("http://127.0.0.1:{}/sse", legacy.port);
    let env = [
        ("SVC_API_KEY", KEY),
        ("OPENAI_BASE_URL", llm_url.as_str()),
        ("OPENAI_API_KEY", "stub-key"),
        ("MCP_FILES_TOKEN", "t-123"),
        ("SVC_LEAK_PROBE", "must-not-reach-the-child"),
        ("WEB_MCP_URL", web_url.as_str()),
        ("WEB_MCP_TOKEN", "w-456"),
        ("SSE_MCP_URL", sse_url.as_str()),
    ];
    let s = Service::launch(&project, &env, Duration::from_secs(120)).unwrap();
    let invoke = |question: &str, mode: &str| {
        let body = json!({"state": {"question": question, "mode": mode}}).to_string();
        let r = s
            .send(
                "POST",
                "/invoke",
                &[("Content-Type", "application/json"), ("X-API-Key", KEY)],
                body.as_bytes(),
            )
            .unwrap();
        (r.status, r.json())
    };

    // A tool node: the structured content into an object field; the
    // declared variable reaches the child, the service's others do not.
    let (status, body) = invoke("notes.txt", "read");
    assert_eq!(status, 200, "{platform}: {body}");
    assert_eq!(
        body["result"]["record"],
        json!({"path": "notes.txt", "text": "contents of notes.txt", "token": "t-123", "leak": null}),
        "{platform}: {body}"
    );
    // The tool answered is_error: 502 with the server, tool and reason.
    let (status, body) = invoke("on purpose", "explode");
    assert_eq!(status, 502, "{platform}: {body}");
    let details = &body["error"]["details"];
    assert_eq!(
        (
            details["server"].clone(),
            details["tool"].clone(),
            details["reason"].clone()
        ),
        (json!("files"), json!("explode"), json!("tool_error")),
        "{platform}: {body}"
    );
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("exploded: on purpose"),
        "{platform}: {body}"
    );
    // A worker agent calls the MCP tool through the model.
    let (status, body) = invoke("what is in notes.txt?", "agent");
    assert_eq!(status, 200, "{platform}: {body}");
    let answer = body["result"]["answer"].as_str().unwrap();
    assert!(
        answer.starts_with("read: ") && answer.contains("contents of notes.txt"),
        "{platform}: {answer}"
    );
    // Streamable HTTP with its header; SSE with a structured result.
    let (status, body) = invoke("header", "web");
    assert_eq!(
        (status, body["result"]["answer"].clone()),
        (200, json!("Bearer w-456")),
        "{platform}: {body}"
    );
    let (status, body) = invoke("sum", "sse");
    assert_eq!(
        (status, body["result"]["record"].clone()),
        (200, json!({"result": 5})),
        "{platform}: {body}"
    );
    // The child killed: the next call runs on a new one.
    let child = |s: &str| -> u32 { s.parse().unwrap_or_else(|e| panic!("{platform}: {e}: {s}")) };
    let (status, body) = invoke("who", "pid");
    assert_eq!(status, 200, "{platform}: {body}");
    let first = child(body["result"]["answer"].as_str().unwrap());
    let _ = std::process::Command::new("kill")
        .args(["-9", &first.to_string()])
        .status();
    std::thread::sleep(Duration::from_millis(300));
    let (status, body) = invoke("who", "pid");
    let second = child(body["result"]["answer"].as_str().unwrap_or_default());
    assert_eq!(status, 200, "{platform}: {body}");
    assert_ne!(first, second, "{platform}: the dead child answered");
    // SIGTERM stops the service and its child: no orphan.
    s.terminate(Duration::from_secs(20)).unwrap();
    let alive = std::path::Path::new(&format!("/proc/{second}")).exists();
    assert!(
        !alive,
        "{platform}: the MCP child {second} outlived the service"
    );
}

/// The graph published with `settings.mcp.expose` on every target that
/// publishes it, driven by the official `mcp.Client`: the tool listed with
/// its required fields, a call answered with the final state, bad input an
/// error result, no credential refused.
#[test]
fn published_graphs_answer_the_official_client() {
    if !require_python_sdk() {
        return;
    }
    for platform in ["python-svc", "go", "java-svc"] {
        if require_platform(platform) {
            published(platform);
            eprintln!("{platform}: the published graph answers the official MCP client");
        }
    }
}

fn published(platform: &str) {
    let dir = tempfile::tempdir().unwrap();
    let published = dir.path().join("published.graph.json");
    std::fs::write(&published, exposed_graph().to_string()).unwrap();
    let project = compile(platform, &published).expect("the published graph compiles");
    check_project(&project, platform).unwrap();
    build(&project).unwrap();
    let s = Service::launch(&project, &[("SVC_API_KEY", KEY)], Duration::from_secs(120)).unwrap();
    let client = dir.path().join("client.py");
    std::fs::write(&client, CLIENT).unwrap();
    let url = format!("http://127.0.0.1:{}/mcp", s.port);
    let out = run_shell(
        dir.path(),
        &format!("python {} {url} {KEY}", client.display()),
        &[],
        Duration::from_secs(60),
    )
    .unwrap();
    let line = out.lines().last().unwrap_or_default();
    let report: Value =
        serde_json::from_str(line).unwrap_or_else(|e| panic!("{platform}: {e}: {out}"));
    assert_eq!(
        report["tools"],
        json!(["answer_question"]),
        "{platform}: {report}"
    );
    assert_eq!(
        report["schema"]["required"],
        json!(["question"]),
        "{platform}: {report}"
    );
    assert_eq!(
        report["result"]["structured"],
        json!({"question": "Hi", "answer": "You asked: Hi"}),
        "{platform}: {report}"
    );
    assert_eq!(report["bad"]["is_error"], true, "{platform}: {report}");
    assert!(
        report["anonymous"].as_str().unwrap().starts_with("refused"),
        "{platform}: {report}"
    );
    drop(s);
}

/// The SDK tests' MCP server (sdk/python/tests/mcp_fixtures/server.py)
/// over HTTP on a free loopback port, stopped when dropped.
struct HttpServer {
    child: std::process::Child,
    port: u16,
}

impl HttpServer {
    fn start(transport: &str) -> HttpServer {
        let script = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../sdk/python/tests/mcp_fixtures/server.py");
        let port = svc_tests::http::free_port().unwrap();
        let child = std::process::Command::new("python")
            .arg(&script)
            .args([transport, &port.to_string()])
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{}: {e}", script.display()));
        let server = HttpServer { child, port };
        let ready = std::time::Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                std::time::Instant::now() < ready,
                "the {transport} MCP server did not listen"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        server
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
