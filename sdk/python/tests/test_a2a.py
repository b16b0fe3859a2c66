"""A2A (svc.a2a.server, svc.a2a.peers) on a real uvicorn server on a loopback
port: the official a2a-sdk 1.x client (ClientFactory, AuthInterceptor) against
`@svc_a2a_server` and against a compiled graph published with `a2a.enabled`,
the npm @a2a-js/sdk client (tests/a2a_js/client.mjs, run by node) against
`@svc_a2a_server`, raw JSON-RPC for the 0.3 method names and the refusals,
and the SDK's own client (`invoke_a2a_agent`, `run_agent` of an
`@agent(transport="a2a")`) against `@svc_a2a_server` and against a reference
agent built from a2a-sdk's own server (route factories, DefaultRequestHandler)."""

import asyncio
import json
import os
import shutil
import socket
import subprocess
import time
import uuid
from pathlib import Path

import httpx
import pytest
from a2a.client import (
    A2ACardResolver,
    A2AClientError,
    AuthInterceptor,
    ClientConfig,
    ClientFactory,
    CredentialService,
)
from a2a.helpers import get_message_text
from a2a.types.a2a_pb2 import Message, Part, Role, SendMessageRequest
from a2a.utils.errors import InternalError, InvalidParamsError
from graphs import Chat, ContractCore
from loopback import Loopback

from svc import (
    SvcError,
    a2a_agent,
    a2a_authenticator,
    a2a_client,
    a2a_skill,
    agent,
    business_policy,
    config,
    invoke_a2a_agent,
    run_agent,
    svc_a2a_server,
)
from svc.a2a import caller as a2a_caller
from svc.a2a.peers import close_clients
from svc.a2a.skills import last_written, reply_text
from svc.agents import agents_info
from svc.errors import ConfigError, RegistrationError
from svc.runtime import CompiledGraph, Field, StateSchema
from svc.server import create_app

LIMIT = 20  # seconds any one conversation may take
KEY = "app-key-51f0"
TOKENS = {
    "A2A_ALICE": "alice-token-1",  # roles: support
    "A2A_BOB": "bob-token-2",  # roles: sales
    "A2A_CAROL": "carol-key-3",  # roles: support, scheme api_key
}
TOKEN_TABLE = {
    "a2a": {
        "server": {
            "tokens": [
                {"subject": "alice", "roles": ["support"], "token": "${A2A_ALICE}"},
                {"subject": "bob", "roles": ["sales"], "env": "A2A_BOB", "scheme": "bearer"},
                {
                    "subject": "carol",
                    "roles": ["support"],
                    "token": "env:A2A_CAROL",
                    "scheme": "api_key",
                },
            ]
        }
    }
}


def define_desk(url=None):
    """The decorated agent, registered anew for each test (the registry is cleared)."""

    @svc_a2a_server("Support desk", url=url, description="Answers customers.", version="2.1.0")
    class Desk:
        def __init__(self):
            self.calls = 0

        @a2a_skill("faq", name="FAQ", roles=["support"], tags=["faq", "help"])
        def faq(self, text, state):
            """Answers frequently asked questions."""
            self.calls += 1
            who = state["a2a_identity"]
            return f"FAQ {text} for {who['subject']} {who['roles']} call {self.calls}"

        @a2a_skill("hello")
        async def hello(self, text, state):
            return {"greeting": f"hello {text}", "skill": state["skill_id"]}

        @a2a_skill("broken")
        def broken(self, text, state):
            raise ValueError("the skill broke")

        @a2a_skill("slow")
        def slow(self, text, state):
            time.sleep(float(text))
            return "late"

    return Desk


def run(coroutine):
    """Runs a conversation with the official client, bounded."""

    async def bounded():
        return await asyncio.wait_for(coroutine, LIMIT)

    return asyncio.run(bounded())


@pytest.fixture
def serve(monkeypatch):
    """serve(graph, config) -> the base URL of a uvicorn server on a free loopback port."""
    monkeypatch.setenv("SVC_API_KEY", KEY)
    for name, value in TOKENS.items():
        monkeypatch.setenv(name, value)
    started = []

    def start(graph=None, config=None):
        app = create_app(graph or ContractCore(), config=config if config is not None else {})
        started.append(Loopback())
        return started[-1].start(app)

    yield start
    close_clients()
    for server in started:
        server.stop()


class Tokens(CredentialService):
    """The official client's credential source: one token per security scheme."""

    def __init__(self, **by_scheme):
        self.by_scheme = by_scheme

    async def get_credentials(self, security_scheme_name, context):
        return self.by_scheme.get(security_scheme_name)


def message(text, skill=None):
    m = Message(message_id=uuid.uuid4().hex, role=Role.ROLE_USER, parts=[Part(text=text)])
    if skill is not None:
        m.metadata.update({"skillId": skill})
    return m


async def ask(base, text, skill=None, *, streaming=False, headers=None, **tokens):
    """The reply text of one message sent with the official client; the
    credential comes from the card's security schemes (AuthInterceptor)."""
    async with httpx.AsyncClient(headers=headers or {}, timeout=LIMIT) as http:
        factory = ClientFactory(ClientConfig(httpx_client=http, streaming=streaming))
        client = await factory.create_from_url(
            base, interceptors=[AuthInterceptor(Tokens(**tokens))]
        )
        replies = [
            r async for r in client.send_message(SendMessageRequest(message=message(text, skill)))
        ]
        await client.close()
    assert len(replies) == 1 and replies[0].HasField("message")
    return get_message_text(replies[0].message)


def rpc(base, method, params, headers=None, rpc_id=1):
    body = {"jsonrpc": "2.0", "id": rpc_id, "method": method, "params": params}
    return httpx.post(base + "/a2a", json=body, headers=headers or {}, timeout=LIMIT)


def v03_message(text, skill=None):
    m = {"role": "user", "parts": [{"kind": "text", "text": text}], "messageId": uuid.uuid4().hex}
    if skill is not None:
        m["metadata"] = {"skillId": skill}
    return {"message": m}


ALICE = {"Authorization": "Bearer alice-token-1"}


# --- the agent card ------------------------------------------------------------------------


