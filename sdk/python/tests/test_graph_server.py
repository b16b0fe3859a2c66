"""@svc_graph_server (svc.server.graph_server): a project whose class holds three
graphs (two compiled, one LangGraph) served by a real uvicorn server on a
loopback port over each protocol: the /invoke contract at
/graphs/<name>/invoke, the official MCP client (`mcp.Client`, MCP SDK 2.x)
and the official A2A client (a2a-sdk 1.x `ClientFactory`); `svc-py run`'s
port and `svc-py info`."""

import asyncio
import json
import uuid

import anyio
import httpx
import httpx2
import pytest
import uvicorn
from a2a.client import AuthInterceptor, ClientConfig, ClientFactory, CredentialService
from a2a.helpers import get_message_text
from a2a.types.a2a_pb2 import Message, Part, Role, SendMessageRequest
from a2a.utils.errors import InvalidParamsError
from graphs import ContractCore
from loopback import Loopback
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from svc import cli, graph, registry, svc_graph_server
from svc.config import server_settings
from svc.errors import ConfigError, RegistrationError
from svc.server import create_app, graph_server

KEY = "graph-server-key-3e9a"
H = {"X-API-Key": KEY}
LIMIT = 20  # seconds any one conversation may take
HELLO = {"text": "hi", "mode": "normal", "count": 1, "tags": ["seen"]}
HELLO["reply"] = "Hello, hi! count=1"
USER = [{"role": "user", "content": "yo"}]

APP = '''
import operator
from typing import Annotated, TypedDict

from graphs import Chat, ContractCore

from svc import END, GraphBuilder, graph, svc_graph_server


class ShoutState(TypedDict):
    messages: Annotated[list[dict], operator.add]
    reply: str


@svc_graph_server("catalog", protocol="{protocol}", port={port})
class Catalog:
    instances = 0

    def __init__(self):
        Catalog.instances += 1

    @graph("core", entrypoint=True)
    def core(self):
        """Greets and counts."""
        return ContractCore()

    @graph("chat")
    def chat(self):
        return Chat()

    @graph("shout")
    def shout(self):
        """Shouts the last message back."""
        builder = GraphBuilder(ShoutState)
        builder.add_node("shout", lambda s: {{"reply": s["messages"][-1]["content"].upper()}})
        builder.set_entry_point("shout")
        builder.add_edge("shout", END)
        return builder
'''


def project(tmp_path, protocol="http", port=None):
    """A project whose app package is the Catalog graph server."""
    (tmp_path / "application.yaml").write_text("app: {name: shop}\n")
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "__init__.py").write_text(APP.format(protocol=protocol, port=port))
    return tmp_path


@pytest.fixture
def serve(monkeypatch):
    """serve(root) -> the base URL of the project's app on a free loopback port."""
    monkeypatch.setenv("SVC_API_KEY", KEY)
    started = []

    def start(root):
        started.append(Loopback())
        return started[-1].start(create_app(root=root))

    yield start
    for server in started:
        server.stop()


def post(base, path, body, headers=H, **kwargs):
    return httpx.post(base + path, json=body, headers=headers, timeout=LIMIT, **kwargs)


def error_of(r, status, code):
    assert r.status_code == status, r.text
    assert r.headers["content-type"] == "application/json"
    assert r.json()["error"]["code"] == code, r.text
    return r.json()["error"]


# --- the decorator ------------------------------------------------------------------------


def define(protocol="http", port=None):
    @svc_graph_server("catalog", protocol=protocol, port=port)
    class Catalog:
        instances = 0

        def __init__(self):
            Catalog.instances += 1

        @graph("core", entrypoint=True)
        def core(self):
            """Greets and counts."""
            return ContractCore()

        @graph("plain")
        @staticmethod
        def plain():
            return ContractCore()

    return Catalog


def test_the_class_is_recorded_and_its_graphs_stay_registered_graphs():
    catalog = define("mcp", 9100)
    assert graph_server.info() == {
        "name": "catalog",
        "protocol": "mcp",
        "port": 9100,
        "graphs": ["core", "plain"],
    }
    assert registry.components()["graphs"] == ["core", "plain"]
    assert registry.entrypoint_graph().name == "core"
    # The registry builds them without an argument, on one instance of the class.
    assert isinstance(registry.get("graphs", "core").obj(), ContractCore)
    assert isinstance(registry.get("graphs", "plain").obj(), ContractCore)
    assert catalog.instances == 1
    assert define("a2a") is not catalog  # the same class again replaces it
    assert graph_server.info()["protocol"] == "a2a"


