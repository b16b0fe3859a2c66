"""MCP servers (svc.mcp.server) through the official client, `mcp.Client` (2.x):
over streamable HTTP at /mcp of a real uvicorn server on a loopback port, and
over stdio from `svc-py mcp --root`."""

import json
import subprocess
import sys
import textwrap
import types
from pathlib import Path

import anyio
import httpx
import httpx2
import pytest
from fastapi.testclient import TestClient
from graphs import ContractCore
from loopback import Loopback
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from svc import (
    business_policy,
    mcp_prompt,
    mcp_resource,
    mcp_tool,
    registry,
    svc_mcp_server,
)
from svc.adapters import runner_for
from svc.config import GraphSettings
from svc.errors import ConfigError, MissingExtraError, RegistrationError
from svc.mcp.server import build_app_server, build_server, expose_graph, state_json_schema
from svc.server import create_app

KEY = "mcp-key-7c1d"
H = {"X-API-Key": KEY}
LIMIT = 20  # seconds any one client conversation may take
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"},
    },
}
MCP_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def define_docs():
    """A server class, registered anew for each test (the registry is cleared)."""

    @svc_mcp_server("docs")
    class Docs:
        def __init__(self):
            self.calls = 0

        @mcp_tool(description="Adds two numbers.")
        def add(self, a: int, b: int) -> int:
            self.calls += 1
            return a + b

        @mcp_tool
        async def count(self) -> int:
            """How many times add ran (one instance serves every call)."""
            return self.calls

        @mcp_tool(name="fail")
        def failing(self, why: str) -> str:
            raise ValueError(f"cannot do it: {why}")

        @mcp_resource("readme", "docs://readme")
        def readme(self) -> str:
            return "Read me first."

        @mcp_resource("page", "docs://pages/{slug}", mime_type="application/json")
        def page(self, slug: str) -> dict:
            return {"slug": slug}

        @mcp_prompt(description="Asks for a summary.")
        def summarize(self, topic: str) -> str:
            return f"Summarize {topic} in one line."

    return Docs


def run(conversation):
    """Runs `conversation()` (async) with a deadline."""

    async def bounded():
        with anyio.fail_after(LIMIT):
            return await conversation()

    return anyio.run(bounded)


@pytest.fixture
def serve(monkeypatch):
    """serve(graph, config) -> the base URL of a uvicorn server on a free loopback port."""
    monkeypatch.setenv("SVC_API_KEY", KEY)
    started = []

    def start(graph=None, config=None):
        app = create_app(graph or ContractCore(), config=config if config is not None else {})
        started.append(Loopback())
        return started[-1].start(app)

    yield start
    for server in started:
        server.stop()


def client(base, headers=H):
    """An `mcp.Client` for base/mcp sending `headers` (needs an async with for httpx2)."""
    http = httpx2.AsyncClient(headers=headers, timeout=LIMIT)
    return http, Client(streamable_http_client(base + "/mcp", http_client=http))


async def talk(base, conversation, headers=H):
    http, c = client(base, headers)
    async with http, c:
        return await conversation(c)


# --- the decorators -----------------------------------------------------------------------


def test_decorators_register_without_importing_mcp():
    define_docs()
    assert registry.components()["mcp_servers"] == ["docs"]
    meta = registry.get("mcp_servers", "docs").meta
    assert meta["protocol"] == "streamable_http"
    assert {(kind, o["name"]) for _, kind, o in meta["members"]} == {
        ("tool", "add"),
        ("tool", "count"),
        ("tool", "fail"),
        ("resource", "readme"),
        ("resource", "page"),
        ("prompt", "summarize"),
    }


def test_decorator_misuse_is_refused():
    with pytest.raises(RegistrationError, match="needs the server's name"):
        svc_mcp_server("")
    with pytest.raises(RegistrationError, match="protocol 'sse'"):
        svc_mcp_server("x", protocol="sse")
    with pytest.raises(RegistrationError, match="no @mcp_tool"):

        @svc_mcp_server("empty")
        class Empty:
            pass

    with pytest.raises(RegistrationError, match="defines the tool 'same' twice"):

        @svc_mcp_server("twice")
        class Twice:
            @mcp_tool("same")
            def a(self):
                return 1

            @mcp_tool("same")
            def b(self):
                return 2

    with pytest.raises(RegistrationError, match="must decorate a class"):
        svc_mcp_server("fn")(lambda: None)