def test_the_card_is_public_at_both_paths_and_declares_the_security(serve):
    define_desk()
    base = serve(config=TOKEN_TABLE)
    cards = []
    for path in ("/.well-known/agent-card.json", "/.well-known/agent.json"):
        r = httpx.get(base + path, timeout=LIMIT)  # no credential
        assert r.status_code == 200, r.text
        cards.append(r.json())
    assert cards[0] == cards[1]
    card = cards[0]
    assert (card["name"], card["description"], card["version"]) == (
        "Support desk",
        "Answers customers.",
        "2.1.0",
    )
    assert card["supportedInterfaces"] == [
        {"url": base + "/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
        {"url": base + "/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
    ]
    # The 0.3 layout is served too, for older clients.
    assert (card["url"], card["protocolVersion"]) == (base + "/a2a", "0.3")
    schemes = card["securitySchemes"]
    assert schemes["bearer"]["httpAuthSecurityScheme"]["scheme"] == "Bearer"
    assert schemes["api_key"]["apiKeySecurityScheme"] == {
        "description": "X-API-Key: <key>",
        "location": "header",
        "name": "X-API-Key",
    }
    assert card["securityRequirements"] == [
        {"schemes": {"bearer": {}}},
        {"schemes": {"api_key": {}}},
    ]
    faq = next(s for s in card["skills"] if s["id"] == "faq")
    assert (faq["name"], faq["description"], faq["tags"]) == (
        "FAQ",
        "Answers frequently asked questions.",
        ["faq", "help"],
    )
    # A skill's roles are the scopes of its security requirements.
    assert faq["securityRequirements"][0] == {"schemes": {"bearer": {"list": ["support"]}}}
    assert [s["id"] for s in card["skills"]] == ["faq", "hello", "broken", "slow"]
    info = httpx.get(base + "/info", headers={"X-API-Key": KEY}, timeout=LIMIT).json()
    assert info["components"]["a2a_servers"] == ["Support desk"]
    assert httpx.get(base + "/a2a", timeout=LIMIT).status_code == 405

    async def resolve():
        async with httpx.AsyncClient(timeout=LIMIT) as http:
            resolver = A2ACardResolver(http, base)
            new = await resolver.get_agent_card()
            legacy = await resolver.get_agent_card(relative_card_path="/.well-known/agent.json")
            return new, legacy

    new, legacy = run(resolve())
    assert new == legacy
    assert new.name == "Support desk" and set(new.security_schemes) == {"bearer", "api_key"}


def test_a_configured_url_is_the_cards_endpoint(serve, monkeypatch):
    monkeypatch.setenv("DESK_URL", "https://desk.example.com/")
    define_desk(url="env:DESK_URL")
    base = serve(config=TOKEN_TABLE)
    card = httpx.get(base + "/.well-known/agent-card.json", timeout=LIMIT).json()
    assert {i["url"] for i in card["supportedInterfaces"]} == {"https://desk.example.com/a2a"}


# --- the official client ------------------------------------------------------------------------


def test_the_official_client_talks_to_a_skill_with_a_bearer_token(serve):
    define_desk()
    base = serve(config=TOKEN_TABLE)
    # a2a_identity is the caller the token names; one instance serves every call.
    assert run(ask(base, "hours?", "faq", bearer="alice-token-1")) == (
        "FAQ hours? for alice ['support'] call 1"
    )
    assert run(ask(base, "again", "faq", streaming=True, bearer="alice-token-1")) == (
        "FAQ again for alice ['support'] call 2"
    )
    # An api_key entry is sent as X-API-Key; a non-text reply is JSON text.
    reply = run(ask(base, "you", "hello", api_key="carol-key-3"))
    assert json.loads(reply) == {"greeting": "hello you", "skill": "hello"}


def test_a_missing_or_wrong_credential_is_refused(serve):
    define_desk()
    base = serve(config=TOKEN_TABLE)
    with pytest.raises(A2AClientError, match="401"):
        run(ask(base, "hours?", "faq"))
    with pytest.raises(A2AClientError, match="401"):
        run(ask(base, "hours?", "faq", bearer="not-a-token"))
    for headers in ({}, {"Authorization": "Bearer nope"}, {"X-API-Key": "alice-token-1"}):
        r = rpc(base, "message/send", v03_message("hi", "faq"), headers)
        assert r.status_code == 401
        assert r.json() == {
            "error": {"code": "unauthorized", "message": "missing or wrong credential"}
        }
        assert r.headers["www-authenticate"] == "Bearer"
        assert "nope" not in r.text


def test_a_caller_without_the_skills_roles_is_refused(serve):
    define_desk()
    base = serve(config=TOKEN_TABLE)
    with pytest.raises(A2AClientError, match="403"):
        run(ask(base, "hours?", "faq", bearer="bob-token-2"))
    for method, params in (
        ("message/send", v03_message("hi", "faq")),
        ("message/stream", v03_message("hi", "faq")),
        ("SendMessage", {"message": json.loads(_pb_json(message("hi", "faq")))}),
    ):
        r = rpc(base, method, params, {"Authorization": "Bearer bob-token-2", "A2A-Version": "1.0"})
        assert r.status_code == 403, r.text
        assert r.json()["error"] == {
            "code": "forbidden",
            "message": 'the skill "faq" is for the roles support; "bob" holds sales',
            "details": {"skill": "faq"},
        }
    # A skill without roles is for every authenticated caller.
    assert (
        json.loads(run(ask(base, "bob", "hello", bearer="bob-token-2")))["greeting"] == "hello bob"
    )


def _pb_json(m):
    from google.protobuf.json_format import MessageToJson

    return MessageToJson(m)


def test_the_0_3_method_names_are_answered(serve):
    define_desk()
    base = serve(config=TOKEN_TABLE)
    r = rpc(base, "message/send", v03_message("old client", "faq"), ALICE, rpc_id="a")
    assert r.status_code == 200
    body = r.json()
    assert body["id"] == "a" and body["result"]["kind"] == "message"
    assert body["result"]["role"] == "agent"
    assert body["result"]["parts"] == [
        {"kind": "text", "text": "FAQ old client for alice ['support'] call 1"}
    ]
    # The 1.0 names need the A2A-Version header (without it, the SDK takes 0.3).
    params = {"message": json.loads(_pb_json(message("new", "faq")))}
    r = rpc(base, "SendMessage", params, ALICE)
    assert r.json()["error"]["code"] == -32009
    r = rpc(base, "SendMessage", params, {**ALICE, "A2A-Version": "1.0"})
    assert r.json()["result"]["message"]["parts"] == [
        {"text": "FAQ new for alice ['support'] call 2"}
    ]
    # Stateless: no task is kept.
    r = rpc(base, "tasks/get", {"id": "t-1"}, ALICE)
    assert r.json()["error"]["code"] == -32001


def test_skill_errors_are_json_rpc_errors(serve):
    define_desk()
    base = serve(config=TOKEN_TABLE)
    with pytest.raises(InvalidParamsError, match="no skill 'nope'"):
        run(ask(base, "x", "nope", bearer="alice-token-1"))
    with pytest.raises(InvalidParamsError, match="name the skill"):
        run(ask(base, "x", bearer="alice-token-1"))
    with pytest.raises(InternalError, match="the skill broke") as e:
        run(ask(base, "x", "broken", bearer="alice-token-1"))
    assert e.value.data == {"code": "execution_error", "skill": "broken"}
    r = rpc(
        base,
        "message/send",
        {
            "message": {
                **v03_message("x", "faq")["message"],
                "parts": [{"kind": "data", "data": {"a": 1}}],
            }
        },
        ALICE,
    )
    assert r.json()["error"]["code"] == -32005
    # The service keeps serving.
    assert run(ask(base, "still?", "faq", bearer="alice-token-1")).startswith("FAQ still?")


def test_the_body_is_bounded(serve):
    define_desk()
    base = serve(config=TOKEN_TABLE)
    big = {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"x": "y" * (1 << 20)}}
    r = httpx.post(base + "/a2a", json=big, headers=ALICE, timeout=LIMIT)
    assert r.status_code == 413 and r.json()["error"]["code"] == "payload_too_large"


def test_a_custom_authenticator(serve):
    define_desk()
    seen = []

    @a2a_authenticator
    def sesame(headers):
        seen.append(headers.get("authorization"))
        value = headers.get("authorization") or ""
        if value == "Bearer open-sesame":
            return {"subject": "ali", "roles": ["support"]}
        if value == "Bearer explode":
            raise RuntimeError("the vault is closed")
        return None

    base = serve()
    card = httpx.get(base + "/.well-known/agent-card.json", timeout=LIMIT).json()
    assert list(card["securitySchemes"]) == ["bearer"]
    assert run(ask(base, "q", "faq", bearer="open-sesame")) == "FAQ q for ali ['support'] call 1"
    assert (
        rpc(
            base, "message/send", v03_message("q", "faq"), {"Authorization": "Bearer no"}
        ).status_code
        == 401
    )
    # The app's own key is not an A2A credential once there is an authenticator.
    assert rpc(base, "message/send", v03_message("q", "faq"), {"X-API-Key": KEY}).status_code == 401
    r = rpc(base, "message/send", v03_message("q", "faq"), {"Authorization": "Bearer explode"})
    assert r.status_code == 500 and "the vault is closed" in r.json()["error"]["message"]
    assert "Bearer open-sesame" in seen


def test_without_a_token_table_the_apps_key_is_the_credential(serve):
    define_desk()
    base = serve()
    card = httpx.get(base + "/.well-known/agent-card.json", timeout=LIMIT).json()
    assert list(card["securitySchemes"]) == ["api_key"]
    # The service's own key is not limited by skill roles, as on /invoke.
    assert run(ask(base, "q", "faq", api_key=KEY)) == "FAQ q for service [] call 1"
    r = rpc(base, "message/send", v03_message("q", "faq"), {"X-API-Key": "wrong"})
    assert r.status_code == 401 and "www-authenticate" not in r.headers


def test_an_open_service_asks_no_credential_but_keeps_skill_roles(serve):
    define_desk()
    base = serve(config={"server": {"auth": {"type": "none"}}})
    card = httpx.get(base + "/.well-known/agent-card.json", timeout=LIMIT).json()
    assert "securitySchemes" not in card and "securityRequirements" not in card
    assert json.loads(run(ask(base, "all", "hello")))["greeting"] == "hello all"
    r = rpc(base, "message/send", v03_message("q", "faq"))
    assert r.status_code == 403 and "anonymous" in r.json()["error"]["message"]


def test_a_decorated_agent_and_the_graph_together(serve):
    define_desk()
    base = serve(ContractCore(), {"a2a": {**GRAPH_A2A["a2a"], **TOKEN_TABLE["a2a"]}})
    card = httpx.get(base + "/.well-known/agent-card.json", timeout=LIMIT).json()
    assert card["name"] == "Support desk"  # the decorator's card
    assert [s["id"] for s in card["skills"]] == ["faq", "hello", "broken", "slow", "greet", "vip"]
    assert run(ask(base, "Ada", "greet", bearer="alice-token-1")) == "Hello, Ada! count=1"
    assert run(ask(base, "Ada", "faq", bearer="alice-token-1")).startswith("FAQ Ada")
    # The rest of the 1.0 methods of a stateless agent.
    v1 = {**ALICE, "A2A-Version": "1.0"}
    codes = {
        method: rpc(base, method, params, v1).json()["error"]["code"]
        for method, params in (
            ("GetTask", {"id": "t"}),
            ("CancelTask", {"id": "t"}),
            ("GetExtendedAgentCard", {}),
            ("CreateTaskPushNotificationConfig", {"taskId": "t", "url": "http://x"}),
        )
    }
    assert codes == {
        "GetTask": -32001,
        "CancelTask": -32001,
        "GetExtendedAgentCard": -32007,
        "CreateTaskPushNotificationConfig": -32003,
    }
    stale = {"message": {**json.loads(_pb_json(message("x", "faq"))), "taskId": "t-9"}}
    assert rpc(base, "SendMessage", stale, v1).json()["error"]["code"] == -32001


def test_nothing_is_served_without_an_agent(serve):
    base = serve()
    assert httpx.get(base + "/.well-known/agent-card.json", timeout=LIMIT).status_code == 404
    assert rpc(base, "message/send", v03_message("q"), {"X-API-Key": KEY}).status_code == 404


# --- the @a2a-js/sdk client (npm) ----------------------------------------------------------------


A2A_JS = Path(__file__).resolve().parent / "a2a_js"


@pytest.fixture
def a2a_js():
    """a2a_js(base, *calls) -> the report of tests/a2a_js/client.mjs: the npm
    @a2a-js/sdk client run by node against `base`. Skipped without node or
    the installed package, a failure instead when CI is "true"."""
    node = shutil.which("node")
    missing = None
    if node is None:
        missing = "node is not installed"
    elif not (A2A_JS / "node_modules" / "@a2a-js" / "sdk").is_dir():
        missing = "sdk/python/tests/a2a_js/node_modules is missing"
    if missing is not None:
        todo = "run `npm ci --prefix sdk/python/tests/a2a_js` (Node.js 20+)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{missing}: {todo}")
        pytest.skip(f"{missing}: {todo}")

    def client(base, *calls):
        done = subprocess.run(
            [node, "client.mjs", base, *(json.dumps(c) for c in calls)],
            cwd=A2A_JS,
            capture_output=True,
            text=True,
            timeout=LIMIT,
        )
        assert done.returncode == 0, done.stderr
        report = json.loads(done.stdout)
        assert len(report["calls"]) == len(calls)
        return report

    return client


