//! OpenTelemetry end to end (docs/telemetry.md): one graph with an llm
//! node, a router, an HTTP tool, an MCP tool (a stub MCP server over
//! stdio), an A2A agent (a stand-in peer on the official a2a-sdk) and a node
//! that fails, compiled with `tracing.enabled` and `streaming`, run against
//! a real collector (Jaeger, started here on loopback); the traces read back
//! through Jaeger's query API hold the span tree of the contract, the
//! caller's trace id, and the upstream calls carry it on, each naming the
//! span of its call (the MCP request's `_meta`, the A2A call's header).
//! Metrics arrive through the collector's Prometheus exporter. A streamed
//! run read to its end and one its client leaves both end their spans, the
//! left one marked `client_closed_request`. With the collector stopped, the
//! service answers as before and stops in bounded time.
//!
//! Every target runs it, each against a collector of its own, in parallel.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use svc_tests::http::{Reply, Stub};
use svc_tests::jaeger::{self, Jaeger};
use svc_tests::service::{
    build, check_project, compile, require_platform, require_python_sdk, Service,
};

const TARGETS: &[&str] = &["python-svc", "go", "java-svc"];
const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN: &str = "00f067aa0ba902b7";

fn graph(mcp_server: &Path) -> Value {
    json!({
        "irVersion": "2.2",
        "id": "telemetry",
        "security": {"auth": "none"},
        "logical": {
            "state": [
                {"name": "question", "type": "string", "required": true},
                {"name": "answer", "type": "string"},
                {"name": "record", "type": "object"},
                {"name": "meta", "type": "string", "default": ""},
                {"name": "peer", "type": "string", "default": ""},
                {"name": "l", "type": "string"},
                {"name": "r", "type": "string"}
            ],
            "nodes": [
                {"id": "start", "kind": "start"},
                {"id": "ask", "kind": "llm", "outputKey": "answer",
                 "prompt": {"user": "Q: {{question}}"}},
                {"id": "route", "kind": "router", "branches": [
                    {"when": {"field": "question", "op": "eq", "value": "fail"}, "to": "boom"},
                    {"to": "lookup"}
                ]},
                {"id": "lookup", "kind": "tool", "toolId": "crm",
                 "input": {"q": "{{question}}"}, "outputKey": "record"},
                {"id": "peek", "kind": "tool", "toolId": "probe_meta",
                 "input": {"key": "traceparent"}, "outputKey": "meta"},
                {"id": "consult", "kind": "agent", "agent": "peer", "input": "{{question}}",
                 "outputKey": "peer"},
                {"id": "boom", "kind": "function", "outputKey": "answer"},
                {"id": "fan", "kind": "parallel", "branches": ["left", "right"], "join": "meet"},
                {"id": "left", "kind": "response_template", "template": "l", "outputKey": "l"},
                {"id": "right", "kind": "response_template", "template": "r", "outputKey": "r"},
                {"id": "meet", "kind": "join"},
                {"id": "end", "kind": "end"}
            ],
            "edges": [
                {"from": "start", "to": "ask"},
                {"from": "ask", "to": "route"},
                {"from": "lookup", "to": "peek"},
                {"from": "peek", "to": "consult"},
                {"from": "consult", "to": "fan"},
                {"from": "left", "to": "meet"},
                {"from": "right", "to": "meet"},
                {"from": "meet", "to": "end"},
                {"from": "boom", "to": "end"}
            ],
            "settings": {
                "model": {"provider": "openai", "name": "stub-model",
                          "baseUrlEnv": "TEL_MODEL_URL", "apiKeyEnv": "TEL_MODEL_KEY"},
                "tracing": {"enabled": true},
                "streaming": true
            },
            "tools": [
                {"id": "crm", "kind": "http", "endpoint": "env:TEL_TOOL_URL", "timeoutMs": 5000},
                {"id": "probe_meta", "kind": "mcp", "server": "probe", "tool": "meta"}
            ],
            "mcpServers": [
                {"id": "probe", "transport": "stdio", "command": "python",
                 "args": [mcp_server.display().to_string()], "timeoutMs": 10000}
            ],
            "agents": [
                {"id": "peer", "kind": "a2a", "agentCardUrl": "env:TEL_PEER_URL", "skillId": "echo"}
            ]
        },
        "bodiesByPlatform": {
            "python-svc": {"boom": "raise RuntimeError(\"deliberate failure\")"},
            "go": {"boom": "panic(\"deliberate failure\")"},
            "java-svc": {"boom": "if (state != null) {\n    throw new IllegalStateException(\"deliberate failure\");\n}"}
        }
    })
}