def test_two_servers_may_not_offer_the_same_tool():
    define_docs()

    @svc_mcp_server("other")
    class Other:
        @mcp_tool
        def add(self, a: int) -> int:
            return a

    with pytest.raises(RegistrationError, match='tool "add" is defined by both'):
        build_app_server({})


def test_building_without_the_extra_names_it(monkeypatch):
    define_docs()
    monkeypatch.setitem(sys.modules, "mcp.server.mcpserver", None)
    with pytest.raises(MissingExtraError, match=r'pip install "svc-sdk\[mcp\]"'):
        build_server("docs")


def test_build_server_serves_one_class_in_process():
    define_docs()

    async def conversation():
        async with Client(build_server("docs", version="1.2")) as c:
            assert (await c.call_tool("add", {"a": 2, "b": 3})).structured_content == {"result": 5}
            assert (await c.call_tool("count", {})).structured_content == {"result": 1}
            return c.server_info

    info = run(conversation)
    assert (info.name, info.version) == ("docs", "1.2")


# --- /mcp over streamable HTTP ----------------------------------------------------------------


def test_tools_resources_and_prompts_over_http(serve):
    define_docs()
    base = serve()

    async def conversation(c):
        tools = {t.name: t for t in (await c.list_tools()).tools}
        added = await c.call_tool("add", {"a": 2, "b": 40})
        counted = await c.call_tool("count", {})
        failed = await c.call_tool("fail", {"why": "no reason"})
        bad_args = await c.call_tool("add", {"a": "x"})
        readme = await c.read_resource("docs://readme")
        page = await c.read_resource("docs://pages/intro")
        templates = (await c.list_resource_templates()).resource_templates
        prompts = (await c.list_prompts()).prompts
        prompt = await c.get_prompt("summarize", {"topic": "MCP"})
        return tools, added, counted, failed, bad_args, readme, page, templates, prompts, prompt

    tools, added, counted, failed, bad_args, readme, page, templates, prompts, prompt = run(
        lambda: talk(base, conversation)
    )
    assert set(tools) == {"add", "count", "fail"}
    assert tools["add"].description == "Adds two numbers."
    assert tools["add"].input_schema["required"] == ["a", "b"]
    assert tools["count"].description.startswith("How many times add ran")
    assert not added.is_error and added.structured_content == {"result": 42}
    assert added.content[0].text == "42"
    assert counted.structured_content == {"result": 1}  # the same instance
    assert failed.is_error and failed.structured_content is None
    assert "ValueError: cannot do it: no reason" in failed.content[0].text
    assert bad_args.is_error and "add" in bad_args.content[0].text
    assert readme.contents[0].text == "Read me first."
    assert readme.contents[0].mime_type == "text/plain"
    assert json.loads(page.contents[0].text) == {"slug": "intro"}
    assert page.contents[0].mime_type == "application/json"
    assert [t.uri_template for t in templates] == ["docs://pages/{slug}"]
    assert [(p.name, p.description) for p in prompts] == [("summarize", "Asks for a summary.")]
    assert prompt.messages[0].role == "user"
    assert prompt.messages[0].content.text == "Summarize MCP in one line."


def test_an_unknown_resource_is_a_protocol_error(serve):
    define_docs()
    base = serve()

    async def conversation(c):
        with pytest.raises(MCPError):
            await c.read_resource("docs://nothing")
        return True

    assert run(lambda: talk(base, conversation))


