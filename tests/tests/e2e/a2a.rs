//! A2A end to end on every target (python-svc, go, java-svc), with
//! peers the repository did not write: a compiled graph published with
//! `settings.a2a`, called by the official a2a-sdk client for Python and by
//! the npm @a2a-js/sdk client (both card paths, an API key and a bearer
//! token, A2A 1.0, streaming and 0.3, refusals); a compiled graph whose
//! agent nodes call A2A agents: a reference server built only from
//! a2a-sdk's route factories and request handler, and the graphs published
//! by the two other targets (java-svc calling go and go calling java-svc
//! among them). The callers and roles of `settings.a2a.tokens` are
//! `a2a_callers.rs`'s.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{json, Value};
use svc_tests::service::{
    build, check_project, compile, require_python_sdk, require_tool, run_shell, Service,
};

/// The targets whose graphs call A2A agents (each publishes graphs too).
pub(crate) const PLATFORMS: [&str; 3] = ["python-svc", "go", "java-svc"];
const DESK_KEY: &str = "desk-key-7c1";
const CONCIERGE_KEY: &str = "concierge-key-2f9";
const PEER_TOKEN: &str = "peer-token-58a";

/// Published as an A2A agent with the service's own credential (`auth`:
/// api_key or bearer).
fn desk_graph(auth: &str) -> Value {
    json!({
        "irVersion": "2.2",
        "id": "desk",
        "security": {"auth": auth},
        "logical": {
            "state": [{"name": "question", "type": "string", "required": true},
                      {"name": "answer", "type": "string"}],
            "nodes": [{"id": "start", "kind": "start"},
                      {"id": "say", "kind": "response_template", "template": "Desk answer to: {{question}}", "outputKey": "answer"},
                      {"id": "end", "kind": "end"}],
            "edges": [{"from": "start", "to": "say"}, {"from": "say", "to": "end"}],
            "settings": {
                "a2a": {"enabled": true, "title": "Answer desk", "description": "Answers questions.",
                        "skills": [{"id": "answer", "name": "Answer", "tags": ["faq"]}]}
            }
        }
    })
}

/// Calls three A2A agents, chosen by `mode`: the reference peer and the
/// desks of the two other targets.
fn concierge_graph() -> Value {
    json!({
        "irVersion": "2.2",
        "id": "concierge",
        "logical": {
            "state": [{"name": "question", "type": "string", "required": true},
                      {"name": "mode", "type": "string", "default": "peer"},
                      {"name": "answer", "type": "string", "default": ""}],
            "nodes": [{"id": "start", "kind": "start"},
                      {"id": "route", "kind": "router", "branches": [
                          {"when": {"field": "mode", "op": "eq", "value": "desk"}, "to": "ask_desk"},
                          {"when": {"field": "mode", "op": "eq", "value": "other_desk"}, "to": "ask_other_desk"},
                          {"to": "ask_peer"}]},
                      {"id": "ask_peer", "kind": "agent", "agent": "peer", "input": "{{question}}", "outputKey": "answer"},
                      {"id": "ask_desk", "kind": "agent", "agent": "desk", "input": "{{question}}", "outputKey": "answer"},
                      {"id": "ask_other_desk", "kind": "agent", "agent": "other_desk", "input": "{{question}}", "outputKey": "answer"},
                      {"id": "end", "kind": "end"}],
            "edges": [{"from": "start", "to": "route"},
                      {"from": "ask_peer", "to": "end"},
                      {"from": "ask_desk", "to": "end"},
                      {"from": "ask_other_desk", "to": "end"}],
            "agents": [
                {"id": "peer", "kind": "a2a", "agentCardUrl": "env:PEER_CARD_URL", "service": "peer", "skillId": "convert"},
                {"id": "desk", "kind": "a2a", "agentCardUrl": "env:DESK_CARD_URL", "service": "desk", "skillId": "answer"},
                {"id": "other_desk", "kind": "a2a", "agentCardUrl": "env:OTHER_DESK_CARD_URL", "service": "desk", "skillId": "answer"}
            ]
        }
    })
}

/// An A2A agent made of a2a-sdk's own parts only (its card and JSON-RPC
/// route factories, DefaultRequestHandler): it answers with JSON naming the
/// text, the skill id of the metadata and whether the key was right; the
/// text "fail" fails the task.
const REFERENCE: &str = r#"
import json
import os

import uvicorn
from a2a.helpers.proto_helpers import new_text_message
from a2a.server.agent_execution import AgentExecutor
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore
from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    APIKeySecurityScheme,
    SecurityRequirement,
    SecurityScheme,
)
from google.protobuf.json_format import MessageToDict
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route

