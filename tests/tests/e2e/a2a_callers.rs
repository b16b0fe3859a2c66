//! The callers and roles of a published graph (`settings.a2a.tokens`) end
//! to end: one graph with a token table compiled for python-svc, go and
//! java-svc, called by the official a2a-sdk client for Python and the npm
//! @a2a-js/sdk client, answering the same on each target; and the
//! start-up refusals.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{json, Value};
use svc_tests::service::{
    build, check_project, compile, expect_refusal_with, require_python_sdk, require_tool,
    run_shell, Service,
};

use super::a2a::{js_client, PLATFORMS};

const CALLERS_KEY: &str = "callers-service-key-3b7";
const CRM_TOKEN: &str = "crm-bot-token-91c";
const WIDGET_KEY: &str = "web-widget-key-5d0";

/// The official a2a-sdk client making each call of argv[2] (a JSON list of
/// `{"scheme", "secret", "skill", "text", "stream"?}`): its AuthInterceptor
/// sends the secret in the card's scheme of that name. One result a call:
/// `{"ok": true, "text": [...]}` or `{"ok": false, "status": <HTTP status>}`.
const CALLERS_CLIENT: &str = r#"
import asyncio
import json
import re
import sys
import uuid

import httpx
from a2a.client import A2AClientError, AuthInterceptor, ClientConfig, ClientFactory, CredentialService
from a2a.helpers import get_message_text
from a2a.types.a2a_pb2 import Message, Part, Role, SendMessageRequest

BASE, CALLS = sys.argv[1], json.loads(sys.argv[2])


class One(CredentialService):
    def __init__(self, scheme, secret):
        self.scheme, self.secret = scheme, secret

    async def get_credentials(self, scheme, context):
        return self.secret if scheme == self.scheme else None


async def send(call):
    async with httpx.AsyncClient(timeout=10) as http:
        factory = ClientFactory(ClientConfig(httpx_client=http, streaming=call.get("stream", False)))
        interceptor = AuthInterceptor(One(call["scheme"], call["secret"]))
        client = await factory.create_from_url(BASE, interceptors=[interceptor])
        message = Message(message_id=uuid.uuid4().hex, role=Role.ROLE_USER, parts=[Part(text=call["text"])])
        message.metadata.update({"skillId": call["skill"]})
        try:
            replies = [r async for r in client.send_message(SendMessageRequest(message=message))]
        except A2AClientError as e:
            status = re.search(r"HTTP Error:? (\d{3})", str(e))
            return {"ok": False, "status": int(status.group(1)) if status else str(e)}
        finally:
            await client.close()
        return {"ok": True, "text": [get_message_text(r.message) for r in replies if r.HasField("message")]}


async def main():
    print(json.dumps([await send(c) for c in CALLS]))


asyncio.run(main())
"#;

fn callers_python_client(dir: &Path, base: &str, calls: &Value) -> Value {
    let client = dir.join("callers_client.py");
    std::fs::write(&client, CALLERS_CLIENT).unwrap();
    let out = run_shell(
        dir,
        &format!("python {} {base} '{calls}'", client.display()),
        &[],
        Duration::from_secs(60),
    )
    .unwrap();
    let line = out.lines().last().unwrap_or_default();
    serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {out}"))
}

