"""Every helper with an optional dependency names its extra when it is missing."""

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from graphs import ContractCore
from test_structure import module_files

from svc import (
    GraphBuilder,
    MissingExtraError,
    configure_tracing,
    get_http_client,
    get_llm_provider,
    invoke_a2a_agent,
    upstream,
)
from svc.cli import main
from svc.runtime import HttpTool, Model, call_http_tool, chat
from svc.server import create_app


@dataclass
class Case:
    modules: tuple[str, ...]
    call: object
    message: str


CASES = {
    "server": Case(
        ("fastapi",),
        lambda: create_app(object(), config={}),
        'create_app() needs the "server" extra: pip install "svc-sdk[server]"',
    ),
    "graph": Case(
        ("langgraph.graph",),
        lambda: GraphBuilder(dict).compile(),
        'GraphBuilder.compile() needs the "graph" extra: pip install "svc-sdk[graph]"',
    ),
    "llm": Case(
        ("langchain_openai",),
        lambda: get_llm_provider(),
        'get_llm_provider() needs the "llm" extra: pip install "svc-sdk[llm]"',
    ),
    "http": Case(
        ("httpx",),
        lambda: get_http_client("crm"),
        'get_http_client() needs the "http" extra: pip install "svc-sdk[http]"',
    ),
    "http-chat": Case(
        ("httpx",),
        lambda: chat("n", Model("m"), "", "hi"),
        'chat() needs the "http" extra: pip install "svc-sdk[http]"',
    ),
    "http-tool": Case(
        ("httpx",),
        lambda: call_http_tool("n", HttpTool("http://127.0.0.1:9"), {}),
        'call_http_tool() needs the "http" extra',
    ),
    "a2a": Case(
        ("a2a.server.routes",),
        lambda: create_app(
            ContractCore(), config={"server": {"auth": {"type": "none"}}, "a2a": {"enabled": True}}
        ),
        'the A2A server needs the "a2a" extra: pip install "svc-sdk[a2a]"',
    ),
    "a2a-client": Case(
        ("a2a.client",),
        lambda: invoke_a2a_agent("peer", "hi"),
        'invoke_a2a_agent() needs the "a2a" extra: pip install "svc-sdk[a2a]"',
    ),
    "tracing": Case(
        ("langsmith", "opentelemetry.sdk"),
        lambda: configure_tracing({"tracing": {"enabled": True}}),
        'configure_tracing() needs the "tracing" extra: pip install "svc-sdk[tracing]"',
    ),
}


@pytest.mark.parametrize("extra", sorted(CASES))
def test_missing_extra(extra, monkeypatch):
    case = CASES[extra]
    for module in case.modules:
        monkeypatch.setitem(sys.modules, module, None)
    # A process without httpx never built the shared client.
    monkeypatch.setattr(upstream, "_client", None)
    with pytest.raises(MissingExtraError) as e:
        case.call()
    assert isinstance(e.value, ImportError)
    assert str(e.value).startswith(case.message)


@pytest.mark.parametrize(
    ("args", "module", "message"),
    [
        (["run"], "uvicorn", 'svc run needs the "server" extra: pip install "svc-sdk[server]"'),
        (
            ["register"],
            "langsmith",
            'svc register needs the "tracing" extra: pip install "svc-sdk[tracing]"',
        ),
    ],
)
def test_commands_name_the_extra(args, module, message, monkeypatch, capsys, tmp_path):
    monkeypatch.setitem(sys.modules, module, None)
    assert main([*args, "--root", str(tmp_path)]) == 1
    assert capsys.readouterr().err == f"error: {message}\n"


def test_tracing_disabled_needs_nothing(monkeypatch):
    monkeypatch.setitem(sys.modules, "langsmith", None)
    assert configure_tracing({}) is False


def test_importing_svc_needs_only_pyyaml():
    blocked = [
        "fastapi",
        "starlette",
        "uvicorn",
        "langgraph",
        "langchain_core",
        "langchain_openai",
        "httpx",
        "mcp",
        "langsmith",
        "jsonschema",
        "pydantic",
        "a2a",
        "google",
    ]
    script = (
        "import sys\n"
        f"for m in {blocked!r}:\n    sys.modules[m] = None\n"
        "import svc, svc.runtime, svc.config, svc.registry, svc.graph, svc.cli, svc.scaffold\n"
        "import svc.a2a.server, svc.a2a.peers\n"
        "from svc import svc_a2a_server, a2a_skill, a2a_authenticator, a2a_agent, a2a_client\n"
        "from svc import invoke_a2a_agent\n"
        "print(svc.__version__)\n"
    )
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert (r.returncode, r.stdout) == (0, "0.3.2\n"), r.stderr