def test_misuse_is_refused_with_what_to_do():
    with pytest.raises(RegistrationError, match="protocol 'grpc' is not one of http, mcp, a2a"):
        svc_graph_server("x", protocol="grpc")
    for port in (0, 70000, "8080", True, 80.5):
        with pytest.raises(RegistrationError, match="not a port number: give a whole number"):
            svc_graph_server("x", port=port)
    with pytest.raises(RegistrationError, match="needs the server's name"):
        svc_graph_server(" ")
    with pytest.raises(RegistrationError, match="must decorate a class"):
        svc_graph_server("x")(lambda: None)
    with pytest.raises(RegistrationError, match=r"Empty has no @graph method: decorate"):

        @svc_graph_server("empty")
        class Empty:
            def build(self):
                return ContractCore()

    with pytest.raises(RegistrationError, match='the graph name "a b" cannot be served'):

        @svc_graph_server("spaced")
        class Spaced:
            @graph("a b")
            def build(self):
                return ContractCore()

    @svc_graph_server("broken")
    class Broken:
        def __init__(self):
            raise ValueError("no database")

        @graph("fragile")
        def fragile(self):
            return ContractCore()

    with pytest.raises(RegistrationError, match=r'graph server "broken" \(.*Broken\(\)\): Val'):
        registry.get("graphs", "fragile").obj()


def test_a_service_has_one_graph_server():
    define()
    with pytest.raises(RegistrationError) as e:

        @svc_graph_server("second")
        class Second:
            @graph("other")
            def other(self):
                return ContractCore()

    message = str(e.value)
    assert 'two graph servers: "catalog"' in message and '"second"' in message
    assert "Catalog" in message and "Second" in message
    assert "put every graph in one class" in message


# --- the port and svc-py info -----------------------------------------------------------


def test_the_port_is_the_flag_then_the_class_then_the_settings(monkeypatch):
    monkeypatch.setenv("SVC_PORT", "8200")
    settings = server_settings({"server": {"port": 8100}})
    assert cli.run_port(None, settings) == 8200  # no graph server: SVC_PORT
    define(port=None)
    assert cli.run_port(None, settings) == 8200  # a graph server without a port
    define(port=9100)
    assert cli.run_port(None, settings) == 9100
    assert cli.run_port(9300, settings) == 9300
    monkeypatch.delenv("SVC_PORT")
    registry.clear()
    assert cli.run_port(None, server_settings({"server": {"port": 8100}})) == 8100


def test_svc_run_listens_on_the_class_port_unless_told(tmp_path, monkeypatch):
    root = project(tmp_path, "http", 9100)
    monkeypatch.setenv("SVC_API_KEY", KEY)
    monkeypatch.setenv("SVC_PORT", "8200")
    ports = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: ports.append(kw["port"]))
    assert cli.main(["run", "--root", str(root)]) == 0
    assert cli.main(["run", "--root", str(root), "--port", "9300"]) == 0
    assert ports == [9100, 9300]