/// A span of a Jaeger trace: its name, parent's name and tags.
struct Span {
    id: String,
    parent: Option<String>,
    tags: BTreeMap<String, Value>,
}

/// The spans of a Jaeger trace by operation name (names are unique in these
/// traces), each with its parent's *name*.
fn spans_by_name(trace: &Value) -> BTreeMap<String, (Option<String>, BTreeMap<String, Value>)> {
    let spans: Vec<(String, Span)> = trace["spans"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| {
            let tags = s["tags"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|t| {
                    (
                        t["key"].as_str().unwrap_or("").to_string(),
                        t["value"].clone(),
                    )
                })
                .collect();
            let parent = s["references"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|r| r["refType"] == "CHILD_OF")
                .and_then(|r| r["spanID"].as_str())
                .map(str::to_string);
            let name = s["operationName"].as_str().unwrap_or("").to_string();
            (
                name,
                Span {
                    id: s["spanID"].as_str().unwrap_or("").to_string(),
                    parent,
                    tags,
                },
            )
        })
        .collect();
    let name_of = |id: &str| {
        spans
            .iter()
            .find(|(_, s)| s.id == id)
            .map(|(n, _)| n.clone())
            .unwrap_or_else(|| format!("(span {id} outside the trace)"))
    };
    spans
        .iter()
        .map(|(name, s)| {
            let parent = s.parent.as_deref().map(name_of);
            (name.clone(), (parent, s.tags.clone()))
        })
        .collect()
}