def js_call(text, skill=None, credential="none", secret=None, **options):
    return {"text": text, "skill": skill, "credential": credential, "secret": secret, **options}


def test_the_a2a_js_client_reads_the_card_and_calls_with_a_token_or_a_key(serve, a2a_js):
    define_desk()
    base = serve(config=TOKEN_TABLE)
    report = a2a_js(
        base,
        js_call("hours?", "faq", "bearer", "alice-token-1"),
        js_call("open?", "faq", "api_key", "carol-key-3"),
        js_call("streamed", "faq", "bearer", "alice-token-1", stream=True),
        js_call("old", "faq", "api_key", "carol-key-3", protocol="0.3"),
        js_call("you", "hello", "bearer", "alice-token-1"),
    )
    # Both card paths, read by the SDK's card resolver.
    cards = report["cards"]
    assert cards["/.well-known/agent-card.json"] == cards["/.well-known/agent.json"]
    assert cards["/.well-known/agent-card.json"] == {
        "name": "Support desk",
        "version": "2.1.0",
        "skills": ["faq", "hello", "broken", "slow"],
        "schemes": ["api_key", "bearer"],
        "interfaces": [["JSONRPC", "1.0", base + "/a2a"], ["JSONRPC", "0.3", base + "/a2a"]],
    }
    bearer, key, streamed, old, hello = report["calls"]
    # The subject the skill saw comes back in its reply: the one the credential names.
    assert bearer == {
        "ok": True,
        "kind": "message",
        "role": 2,  # ROLE_AGENT
        "text": "FAQ hours? for alice ['support'] call 1",
        "protocol": "1.0",
        "status": 200,
    }
    assert key["ok"] and key["text"] == "FAQ open? for carol ['support'] call 2"
    assert streamed["ok"] and streamed["text"] == "FAQ streamed for alice ['support'] call 3"
    # The SDK's v0.3 transport (message/send) on the card's 0.3 interface.
    assert (old["ok"], old["protocol"]) == (True, "0.3")
    assert old["text"] == "FAQ old for carol ['support'] call 4"
    assert json.loads(hello["text"]) == {"greeting": "hello you", "skill": "hello"}


