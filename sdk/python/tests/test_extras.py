"""Every helper with an optional dependency names its extra when it is missing."""

import subprocess
import sys
from dataclasses import dataclass

import pytest
from graphs import ContractCore

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
        ("langsmith",),
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
        "import svc.a2a_server, svc.a2a_peers\n"
        "from svc import svc_a2a_server, a2a_skill, a2a_authenticator, a2a_agent, a2a_client\n"
        "from svc import invoke_a2a_agent\n"
        "print(svc.__version__)\n"
    )
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert (r.returncode, r.stdout) == (0, "0.3.2\n"), r.stderr
