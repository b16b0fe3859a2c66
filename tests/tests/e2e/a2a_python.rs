//! A2A end to end on python-svc, with peers the repository did not write:
//! a compiled graph published with `settings.a2a`, called by the official
//! a2a-sdk client (both card paths, the service's key, no credential
//! refused); and a compiled graph whose agent nodes call A2A agents, one a
//! reference server built only from a2a-sdk's route factories and request
//! handler, the other the published graph itself.

use std::time::Duration;

use serde_json::{json, Value};
use svc_tests::service::{check_project, compile, require_python_sdk, run_shell, Service};

const DESK_KEY: &str = "desk-key-7c1";
const CONCIERGE_KEY: &str = "concierge-key-2f9";
const PEER_TOKEN: &str = "peer-token-58a";

/// Published as an A2A agent with the service's own key.
fn desk_graph() -> Value {
    json!({
        "irVersion": "2.2",
        "id": "desk",
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

/// Calls two A2A agents, chosen by `mode`.
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
                          {"to": "ask_peer"}]},
                      {"id": "ask_peer", "kind": "agent", "agent": "peer", "input": "{{question}}", "outputKey": "answer"},
                      {"id": "ask_desk", "kind": "agent", "agent": "desk", "input": "{{question}}", "outputKey": "answer"},
                      {"id": "end", "kind": "end"}],
            "edges": [{"from": "start", "to": "route"},
                      {"from": "ask_peer", "to": "end"},
                      {"from": "ask_desk", "to": "end"}],
            "agents": [
                {"id": "peer", "kind": "a2a", "agentCardUrl": "env:PEER_CARD_URL", "service": "peer", "skillId": "convert"},
                {"id": "desk", "kind": "a2a", "agentCardUrl": "env:DESK_CARD_URL", "service": "desk", "skillId": "answer"}
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

/// The official a2a-sdk client against the published graph: both card
/// paths, a message with the service's key, one without a credential.
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

#[test]
fn python_a2a_published_graph_and_agent_nodes() {
    if !require_python_sdk() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();

    // The published graph, through the official client.
    let doc = dir.path().join("desk.graph.json");
    std::fs::write(&doc, desk_graph().to_string()).unwrap();
    let desk_project = compile("python-svc", &doc).expect("the desk graph compiles");
    check_project(&desk_project, "python-svc").unwrap();
    let desk = Service::launch(
        &desk_project,
        &[("SVC_API_KEY", DESK_KEY)],
        Duration::from_secs(120),
    )
    .unwrap();
    let desk_url = format!("http://127.0.0.1:{}", desk.port);
    let client = dir.path().join("client.py");
    std::fs::write(&client, CLIENT).unwrap();
    let out = run_shell(
        dir.path(),
        &format!("python {} {desk_url} {DESK_KEY}", client.display()),
        &[],
        Duration::from_secs(60),
    )
    .unwrap();
    let line = out.lines().last().unwrap_or_default();
    let report: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {out}"));
    for card in report["cards"].as_array().unwrap() {
        assert_eq!(
            card,
            &json!({"status": 200, "name": "Answer desk", "skills": ["answer"], "schemes": ["api_key"]}),
            "{report}"
        );
    }
    assert_eq!(report["replies"], json!(["Desk answer to: Hi"]), "{report}");
    let anonymous = report["anonymous"].as_str().unwrap();
    assert!(
        anonymous.starts_with("refused") && anonymous.contains("401"),
        "{report}"
    );

    // The reference peer, then a graph whose agent nodes call it and the desk.
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
    let doc = dir.path().join("concierge.graph.json");
    std::fs::write(&doc, concierge_graph().to_string()).unwrap();
    let project = compile("python-svc", &doc).expect("the concierge graph compiles");
    // Its own tests run against the generated stand-in (tests/a2a_stub.py).
    check_project(&project, "python-svc").unwrap();
    let concierge = Service::launch(
        &project,
        &[
            ("SVC_API_KEY", CONCIERGE_KEY),
            ("PEER_CARD_URL", peer_url.as_str()),
            ("PEER_API_KEY", PEER_TOKEN),
            ("DESK_CARD_URL", desk_url.as_str()),
            ("DESK_API_KEY", DESK_KEY),
        ],
        Duration::from_secs(120),
    )
    .unwrap();
    let invoke = |question: &str, mode: &str| {
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

    // The reference peer got the text, the skill id and the key.
    let (status, body) = invoke("100 EUR in CHF?", "peer");
    assert_eq!(status, 200, "{body}\n{}", peer.output());
    let answer: Value = serde_json::from_str(body["result"]["answer"].as_str().unwrap()).unwrap();
    assert_eq!(
        answer,
        json!({"text": "100 EUR in CHF?", "skill": "convert", "key_ok": true}),
        "{body}"
    );
    // Its failed task: 502 upstream_error naming the agent.
    let (status, body) = invoke("fail", "peer");
    assert_eq!(status, 502, "{body}");
    assert_eq!(body["error"]["code"], "upstream_error", "{body}");
    assert_eq!(
        (
            body["error"]["details"]["node"].clone(),
            body["error"]["details"]["reason"].clone()
        ),
        (json!("peer"), json!("a2a_error")),
        "{body}"
    );
    // One compiled graph calling another over A2A.
    let (status, body) = invoke("Hi", "desk");
    assert_eq!(status, 200, "{body}\n{}", desk.output());
    assert_eq!(body["result"]["answer"], "Desk answer to: Hi", "{body}");

    // A peer that is gone: 502 with reason connect.
    drop(peer);
    let (status, body) = invoke("anyone?", "peer");
    assert_eq!(status, 502, "{body}");
    assert_eq!(body["error"]["details"]["reason"], "connect", "{body}");
}