def test_the_a2a_js_client_is_refused_without_a_credential_or_the_skills_role(serve, a2a_js):
    define_desk()
    base = serve(config=TOKEN_TABLE)
    report = a2a_js(
        base,
        js_call("q", "faq"),
        js_call("q", "faq", "bearer", "not-a-token"),
        js_call("q", "faq", "api_key", "alice-token-1"),  # a bearer token as a key
        js_call("q", "faq", "bearer", "bob-token-2"),  # bob holds sales, faq is for support
        js_call("q", "faq", "bearer", "bob-token-2", stream=True),
        js_call("q", "nope", "bearer", "alice-token-1"),
        js_call("bob", "hello", "bearer", "bob-token-2"),  # no roles: any caller
    )
    none, wrong, swapped, forbidden, forbidden_stream, unknown, hello = report["calls"]
    for refused in (none, wrong, swapped):
        assert (refused["ok"], refused["status"]) == (False, 401), refused
        assert "missing or wrong credential" in refused["error"]
    for refused in (forbidden, forbidden_stream):
        assert (refused["ok"], refused["status"]) == (False, 403), refused
        assert "is for the roles support" in refused["error"] and "bob" in refused["error"]
    # The SDK reads the streaming refusal's body as an error: its code comes along.
    assert forbidden_stream["code"] == "forbidden"
    assert (unknown["ok"], unknown["status"], unknown["code"]) == (False, 200, -32602)
    assert "no skill 'nope'" in unknown["error"]
    assert (hello["ok"], hello["status"]) == (True, 200)
    assert json.loads(hello["text"])["greeting"] == "hello bob"
    # The cards need no credential.
    assert report["cards"]["/.well-known/agent.json"]["name"] == "Support desk"


# --- configuration and registration ---------------------------------------------------------


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"subject": "x", "token": "literal-secret"}, "token is written inline"),
        ({"subject": "x", "token": "prefix-${A2A_ALICE}"}, "token is written inline"),
        ({"subject": "x"}, "needs its token from the environment"),
        ({"subject": "x", "token": "${A2A_ALICE}", "env": "A2A_BOB"}, "both token and env"),
        ({"subject": "x", "env": "A2A_UNSET"}, "A2A_UNSET, which is not set"),
        ({"token": "${A2A_ALICE}"}, "subject must be a non-empty name"),
        ({"subject": "x", "env": "A2A_ALICE", "scheme": "basic"}, "scheme 'basic'"),
        ({"subject": "x", "env": "A2A_ALICE", "rolez": []}, "unknown key(s) rolez"),
    ],
)
def test_token_table_errors(entry, message, monkeypatch):
    monkeypatch.setenv("SVC_API_KEY", KEY)
    monkeypatch.setenv("A2A_ALICE", "alice-token-1")
    monkeypatch.setenv("A2A_BOB", "bob-token-2")
    monkeypatch.delenv("A2A_UNSET", raising=False)
    define_desk()
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        create_app(ContractCore(), config={"a2a": {"server": {"tokens": [entry]}}})