def test_svc_info_lists_the_graph_server(tmp_path, capsys):
    root = project(tmp_path, "a2a", 9100)
    assert cli.main(["info", "--root", str(root)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["graph_server"] == {
        "name": "catalog",
        "protocol": "a2a",
        "port": 9100,
        "graphs": ["core", "chat", "shout"],
    }
    assert out["components"]["graphs"] == ["chat", "core", "shout"]


# --- http ------------------------------------------------------------------------------------


def test_http_serves_each_graph_at_its_path_with_the_invoke_contract(tmp_path, serve):
    base = serve(project(tmp_path, "http"))
    assert post(base, "/invoke", {"state": {"text": "hi"}}).json() == {"result": HELLO}
    assert post(base, "/graphs/core/invoke", {"state": {"text": "hi"}}).json() == {"result": HELLO}
    r = post(base, "/graphs/chat/invoke", {"messages": USER})
    assert r.json() == {"result": {"messages": USER, "reply": "yo"}}
    r = post(base, "/graphs/shout/invoke", {"messages": USER})
    assert r.json() == {"result": {"messages": USER, "reply": "YO"}}
    # The same credential, envelopes and limits as /invoke.
    for path in ("/graphs/chat/invoke", "/graphs/nothing/invoke"):
        for headers in ({}, {"X-API-Key": "wrong"}):
            error_of(post(base, path, {"messages": USER}, headers), 401, "unauthorized")
    e = error_of(post(base, "/graphs/nothing/invoke", {"state": {}}), 404, "not_found")
    assert e["message"] == (
        'no graph "nothing": this service serves core, chat, shout at /graphs/<name>/invoke'
    )
    e = error_of(post(base, "/graphs/core/invoke", {"state": {}}), 422, "invalid_state")
    assert e["details"] == {"field": "text"}
    error_of(post(base, "/graphs/core/invoke", [1]), 400, "bad_request")
    r = httpx.post(base + "/graphs/core/invoke", content=b"x", headers=H, timeout=LIMIT)
    error_of(r, 415, "unsupported_media_type")
    r = post(base, "/graphs/core/invoke", {"state": {"text": "x" * (1 << 20)}})
    error_of(r, 413, "payload_too_large")
    r = httpx.get(base + "/graphs/core/invoke", headers=H, timeout=LIMIT)
    error_of(r, 405, "method_not_allowed")
    assert httpx.post(base + "/mcp", headers=H, timeout=LIMIT).status_code == 404
    assert httpx.get(base + "/.well-known/agent-card.json", timeout=LIMIT).status_code == 404


# --- mcp -------------------------------------------------------------------------------------


def test_mcp_offers_one_tool_per_graph(tmp_path, serve):
    base = serve(project(tmp_path, "mcp"))

    async def conversation():
        http = httpx2.AsyncClient(headers=H, timeout=LIMIT)
        async with http, Client(streamable_http_client(base + "/mcp", http_client=http)) as c:
            tools = {t.name: t for t in (await c.list_tools()).tools}
            calls = {
                "core": await c.call_tool("core", {"text": "hi"}),
                "chat": await c.call_tool("chat", {"messages": USER}),
                "shout": await c.call_tool("shout", {"messages": USER}),
                "refused": await c.call_tool("core", {}),
            }
            return c.server_info, tools, calls

    async def bounded():
        with anyio.fail_after(LIMIT):
            return await conversation()

    server_info, tools, calls = anyio.run(bounded)
    assert server_info.name == "catalog"
    assert list(tools) == ["core", "chat", "shout"]
    assert tools["core"].description == "Greets and counts."
    assert tools["core"].input_schema["required"] == ["text"]
    assert tools["chat"].description.startswith('Runs the graph "chat"')
    assert calls["core"].structured_content == HELLO
    assert calls["chat"].structured_content == {"messages": USER, "reply": "yo"}
    assert calls["shout"].structured_content == {"messages": USER, "reply": "YO"}
    assert calls["refused"].is_error
    assert calls["refused"].structured_content["error"]["code"] == "invalid_state"
    # Behind the service's credential; /invoke still runs the entrypoint.
    r = httpx.post(base + "/mcp", json={}, headers={"Accept": "application/json"})
    error_of(r, 401, "unauthorized")
    assert post(base, "/invoke", {"state": {"text": "hi"}}).json() == {"result": HELLO}
    assert post(base, "/graphs/core/invoke", {"state": {}}).status_code == 404


def test_mcp_refuses_a_tool_name_taken_twice(tmp_path, monkeypatch):
    root = project(tmp_path, "mcp")
    (root / "application.yaml").write_text("mcp: {expose: true, tool_name: chat}\n")
    monkeypatch.setenv("SVC_API_KEY", KEY)
    with pytest.raises(RegistrationError, match='tool "chat" is defined by both the exposed'):
        create_app(root=root)


# --- a2a ---------------------------------------------------------------------------------------


class AppKey(CredentialService):
    """The official client's credential source: the service's key for api_key."""

    async def get_credentials(self, security_scheme_name, context):
        return KEY if security_scheme_name == "api_key" else None


async def ask(base, text, skill=None):
    """The reply text of one message sent with the official client."""
    m = Message(message_id=uuid.uuid4().hex, role=Role.ROLE_USER, parts=[Part(text=text)])
    if skill is not None:
        m.metadata.update({"skillId": skill})
    async with httpx.AsyncClient(timeout=LIMIT) as http:
        factory = ClientFactory(ClientConfig(httpx_client=http))
        client = await factory.create_from_url(base, interceptors=[AuthInterceptor(AppKey())])
        try:
            replies = [r async for r in client.send_message(SendMessageRequest(message=m))]
        finally:
            await client.close()
    assert len(replies) == 1 and replies[0].HasField("message")
    return get_message_text(replies[0].message)


def test_a2a_publishes_one_skill_per_graph(tmp_path, serve):
    base = serve(project(tmp_path, "a2a"))
    card = httpx.get(base + "/.well-known/agent-card.json", timeout=LIMIT).json()
    assert card["name"] == "catalog"
    skills = {s["id"]: s for s in card["skills"]}
    assert list(skills) == ["core", "chat", "shout"]
    assert skills["core"]["description"] == "Greets and counts."
    assert skills["chat"]["description"] == 'Runs the graph "chat".'

    async def conversation():
        return [
            await ask(base, "hi", "core"),
            await ask(base, "yo", "chat"),
            await ask(base, "yo", "shout"),
        ]

    async def bounded():
        return await asyncio.wait_for(conversation(), LIMIT)

    assert asyncio.run(bounded()) == ["Hello, hi! count=1", "yo", "YO"]
    # Several skills: the message must name one.
    with pytest.raises(InvalidParamsError, match=r"name the skill.*has chat, core, shout"):
        asyncio.run(asyncio.wait_for(ask(base, "hi"), LIMIT))
    r = httpx.post(base + "/a2a", json={}, timeout=LIMIT)
    error_of(r, 401, "unauthorized")
    assert post(base, "/invoke", {"state": {"text": "hi"}}).json() == {"result": HELLO}


def test_a2a_names_the_graph_that_cannot_take_a_message(tmp_path, monkeypatch):
    root = project(tmp_path, "a2a")
    init = root / "app" / "__init__.py"
    # The LangGraph state has neither a required string field nor messages.
    init.write_text(init.read_text().replace("messages: Annotated", "notes: Annotated"))
    monkeypatch.setenv("SVC_API_KEY", KEY)
    with pytest.raises(ConfigError, match='the graph "shout" of the graph server "catalog"'):
        create_app(root=root)