/// One graph with a token table (two callers: `crm-bot` holds the role of
/// the skill `refund`, `web-widget` does not; a bearer token and an API
/// key) and a native body answering with the caller it reads, compiled for
/// every target and called by the official Python and npm clients: a caller
/// with the role, one without (403 forbidden), a wrong token and the
/// service's own key (401), the same answers on each target; then the
/// start-up refusals (an unset variable, two callers with one token).
#[test]
fn a2a_callers_and_roles_are_the_same_on_every_target() {
    if !require_python_sdk() || !require_tool("node") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let fixture =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fixtures/valid/a2a_callers.graph.json");
    let env = [
        ("SVC_API_KEY", CALLERS_KEY),
        ("CRM_BOT_TOKEN", CRM_TOKEN),
        ("WIDGET_KEY", WIDGET_KEY),
    ];
    // Compiled, checked by its own toolchain, built and started on the three
    // targets at once.
    let services: Vec<(&str, svc_tests::service::Project, Service)> = std::thread::scope(|s| {
        let started: Vec<_> = PLATFORMS
            .iter()
            .map(|&platform| {
                let (fixture, env) = (&fixture, &env);
                s.spawn(move || {
                    let project =
                        compile(platform, fixture).unwrap_or_else(|d| panic!("{platform}: {d:?}"));
                    check_project(&project, platform).unwrap_or_else(|e| panic!("{platform}: {e}"));
                    build(&project).unwrap_or_else(|e| panic!("{platform}: {e}"));
                    let service = Service::launch(&project, env, Duration::from_secs(120))
                        .unwrap_or_else(|e| panic!("{platform}: {e}"));
                    (platform, project, service)
                })
            })
            .collect();
        started.into_iter().map(|t| t.join().unwrap()).collect()
    });

    let python_calls = json!([
        {"scheme": "bearer", "secret": CRM_TOKEN, "skill": "refund", "text": "Hi"},
        {"scheme": "api_key", "secret": WIDGET_KEY, "skill": "answer", "text": "Hi"},
        {"scheme": "api_key", "secret": WIDGET_KEY, "skill": "refund", "text": "Hi"},
        {"scheme": "bearer", "secret": "not-a-token", "skill": "answer", "text": "Hi"},
        {"scheme": "api_key", "secret": CALLERS_KEY, "skill": "answer", "text": "Hi"},
        {"scheme": "bearer", "secret": CRM_TOKEN, "skill": "answer", "text": "Streamed", "stream": true},
    ]);
    let js_calls = [
        json!({"text": "Hi", "skill": "refund", "credential": "bearer", "secret": CRM_TOKEN}),
        json!({"text": "Old", "skill": "answer", "credential": "api_key", "secret": WIDGET_KEY, "protocol": "0.3"}),
        json!({"text": "Hi", "skill": "refund", "credential": "api_key", "secret": WIDGET_KEY}),
        json!({"text": "Hi", "skill": "refund", "credential": "api_key", "secret": WIDGET_KEY, "stream": true}),
        json!({"text": "Hi", "skill": "answer", "credential": "bearer", "secret": "not-a-token"}),
        json!({"text": "Hi", "skill": "answer", "credential": "api_key", "secret": CALLERS_KEY}),
        json!({"text": "Hi", "skill": "answer", "credential": "none"}),
    ];
    let mut answers = Vec::new();
    for (platform, _, service) in &services {
        let base = format!("http://127.0.0.1:{}", service.port);
        let what = |detail: &Value| format!("{platform}: {detail}\n{}", service.output());

        // The official Python client.
        let python = callers_python_client(dir.path(), &base, &python_calls);
        assert_eq!(
            python,
            json!([
                {"ok": true, "text": ["crm-bot [billing,support]: Hi"]},
                {"ok": true, "text": ["web-widget [support]: Hi"]},
                {"ok": false, "status": 403},
                {"ok": false, "status": 401},
                {"ok": false, "status": 401},
                {"ok": true, "text": ["crm-bot [billing,support]: Streamed"]},
            ]),
            "{}",
            what(&python)
        );

        // The npm client: 1.0 and 0.3, streamed and not, and its refusals.
        let report = js_client(dir.path(), &base, &js_calls);
        let card = &report["cards"]["/.well-known/agent-card.json"];
        assert_eq!(
            card["schemes"],
            json!(["api_key", "bearer"]),
            "{}",
            what(&report)
        );
        let calls: Vec<Value> = report["calls"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| json!([c["ok"], c["text"], c["status"]]))
            .collect();
        assert_eq!(
            calls,
            [
                json!([true, "crm-bot [billing,support]: Hi", 200]),
                json!([true, "web-widget [support]: Old", 200]),
                json!([false, null, 403]),
                json!([false, null, 403]),
                json!([false, null, 401]),
                json!([false, null, 401]),
                json!([false, null, 401]),
            ],
            "{}",
            what(&report)
        );
        // A refused stream's body is read as the error: its code comes along.
        assert_eq!(report["calls"][3]["code"], "forbidden", "{}", what(&report));

        // The envelopes themselves, and the card's roles.
        let send = |headers: &[(&str, &str)], skill: &str| {
            let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {
                "messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "Hi"}], "metadata": {"skillId": skill}}}});
            let mut all = vec![("Content-Type", "application/json"), ("A2A-Version", "1.0")];
            all.extend_from_slice(headers);
            service
                .send("POST", "/a2a", &all, body.to_string().as_bytes())
                .unwrap()
        };
        let forbidden = send(&[("X-API-Key", WIDGET_KEY)], "refund");
        assert_eq!(forbidden.status, 403, "{}", what(&forbidden.json()));
        assert_eq!(
            forbidden.json(),
            json!({"error": {"code": "forbidden", "details": {"skill": "refund"},
                "message": "the skill \"refund\" is for the roles billing; \"web-widget\" holds support"}}),
            "{platform}"
        );
        let refused = send(&[("X-API-Key", CALLERS_KEY)], "answer");
        assert_eq!(
            (refused.status, refused.header("www-authenticate")),
            (401, Some("Bearer")),
            "{}",
            what(&refused.json())
        );
        assert_eq!(refused.json()["error"]["code"], "unauthorized");
        let card = service
            .send("GET", "/.well-known/agent-card.json", &[], b"")
            .unwrap()
            .json();
        let refund = card["skills"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["id"] == "refund")
            .cloned()
            .unwrap_or_default();
        let mut scopes: Vec<String> = refund["securityRequirements"]
            .as_array()
            .map(|r| r.iter().map(|r| r["schemes"].to_string()).collect())
            .unwrap_or_default();
        scopes.sort();
        assert_eq!(
            scopes,
            [
                r#"{"api_key":{"list":["billing"]}}"#,
                r#"{"bearer":{"list":["billing"]}}"#
            ],
            "{platform}: {card}"
        );
        // Outside an A2A call the run has no caller.
        let invoke = service
            .send(
                "POST",
                "/invoke",
                &[
                    ("Content-Type", "application/json"),
                    ("X-API-Key", CALLERS_KEY),
                ],
                br#"{"state": {"question": "Hi"}}"#,
            )
            .unwrap();
        assert_eq!(
            invoke.json()["result"]["answer"],
            "nobody: Hi",
            "{}",
            what(&invoke.json())
        );
        answers.push((platform, python, calls));
    }
    // The same answers on each target (each was compared with the same
    // expectation above; this says so once more, target against target).
    for pair in answers.windows(2) {
        assert_eq!(
            (&pair[0].1, &pair[0].2),
            (&pair[1].1, &pair[1].2),
            "{} and {}",
            pair[0].0,
            pair[1].0
        );
    }

    // An unset variable, or two callers with one token: the service does
    // not start, and says which.
    for (platform, project, _) in &services {
        let out = expect_refusal_with(
            project,
            &[("SVC_API_KEY", CALLERS_KEY), ("WIDGET_KEY", WIDGET_KEY)],
            Duration::from_secs(60),
        )
        .unwrap_or_else(|e| panic!("{platform}: {e}"));
        assert!(
            out.contains(
                "tokens[0] (crm-bot) reads its token from CRM_BOT_TOKEN, which is not set"
            ),
            "{platform}: {out}"
        );
        let out = expect_refusal_with(
            project,
            &[
                ("SVC_API_KEY", CALLERS_KEY),
                ("CRM_BOT_TOKEN", WIDGET_KEY),
                ("WIDGET_KEY", WIDGET_KEY),
            ],
            Duration::from_secs(60),
        )
        .unwrap_or_else(|e| panic!("{platform}: {e}"));
        assert!(out.contains("has the same token as"), "{platform}: {out}");
        if *platform != "python-svc" {
            assert!(
                out.contains("settings.a2a.tokens[1] (web-widget, from WIDGET_KEY) has the same token as settings.a2a.tokens[0] (crm-bot, from CRM_BOT_TOKEN)"),
                "{platform}: {out}"
            );
        }
    }
}