def test_mcp_needs_the_apps_credential(serve):
    define_docs()
    base = serve()
    for headers in ({}, {"X-API-Key": "bogus-9q"}, {"Authorization": f"Bearer {KEY}"}):
        r = httpx.post(base + "/mcp", json=INITIALIZE, headers={**MCP_HEADERS, **headers})
        assert r.status_code == 401, r.text
        assert r.headers["content-type"] == "application/json"
        assert r.json() == {
            "error": {"code": "unauthorized", "message": "missing or wrong credential"}
        }
        assert "bogus-9q" not in r.text

    async def refused():
        with pytest.raises(Exception) as e:  # the client gives up on the 401
            await talk(base, lambda c: c.list_tools(), headers={})
        return e.value

    assert "MCPError" in repr(run(refused))  # the transport reports the 401 as an error
    r = httpx.post(base + "/mcp", json=INITIALIZE, headers={**MCP_HEADERS, **H})
    assert r.status_code == 200, r.text
    assert r.json()["result"]["serverInfo"]["name"] == "contract_core"
    # The rest of the app is unchanged.
    assert httpx.get(base + "/health").json() == {"status": "ok"}
    assert httpx.get(base + "/mcp/", headers=H).status_code == 404
    for method in ("GET", "DELETE", "PUT"):  # stateless: no stream to open, no session to end
        r = httpx.request(method, base + "/mcp", headers=H)
        assert r.status_code == 405 and r.json()["error"]["code"] == "method_not_allowed"
        assert r.headers["allow"] == "POST"
    big = b"[" + b" " * (1 << 20) + b"]"
    r = httpx.post(base + "/mcp", content=big, headers={**MCP_HEADERS, **H})
    assert r.status_code == 413 and r.json()["error"]["code"] == "payload_too_large"
    r = httpx.post(base + "/mcp", content=big, headers=MCP_HEADERS)
    assert r.status_code == 401  # the credential is checked first, as on /invoke
    info = httpx.get(base + "/info", headers=H).json()
    assert info["components"]["mcp_servers"] == ["docs"]


def test_handshake_era_clients(serve):
    define_docs()
    base = serve()

    async def conversation():
        async with httpx2.AsyncClient(headers=H, timeout=LIMIT) as http:
            transport = streamable_http_client(base + "/mcp", http_client=http)
            async with Client(transport, mode="legacy") as c:
                result = await c.call_tool("add", {"a": 1, "b": 1})
                return c.protocol_version, result

    version, result = run(conversation)
    assert version.startswith("2025-") and result.structured_content == {"result": 2}


def test_bearer_apps_take_the_token(serve):
    define_docs()
    base = serve(config={"server": {"auth": {"type": "bearer"}}})
    r = httpx.post(base + "/mcp", json=INITIALIZE, headers={**MCP_HEADERS, **H})
    assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer"
    tools = run(
        lambda: talk(base, lambda c: c.list_tools(), headers={"Authorization": f"Bearer {KEY}"})
    )
    assert {t.name for t in tools.tools} == {"add", "count", "fail"}


def test_no_mcp_route_without_servers_or_expose(monkeypatch):
    monkeypatch.setenv("SVC_API_KEY", KEY)
    app = create_app(ContractCore(), config={})
    assert app.state.svc_mcp is None
    with TestClient(app) as c:
        r = c.post("/mcp", json=INITIALIZE, headers=H)
        assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"
        assert c.post("/invoke", json={"state": {"text": "Ada"}}, headers=H).status_code == 200


def test_an_app_without_mcp_never_imports_it(tmp_path):
    script = textwrap.dedent(
        """
        import sys
        sys.path.insert(0, sys.argv[1])
        sys.modules["mcp"] = None  # any import of the SDK fails
        from fastapi.testclient import TestClient
        from graphs import ContractCore
        from svc.server import create_app

        app = create_app(ContractCore(), config={"server": {"auth": {"type": "none"}}})
        with TestClient(app) as c:
            assert c.post("/invoke", json={"state": {"text": "Ada"}}).status_code == 200
            assert c.post("/mcp", json={}).status_code == 404
        assert sys.modules["mcp"] is None and "svc.mcp.client" not in sys.modules
        print("ok")
        """
    )
    tests = str(Path(__file__).parent)
    r = subprocess.run([sys.executable, "-c", script, tests], capture_output=True, text=True)
    assert (r.returncode, r.stdout) == (0, "ok\n"), r.stderr


class FakeClients(types.ModuleType):
    """Stands for svc.mcp.client: records start_all (async) and stop_all (sync)."""

    def __init__(self):
        super().__init__("svc.mcp.client")
        self.calls = []

    async def start_all(self, config):
        self.calls.append(("start", config))

    def stop_all(self):
        self.calls.append(("stop",))