PORT = int(os.environ["SVC_PORT"])
TOKEN = os.environ["PEER_TOKEN"]


class Echo(AgentExecutor):
    async def execute(self, context, event_queue):
        text = context.get_user_input()
        if text == "fail":
            raise RuntimeError("asked to fail")
        headers = context.call_context.state.get("headers", {})
        reply = {
            "text": text,
            "skill": MessageToDict(context.message.metadata).get("skillId"),
            "key_ok": headers.get("x-api-key") == TOKEN,
        }
        await event_queue.enqueue_event(new_text_message(json.dumps(reply)))

    async def cancel(self, context, event_queue):
        raise NotImplementedError


card = AgentCard(
    name="reference peer",
    description="Echoes what it got.",
    version="1.0.0",
    supported_interfaces=[
        AgentInterface(
            url=f"http://127.0.0.1:{PORT}/rpc", protocol_binding="JSONRPC", protocol_version="1.0"
        )
    ],
    capabilities=AgentCapabilities(streaming=False),
    security_schemes={
        "key": SecurityScheme(
            api_key_security_scheme=APIKeySecurityScheme(location="header", name="X-API-Key")
        )
    },
    security_requirements=[SecurityRequirement(schemes={"key": {}})],
    default_input_modes=["text/plain"],
    default_output_modes=["text/plain"],
    skills=[AgentSkill(id="convert", name="Convert", description="Converts.", tags=["fx"])],
)
handler = DefaultRequestHandler(Echo(), InMemoryTaskStore(), card)
routes = [
    Route("/health", lambda request: PlainTextResponse("ok")),
    *create_agent_card_routes(card),
    *create_jsonrpc_routes(handler, "/rpc"),
]
uvicorn.run(Starlette(routes=routes), host="127.0.0.1", port=PORT, log_level="warning")
"#;

/// The official a2a-sdk client against a published graph: both card
/// paths, a message with the service's credential (the SDK's
/// AuthInterceptor sends it as the card's scheme asks: X-API-Key or a
/// bearer token), one without a credential.
const CLIENT: &str = r#"
import asyncio
import json
import sys
import uuid

import httpx
from a2a.client import AuthInterceptor, ClientConfig, ClientFactory, CredentialService
from a2a.helpers import get_message_text
from a2a.types.a2a_pb2 import Message, Part, Role, SendMessageRequest

BASE, KEY = sys.argv[1], sys.argv[2]


class Key(CredentialService):
    def __init__(self, key):
        self.key = key

    async def get_credentials(self, scheme, context):
        return self.key


async def send(key):
    async with httpx.AsyncClient(timeout=10) as http:
        factory = ClientFactory(ClientConfig(httpx_client=http, streaming=False))
        client = await factory.create_from_url(BASE, interceptors=[AuthInterceptor(Key(key))])
        message = Message(message_id=uuid.uuid4().hex, role=Role.ROLE_USER, parts=[Part(text="Hi")])
        message.metadata.update({"skillId": "answer"})
        replies = [r async for r in client.send_message(SendMessageRequest(message=message))]
        await client.close()
        return [get_message_text(r.message) for r in replies if r.HasField("message")]


async def main():
    out = {"cards": []}
    for path in ("/.well-known/agent-card.json", "/.well-known/agent.json"):
        r = httpx.get(BASE + path, timeout=10)
        card = r.json()
        out["cards"].append({"status": r.status_code, "name": card.get("name"),
                             "skills": [s["id"] for s in card.get("skills", [])],
                             "schemes": sorted(card.get("securitySchemes", {}))})
    out["replies"] = await send(KEY)
    try:
        await send(None)
        out["anonymous"] = "allowed"
    except Exception as e:
        out["anonymous"] = f"refused: {type(e).__name__}: {e}"
    print(json.dumps(out))


asyncio.run(main())
"#;

/// The npm @a2a-js/sdk client (sdk/python/tests/a2a_js/client.mjs, shared
/// with the SDK's own tests) against `base`: its report.
pub(crate) fn js_client(dir: &Path, base: &str, calls: &[Value]) -> Value {
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../sdk/python/tests/a2a_js/client.mjs");
    let args: Vec<String> = calls.iter().map(|c| format!("'{c}'")).collect();
    let out = run_shell(
        dir,
        &format!("node {} {base} {}", script.display(), args.join(" ")),
        &[],
        Duration::from_secs(60),
    )
    .unwrap();
    let line = out.lines().last().unwrap_or_default();
    serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {out}"))
}