def test_an_inline_token_in_application_yaml_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("SVC_API_KEY", KEY)
    monkeypatch.setenv("A2A_ALICE", "alice-token-1")
    define_desk()
    written = "a2a:\n  server:\n    tokens:\n      - {subject: alice, token: %s}\n"
    (tmp_path / "application.yaml").write_text(written % '"${A2A_ALICE}"')
    loaded = config.load_config(tmp_path)
    assert loaded["a2a"]["server"]["tokens"][0]["token"] == "alice-token-1"  # resolved
    create_app(ContractCore(), config=loaded)  # written as ${NAME}: accepted
    (tmp_path / "application.yaml").write_text(written % "alice-token-1")
    with pytest.raises(ConfigError, match="token is written inline"):
        create_app(ContractCore(), config=config.load_config(tmp_path, reload=True))


def test_registration_errors():
    with pytest.raises(RegistrationError, match="title"):
        svc_a2a_server("")
    with pytest.raises(RegistrationError, match="not an http"):
        svc_a2a_server("x", url="ftp://x")
    with pytest.raises(RegistrationError, match="must decorate a class"):
        svc_a2a_server("x")(lambda: None)
    with pytest.raises(RegistrationError, match="no @a2a_skill"):

        @svc_a2a_server("x")
        class Empty:
            pass

    with pytest.raises(RegistrationError, match="skill id"):
        a2a_skill("has space")
    with pytest.raises(RegistrationError, match="twice"):

        @svc_a2a_server("x")
        class Twice:
            @a2a_skill("a")
            def one(self, text, state):
                return ""

            @a2a_skill("a")
            def two(self, text, state):
                return ""

    define_desk()
    with pytest.raises(RegistrationError, match="two A2A servers"):

        @svc_a2a_server("other")
        class Other:
            @a2a_skill
            def skill(self, text, state):
                return ""

    with pytest.raises(RegistrationError, match="scheme"):
        a2a_authenticator(scheme="basic")


# --- a compiled graph published with a2a.enabled ------------------------------------------------


GRAPH_A2A = {
    "a2a": {
        "enabled": True,
        "title": "Greeter",
        "description": "Greets people.",
        "skills": [
            {"id": "greet", "name": "Greet", "description": "Says hello.", "tags": ["hello"]},
            {"id": "vip", "name": "VIP greeting", "roles": ["vip"]},
        ],
    }
}


def test_a_compiled_graph_answers_through_a2a(serve):
    base = serve(ContractCore(), GRAPH_A2A)
    card = httpx.get(base + "/.well-known/agent.json", timeout=LIMIT).json()
    assert (card["name"], card["description"]) == ("Greeter", "Greets people.")
    assert [(s["id"], s["tags"]) for s in card["skills"]] == [
        ("greet", ["hello"]),
        ("vip", ["vip"]),
    ]
    # The credential is the app's own (api_key here), declared on the card.
    assert list(card["securitySchemes"]) == ["api_key"]
    # The text goes to the first required string field ("text"); the reply is
    # the field the run wrote last ("reply").
    assert run(ask(base, "Ada", "greet", api_key=KEY)) == "Hello, Ada! count=1"
    assert run(ask(base, "Bo", "vip", streaming=True, api_key=KEY)) == "Hello, Bo! count=1"
    with pytest.raises(A2AClientError, match="401"):
        run(ask(base, "Ada", "greet", api_key="wrong"))
    # A failed run is a JSON-RPC error carrying the contract's code.
    with pytest.raises(InternalError, match="deliberate failure") as e:
        run(ask(base, "panic", "greet", api_key=KEY))
    assert e.value.data == {"code": "execution_error", "node": "prepare"}
    # /invoke is unchanged.
    r = httpx.post(base + "/invoke", json={"state": {"text": "Ada"}}, headers={"X-API-Key": KEY})
    assert r.json()["result"]["reply"] == "Hello, Ada! count=1"


def test_a_compiled_graph_with_tokens_output_field_and_policies(serve, monkeypatch):
    asked = []

    @business_policy
    def only_alice(context):
        asked.append(context.get("a2a"))
        return "allow" if context["a2a"]["subject"] == "alice" else "deny"

    cfg = {"a2a": {**GRAPH_A2A["a2a"], "output_field": "tags", **TOKEN_TABLE["a2a"]}}
    base = serve(ContractCore(), cfg)
    assert json.loads(run(ask(base, "Ada", "greet", bearer="alice-token-1"))) == ["seen"]
    assert asked == [{"skill": "greet", "subject": "alice", "roles": ["support"]}]
    with pytest.raises(InternalError, match="policy_denied"):
        run(ask(base, "Ada", "greet", bearer="bob-token-2"))
    with pytest.raises(A2AClientError, match="403"):
        run(ask(base, "Ada", "vip", bearer="alice-token-1"))


def whoami(state):
    """A native body that answers with who called (svc.a2a.caller())."""
    who = a2a_caller()
    if who is None:
        return {"answer": "nobody: " + state["question"]}
    return {"answer": f"{who['subject']} {who['roles']}: {state['question']}"}


class WhoAmI(CompiledGraph):
    """Runs its node in a worker thread (the run of a graph that calls upstream)."""

    name = "whoami"
    schema = StateSchema([Field("question", "string", required=True), Field("answer", "string")])

    def run(self, state):
        self.check(0)
        self.step(state, "whoami", whoami)
        return state


class InlineWhoAmI(WhoAmI):
    """Runs on the calling thread (a graph that calls nothing upstream)."""

    calls_upstream = False