def lifespan_calls(monkeypatch, config, fake):
    monkeypatch.setenv("SVC_API_KEY", KEY)
    if fake is None:
        monkeypatch.delitem(sys.modules, "svc.mcp.client", raising=False)
    else:
        monkeypatch.setitem(sys.modules, "svc.mcp.client", fake)
    with TestClient(create_app(ContractCore(), config=config)) as c:
        assert c.get("/health").status_code == 200
        during = list(fake.calls) if fake is not None else None
    return during


def test_mcp_clients_run_for_the_apps_lifetime(monkeypatch):
    fake = FakeClients()
    config = {"mcp": {"servers": {"search": {"transport": "stdio"}}}}
    assert lifespan_calls(monkeypatch, config, fake) == [("start", config)]
    assert fake.calls == [("start", config), ("stop",)]
    # Already imported by the project (app/mcp/servers.py): started without the section.
    fake = FakeClients()
    assert lifespan_calls(monkeypatch, {}, fake) == [("start", {})]
    assert fake.calls[-1] == ("stop",)


def test_no_mcp_clients_no_import(monkeypatch):
    lifespan_calls(monkeypatch, {}, None)
    assert "svc.mcp.client" not in sys.modules


def test_stdio_servers_are_not_mounted(monkeypatch):
    monkeypatch.setenv("SVC_API_KEY", KEY)

    @svc_mcp_server("local", protocol="stdio")
    class Local:
        @mcp_tool
        def ping(self) -> str:
            return "pong"

    assert create_app(ContractCore(), config={}).state.svc_mcp is None


# --- the exposed graph ---------------------------------------------------------------------


def test_state_json_schema():
    schema = state_json_schema(ContractCore.schema)
    assert schema == {
        "type": "object",
        "properties": {
            "text": {"type": "string"},
            "mode": {"type": "string", "default": "normal"},
            "count": {"type": "integer", "default": 0},
            "tags": {"type": "array", "items": {"type": "string"}, "default": []},
            "reply": {"type": "string"},
        },
        "required": ["text"],
        "additionalProperties": False,
    }
    out = state_json_schema(ContractCore.schema, output=True)
    assert out["required"] == ["text", "mode", "count", "tags", "reply"]
    assert out["properties"]["count"] == {"type": ["integer", "null"]}
    assert state_json_schema(None) == {"type": "object"}


def test_the_exposed_graph_is_one_tool(serve):
    @business_policy
    def no_secrets(context):
        return "deny" if context["state"]["text"] == "secret" else "allow"

    base = serve(config={"mcp": {"expose": True}})

    async def conversation(c):
        tools = (await c.list_tools()).tools
        done = await c.call_tool("contract_core", {"text": "Ada"})
        missing = await c.call_tool("contract_core", {"mode": "loop"})
        wrong = await c.call_tool("contract_core", {"text": 7})
        raised = await c.call_tool("contract_core", {"text": "panic"})
        denied = await c.call_tool("contract_core", {"text": "secret"})
        return tools, done, missing, wrong, raised, denied

    tools, done, missing, wrong, raised, denied = run(lambda: talk(base, conversation))
    assert [t.name for t in tools] == ["contract_core"]
    assert tools[0].input_schema == state_json_schema(ContractCore.schema)
    assert tools[0].input_schema["required"] == ["text"]
    assert tools[0].output_schema["required"] == ["text", "mode", "count", "tags", "reply"]
    final = {
        "text": "Ada",
        "mode": "normal",
        "count": 1,
        "tags": ["seen"],
        "reply": "Hello, Ada! count=1",
    }
    assert not done.is_error and done.structured_content == final
    assert json.loads(done.content[0].text) == final
    for result, code in (
        (missing, "invalid_state"),
        (wrong, "invalid_state"),
        (raised, "execution_error"),
        (denied, "policy_denied"),
    ):
        assert result.is_error
        assert result.structured_content["error"]["code"] == code
        assert json.loads(result.content[0].text) == result.structured_content
    assert missing.structured_content["error"]["details"] == {"field": "text"}
    assert raised.structured_content["error"]["details"] == {"node": "prepare"}
    assert "deliberate failure" in raised.structured_content["error"]["message"]
    assert "Traceback" not in raised.content[0].text