/// The official Python client's report on `base` with `secret`.
fn python_client(dir: &Path, base: &str, secret: &str) -> Value {
    let client = dir.join("client.py");
    std::fs::write(&client, CLIENT).unwrap();
    let out = run_shell(
        dir,
        &format!("python {} {base} {secret}", client.display()),
        &[],
        Duration::from_secs(60),
    )
    .unwrap();
    let line = out.lines().last().unwrap_or_default();
    serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {out}"))
}

/// Compiles `graph` for `platform` in its own folder, runs the project's
/// own tests and builds it.
fn project(dir: &Path, platform: &str, name: &str, graph: &Value) -> svc_tests::service::Project {
    let folder = dir.join(format!("{name}-{platform}"));
    std::fs::create_dir_all(&folder).unwrap();
    let doc = folder.join(format!("{name}.graph.json"));
    std::fs::write(&doc, graph.to_string()).unwrap();
    let project = compile(platform, &doc).unwrap_or_else(|d| panic!("{name} on {platform}: {d:?}"));
    check_project(&project, platform).unwrap_or_else(|e| panic!("{name} on {platform}: {e}"));
    build(&project).unwrap_or_else(|e| panic!("{name} on {platform}: {e}"));
    project
}

/// One published desk: where it runs and the credential it takes.
struct Desk {
    platform: &'static str,
    auth: &'static str,
    service: Service,
    // Kept: a project's folder goes with it.
    _project: svc_tests::service::Project,
}

impl Desk {
    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.service.port)
    }
}