/// The model: "short", streamed when asked; a run about "leave" waits two
/// seconds for it (its client leaves meanwhile).
/// The span ids of a Jaeger trace by operation name.
fn span_ids(trace: &Value) -> BTreeMap<String, String> {
    trace["spans"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| {
            (
                s["operationName"].as_str().unwrap_or("").to_string(),
                s["spanID"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

fn model_reply(req: &svc_tests::http::Request) -> Reply {
    let body = req.json();
    if body["stream"] == true {
        let wait = if body.to_string().contains("leave") {
            Duration::from_secs(2)
        } else {
            Duration::ZERO
        };
        return Reply::Stream {
            pieces: vec![(wait, "short".to_string())],
            done: true,
            cut: None,
        };
    }
    Reply::Json(
        200,
        json!({
            "choices": [{"message": {"role": "assistant", "content": "short"}}],
            "usage": {"prompt_tokens": 11, "completion_tokens": 3}
        })
        .to_string(),
    )
}

/// The HTTP tool: a record, three seconds late for a run about "leave" (on
/// a target that sees its client gone only when a write fails, the run is
/// still under way then).
fn crm_reply(req: &svc_tests::http::Request) -> Reply {
    let record = json!({"id": 7}).to_string();
    if req.json()["q"] == "leave" {
        Reply::Slow(Duration::from_secs(3), record)
    } else {
        Reply::Json(200, record)
    }
}

/// The MCP server of the tool node `peek`, over stdio: `meta` answers the
/// entry `key` of the request's `_meta` (where the trace travels).
const MCP_SERVER: &str = r#"
from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("probe", log_level="WARNING")


@server.tool(structured_output=False)
def meta(key: str, ctx: Context) -> str:
    """The entry `key` of the request's _meta."""
    return str((ctx.request_context.meta or {}).get(key, ""))


if __name__ == "__main__":
    server.run("stdio")
"#;

/// A stand-in A2A peer on the official a2a-sdk's own parts (its card and
/// JSON-RPC routes, DefaultRequestHandler): it answers the `traceparent`
/// header of the message it got.
const A2A_PEER: &str = r#"
import os

import uvicorn
from a2a.helpers.proto_helpers import new_text_message
from a2a.server.agent_execution import AgentExecutor
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore
from a2a.types.a2a_pb2 import AgentCapabilities, AgentCard, AgentInterface, AgentSkill
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route

PORT = int(os.environ["SVC_PORT"])


class Headers(AgentExecutor):
    async def execute(self, context, event_queue):
        headers = context.call_context.state.get("headers", {})
        await event_queue.enqueue_event(new_text_message(headers.get("traceparent", "none")))

    async def cancel(self, context, event_queue):
        raise NotImplementedError


card = AgentCard(
    name="header peer",
    description="Answers the traceparent it got.",
    version="1.0.0",
    supported_interfaces=[
        AgentInterface(
            url=f"http://127.0.0.1:{PORT}/rpc", protocol_binding="JSONRPC", protocol_version="1.0"
        )
    ],
    capabilities=AgentCapabilities(streaming=False),
    default_input_modes=["text/plain"],
    default_output_modes=["text/plain"],
    skills=[AgentSkill(id="echo", name="Echo", description="Echoes.", tags=["test"])],
)
handler = DefaultRequestHandler(Headers(), InMemoryTaskStore(), card)
routes = [
    Route("/health", lambda request: PlainTextResponse("ok")),
    *create_agent_card_routes(card),
    *create_jsonrpc_routes(handler, "/rpc"),
]
uvicorn.run(Starlette(routes=routes), host="127.0.0.1", port=PORT, log_level="warning")
"#;

/// The span id a traceparent names.
fn span_of(traceparent: &str) -> String {
    traceparent
        .split('-')
        .nth(2)
        .unwrap_or_default()
        .to_string()
}

#[test]
fn telemetry_reaches_a_real_collector_with_one_span_tree() {
    let Some(binary) = jaeger::binary() else {
        return;
    };
    if !require_python_sdk() || !require_platform("go") || !require_platform("java-svc") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (mcp_server, a2a_peer) = (dir.path().join("probe.py"), dir.path().join("peer.py"));
    std::fs::write(&mcp_server, MCP_SERVER).unwrap();
    std::fs::write(&a2a_peer, A2A_PEER).unwrap();
    let doc = dir.path().join("telemetry.graph.json");
    std::fs::write(
        &doc,
        serde_json::to_string_pretty(&graph(&mcp_server)).unwrap(),
    )
    .unwrap();
    let peer = Service::run_in(
        dir.path(),
        &format!("python {}", a2a_peer.display()),
        &[],
        Duration::from_secs(60),
    )
    .unwrap();
    let peer_url = format!("http://127.0.0.1:{}", peer.port);
    std::thread::scope(|threads| {
        for platform in TARGETS {
            let (doc, binary, peer_url) = (&doc, &binary, peer_url.as_str());
            threads.spawn(move || traced_on(platform, doc, binary, peer_url));
        }
    });
}

fn traced_on(platform: &str, doc: &Path, binary: &Path, peer_url: &str) {
    let mut collector = Jaeger::start(binary).unwrap();
    let llm = Stub::start(model_reply).unwrap();
    let crm = Stub::start(crm_reply).unwrap();
    let project = compile(platform, doc).expect("the telemetry graph compiles");
    check_project(&project, platform).unwrap();
    build(&project).unwrap();

    // OTLP over HTTP from python-svc, over gRPC from go and java-svc.
    let (protocol, endpoint) = match platform {
        "python-svc" => ("http/protobuf", collector.endpoint()),
        _ => ("grpc", format!("http://127.0.0.1:{}", collector.otlp_grpc)),
    };
    let (llm_url, crm_url) = (format!("{}/v1", llm.url()), format!("{}/crm", crm.url()));
    let env = [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", protocol),
        ("OTEL_BSP_SCHEDULE_DELAY", "100"),
        ("OTEL_METRIC_EXPORT_INTERVAL", "300"),
        ("TEL_MODEL_URL", llm_url.as_str()),
        ("TEL_MODEL_KEY", "stub-key"),
        ("TEL_TOOL_URL", crm_url.as_str()),
        ("TEL_PEER_URL", peer_url),
    ];
    let s = Service::launch(&project, &env, Duration::from_secs(120)).unwrap();
    let invoke = |question: &str, extra: &[(&str, &str)]| {
        let body = json!({"state": {"question": question}}).to_string();
        let mut headers = vec![("Content-Type", "application/json")];
        headers.extend_from_slice(extra);
        let r = s
            .send("POST", "/invoke", &headers, body.as_bytes())
            .unwrap();
        (r.status, r.json())
    };
    let traceparent = format!("00-{TRACE_ID}-{CALLER_SPAN}-01");
    let (status, body) = invoke("where?", &[("traceparent", &traceparent)]);
    assert_eq!(status, 200, "{platform}: {body}");
    assert_eq!(body["result"]["answer"], "short", "{platform}: {body}");
    // What the MCP server found in the request's _meta, and the A2A peer in
    // the call's headers.
    let (mcp_meta, a2a_header) = (
        body["result"]["meta"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        body["result"]["peer"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
    );
    let (status, body) = invoke("fail", &[]);
    assert_eq!(status, 500, "{platform}: {body}");
    assert_eq!(
        body["error"]["code"], "execution_error",
        "{platform}: {body}"
    );

    // The service's name is the graph's id; both runs are traces of it.
    let expected = [
        (
            "POST /invoke",
            format!("(span {CALLER_SPAN} outside the trace)"),
        ),
        ("invoke_workflow telemetry", "POST /invoke".to_string()),
        ("llm ask", "invoke_workflow telemetry".to_string()),
        ("chat stub-model", "llm ask".to_string()),
        ("router route", "invoke_workflow telemetry".to_string()),
        ("tool lookup", "invoke_workflow telemetry".to_string()),
        ("execute_tool crm", "tool lookup".to_string()),
        ("tool peek", "invoke_workflow telemetry".to_string()),
        ("execute_tool probe_meta", "tool peek".to_string()),
        ("agent consult", "invoke_workflow telemetry".to_string()),
        ("invoke_agent peer", "agent consult".to_string()),
        // A parallel node's branches: a span each, their nodes within.
        ("parallel fan", "invoke_workflow telemetry".to_string()),
        ("branch left", "parallel fan".to_string()),
        ("response_template left", "branch left".to_string()),
        ("branch right", "parallel fan".to_string()),
        ("response_template right", "branch right".to_string()),
        ("join meet", "invoke_workflow telemetry".to_string()),
    ];
    let failed_names = [
        "POST /invoke",
        "chat stub-model",
        "function boom",
        "invoke_workflow telemetry",
        "llm ask",
        "router route",
    ];
    let complete = |t: &[Value]| {
        let ok = t
            .iter()
            .find(|t| t["traceID"] == TRACE_ID)
            .map(spans_by_name);
        let failed = t
            .iter()
            .find(|t| t["traceID"] != TRACE_ID)
            .map(spans_by_name);
        ok.is_some_and(|ok| expected.iter().all(|(n, _)| ok.contains_key(*n)))
            && failed.is_some_and(|f| failed_names.iter().all(|n| f.contains_key(*n)))
    };
    // Runs only: python-svc's MCP SDK traces the session it opens at start-up.
    let runs = |t: Vec<Value>| -> Vec<Value> {
        t.into_iter()
            .filter(|t| spans_by_name(t).contains_key("POST /invoke"))
            .collect()
    };
    let traces = runs(collector.traces("telemetry", Duration::from_secs(20), |t| {
        complete(&runs(t.to_vec()))
    }));
    assert_eq!(traces.len(), 2, "{platform}: {traces:?}\n{}", s.output());
    let (ok, failed) = if traces[0]["traceID"] == TRACE_ID {
        (&traces[0], &traces[1])
    } else {
        (&traces[1], &traces[0])
    };
    assert_eq!(
        ok["traceID"], TRACE_ID,
        "{platform}: the caller's trace id is kept"
    );

    let tree = spans_by_name(ok);
    let ids = span_ids(ok);
    // python-svc's MCP SDK and a2a-sdk add client spans of their own, under
    // the call's span: the others are the contract's.
    let parents: BTreeMap<&str, Option<&str>> = tree
        .iter()
        .filter(|(n, _)| expected.iter().any(|(e, _)| e == n))
        .map(|(n, (p, _))| (n.as_str(), p.as_deref()))
        .collect();
    assert_eq!(
        parents,
        expected
            .iter()
            .map(|(n, p)| (*n, Some(p.as_str())))
            .collect::<BTreeMap<_, _>>(),
        "{platform}"
    );
    let extra: Vec<(&String, Option<&str>)> = tree
        .iter()
        .filter(|(n, _)| !expected.iter().any(|(e, _)| e == n))
        .map(|(n, (p, _))| (n, p.as_deref()))
        .collect();
    for (name, parent) in &extra {
        let sdk = (name.starts_with("MCP send tools/call")
            && *parent == Some("execute_tool probe_meta"))
            || (name.starts_with("a2a.client.")
                && parent
                    .is_some_and(|p| p == "invoke_agent peer" || p.starts_with("a2a.client.")));
        assert!(
            platform == "python-svc" && sdk,
            "{platform}: a span outside the contract: {name} under {parent:?}"
        );
    }
    let tag = |span: &str, key: &str| tree[span].1.get(key).cloned().unwrap_or(Value::Null);
    assert_eq!(tag("POST /invoke", "span.kind"), "server", "{platform}");
    assert_eq!(tag("POST /invoke", "http.route"), "/invoke", "{platform}");
    assert_eq!(
        tag("POST /invoke", "http.response.status_code"),
        200,
        "{platform}"
    );
    assert_eq!(
        tag("invoke_workflow telemetry", "gen_ai.operation.name"),
        "invoke_workflow"
    );
    assert_eq!(
        tag("invoke_workflow telemetry", "gen_ai.workflow.name"),
        "telemetry"
    );
    assert_eq!(tag("llm ask", "svc.node.kind"), "llm", "{platform}");
    assert_eq!(tag("router route", "svc.node.id"), "route", "{platform}");
    assert_eq!(tag("branch left", "svc.node.id"), "fan", "{platform}");
    assert_eq!(tag("branch right", "svc.branch"), "right", "{platform}");
    assert_eq!(tag("chat stub-model", "span.kind"), "client", "{platform}");
    assert_eq!(
        tag("chat stub-model", "gen_ai.operation.name"),
        "chat",
        "{platform}"
    );
    assert_eq!(
        tag("chat stub-model", "gen_ai.provider.name"),
        "openai",
        "{platform}"
    );
    assert_eq!(tag("chat stub-model", "gen_ai.request.model"), "stub-model");
    assert_eq!(
        tag("chat stub-model", "gen_ai.usage.input_tokens"),
        11,
        "{platform}"
    );
    assert_eq!(
        tag("chat stub-model", "gen_ai.usage.output_tokens"),
        3,
        "{platform}"
    );
    for (span, tool) in [
        ("execute_tool crm", "crm"),
        ("execute_tool probe_meta", "probe_meta"),
    ] {
        assert_eq!(tag(span, "gen_ai.tool.name"), tool, "{platform}");
        assert_eq!(
            tag(span, "gen_ai.operation.name"),
            "execute_tool",
            "{platform}"
        );
        assert_eq!(tag(span, "span.kind"), "internal", "{platform}");
    }
    assert_eq!(tag("tool peek", "svc.node.kind"), "tool", "{platform}");
    assert_eq!(
        tag("invoke_agent peer", "span.kind"),
        "client",
        "{platform}"
    );
    assert_eq!(
        tag("invoke_agent peer", "gen_ai.agent.id"),
        "peer",
        "{platform}"
    );
    assert!(
        tree.values().all(|(_, tags)| !tags.contains_key("error")),
        "{platform}: a run that succeeded has no failed span"
    );

    // The MCP request's _meta names the tool call's span (on python-svc
    // the MCP SDK's client span under it); the A2A call's traceparent names
    // the agent's CLIENT span, as an HTTP call names its own.
    assert_eq!(
        mcp_meta.split('-').nth(1),
        Some(TRACE_ID),
        "{platform}: {mcp_meta}"
    );
    let named = |traceparent: &str| {
        let id = span_of(traceparent);
        ids.iter()
            .find(|(_, v)| **v == id)
            .map(|(n, _)| n.clone())
            .unwrap_or_else(|| format!("no span of the trace ({traceparent})"))
    };
    let meta_span = named(&mcp_meta);
    if platform == "python-svc" {
        assert_eq!(
            tree.get(&meta_span).and_then(|(p, _)| p.as_deref()),
            Some("execute_tool probe_meta"),
            "{platform}: _meta names {meta_span}"
        );
    } else {
        assert_eq!(meta_span, "execute_tool probe_meta", "{platform}");
    }
    assert_eq!(
        named(&a2a_header),
        "invoke_agent peer",
        "{platform}: the A2A call's traceparent {a2a_header}"
    );

    // The failed run: the failing node and the run carry the envelope's code.
    let tree = spans_by_name(failed);
    let names: Vec<&str> = tree.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            "POST /invoke",
            "chat stub-model",
            "function boom",
            "invoke_workflow telemetry",
            "llm ask",
            "router route"
        ],
        "{platform}"
    );
    for span in ["function boom", "invoke_workflow telemetry"] {
        let tags = &tree[span].1;
        assert_eq!(tags.get("error"), Some(&json!(true)), "{platform}: {span}");
        assert_eq!(
            tags.get("error.type"),
            Some(&json!("execution_error")),
            "{platform}: {span}"
        );
    }
    assert_eq!(
        tree["POST /invoke"].1.get("http.response.status_code"),
        Some(&json!(500))
    );

    // Every upstream call carries the trace on, from the span of the call.
    let ids = |stub: &Stub| -> Vec<String> {
        stub.received()
            .iter()
            .filter_map(|r| {
                r.header("traceparent")
                    .map(|t| t.split('-').nth(1).unwrap_or("").to_string())
            })
            .collect()
    };
    let model_traces = ids(&llm);
    assert_eq!(
        model_traces.len(),
        2,
        "{platform}: every model call has a traceparent"
    );
    assert!(
        model_traces.contains(&TRACE_ID.to_string()),
        "{platform}: {model_traces:?}"
    );
    assert_eq!(ids(&crm), [TRACE_ID], "{platform}");

    // Metrics: requests by route and status, runs by outcome, nodes by kind, tokens.
    // The value of the first sample of `name` whose labels include `labels`.
    let value = |metrics: &str, name: &str, labels: &[&str]| -> Option<f64> {
        metrics
            .lines()
            .find(|l| l.starts_with(name) && labels.iter().all(|x| l.contains(x)))
            .and_then(|l| l.rsplit(' ').next()?.parse().ok())
    };
    let expected: [(&str, &[&str], f64); 6] = [
        (
            "http_server_request_duration_seconds_count",
            &[
                "http_route=\"/invoke\"",
                "http_response_status_code=\"200\"",
            ],
            1.0,
        ),
        (
            "http_server_request_duration_seconds_count",
            &[
                "http_route=\"/invoke\"",
                "http_response_status_code=\"500\"",
            ],
            1.0,
        ),
        ("svc_runs_total", &["svc_run_outcome=\"ok\""], 1.0),
        (
            "svc_runs_total",
            &["svc_run_outcome=\"execution_error\""],
            1.0,
        ),
        (
            "svc_node_duration_seconds_count",
            &["svc_node_kind=\"llm\""],
            2.0,
        ),
        // Two model calls of 11 input tokens each.
        (
            "gen_ai_client_token_usage_sum",
            &["gen_ai_token_type=\"input\""],
            22.0,
        ),
    ];
    // Each export holds what was measured by then: wait for the last.
    let until = Instant::now() + Duration::from_secs(20);
    let mut metrics = collector.metrics();
    while !expected
        .iter()
        .all(|(name, labels, want)| value(&metrics, name, labels) == Some(*want))
        && Instant::now() < until
    {
        std::thread::sleep(Duration::from_millis(200));
        metrics = collector.metrics();
    }
    for (name, labels, want) in expected {
        assert_eq!(
            value(&metrics, name, labels),
            Some(want),
            "{platform}: {name} with {labels:?} in\n{metrics}"
        );
    }

    streamed_runs_end_their_spans(platform, &s, &collector);

    // Spans are exported at SIGTERM: an instance whose batches would wait a
    // minute answers, stops, and its trace is in the collector.
    let flushed = "0af7651916cd43dd8448eb211c80319c";
    let mut waiting = env.to_vec();
    waiting.retain(|(k, _)| *k != "OTEL_BSP_SCHEDULE_DELAY");
    waiting.push(("OTEL_BSP_SCHEDULE_DELAY", "60000"));
    let second = Service::launch(&project, &waiting, Duration::from_secs(120)).unwrap();
    let body = json!({"state": {"question": "flushed?"}}).to_string();
    let traceparent = format!("00-{flushed}-b7ad6b7169203331-01");
    let r = second
        .send(
            "POST",
            "/invoke",
            &[
                ("Content-Type", "application/json"),
                ("traceparent", &traceparent),
            ],
            body.as_bytes(),
        )
        .unwrap();
    assert_eq!(r.status, 200, "{platform}: {}", r.text());
    second.terminate(Duration::from_secs(15)).unwrap();
    let traces = collector.traces("telemetry", Duration::from_secs(10), |t| {
        t.iter().any(|t| t["traceID"] == flushed)
    });
    assert!(
        traces.iter().any(|t| t["traceID"] == flushed),
        "{platform}: the spans of a run answered just before SIGTERM were not exported"
    );

    // Without a collector the answers are the same, and the service stops in time.
    collector.stop();
    for _ in 0..3 {
        let (status, body) = invoke("where?", &[]);
        assert_eq!(
            (status, &body["result"]["answer"]),
            (200, &json!("short")),
            "{platform}: {body}"
        );
    }
    let started = Instant::now();
    let status = s.terminate(Duration::from_secs(15)).unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{platform}: stopping without a collector took {:?} ({status})",
        started.elapsed()
    );
}

const TRACE_STREAMED: &str = "5b8aa5a2d2c872e8321cf37308d69df2";
const TRACE_LEFT: &str = "6e0c63257de34c926f9efcd03927272e";

/// POSTs a streamed /invoke of `question` in the trace `trace`: reads the
/// answer to its end, or with `leave` closes the connection once the first
/// event arrived. What was read.
fn stream(port: u16, question: &str, trace: &str, leave: bool) -> String {
    let mut conn = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    conn.set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let body = json!({"state": {"question": question}}).to_string();
    write!(
        conn,
        "POST /invoke HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Accept: text/event-stream\r\ntraceparent: 00-{trace}-{CALLER_SPAN}-01\r\n\
         Connection: close\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let (mut read, mut buf) = (Vec::new(), [0u8; 4096]);
    loop {
        let n = conn.read(&mut buf).unwrap_or(0);
        if n == 0 {
            return String::from_utf8_lossy(&read).into_owned();
        }
        read.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&read).into_owned();
        let first = text
            .split_once("event: run_started")
            .is_some_and(|(_, rest)| rest.contains("\n\n"));
        if leave && first {
            // Gone with the answer unread: the service's next writes fail.
            let _ = conn.shutdown(std::net::Shutdown::Both);
            return text;
        }
    }
}

/// A streamed run read to its end and one its client leaves after the
/// first event: both runs' spans and server spans end, the left run's
/// marked client_closed_request (docs/telemetry.md).
fn streamed_runs_end_their_spans(platform: &str, s: &Service, collector: &Jaeger) {
    let whole = stream(s.port, "streamed?", TRACE_STREAMED, false);
    assert!(whole.contains("event: run_finished"), "{platform}: {whole}");
    let left = stream(s.port, "leave", TRACE_LEFT, true);
    assert!(!left.contains("event: run_finished"), "{platform}: {left}");
    let has = |t: &[Value], id: &str| {
        t.iter().find(|t| t["traceID"] == id).is_some_and(|t| {
            let tree = spans_by_name(t);
            tree.contains_key("POST /invoke") && tree.contains_key("invoke_workflow telemetry")
        })
    };
    let traces = collector.traces("telemetry", Duration::from_secs(30), |t| {
        has(t, TRACE_STREAMED) && has(t, TRACE_LEFT)
    });
    for (id, closed) in [(TRACE_STREAMED, false), (TRACE_LEFT, true)] {
        let trace = traces
            .iter()
            .find(|t| t["traceID"] == id)
            .unwrap_or_else(|| {
                panic!(
                    "{platform}: no trace {id} (closed: {closed})\n{}",
                    s.output()
                )
            });
        let tree = spans_by_name(trace);
        for span in ["POST /invoke", "invoke_workflow telemetry"] {
            assert!(
                tree.contains_key(span),
                "{platform}: {span} of {id} not ended: {trace}\n{}",
                s.output()
            );
        }
        let run = &tree["invoke_workflow telemetry"].1;
        let want = closed.then(|| json!("client_closed_request"));
        assert_eq!(
            run.get("error.type").cloned(),
            want,
            "{platform}: {id}: {run:?}"
        );
        assert_eq!(
            run.get("error").cloned(),
            closed.then(|| json!(true)),
            "{platform}"
        );
        let server = &tree["POST /invoke"].1;
        assert_eq!(
            server.get("http.response.status_code"),
            Some(&json!(200)),
            "{platform}"
        );
        assert_eq!(server.get("error"), None, "{platform}: {id}: {server:?}");
    }
}

/// A graph whose only node asks the remote agent `peer` (another service).
fn caller_graph() -> Value {
    json!({
        "irVersion": "2.2",
        "id": "caller",
        "security": {"auth": "none"},
        "logical": {
            "state": [{"name": "question", "type": "string", "required": true},
                      {"name": "answer", "type": "string"}],
            "nodes": [
                {"id": "start", "kind": "start"},
                {"id": "ask_peer", "kind": "agent", "agent": "peer", "input": "{{question}}",
                 "outputKey": "answer"},
                {"id": "end", "kind": "end"}
            ],
            "edges": [{"from": "start", "to": "ask_peer"}, {"from": "ask_peer", "to": "end"}],
            "agents": [{"id": "peer", "kind": "remote", "service": "peer", "url": "env:PEER_URL",
                        "inputField": "question", "outputField": "answer"}],
            "settings": {"tracing": {"enabled": true}}
        }
    })
}

/// The service the remote agent calls (the agents suite's), traced.
fn peer_graph() -> Value {
    let mut peer = super::agents::peer_graph();
    peer["logical"]["settings"] = json!({"tracing": {"enabled": true}});
    peer
}

#[test]
fn a_go_service_calling_a_java_one_is_one_trace() {
    let Some(binary) = jaeger::binary() else {
        return;
    };
    if !require_platform("go") || !require_platform("java-svc") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (caller_doc, peer_doc) = (
        dir.path().join("caller.graph.json"),
        dir.path().join("peer.graph.json"),
    );
    std::fs::write(&caller_doc, caller_graph().to_string()).unwrap();
    std::fs::write(&peer_doc, peer_graph().to_string()).unwrap();
    let collector = Jaeger::start(&binary).unwrap();
    let endpoint = collector.endpoint();
    let otel = [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()),
        ("OTEL_BSP_SCHEDULE_DELAY", "100"),
        ("OTEL_METRICS_EXPORTER", "none"),
    ];
    let (peer, caller) = std::thread::scope(|threads| {
        let peer = threads.spawn(|| {
            let project = compile("java-svc", &peer_doc).expect("the peer compiles");
            build(&project).unwrap();
            let mut env = otel.to_vec();
            env.push(("SVC_API_KEY", "peer-key"));
            let s = Service::launch(&project, &env, Duration::from_secs(120)).unwrap();
            (project, s)
        });
        let caller = threads.spawn(|| {
            let project = compile("go", &caller_doc).expect("the caller compiles");
            build(&project).unwrap();
            project
        });
        (peer.join().unwrap(), caller.join().unwrap())
    });
    let peer_url = format!("http://127.0.0.1:{}", peer.1.port);
    let mut env = otel.to_vec();
    env.extend([
        ("PEER_URL", peer_url.as_str()),
        ("PEER_API_KEY", "peer-key"),
    ]);
    let s = Service::launch(&caller, &env, Duration::from_secs(60)).unwrap();
    let r = s
        .send(
            "POST",
            "/invoke",
            &[("Content-Type", "application/json")],
            br#"{"state": {"question": "hi"}}"#,
        )
        .unwrap();
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["result"]["answer"], "peer says hi");

    // Read when the one trace holds every span checked below: each SDK
    // exports a span when it ends, in batches, so a server span (ended after
    // its answer is written) can reach the collector a batch after its
    // children.
    let complete = |t: &[Value]| {
        t.len() == 1 && {
            let trace = &t[0];
            let spans = trace["spans"].as_array().cloned().unwrap_or_default();
            let has = |name: &str, service: &str| {
                spans.iter().any(|s| {
                    let process = s["processID"].as_str().unwrap_or("");
                    s["operationName"] == name
                        && trace["processes"][process]["serviceName"] == service
                })
            };
            has("invoke_agent peer", "caller")
                && has("POST /invoke", "peer_service")
                && has("invoke_workflow peer_service", "peer_service")
        }
    };
    let caller_traces = collector.traces("caller", Duration::from_secs(20), complete);
    let peer_traces = collector.traces("peer_service", Duration::from_secs(20), complete);
    assert_eq!(caller_traces.len(), 1, "{caller_traces:?}");
    assert_eq!(peer_traces.len(), 1, "{peer_traces:?}");
    // One trace: the Java service's spans are in the Go service's trace,
    // its server span the child of the Go agent's call.
    assert_eq!(caller_traces[0]["traceID"], peer_traces[0]["traceID"]);
    // Jaeger returns the whole trace for either service: the Java service's
    // server span is the child of the Go agent's call.
    let trace = &peer_traces[0];
    let service_of = |span: &Value| {
        let process = span["processID"].as_str().unwrap_or("");
        trace["processes"][process]["serviceName"]
            .as_str()
            .unwrap_or("")
            .to_string()
    };
    let spans = trace["spans"].as_array().cloned().unwrap_or_default();
    let find = |name: &str, service: &str| {
        spans
            .iter()
            .find(|s| s["operationName"] == name && service_of(s) == service)
            .cloned()
            .unwrap_or_else(|| panic!("no span {name} of {service} in {trace}"))
    };
    let agent_call = find("invoke_agent peer", "caller");
    let java_server = find("POST /invoke", "peer_service");
    let parent = java_server["references"]
        .as_array()
        .and_then(|r| r.iter().find(|r| r["refType"] == "CHILD_OF"))
        .map(|r| r["spanID"].clone());
    assert_eq!(parent, Some(agent_call["spanID"].clone()), "{trace}");
    assert_eq!(
        agent_call["tags"]
            .as_array()
            .and_then(|t| t.iter().find(|t| t["key"] == "span.kind"))
            .map(|t| t["value"].clone()),
        Some(json!("client"))
    );
    find("invoke_workflow peer_service", "peer_service");
}

/// `register_on_build` registers the graph with LangSmith as the service
/// starts: python-svc's; go and java-svc, which export OpenTelemetry only,
/// refuse it by name. (No fixture: a python-svc project with it needs a
/// LangSmith key to start, so its own tests could not run.)
#[test]
fn register_on_build_is_python_svc_s() {
    let mut doc = graph(Path::new("probe.py"));
    doc["logical"]["settings"]["tracing"]["register_on_build"] = json!(true);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("register.graph.json");
    std::fs::write(&path, doc.to_string()).unwrap();
    assert!(compile("python-svc", &path).is_ok());
    for platform in ["go", "java-svc"] {
        let refused = compile(platform, &path).err().unwrap_or_default();
        assert_eq!(refused.len(), 1, "{platform}: {refused:?}");
        let d = &refused[0];
        assert_eq!(d.code, "unsupported", "{platform}: {d:?}");
        assert_eq!(
            d.pointer.as_deref(),
            Some("/logical/settings/tracing/register_on_build"),
            "{platform}: {d:?}"
        );
        assert!(d.message.contains("register"), "{platform}: {d:?}");
    }
}