def test_the_graph_tool_name_and_servers_side_by_side(serve):
    define_docs()
    base = serve(
        config={
            "app": {"name": "shop", "version": "2.0"},
            "mcp": {"expose": True, "tool_name": "ask"},
        }
    )

    async def conversation(c):
        tools = sorted(t.name for t in (await c.list_tools()).tools)
        answer = await c.call_tool("ask", {"text": "Bo"})
        return tools, answer, c.server_info

    tools, answer, info = run(lambda: talk(base, conversation))
    assert tools == ["add", "ask", "count", "fail"]
    assert answer.structured_content["reply"] == "Hello, Bo! count=1"
    assert (info.name, info.version) == ("shop", "2.0")


def test_expose_settings_are_checked(monkeypatch):
    monkeypatch.setenv("SVC_API_KEY", KEY)
    for mcp, message in (
        ("yes", "mcp must be a mapping"),
        ({"expose": "yes"}, "mcp.expose must be true or false"),
        ({"expose": True, "tool_name": "has space"}, "is not a tool name"),
    ):
        with pytest.raises(ConfigError, match=message):
            create_app(ContractCore(), config={"mcp": mcp})
    define_docs()
    with pytest.raises(RegistrationError, match='tool "add" is defined by both the exposed graph'):
        create_app(ContractCore(), config={"mcp": {"expose": True, "tool_name": "add"}})


def test_expose_graph_in_process():
    runner = runner_for(ContractCore(), GraphSettings(), "contract_core")
    tool = expose_graph(runner, "core")

    async def conversation():
        from mcp.server.mcpserver import MCPServer

        async with Client(MCPServer("t", tools=[tool])) as c:
            return await c.call_tool("core", {"text": "Ada", "count": 4})

    result = run(conversation)
    assert result.structured_content["count"] == 5


# --- stdio --------------------------------------------------------------------------------

PROJECT = """
from svc import graph, mcp_resource, mcp_tool, svc_mcp_server
from svc.runtime import CompiledGraph, Field, StateSchema

print("imported the project")  # must not reach the protocol on stdout


class Echo(CompiledGraph):
    name = "echo"
    schema = StateSchema([Field("text", "string", required=True), Field("reply", "string")])

    def run(self, state):
        self.check(0)
        self.step(state, "shout", lambda s: {"reply": s["text"].upper()})
        return state


@graph("echo", entrypoint=True)
def build():
    return Echo()


@svc_mcp_server("notes", protocol="stdio")
class Notes:
    @mcp_tool
    def reverse(self, text: str) -> str:
        "Reverses a text."
        return text[::-1]

    @mcp_resource("about", "notes://about")
    def about(self) -> str:
        return "notes over stdio"
"""


def test_svc_mcp_serves_over_stdio(tmp_path):
    (tmp_path / "application.yaml").write_text(
        "app: {name: notes-app, version: '0.9'}\nmcp: {expose: true}\n"
    )
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "__init__.py").write_text(textwrap.dedent(PROJECT))
    errors = tmp_path / "stderr.txt"
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "svc", "mcp", "--root", str(tmp_path)]
    )

    async def conversation():
        with errors.open("w") as errlog:
            from mcp.client.stdio import stdio_client

            async with Client(stdio_client(params, errlog=errlog)) as c:
                tools = sorted(t.name for t in (await c.list_tools()).tools)
                reversed_ = await c.call_tool("reverse", {"text": "abc"})
                echoed = await c.call_tool("echo", {"text": "hi"})
                bad = await c.call_tool("echo", {})
                about = await c.read_resource("notes://about")
                return tools, reversed_, echoed, bad, about, c.server_info

    tools, reversed_, echoed, bad, about, info = run(conversation)
    assert tools == ["echo", "reverse"]
    assert reversed_.structured_content == {"result": "cba"}
    assert echoed.structured_content == {"text": "hi", "reply": "HI"}
    assert bad.is_error and bad.structured_content["error"]["code"] == "invalid_state"
    assert about.contents[0].text == "notes over stdio"
    assert (info.name, info.version) == ("notes-app", "0.9")
    assert "imported the project" in errors.read_text()


def test_svc_mcp_with_nothing_to_serve(tmp_path, capsys):
    from svc.cli import main

    (tmp_path / "application.yaml").write_text("app: {name: empty}\n")
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "__init__.py").write_text("")
    assert main(["mcp", "--root", str(tmp_path)]) == 1
    assert "nothing to serve over MCP" in capsys.readouterr().err