#[test]
fn a2a_published_graphs_and_agent_nodes_on_every_target() {
    if !require_python_sdk() || !require_tool("node") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();

    // The published graph on each target with an API key, and on go and
    // java-svc with a bearer token too.
    let mut desks = Vec::new();
    for (platform, auth) in [
        ("python-svc", "api_key"),
        ("go", "api_key"),
        ("go", "bearer"),
        ("java-svc", "api_key"),
        ("java-svc", "bearer"),
    ] {
        let project = project(
            dir.path(),
            platform,
            &format!("desk-{auth}"),
            &desk_graph(auth),
        );
        let service = Service::launch(
            &project,
            &[("SVC_API_KEY", DESK_KEY)],
            Duration::from_secs(120),
        )
        .unwrap();
        desks.push(Desk {
            platform,
            auth,
            service,
            _project: project,
        });
    }
    for desk in &desks {
        let (base, what) = (desk.url(), format!("{} ({})", desk.platform, desk.auth));
        // The official Python client.
        let report = python_client(dir.path(), &base, DESK_KEY);
        for card in report["cards"].as_array().unwrap() {
            assert_eq!(
                card,
                &json!({"status": 200, "name": "Answer desk", "skills": ["answer"], "schemes": [desk.auth]}),
                "{what}: {report}"
            );
        }
        assert_eq!(
            report["replies"],
            json!(["Desk answer to: Hi"]),
            "{what}: {report}"
        );
        let anonymous = report["anonymous"].as_str().unwrap();
        assert!(
            anonymous.starts_with("refused") && anonymous.contains("401"),
            "{what}: {report}"
        );

        // The npm client: 1.0, streamed, 0.3; then the refusals.
        let call = |text: &str, skill: &str, secret: &str, extra: Value| {
            let mut c =
                json!({"text": text, "skill": skill, "credential": desk.auth, "secret": secret});
            c.as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            c
        };
        let report = js_client(
            dir.path(),
            &base,
            &[
                call("plain", "answer", DESK_KEY, json!({})),
                call("streamed", "answer", DESK_KEY, json!({"stream": true})),
                call("old", "answer", DESK_KEY, json!({"protocol": "0.3"})),
                call("wrong", "answer", "not-the-key", json!({})),
                json!({"text": "none", "skill": "answer", "credential": "none"}),
                call("which?", "nope", DESK_KEY, json!({})),
            ],
        );
        let cards = &report["cards"];
        assert_eq!(
            cards["/.well-known/agent-card.json"], cards["/.well-known/agent.json"],
            "{what}: {report}"
        );
        assert_eq!(
            cards["/.well-known/agent-card.json"],
            json!({"name": "Answer desk", "version": "0.1.0", "skills": ["answer"], "schemes": [desk.auth],
                   "interfaces": [["JSONRPC", "1.0", format!("{base}/a2a")], ["JSONRPC", "0.3", format!("{base}/a2a")]]}),
            "{what}: {report}"
        );
        let calls = report["calls"].as_array().unwrap();
        for (c, text, protocol) in [
            (&calls[0], "plain", "1.0"),
            (&calls[1], "streamed", "1.0"),
            (&calls[2], "old", "0.3"),
        ] {
            assert_eq!(
                (
                    c["ok"].clone(),
                    c["text"].clone(),
                    c["protocol"].clone(),
                    c["status"].clone()
                ),
                (
                    json!(true),
                    json!(format!("Desk answer to: {text}")),
                    json!(protocol),
                    json!(200)
                ),
                "{what}: {c}"
            );
        }
        for refused in &calls[3..5] {
            assert_eq!(
                (refused["ok"].clone(), refused["status"].clone()),
                (json!(false), json!(401)),
                "{what}: {refused}"
            );
        }
        assert_eq!(
            (
                calls[5]["ok"].clone(),
                calls[5]["status"].clone(),
                calls[5]["code"].clone()
            ),
            (json!(false), json!(200), json!(-32602)),
            "{what}: {}",
            calls[5]
        );
        assert!(
            calls[5]["error"].as_str().unwrap().contains("nope"),
            "{what}: {}",
            calls[5]
        );
    }

    // The reference peer, then on each target a graph whose agent nodes call
    // it and the desk the other target publishes.
    let reference = dir.path().join("reference.py");
    std::fs::write(&reference, REFERENCE).unwrap();
    let peer = Service::run_in(
        dir.path(),
        &format!("python {}", reference.display()),
        &[("PEER_TOKEN", PEER_TOKEN)],
        Duration::from_secs(60),
    )
    .unwrap();
    let peer_url = format!("http://127.0.0.1:{}", peer.port);
    let mut concierges = Vec::new();
    for platform in PLATFORMS {
        // The desks (API key) of the two other targets.
        let others: Vec<&Desk> = desks
            .iter()
            .filter(|d| d.platform != platform && d.auth == "api_key")
            .collect();
        assert_eq!(others.len(), 2);
        let project = project(dir.path(), platform, "concierge", &concierge_graph());
        let (desk_url, other_url) = (others[0].url(), others[1].url());
        let service = Service::launch(
            &project,
            &[
                ("SVC_API_KEY", CONCIERGE_KEY),
                ("PEER_CARD_URL", peer_url.as_str()),
                ("PEER_API_KEY", PEER_TOKEN),
                ("DESK_CARD_URL", desk_url.as_str()),
                ("OTHER_DESK_CARD_URL", other_url.as_str()),
                ("DESK_API_KEY", DESK_KEY),
            ],
            Duration::from_secs(120),
        )
        .unwrap();
        let called = [others[0].platform, others[1].platform];
        concierges.push((platform, called, service, project));
    }
    let invoke = |concierge: &Service, question: &str, mode: &str| {
        let body = json!({"state": {"question": question, "mode": mode}}).to_string();
        let r = concierge
            .send(
                "POST",
                "/invoke",
                &[
                    ("Content-Type", "application/json"),
                    ("X-API-Key", CONCIERGE_KEY),
                ],
                body.as_bytes(),
            )
            .unwrap();
        (r.status, r.json())
    };
    for (platform, called, concierge, _) in &concierges {
        // The reference peer got the text, the skill id and the key.
        let (status, body) = invoke(concierge, "100 EUR in CHF?", "peer");
        assert_eq!(
            status,
            200,
            "{platform}: {body}\n{}\n{}",
            peer.output(),
            concierge.output()
        );
        let answer: Value =
            serde_json::from_str(body["result"]["answer"].as_str().unwrap()).unwrap();
        assert_eq!(
            answer,
            json!({"text": "100 EUR in CHF?", "skill": "convert", "key_ok": true}),
            "{platform}: {body}"
        );
        // Its failed task: 502 upstream_error naming the agent.
        let (status, body) = invoke(concierge, "fail", "peer");
        assert_eq!(status, 502, "{platform}: {body}");
        assert_eq!(
            body["error"]["code"], "upstream_error",
            "{platform}: {body}"
        );
        assert_eq!(
            (
                body["error"]["details"]["node"].clone(),
                body["error"]["details"]["reason"].clone()
            ),
            (json!("peer"), json!("a2a_error")),
            "{platform}: {body}"
        );
        // One compiled graph calling the graphs of the two other targets over A2A.
        for (mode, desk_platform) in [("desk", called[0]), ("other_desk", called[1])] {
            let (status, body) = invoke(concierge, "Hi", mode);
            assert_eq!(status, 200, "{platform} calling {desk_platform}: {body}");
            assert_eq!(
                body["result"]["answer"], "Desk answer to: Hi",
                "{platform} calling {desk_platform}: {body}"
            );
        }
    }

    // A peer that is gone: 502 with reason connect.
    drop(peer);
    for (platform, _, concierge, _) in &concierges {
        let (status, body) = invoke(concierge, "anyone?", "peer");
        assert_eq!(status, 502, "{platform}: {body}");
        assert_eq!(
            body["error"]["details"]["reason"], "connect",
            "{platform}: {body}"
        );
    }
}