# --- in a real environment with the core only ------------------------------------------

SDK = Path(__file__).resolve().parents[1]
BIN = "Scripts" if os.name == "nt" else "bin"

# What each helper needs: (extra, the feature its message names).
HELPERS = {
    "create_app": ("server", "create_app()"),
    "GraphBuilder.compile": ("graph", "GraphBuilder.compile()"),
    "handoff": ("graph", "handoff()"),
    "get_llm_provider": ("llm", "get_llm_provider()"),
    "get_http_client": ("http", "get_http_client()"),
    "chat": ("http", "chat()"),
    "call_http_tool": ("http", "call_http_tool()"),
    "run_agent": ("http", "run_agent()"),
    "EmbeddingRetriever": ("http", "EmbeddingRetriever"),
    "call_mcp_tool": ("mcp", "call_mcp_tool()"),
    "start_all": ("mcp", "MCP servers"),
    "expose_graph": ("mcp", "expose_graph()"),
    "build_server": ("mcp", "an MCP server"),
    "serve_stdio": ("mcp", "svc mcp"),
    "invoke_a2a_agent": ("a2a", "invoke_a2a_agent()"),
    "open_store sqlite": ("checkpoint-sqlite", 'checkpointer "sqlite"'),
    "open_store postgres": ("checkpoint-postgres", 'checkpointer "postgres"'),
    "configure_tracing": ("tracing", "configure_tracing()"),
    "register_graph": ("tracing", "register_graph()"),
    "flush_traces": ("tracing", "flush_traces()"),
    "register_on_build": ("tracing", "tracing.register_on_build"),
}

# Every module of the SDK (but `python -m svc`'s, which runs the command line).
MODULES = sorted(m for m in module_files() if m != "svc.__main__")

# Runs in the core-only environment: imports every module, calls every
# helper, prints {name: outcome} as JSON.
REPORT = """
import importlib, json, os, sys

os.environ.update(SVC_CHECKPOINT_DB="threads.db", SVC_CHECKPOINT_URL="postgresql://h/db")
report = {}
for name in MODULES:
    try:
        importlib.import_module(name)
        report[name] = {"ok": True}
    except BaseException as e:
        report[name] = {"type": type(e).__name__, "message": str(e)}

from svc import GraphBuilder, handoff, get_http_client, get_llm_provider, human_interrupt
from svc import invoke_a2a_agent, run_agent, worker_agent
from svc.threads.checkpoints import open_store
from svc.mcp_client import McpServer, call_mcp_tool, register_mcp_server, start_all
from svc.mcp.server import build_server, expose_graph, mcp_tool, serve_stdio, svc_mcp_server
from svc.project import register_on_build
from svc.rag import EmbeddingRetriever
from svc.runtime import HttpTool, Model, call_http_tool, chat
from svc.server import create_app
from svc.tracing import configure_tracing, flush_traces, register_graph

register_mcp_server(McpServer("files", "stdio", command="files"))


@svc_mcp_server("tools")
class Tools:
    @mcp_tool()
    def echo(self, text: str) -> str:
        return text


@worker_agent(model="m")
def helper():
    return "Help."


calls = {
    "create_app": lambda: create_app(object(), config={}),
    "GraphBuilder.compile": lambda: GraphBuilder(dict).compile(),
    "handoff": lambda: handoff("other"),
    "get_llm_provider": get_llm_provider,
    "get_http_client": lambda: get_http_client("crm"),
    "chat": lambda: chat("n", Model("m"), "", "hi"),
    "call_http_tool": lambda: call_http_tool("n", HttpTool("http://127.0.0.1:9"), {}),
    "run_agent": lambda: run_agent("hi", "helper"),
    "EmbeddingRetriever": lambda: EmbeddingRetriever("n", [{"id": "a", "text": "b"}]).build(),
    "call_mcp_tool": lambda: call_mcp_tool("n", "files", "read", {}),
    "start_all": lambda: start_all({}),
    "expose_graph": lambda: expose_graph(object()),
    "build_server": lambda: build_server("tools"),
    "serve_stdio": lambda: serve_stdio("."),
    "invoke_a2a_agent": lambda: invoke_a2a_agent("peer", "hi"),
    "open_store sqlite": lambda: open_store("sqlite", run_seconds=1),
    "open_store postgres": lambda: open_store("postgres", run_seconds=1),
    "configure_tracing": lambda: configure_tracing({"tracing": {"enabled": True}}),
    "register_graph": lambda: register_graph({}, "p"),
    "flush_traces": flush_traces,
    "register_on_build": lambda: register_on_build(
        {"tracing": {"register_on_build": True}}, "main", object()
    ),
    "human_interrupt": lambda: human_interrupt({}),
}
for name, call in calls.items():
    try:
        call()
        report[name] = {"ok": True}
    except BaseException as e:
        report[name] = {
            "type": type(e).__name__,
            "extra": getattr(e, "extra", None),
            "message": str(e),
        }
print(json.dumps(report))
"""