def langgraph_whoami():
    """The same node in a LangGraph graph (its sync nodes run in an executor)."""
    from typing import TypedDict

    from langgraph.graph import END, START, StateGraph

    class State(TypedDict, total=False):
        question: str
        answer: str

    builder = StateGraph(State)
    builder.add_node("whoami", whoami)
    builder.add_edge(START, "whoami")
    builder.add_edge("whoami", END)
    return builder.compile()


WHO_CONFIG = {
    "a2a": {
        "enabled": True,
        "skills": [
            {"id": "who", "name": "Who"},
            {"id": "refund", "name": "Refund", "roles": ["sales"]},
        ],
        **TOKEN_TABLE["a2a"],
    }
}


@pytest.mark.parametrize(
    "make", [WhoAmI, InlineWhoAmI, langgraph_whoami], ids=["thread", "inline", "langgraph"]
)
def test_the_run_reads_its_caller(serve, make):
    # A LangGraph state requires nothing: the message's text goes to input_field.
    base = serve(make(), {"a2a": {**WHO_CONFIG["a2a"], "input_field": "question"}})
    assert run(ask(base, "Ada", "who", bearer="alice-token-1")) == "alice ['support']: Ada"
    assert run(ask(base, "Bo", "refund", bearer="bob-token-2")) == "bob ['sales']: Bo"
    assert run(ask(base, "Cy", "who", api_key="carol-key-3")) == "carol ['support']: Cy"
    with pytest.raises(A2AClientError, match="403"):
        run(ask(base, "Ada", "refund", bearer="alice-token-1"))
    # The service's own key is not a caller once there is a table.
    with pytest.raises(A2AClientError, match="401"):
        run(ask(base, "Ada", "who", api_key=KEY))
    # Outside an A2A call there is no caller; nor after one.
    r = httpx.post(base + "/invoke", json={"state": {"question": "Q"}}, headers={"X-API-Key": KEY})
    assert r.json()["result"]["answer"] == "nobody: Q"
    assert a2a_caller() is None


def test_without_a_table_the_caller_is_the_service_or_anonymous(serve, monkeypatch):
    base = serve(WhoAmI(), {"a2a": {"enabled": True}})
    assert run(ask(base, "Ada", api_key=KEY)) == "service []: Ada"
    open_app = create_app(
        WhoAmI(), config={"server": {"auth": {"type": "none"}}, "a2a": {"enabled": True}}
    )
    server = Loopback()
    try:
        assert run(ask(server.start(open_app), "Ada")) == "anonymous []: Ada"
    finally:
        server.stop()


def test_a_skill_method_reads_its_caller(serve):
    @svc_a2a_server("Who")
    class Who:
        @a2a_skill("who")
        def who(self, text, state):
            return str(a2a_caller())

    base = serve(config=TOKEN_TABLE)
    assert run(ask(base, "x", bearer="bob-token-2")) == str({"subject": "bob", "roles": ["sales"]})


def test_a_messages_graph_gets_the_text_as_a_user_message(serve):
    base = serve(Chat(), {"a2a": {"enabled": True}})
    card = httpx.get(base + "/.well-known/agent-card.json", timeout=LIMIT).json()
    assert [s["id"] for s in card["skills"]] == ["chat"]  # named after the graph
    assert run(ask(base, "echo me", api_key=KEY)) == "echo me"  # the only skill: no skillId


def test_graph_configuration_errors(monkeypatch):
    monkeypatch.setenv("SVC_API_KEY", KEY)
    for a2a, message in (
        ({"enabled": "yes"}, "a2a.enabled must be true or false"),
        ({"enabled": True, "input_field": "nope"}, "no state field 'nope'"),
        ({"enabled": True, "input_field": "count"}, "is integer"),
        ({"enabled": True, "output_field": "nope"}, "no state field 'nope'"),
        ({"enabled": True, "skills": [{"id": "a"}, {"id": "a"}]}, 'two A2A skills have the id "a"'),
        ({"enabled": True, "skills": [{"name": "x"}]}, "skill id None"),
        ({"enabled": True, "skills": []}, "non-empty list"),
        ({"enabled": True, "sklls": []}, "unknown key"),
        ({"enabled": True, "url": "env:A2A_NO_URL"}, "A2A_NO_URL, which is not set"),
    ):
        monkeypatch.delenv("A2A_NO_URL", raising=False)
        with pytest.raises(ConfigError, match=message):
            create_app(ContractCore(), config={"a2a": a2a})


