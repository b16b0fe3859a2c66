"""MCP tools against the fixture server tests/mcp_fixtures/server.py (the
official SDK's MCPServer), run over stdio, SSE and streamable HTTP on
127.0.0.1 only. Every server is a child process bounded in time and stopped
by the test that started it."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("mcp.client.streamable_http", reason="needs the mcp extra (mcp 2.x)")

from svc import mcp_client, registry, run_agent, streaming, worker_agent
from svc.config import load_config
from svc.errors import ConfigError, RegistrationError, SvcError
from svc.mcp import client, sessions
from svc.mcp_client import (
    McpResult,
    McpServer,
    call_mcp_tool,
    mcp_output,
    minimal_check,
    register_mcp_server,
    register_mcp_tool,
    servers_from_config,
    start_all,
    stop_all,
)
from svc.model_calls import Model

SERVER = Path(__file__).parent / "mcp_fixtures" / "server.py"
READY_TIMEOUT = 30.0
# Generous: opening a stdio session starts a Python child that imports the SDK.
OPEN_MS = 20000


@pytest.fixture(autouse=True)
def clean_mcp():
    mcp_client.clear()
    yield
    mcp_client.clear()


def stdio(server_id: str = "local", **options) -> McpServer:
    options.setdefault("timeout_ms", OPEN_MS)
    return register_mcp_server(
        McpServer(
            server_id, "stdio", command=sys.executable, args=(str(SERVER), "stdio"), **options
        )
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


class HttpServer:
    """The fixture server as a process listening on 127.0.0.1."""

    def __init__(self, transport: str):
        self.transport = transport
        self.port = free_port()
        self.process: subprocess.Popen | None = None
        path = "/sse" if transport == "sse" else "/mcp"
        self.url = f"http://127.0.0.1:{self.port}{path}"
        self.start()

    def start(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(SERVER), self.transport, str(self.port)],
            stdout=subprocess.DEVNULL,
        )
        ends = time.monotonic() + READY_TIMEOUT
        while time.monotonic() < ends:
            if self.process.poll() is not None:
                break
            try:
                socket.create_connection(("127.0.0.1", self.port), 0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        self.kill()
        pytest.fail(f"the {self.transport} fixture server did not start on port {self.port}")

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
        if self.process is not None:
            self.process.wait(10)


@pytest.fixture
def http_server():
    started: list[HttpServer] = []

    def start(transport: str) -> HttpServer:
        s = HttpServer(transport)
        started.append(s)
        return s

    yield start
    for s in started:
        s.kill()


@pytest.fixture(scope="module")
def shared_http():
    """One SSE and one streamable HTTP server for the tests that only call."""
    servers = {t: HttpServer(t) for t in ("sse", "streamable_http")}
    yield servers
    for s in servers.values():
        s.kill()


def failure(fn, *args, **kwargs) -> SvcError:
    with pytest.raises(SvcError) as e:
        fn(*args, **kwargs)
    assert e.value.status == 502 and e.value.code == "upstream_error"
    return e.value


# --- declarations ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "mentions"),
    [
        ({"transport": "ws"}, "transport 'ws' is not one of stdio, sse, streamable_http"),
        ({"transport": "stdio"}, "needs a command"),
        ({"transport": "sse"}, "needs a url"),
        ({"transport": "streamable_http", "url": ""}, "needs a url"),
        ({"transport": "stdio", "command": "x", "timeout_ms": 0}, "timeout_ms"),
        ({"transport": "stdio", "command": "x", "args": "a b"}, "args"),
        ({"transport": "stdio", "command": "x", "env": {"A": 1}}, "env"),
    ],
)
def test_a_server_declaration_is_checked(options, mentions):
    with pytest.raises(RegistrationError) as e:
        McpServer("files", **options)
    assert 'MCP server "files"' in str(e.value)
    assert mentions in str(e.value)


def test_servers_from_config():
    config = {
        "mcp": {
            "servers": [
                {"id": "files", "transport": "stdio", "command": "npx", "args": ["-y", "fs"]},
                {
                    "id": "crm",
                    "transport": "streamable_http",
                    "url": "env:CRM_URL",
                    "headers": {"Authorization": "Bearer ${CRM_TOKEN}"},
                    "timeoutMs": 5000,
                },
            ]
        }
    }
    files, crm = servers_from_config(config)
    assert files == McpServer("files", "stdio", command="npx", args=("-y", "fs"))
    assert crm.timeout_ms == 5000 and crm.url == "env:CRM_URL"
    assert servers_from_config({}) == []

    def refused(entry) -> str:
        with pytest.raises(ConfigError) as e:
            servers_from_config({"mcp": {"servers": [entry]}})
        return str(e.value)

    assert refused({"id": "x", "transport": "sse"}) == (
        'mcp.servers[0] (id "x"): MCP server "x": the sse transport needs a url'
    )
    assert "needs an id and a transport" in refused({"transport": "stdio", "command": "c"})
    assert "env.KEY is null" in refused(
        {"id": "x", "transport": "stdio", "command": "c", "env": {"KEY": None}}
    )
    assert "unknown key(s) cmd" in refused({"id": "x", "transport": "stdio", "cmd": "c"})
    with pytest.raises(ConfigError, match='the id "a" is used twice'):
        servers_from_config(
            {"mcp": {"servers": [{"id": "a", "transport": "sse", "url": "http://h"}] * 2}}
        )


def test_mcp_output():
    structured = McpResult({"result": 3}, "3")
    assert mcp_output(structured, True) == {"result": 3}
    assert mcp_output(structured, False) == "3"
    assert mcp_output(McpResult(None, '{"a": 1}'), True) == {"a": 1}
    assert mcp_output(McpResult(None, "[1]"), True) == {"text": "[1]"}
    assert mcp_output(McpResult(None, "plain"), True) == {"text": "plain"}


def test_minimal_check_without_jsonschema():
    schema = {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "n": {"type": ["number", "null"]}},
        "required": ["a"],
    }
    assert minimal_check(schema, {"a": 1, "n": None}) is None
    assert minimal_check(schema, {"a": 1, "n": 2.5}) is None
    assert "required property" in minimal_check(schema, {})
    assert "must be of type integer" in minimal_check(schema, {"a": "x"})
    assert "must be of type integer" in minimal_check(schema, {"a": True})
    assert "not an object" in minimal_check(schema, [1])


# --- calls -------------------------------------------------------------------------------


@pytest.mark.parametrize("transport", ["stdio", "sse", "streamable_http"])
def test_a_call_over_each_transport(transport, shared_http, monkeypatch):
    if transport == "stdio":
        stdio("srv")
    else:
        monkeypatch.setenv("SVC_MCP_URL", shared_http[transport].url)
        monkeypatch.setenv("SVC_MCP_TOKEN", "t0k")
        register_mcp_server(
            McpServer(
                "srv",
                transport,
                url="env:SVC_MCP_URL",
                headers={"Authorization": "Bearer ${SVC_MCP_TOKEN}"},
                timeout_ms=OPEN_MS,
            )
        )
    added = call_mcp_tool("calc", "srv", "add", {"a": 2, "b": 3})
    assert added == McpResult({"result": 5}, "5", False)
    assert mcp_output(added, True) == {"result": 5}
    echoed = call_mcp_tool("say", "srv", "echo", {"text": "héllo"})
    assert (echoed.structured, echoed.text) == (None, "héllo")
    assert mcp_output(echoed, True) == {"text": "héllo"}
    header = call_mcp_tool("h", "srv", "header", {"name": "Authorization"}).text
    assert header == ("" if transport == "stdio" else "Bearer t0k")
    # Traced, the run's trace goes on in the request's _meta (under the MCP
    # SDK's own client span, whose parent the run's span is).
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from svc import telemetry

    exporter = InMemorySpanExporter()
    telemetry.configure({"tracing": {"enabled": True}}, span_exporter=exporter)
    with telemetry.workflow_span("g") as span:
        sent = call_mcp_tool("m", "srv", "meta", {"key": "traceparent"}).text
    assert sent.split("-")[1] == f"{span.get_span_context().trace_id:032x}", sent
    # A tool node's call (tool_id) is an execute_tool span of the run. (The
    # MCP SDK's client span under it, which _meta names, goes to the global
    # provider: the first configure()'s in this process; the e2e test
    # `telemetry` reads that link back from a collector.)
    exporter.clear()
    with telemetry.workflow_span("g"):
        sent = call_mcp_tool("m", "srv", "meta", {"key": "traceparent"}, tool_id="peek").text
    telemetry.flush()
    spans = {s.name: s for s in exporter.get_finished_spans()}
    tool = spans["execute_tool peek"]
    assert tool.parent.span_id == spans["invoke_workflow g"].context.span_id
    assert tool.attributes["gen_ai.tool.name"] == "peek"
    assert sent.split("-")[1] == f"{tool.context.trace_id:032x}", sent


def test_arguments_are_checked_before_the_call(monkeypatch):
    import mcp

    stdio()
    sent = []
    real = mcp.Client.call_tool

    async def counting(self, name, *args, **kwargs):
        sent.append(name)
        return await real(self, name, *args, **kwargs)

    monkeypatch.setattr(mcp.Client, "call_tool", counting)
    assert call_mcp_tool("calc", "local", "add", {"a": 1, "b": 1}).structured == {"result": 2}
    e = failure(call_mcp_tool, "calc", "local", "add", {"a": "one", "b": 1})
    assert e.details == {
        "node": "calc",
        "server": "local",
        "tool": "add",
        "reason": "invalid_arguments",
    }
    assert "'one' is not of type 'integer'" in e.message
    e = failure(call_mcp_tool, "calc", "local", "add", {"a": 1})
    assert e.details["reason"] == "invalid_arguments" and "'b' is a required property" in e.message
    assert sent == ["add"]

    # Without jsonschema the minimal check refuses the same call.
    monkeypatch.setattr(client, "_jsonschema", lambda: None)
    stdio("plain")
    e = failure(call_mcp_tool, "calc", "plain", "add", {"a": "one", "b": 1})
    assert e.details["reason"] == "invalid_arguments" and "must be of type integer" in e.message
    assert sent == ["add"]


def test_a_tool_error_carries_its_text():
    stdio()
    e = failure(call_mcp_tool, "n", "local", "fail", {})
    assert e.details == {"node": "n", "server": "local", "tool": "fail", "reason": "tool_error"}
    assert "the tool broke on purpose" in e.message


def test_a_call_past_timeout_ms_times_out_and_the_next_call_works(http_server):
    web = http_server("streamable_http")
    register_mcp_server(McpServer("web", "streamable_http", url=web.url, timeout_ms=1500))
    assert call_mcp_tool("n", "web", "echo", {"text": "warm"}).text == "warm"
    started = time.monotonic()
    e = failure(call_mcp_tool, "n", "web", "slow", {"seconds": 10})
    assert e.details["reason"] == "timeout" and "1500ms" in e.message
    assert time.monotonic() - started < 5
    assert call_mcp_tool("n", "web", "echo", {"text": "still here"}).text == "still here"


def test_the_run_deadline_bounds_a_call():
    stdio()
    assert call_mcp_tool("n", "local", "echo", {"text": "warm"}).text == "warm"
    started = time.monotonic()
    e = failure(call_mcp_tool, "n", "local", "slow", {"seconds": 10}, deadline=0.5)
    assert e.details["reason"] == "timeout"
    assert time.monotonic() - started < 4
    assert failure(call_mcp_tool, "n", "local", "echo", {"text": "x"}, deadline=0).details[
        "reason"
    ] == ("timeout")
    assert call_mcp_tool("n", "local", "slow", {"seconds": 0.1}).text == "slept 0.1"


# --- environment -------------------------------------------------------------------------


def test_a_cancelled_runs_call_ends_at_once_and_the_next_call_works():
    # A streaming client gone, or a parallel branch cancelled: the run's stream is cancelled.
    stdio()
    assert call_mcp_tool("n", "local", "echo", {"text": "warm"}).text == "warm"
    stream = streaming.RunStream(lambda *event, **tags: None)
    token = streaming.enter(stream)
    threading.Timer(0.2, stream.cancel).start()
    started = time.monotonic()
    try:
        with pytest.raises(SvcError) as caught:
            call_mcp_tool("n", "local", "slow", {"seconds": 10})
    finally:
        streaming.leave(token)
    assert caught.value.code == "client_closed_request"
    assert time.monotonic() - started < 2
    assert call_mcp_tool("n", "local", "echo", {"text": "still here"}).text == "still here"


def test_a_missing_variable_is_a_config_error_naming_it(monkeypatch):
    monkeypatch.delenv("SVC_MCP_UNSET", raising=False)
    stdio(env={"KEY": "${SVC_MCP_UNSET}"})
    with pytest.raises(ConfigError) as e:
        call_mcp_tool("n", "local", "echo", {"text": "x"})
    assert str(e.value) == (
        'MCP server "local": env.KEY reads the environment variable SVC_MCP_UNSET, which is not set'
    )
    register_mcp_server(McpServer("web", "sse", url="env:SVC_MCP_UNSET"))
    with pytest.raises(ConfigError) as e:
        start_all({})
    assert 'MCP server "web": url reads the environment variable SVC_MCP_UNSET' in str(e.value)
    assert 'MCP server "local": env.KEY' in str(e.value)


def test_the_child_sees_only_a_minimal_environment(monkeypatch):
    monkeypatch.setenv("SVC_SECRET_PROBE", "do-not-leak")
    monkeypatch.setenv("SVC_MCP_GIVEN", "given")
    stdio(env={"FROM_BRACES": "${SVC_MCP_GIVEN}", "FROM_ENV": "env:SVC_MCP_GIVEN"})

    def child(name: str) -> str:
        return call_mcp_tool("n", "local", "env_value", {"name": name}).text

    assert child("SVC_SECRET_PROBE") == ""  # unset in the child: no content
    assert (child("FROM_BRACES"), child("FROM_ENV")) == ("given", "given")
    assert child("PATH") == os.environ["PATH"]


@pytest.mark.parametrize("value", ["s3cr3t", "prefix-${SVC_MCP_GIVEN}", "env:"])
def test_an_env_value_written_inline_is_refused(value, tmp_path):
    with pytest.raises(RegistrationError) as e:
        McpServer("files", "stdio", command="x", env={"TOKEN": value})
    assert str(e.value) == (
        'MCP server "files": env.TOKEN is written inline, but secrets come from the '
        "environment only: write ${NAME} or env:NAME there and set NAME in the environment "
        "or env.yaml"
    )
    (tmp_path / "application.yaml").write_text(
        "mcp:\n  servers:\n    - id: files\n      transport: stdio\n      command: x\n"
        f"      env: {{TOKEN: {json.dumps(value)}}}\n"
    )
    with pytest.raises(ConfigError) as e:
        servers_from_config(load_config(tmp_path))
    assert str(e.value).startswith(
        'mcp.servers[0] (id "files"): MCP server "files": env.TOKEN is written inline'
    )


def test_an_env_value_from_application_yaml_is_read_when_the_session_opens(tmp_path, monkeypatch):
    monkeypatch.setenv("SVC_MCP_GIVEN", "given")
    (tmp_path / "application.yaml").write_text(
        "mcp:\n  servers:\n    - id: files\n      transport: stdio\n      command: x\n"
        '      env: {A: "${SVC_MCP_GIVEN}", B: "env:SVC_MCP_GIVEN"}\n'
    )
    (files,) = servers_from_config(load_config(tmp_path))
    assert files.env == {"A": "${SVC_MCP_GIVEN}", "B": "env:SVC_MCP_GIVEN"}


# --- failures of the server --------------------------------------------------------------


def test_a_killed_stdio_child_fails_the_call_then_respawns():
    stdio()
    pid = int(call_mcp_tool("n", "local", "pid", {}).text)
    killer = threading.Timer(0.5, os.kill, (pid, signal.SIGKILL))
    killer.start()
    try:
        e = failure(call_mcp_tool, "n", "local", "slow", {"seconds": 10})
    finally:
        killer.cancel()
    assert e.details["reason"] == "connect"
    assert "the session broke" in e.message
    respawned = int(call_mcp_tool("n", "local", "pid", {}).text)
    assert respawned != pid and alive(respawned)


def test_a_stdio_child_that_died_while_idle_is_respawned_by_the_next_call():
    stdio()
    pid = int(call_mcp_tool("n", "local", "pid", {}).text)
    os.kill(pid, signal.SIGKILL)
    ends = time.monotonic() + 10
    while alive(pid) or sessions._sessions["local"].usable():
        assert time.monotonic() < ends, "the dead child was not noticed"
        time.sleep(0.02)
    # The session is known to be gone before anything is sent: no failed call.
    assert int(call_mcp_tool("n", "local", "pid", {}).text) != pid


@pytest.mark.parametrize("transport", ["sse", "streamable_http"])
def test_a_killed_http_server_fails_the_call_then_reconnects(transport, http_server):
    web = http_server(transport)
    register_mcp_server(McpServer("web", transport, url=web.url, timeout_ms=OPEN_MS))
    assert call_mcp_tool("n", "web", "echo", {"text": "up"}).text == "up"
    killer = threading.Timer(0.5, web.kill)
    killer.start()
    try:
        e = failure(call_mcp_tool, "n", "web", "slow", {"seconds": 10})
    finally:
        killer.cancel()
        killer.join()
    assert e.details["reason"] == "connect"
    down = failure(call_mcp_tool, "n", "web", "echo", {"text": "down"})
    assert down.details["reason"] == "connect" and "cannot reach the server" in down.message
    web.start()
    assert call_mcp_tool("n", "web", "echo", {"text": "back"}).text == "back"


# --- start-up and shutdown ---------------------------------------------------------------


def test_start_all_names_missing_tools_and_unreachable_servers():
    register_mcp_tool("adder", "local", "add")
    register_mcp_tool("reader", "local", "read_file")
    register_mcp_tool("lost", "nowhere", "anything")
    config = {
        "mcp": {
            "servers": [
                {
                    "id": "local",
                    "transport": "stdio",
                    "command": sys.executable,
                    "args": [str(SERVER), "stdio"],
                    "timeout_ms": OPEN_MS,
                },
                {"id": "closed", "transport": "sse", "url": f"http://127.0.0.1:{free_port()}/sse"},
            ]
        }
    }
    with pytest.raises(ConfigError) as e:
        start_all(config)
    message = str(e.value)
    assert 'MCP server "local" has no tool "read_file" (it lists: add, echo,' in message
    assert '"add"' not in message
    assert 'MCP server "closed" cannot be reached: ConnectError' in message
    assert 'tool "anything" is needed on MCP server "nowhere", which is not declared' in message
    assert not any(t.name == "svc-mcp" for t in threading.enumerate())


def test_start_all_opens_sessions_and_stop_all_stops_the_children():
    register_mcp_tool("adder", "local", "add")
    config = {
        "mcp": {
            "servers": [
                {
                    "id": "local",
                    "transport": "stdio",
                    "command": sys.executable,
                    "args": [str(SERVER), "stdio"],
                    "timeoutMs": OPEN_MS,
                }
            ]
        }
    }
    start_all(config)
    # The session start_all opened is the one calls use.
    pid = int(call_mcp_tool("n", "local", "pid", {}).text)
    assert int(call_mcp_tool("n", "local", "pid", {}).text) == pid
    # The registered tool now shows the model the server's input schema.
    schema = registry.get("tools", "adder").meta["input_schema"]
    assert schema["required"] == ["a", "b"]
    assert schema["properties"]["a"]["type"] == "integer"
    assert registry.get("tools", "adder").meta["description"].startswith("Adds two integers")
    stop_all()
    assert not alive(pid)
    assert not any(t.name == "svc-mcp" for t in threading.enumerate())
    stop_all()  # idempotent
    # A call after stop_all starts afresh.
    assert int(call_mcp_tool("n", "local", "pid", {}).text) != pid


# --- agents ------------------------------------------------------------------------------

MODEL = Model("stub-model", base_url_env="STUB_BASE", api_key_env="STUB_KEY")


def scripted(*messages: dict):
    replies = iter(messages)

    def respond(_req):
        return (200, json.dumps({"choices": [{"message": next(replies)}]}).encode())

    return respond


def test_a_worker_agent_calls_an_mcp_tool(stub, monkeypatch):
    stdio()
    assert register_mcp_tool("adder", "local", "add", description="Adds numbers.") == "adder"
    start_all({})

    @worker_agent(name="mathematician", tools=["adder"], model=MODEL)
    def mathematician():
        return "You add."

    tool_call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "adder", "arguments": json.dumps({"a": 2, "b": 3})},
    }
    s = stub(
        scripted(
            {"role": "assistant", "content": None, "tool_calls": [tool_call]},
            {"role": "assistant", "content": "2 + 3 = 5"},
        )
    )
    monkeypatch.setenv("STUB_BASE", s.url + "/v1")
    monkeypatch.setenv("STUB_KEY", "stub-key")
    assert run_agent("What is 2 + 3?", "mathematician") == "2 + 3 = 5"
    first, second = (r.json() for r in s.received)
    function = first["tools"][0]["function"]
    assert function["name"] == "adder" and function["description"] == "Adds numbers."
    assert function["parameters"]["required"] == ["a", "b"]
    assert second["messages"][-1] == {
        "role": "tool",
        "tool_call_id": "c1",
        "content": '{"result": 5}',
    }