def core_only_venv() -> Path:
    """A virtual environment with the SDK (editable, so this tree's code) and
    PyYAML, nothing else: built once per pyproject.toml (and checkout and
    Python), in ~/.cache/svc."""
    key = hashlib.sha256((SDK / "pyproject.toml").read_bytes())
    key.update(f"{SDK}\n{sys.version}".encode())
    venv = Path.home() / ".cache" / "svc" / f"core-venv-{key.hexdigest()[:16]}"
    ready = venv / ".ready"
    if not ready.is_file():
        shutil.rmtree(venv, ignore_errors=True)  # a build that did not finish
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        pip = [str(venv / BIN / "python"), "-m", "pip", "install", "--quiet"]
        pip += ["--disable-pip-version-check", "--no-deps", "-e", str(SDK), "PyYAML>=6.0,<7"]
        r = subprocess.run(pip, capture_output=True, text=True)
        if r.returncode != 0:  # PyPI out of reach (the build needs setuptools and PyYAML)
            problem = f"cannot build the core-only environment: {r.stderr}"
            if os.environ.get("CI") == "true":
                pytest.fail(problem)
            pytest.skip(problem)
        ready.write_text("")
    return venv


@pytest.fixture(scope="module")
def core():
    """(the core-only environment, what each module and helper did in it)."""
    venv = core_only_venv()
    script = f"MODULES = {MODULES!r}\n{REPORT}"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SVC_BIN")}
    with tempfile.TemporaryDirectory() as cwd:
        r = subprocess.run(
            [str(venv / BIN / "python"), "-c", script],
            capture_output=True,
            text=True,
            cwd=cwd,
            env=env,
            timeout=120,
        )
    assert r.returncode == 0, r.stderr
    return venv, json.loads(r.stdout)


def test_the_core_only_environment_has_no_extra(core):
    venv, _ = core
    r = subprocess.run(
        [str(venv / BIN / "python"), "-m", "pip", "list", "--format", "json"],
        capture_output=True,
        text=True,
    )
    installed = {p["name"].lower() for p in json.loads(r.stdout)}
    assert installed - {"pip", "setuptools"} == {"pyyaml", "svc-sdk"}


def test_every_module_imports_with_the_core_only(core):
    _, report = core
    assert {name: report[name] for name in MODULES} == {name: {"ok": True} for name in MODULES}


@pytest.mark.parametrize("helper", sorted(HELPERS))
def test_in_a_core_only_environment_the_helper_names_its_extra(helper, core):
    _, report = core
    extra, feature = HELPERS[helper]
    assert report[helper] == {
        "type": "MissingExtraError",
        "extra": extra,
        "message": f'{feature} needs the "{extra}" extra: pip install "svc-sdk[{extra}]"',
    }


def test_in_a_core_only_environment_human_interrupt_outside_a_run_says_so(core):
    _, report = core
    assert report["human_interrupt"] == {
        "type": "RuntimeError",
        "extra": None,
        "message": "human_interrupt() must be called inside a node of a running graph",
    }


@pytest.mark.parametrize(
    ("args", "code", "out", "err"),
    [
        (["version"], 0, "svc-sdk 0.3.2\n", ""),
        (["new", "demo"], 0, "created demo\n", ""),
        (["run"], 1, "", 'svc run needs the "server" extra'),
        (["mcp"], 1, "", 'svc mcp needs the "mcp" extra'),
        (["register"], 1, "", 'svc register needs the "tracing" extra'),
        (["compile", "g.graph.json", "--out", "o"], 1, "", 'svc compile needs the "compiler"'),
    ],
)
def test_in_a_core_only_environment_the_svc_command(args, code, out, err, core, tmp_path):
    venv, _ = core
    # Neither SVC_BIN nor a svc-compiler on the PATH.
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SVC_BIN")}
    env["PATH"] = str(venv / BIN)
    r = subprocess.run(
        [str(venv / BIN / "svc"), *args], capture_output=True, text=True, cwd=tmp_path, env=env
    )
    assert (r.returncode, r.stdout) == (code, out), r.stderr
    assert r.stderr.startswith(f"error: {err}" if err else "")