def test_the_reply_rules():
    assert last_written({"a": 1, "b": 2, "c": 3}, {"a": 1, "b": 0, "c": 0}, ["c", "b"]) == "b"
    assert last_written({"a": 1, "b": 2}, {"a": 1, "b": 2}, ["b"]) is None
    # Without node events: the last field of the final state that changed.
    assert last_written({"a": 5, "b": 2, "c": 3}, {"a": 1, "b": 2, "c": 3}, []) == "a"
    assert reply_text("x") == "x"
    assert (
        reply_text([{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]) == "a"
    )
    assert reply_text({"k": [1]}) == '{"k": [1]}'


# --- the SDK's client ------------------------------------------------------------------------


CLIENT_CONFIG = """
external_services:
  desk:
    serverUrl: {url}
    auth: {{type: bearer, token: "${{DESK_TOKEN}}"}}
"""


def client_project(tmp_path, monkeypatch, url, token="alice-token-1"):
    (tmp_path / "application.yaml").write_text(CLIENT_CONFIG.format(url=url))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DESK_TOKEN", token)
    config.clear()


def test_invoke_a2a_agent_and_run_agent(serve, tmp_path, monkeypatch):
    define_desk()
    base = serve(config=TOKEN_TABLE)
    client_project(tmp_path, monkeypatch, base)
    monkeypatch.setenv("DESK_CARD", base + "/.well-known/agent-card.json")

    @a2a_agent("desk", agent_card_url="env:DESK_CARD", service="desk", roles=["agent-user"])
    def desk():
        """The support desk."""

    @agent(transport="a2a", service="desk", skill_id="faq", roles=["agent-user"])
    def desk_faq():
        """The desk's FAQ, found from the service's serverUrl."""

    assert invoke_a2a_agent("desk", "hours?", skill_id="faq") == (
        "FAQ hours? for alice ['support'] call 1"
    )
    assert a2a_client("desk").send_message("hi", skill_id="faq").endswith("call 2")
    assert run_agent("hours?", "desk_faq", caller_roles=["agent-user"]).endswith("call 3")
    assert json.loads(invoke_a2a_agent("desk_faq", "x", skill_id="hello"))["greeting"] == "hello x"
    # run_agent keeps its roles check (before any call goes out).
    with pytest.raises(SvcError) as e:
        run_agent("hours?", "desk_faq", caller_roles=["guest"])
    assert e.value.details == {"node": "desk_faq", "reason": "forbidden"}
    assert agents_info()["desk_faq"] == {
        "kind": "a2a",
        "roles": ["agent-user"],
        "service": "desk",
        "skillId": "faq",
    }
    # The peer's refusals are upstream errors with a reason.
    with pytest.raises(SvcError) as e:
        invoke_a2a_agent("desk", "x", skill_id="nope")
    assert e.value.status == 502 and e.value.details == {"node": "desk", "reason": "a2a_error"}
    assert "no skill 'nope'" in e.value.message
    monkeypatch.setenv("DESK_TOKEN", "bob-token-2")
    config.clear()
    with pytest.raises(SvcError) as e:
        invoke_a2a_agent("desk", "x", skill_id="faq")
    assert e.value.details == {"node": "desk", "reason": "status", "status": 403}
    monkeypatch.setenv("DESK_TOKEN", "wrong")
    config.clear()
    with pytest.raises(SvcError) as e:
        run_agent("x", "desk_faq", caller_roles=["agent-user"])
    assert e.value.details == {"node": "desk_faq", "reason": "status", "status": 401}


def test_client_failures(serve, tmp_path, monkeypatch):
    define_desk()
    base = serve(config=TOKEN_TABLE)
    client_project(tmp_path, monkeypatch, base)

    @a2a_agent("slowpoke", agent_card_url=base, service="desk", skill_id="slow", timeout_ms=300)
    def slowpoke():
        """Too slow."""

    started = time.monotonic()
    with pytest.raises(SvcError) as e:
        invoke_a2a_agent("slowpoke", "2")
    assert e.value.details == {"node": "slowpoke", "reason": "timeout"}
    assert time.monotonic() - started < 3
    assert invoke_a2a_agent("slowpoke", "hi", skill_id="faq").startswith("FAQ hi")

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{s.getsockname()[1]}"

    @a2a_agent("gone", agent_card_url=closed, service="desk")
    def gone():
        """Not there."""

    with pytest.raises(SvcError) as e:
        invoke_a2a_agent("gone", "x")
    assert e.value.details == {"node": "gone", "reason": "connect"}

    @a2a_agent("lost", agent_card_url=base + "/no/card.json", service="desk")
    def lost():
        """A wrong card URL."""

    with pytest.raises(SvcError) as e:
        invoke_a2a_agent("lost", "x")
    assert e.value.details == {"node": "lost", "reason": "status", "status": 404}

    @a2a_agent("unset", agent_card_url="env:A2A_NOT_SET")
    def unset():
        """No URL."""

    monkeypatch.delenv("A2A_NOT_SET", raising=False)
    with pytest.raises(SvcError) as e:
        invoke_a2a_agent("unset", "x")
    assert e.value.details == {"node": "unset", "reason": "connect"}


def test_the_credential_goes_only_to_configured_origins(serve, tmp_path, monkeypatch):
    define_desk(url="http://elsewhere.invalid:9")
    base = serve(config=TOKEN_TABLE)
    client_project(tmp_path, monkeypatch, "http://127.0.0.1:1")

    @a2a_agent("desk", agent_card_url=base + "/.well-known/agent-card.json", service="desk")
    def desk():
        """A card that points at another host."""

    with pytest.raises(SvcError) as e:
        invoke_a2a_agent("desk", "x", skill_id="faq")
    assert e.value.details == {"node": "desk", "reason": "connect"}
    assert "none of the configured origins" in e.value.message


def test_declaring_a2a_agents():
    with pytest.raises(RegistrationError, match="agent_card_url= or service="):
        agent(transport="a2a")
    with pytest.raises(RegistrationError, match="not an http"):
        a2a_agent("x", agent_card_url="desk.example.com")
    with pytest.raises(RegistrationError, match="timeout_ms"):
        a2a_agent("x", agent_card_url="http://x", timeout_ms=0)

    @agent(transport="local")
    def local(task):
        return task

    with pytest.raises(LookupError, match="not an A2A one"):
        a2a_client("local")


# --- our client against a reference agent built from a2a-sdk's own server -------------------------


@pytest.fixture
def reference_agent():
    """reference_agent(protocol) -> (base URL, the requests it received as
    (path, A2A-Version, Authorization, X-API-Key), its Loopback): an A2A agent served by
    a2a-sdk's own route factories, request handler and task store, on a
    loopback port; its card offers JSON-RPC of `protocol` ("1.0" or "0.3")."""
    from a2a.helpers import new_task_from_user_message, new_text_message
    from a2a.server.agent_execution import AgentExecutor
    from a2a.server.request_handlers import DefaultRequestHandler
    from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
    from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
    from a2a.types.a2a_pb2 import (
        AgentCapabilities,
        AgentCard,
        AgentInterface,
        AgentSkill,
        APIKeySecurityScheme,
        HTTPAuthSecurityScheme,
        SecurityRequirement,
        SecurityScheme,
    )
    from google.protobuf.json_format import MessageToDict
    from starlette.applications import Starlette
    from starlette.datastructures import Headers

    class Executor(AgentExecutor):
        """Replies with what it received: the text, the skill id of the
        message's metadata and the credential headers (the call context's,
        from a2a-sdk's DefaultServerCallContextBuilder). The skill picks the
        form: "task" a completed task with an artifact, "fail" a failed task,
        anything else one message."""

        async def execute(self, context, event_queue):
            metadata = MessageToDict(context.message.metadata)
            skill = metadata.get("skillId")
            headers = context.call_context.state["headers"]
            said = (
                f"got {context.get_user_input()!r} skill={skill} "
                f"authorization={headers.get('authorization')} "
                f"x-api-key={headers.get('x-api-key')}"
            )
            if skill not in ("task", "fail"):
                await event_queue.enqueue_event(
                    new_text_message(said, context_id=context.context_id)
                )
                return
            task = new_task_from_user_message(context.message)
            await event_queue.enqueue_event(task)
            updater = TaskUpdater(event_queue, task.id, task.context_id)
            await updater.start_work()
            if skill == "fail":
                await updater.failed(updater.new_agent_message([Part(text="it gave up")]))
                return
            await updater.add_artifact([Part(text=said)], name="answer")
            await updater.complete()

        async def cancel(self, context, event_queue):
            raise NotImplementedError

    started = []

    def start(protocol="1.0"):
        server = Loopback()
        started.append(server)
        card = AgentCard(
            name="Reference agent",
            description="a2a-sdk's own server, replying with what it received.",
            version="1.0.0",
            supported_interfaces=[
                AgentInterface(
                    url=server.base + "/a2a", protocol_binding="JSONRPC", protocol_version=protocol
                )
            ],
            capabilities=AgentCapabilities(streaming=True),
            security_schemes={
                "bearer": SecurityScheme(
                    http_auth_security_scheme=HTTPAuthSecurityScheme(scheme="Bearer")
                ),
                "api_key": SecurityScheme(
                    api_key_security_scheme=APIKeySecurityScheme(
                        location="header", name="X-API-Key"
                    )
                ),
            },
            security_requirements=[
                SecurityRequirement(schemes={"bearer": {}}),
                SecurityRequirement(schemes={"api_key": {}}),
            ],
            default_input_modes=["text/plain"],
            default_output_modes=["text/plain"],
            skills=[
                AgentSkill(id=sid, name=sid, description=f"the {sid} skill", tags=[sid])
                for sid in ("echo", "task", "fail")
            ],
        )
        handler = DefaultRequestHandler(Executor(), InMemoryTaskStore(), card)
        app = Starlette(
            routes=[
                *create_agent_card_routes(card),
                *create_jsonrpc_routes(handler, "/a2a", enable_v0_3_compat=protocol == "0.3"),
            ]
        )
        received = []

        async def noted(scope, receive, send):
            if scope["type"] == "http":
                headers = Headers(scope=scope)
                received.append(
                    (
                        scope["path"],
                        headers.get("a2a-version"),
                        headers.get("authorization"),
                        headers.get("x-api-key"),
                    )
                )
            await app(scope, receive, send)

        return server.start(noted), received, server

    yield start
    close_clients()
    for server in started:
        server.stop()


REFERENCE_CONFIG = """
external_services:
  ref:
    serverUrl: {url}
    auth: {{type: {kind}, token: "${{REF_TOKEN}}"}}
"""


def reference_project(tmp_path, monkeypatch, url, kind, token):
    (tmp_path / "application.yaml").write_text(REFERENCE_CONFIG.format(url=url, kind=kind))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("REF_TOKEN", token)
    config.clear()


@pytest.mark.parametrize("protocol", ["1.0", "0.3"])
def test_our_client_reaches_a_reference_agent_with_a_bearer_token(
    protocol, reference_agent, tmp_path, monkeypatch
):
    base, received, _ = reference_agent(protocol)
    reference_project(tmp_path, monkeypatch, base, "bearer", "ref-token-7")

    @a2a_agent("ref", service="ref", skill_id="echo")
    def ref():
        """The reference agent, found from the service's serverUrl."""

    @agent(transport="a2a", service="ref", skill_id="task", roles=["agent-user"])
    def ref_task():
        """The reference agent's task skill."""

    assert invoke_a2a_agent("ref", "hello") == (
        "got 'hello' skill=echo authorization=Bearer ref-token-7 x-api-key=None"
    )
    # A completed task: the reply is its artifact's text.
    assert run_agent("do it", "ref_task", caller_roles=["agent-user"]) == (
        "got 'do it' skill=task authorization=Bearer ref-token-7 x-api-key=None"
    )
    # The card is fetched without the credential (once, then kept); each message carries it.
    # The messages go with the protocol the card offers (0.3: a2a-sdk's compat layer).
    assert received == [
        ("/.well-known/agent-card.json", None, None, None),
        ("/a2a", protocol, "Bearer ref-token-7", None),
        ("/a2a", protocol, "Bearer ref-token-7", None),
    ]


def test_our_client_reaches_a_reference_agent_with_an_api_key(
    reference_agent, tmp_path, monkeypatch
):
    base, received, _ = reference_agent()
    reference_project(tmp_path, monkeypatch, base, "api_key", "ref-key-8")

    @agent(transport="a2a", agent_card_url=base, service="ref", roles=["agent-user"])
    def ref():
        """The reference agent at its base URL."""

    assert run_agent("hi", "ref", caller_roles=["agent-user"]) == (
        "got 'hi' skill=None authorization=None x-api-key=ref-key-8"
    )
    assert invoke_a2a_agent("ref", "as task", skill_id="task") == (
        "got 'as task' skill=task authorization=None x-api-key=ref-key-8"
    )
    assert [r for r in received if r[0] == "/a2a"] == [("/a2a", "1.0", None, "ref-key-8")] * 2


def test_a_reference_agent_failing_or_unreachable_is_an_upstream_error(
    reference_agent, tmp_path, monkeypatch
):
    base, _, server = reference_agent()
    reference_project(tmp_path, monkeypatch, base, "bearer", "ref-token-7")

    @a2a_agent("ref", service="ref", skill_id="fail")
    def ref():
        """The reference agent's failing skill."""

    with pytest.raises(SvcError) as e:
        invoke_a2a_agent("ref", "try")
    assert (e.value.status, e.value.code) == (502, "upstream_error")
    assert e.value.details == {"node": "ref", "reason": "a2a_error"}
    assert "its task ended failed: it gave up" in e.value.message
    # The agent is gone: its card cannot be fetched.
    server.stop()
    close_clients()  # forgets the card fetched above
    with pytest.raises(SvcError) as e:
        invoke_a2a_agent("ref", "try", skill_id="echo")
    assert (e.value.status, e.value.code) == (502, "upstream_error")
    assert e.value.details == {"node": "ref", "reason": "connect"}
