"""Tracing and `svc register` end to end, against a loopback stub of the
LangSmith API (the client finds it through LANGSMITH_ENDPOINT)."""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import os
import subprocess
import sys
import threading
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TypedDict
from urllib.parse import parse_qs, urlsplit

import pytest
from graphs import ContractCore

from svc import END, GraphBuilder, SvcApp, config, project, tracing
from svc.cli import main
from svc.errors import ConfigError, SvcError
from svc.runtime import CompiledGraph

KEY = "ls-test-key"
KEY_ENV = {"LANGSMITH_API_KEY": KEY}
FLUSH_SECONDS = 10  # every wait on the client or the stub is bounded

try:
    import zstandard
except ImportError:  # the client then sends uncompressed multipart bodies
    zstandard = None


class LangSmithStub:
    """What the langsmith client calls, on 127.0.0.1: `GET /info`, `POST
    /sessions` (create_project), and the run ingestion endpoints
    (`/runs/multipart`, zstd-compressed when the client can; `/runs/batch`;
    `POST /runs`, `PATCH /runs/{id}`). Everything else is a 404.

    `requests` lists (method, path, query, headers, body); `runs` maps a run's
    id to its fields, the creation and the update merged; `refuse` maps a
    (method, path) to the status to answer instead."""

    def __init__(self):
        self.requests: list[tuple[str, str, dict, dict, bytes]] = []
        self.runs: dict[str, dict] = {}
        self.refuse: dict[tuple[str, str], int] = {}
        self._lock = threading.Lock()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            timeout = FLUSH_SECONDS  # a stuck connection cannot hold a thread

            def log_message(self, *args):
                pass

            def handle_one(self):
                url = urlsplit(self.path)
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                headers = {k.lower(): v for k, v in self.headers.items()}
                query = parse_qs(url.query)
                with stub._lock:
                    stub.requests.append((self.command, url.path, query, headers, body))
                    status, answer = stub._answer(self.command, url.path, headers, body)
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PATCH = handle_one

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()
        self._thread.join(FLUSH_SECONDS)

    # --- answers ---

    def _answer(self, method: str, path: str, headers: dict, body: bytes) -> tuple[int, dict]:
        if (method, path) in self.refuse:
            return self.refuse[(method, path)], {"detail": "refused by the stub"}
        if (method, path) == ("GET", "/info"):
            flags = {"zstd_compression_enabled": zstandard is not None}
            return 200, {"version": "0.0.0-stub", "instance_flags": flags}
        if (method, path) == ("POST", "/sessions"):
            project = json.loads(body)
            tenant = "00000000-0000-0000-0000-000000000001"
            return 200, {**project, "tenant_id": tenant, "reference_dataset_id": None}
        if method == "POST" and path == "/runs/multipart":
            self._multipart(headers, body)
        elif method == "POST" and path == "/runs/batch":
            batch = json.loads(body)
            for run in [*batch.get("post", []), *batch.get("patch", [])]:
                self._merge(run["id"], run)
        elif method == "POST" and path == "/runs":
            run = json.loads(body)
            self._merge(run["id"], run)
        elif method == "PATCH" and path.startswith("/runs/"):
            self._merge(path.rsplit("/", 1)[1], json.loads(body))
        else:
            return 404, {"detail": f"the stub has no {method} {path}"}
        return 202, {}

    def _merge(self, run_id: str, fields: dict) -> None:
        self.runs.setdefault(run_id, {"id": run_id}).update(fields)

    def _multipart(self, headers: dict, body: bytes) -> None:
        if headers.get("content-encoding") == "zstd":
            body = zstandard.ZstdDecompressor().stream_reader(body).read()
        head = f"Content-Type: {headers['content-type']}\r\n\r\n".encode()
        for part in BytesParser(policy=HTTP).parsebytes(head + body).iter_parts():
            # "post.<id>", "patch.<id>": the run; "post.<id>.inputs" and the like: one field
            _op, run_id, *field = part.get_param("name", header="content-disposition").split(".")
            value = json.loads(part.get_payload(decode=True))
            self._merge(run_id, {field[0]: value} if field else value)

    # --- reading what arrived ---

    def paths(self) -> list[tuple[str, str]]:
        return [(method, path) for method, path, *_ in self.requests]

    def roots(self) -> list[dict]:
        return sorted(
            (r for r in self.runs.values() if not r.get("parent_run_id")),
            key=lambda r: r["dotted_order"],
        )

    def children(self, run: dict) -> list[dict]:
        return sorted(
            (r for r in self.runs.values() if r.get("parent_run_id") == run["id"]),
            key=lambda r: r["dotted_order"],
        )


def _forget_langsmith_state() -> None:
    """The langsmith client caches the environment it read and its shared
    client: each test starts from (and leaves) a clean slate."""
    from langsmith import run_trees, utils

    utils.get_env_var.cache_clear()
    utils.get_tracer_project.cache_clear()
    run_trees._CLIENT = None


@pytest.fixture
def langsmith():
    """A stub of the LangSmith API, with LANGSMITH_ENDPOINT and
    LANGSMITH_API_KEY pointing at it and no other LANGSMITH_/LANGCHAIN_
    variable; tracing flags restored afterwards."""
    stub = LangSmithStub()
    with pytest.MonkeyPatch.context() as mp:
        for name in list(os.environ):
            if name.startswith(("LANGSMITH_", "LANGCHAIN_")):
                mp.delenv(name)
        mp.setenv("LANGSMITH_ENDPOINT", stub.url)
        mp.setenv("LANGSMITH_API_KEY", KEY)
        mp.setattr(tracing, "graph_runs", False)
        mp.setattr(tracing, "node_spans", False)
        _forget_langsmith_state()
        try:
            yield stub
        finally:
            tracing.flush_traces(FLUSH_SECONDS)  # nothing may arrive after the stub stops
            _forget_langsmith_state()
    _forget_langsmith_state()  # the conftest's LANGSMITH_TRACING=false counts again
    stub.close()


# --- a tiny project ------------------------------------------------------------------

APP = """
from typing import TypedDict

from svc import END, GraphBuilder, graph


class State(TypedDict, total=False):
    text: str
    words: list[str]


def split(state):
    return {"words": state["text"].split()}


def shout(state):
    return {"text": state["text"].upper()}


def length(state):
    return "long" if len(state["words"]) > 2 else "short"


@graph("main", entrypoint=True)
def main_graph():
    builder = GraphBuilder(State)
    builder.add_node("split", split)
    builder.add_node("shout", shout)
    builder.set_entry_point("split")
    builder.add_conditional_edges("split", length, {"long": "shout", "short": END})
    builder.add_edge("shout", END)
    return builder
"""

DESCRIPTION = {
    "name": "tiny",
    "version": "1.2.3",
    "entrypoint": "main",
    "kind": "graph_builder",
    "nodes": ["split", "shout"],
    "edges": [
        {"source": "__start__", "target": "split", "conditional": False},
        {"source": "shout", "target": "__end__", "conditional": False},
        {"source": "split", "target": "shout", "conditional": True},
        {"source": "split", "target": "__end__", "conditional": True},
    ],
    "state": [
        {"name": "text", "type": "string", "required": False, "append": False},
        {
            "name": "words",
            "type": "array",
            "items": {"type": "string"},
            "required": False,
            "append": False,
        },
    ],
}


@pytest.fixture
def tiny(tmp_path):
    root = tmp_path / "tiny"
    (root / "app").mkdir(parents=True)
    (root / "app" / "__init__.py").write_text(APP)
    (root / "application.yaml").write_text(
        "app: {name: tiny, version: 1.2.3}\n"
        "graph: {entrypoint: main}\n"
        "tracing: {enabled: true, project: tiny-traces}\n"
    )
    return root


def svc_py(*args: str, **env: str) -> subprocess.CompletedProcess:
    """`python -m svc ...` with no LANGSMITH_/LANGCHAIN_ variable but `env`."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("LANGSMITH_", "LANGCHAIN_"))}
    return subprocess.run(
        [sys.executable, "-m", "svc", *args],
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


# --- svc register ----------------------------------------------------------------------


def test_register_records_the_description_in_the_project(langsmith, tiny):
    r = svc_py("register", "--root", str(tiny), LANGSMITH_ENDPOINT=langsmith.url, **KEY_ENV)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "registered graph main in project tiny-traces\n"
    assert langsmith.paths() == [("POST", "/sessions")]
    _, _, query, headers, body = langsmith.requests[0]
    assert query == {"upsert": ["True"]}
    assert headers["x-api-key"] == KEY
    project = json.loads(body)
    assert project["name"] == "tiny-traces"
    assert project["description"] == "graph main of tiny"
    described = project["extra"]["metadata"]["svc_graph"]
    assert described.pop("components")["nodes"] == []  # nodes added without @graph_node
    assert described == DESCRIPTION


def test_describe_only_prints_the_description_without_key_or_request(langsmith, tiny):
    r = svc_py("register", "--root", str(tiny), "--describe-only", LANGSMITH_ENDPOINT=langsmith.url)
    assert r.returncode == 0, r.stderr
    described = json.loads(r.stdout)
    assert described.pop("components")["graphs"] == ["main"]
    assert described == DESCRIPTION
    assert langsmith.requests == []


def test_describe_only_needs_no_tracing_extra(tiny, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "langsmith", None)
    assert main(["register", "--root", str(tiny), "--describe-only"]) == 0
    assert json.loads(capsys.readouterr().out)["nodes"] == ["split", "shout"]


def test_register_without_a_key_fails_naming_it(langsmith, tiny):
    r = svc_py("register", "--root", str(tiny), LANGSMITH_ENDPOINT=langsmith.url)
    assert r.returncode == 1
    assert r.stderr.startswith("error: LANGSMITH_API_KEY is not set"), r.stderr
    assert "--describe-only" in r.stderr
    assert langsmith.requests == []


def test_register_reads_the_endpoint_and_key_from_env_yaml(langsmith, tiny):
    (tiny / "env.yaml").write_text(f"langsmith: {{endpoint: '{langsmith.url}', api_key: {KEY}}}\n")
    r = svc_py("register", "--root", str(tiny), LANGSMITH_PROJECT="from-env")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "registered graph main in project from-env\n"
    assert langsmith.paths() == [("POST", "/sessions")]
    assert langsmith.requests[0][3]["x-api-key"] == KEY


def test_register_reports_a_refusal(langsmith, tiny):
    langsmith.refuse[("POST", "/sessions")] = 403
    r = svc_py("register", "--root", str(tiny), LANGSMITH_ENDPOINT=langsmith.url, **KEY_ENV)
    assert r.returncode == 1
    assert r.stderr.startswith(f"error: cannot register the graph at {langsmith.url}: "), r.stderr
    assert "Traceback" not in r.stderr


def on_build(tiny, register: bool):
    (tiny / "application.yaml").write_text(
        "app: {name: tiny, version: 1.2.3}\n"
        "server: {auth: {type: none}}\n"
        "graph: {entrypoint: main}\n"
        f"tracing: {{project: tiny-traces, register_on_build: {str(register).lower()}}}\n"
    )


def test_register_on_build_registers_the_graph_when_the_service_starts(langsmith, tiny):
    from svc.server import create_app

    on_build(tiny, False)
    create_app(root=tiny)
    assert langsmith.requests == []
    config.clear()
    on_build(tiny, True)
    create_app(root=tiny)
    assert langsmith.paths() == [("POST", "/sessions")]
    project = json.loads(langsmith.requests[0][4])
    assert project["name"] == "tiny-traces"
    described = project["extra"]["metadata"]["svc_graph"]
    assert described.pop("components")["graphs"] == ["main"]
    assert described == DESCRIPTION  # what `svc register` records


def test_register_on_build_without_a_key_stops_the_start_up(langsmith, tiny, monkeypatch):
    monkeypatch.delenv("LANGSMITH_API_KEY")
    on_build(tiny, True)
    with pytest.raises(ConfigError) as e:
        SvcApp(tiny).build_graph()
    assert str(e.value) == (
        "LANGSMITH_API_KEY is not set: set it (in the environment or env.yaml) to register the "
        "graph as tracing.register_on_build asks, or set tracing.register_on_build to false"
    )
    assert langsmith.requests == []


def test_register_on_build_warns_when_langsmith_refuses_and_the_service_starts(
    langsmith, tiny, caplog
):
    from svc.server import create_app

    langsmith.refuse[("POST", "/sessions")] = 403
    on_build(tiny, True)
    with caplog.at_level(logging.WARNING, logger="svc.tracing"):
        create_app(root=tiny)  # an outage there does not stop a deployment
    assert langsmith.paths() == [("POST", "/sessions")]
    assert any(
        "tracing.register_on_build: the graph main was not registered: cannot register" in r.message
        for r in caplog.records
    ), caplog.text


def test_describe_graph_of_a_compiled_graph_and_of_a_langgraph_graph():
    described = project.describe_graph(ContractCore, name="a", version="1", entrypoint="core")
    assert described["kind"] == "compiled"
    assert described["nodes"] == ["prepare", "tag", "route", "greet"]
    assert described["state"][0] == {
        "name": "text",
        "type": "string",
        "required": True,
        "append": False,
    }
    assert described["state"][3] == {
        "name": "tags",
        "type": "array",
        "items": {"type": "string"},
        "required": False,
        "append": True,
    }
    assert "edges" not in described  # the topology is the generated run loop

    builder = GraphBuilder(State)
    builder.add_node("first", first).add_node("second", second).set_entry_point("first")
    builder.add_edge("first", "second").add_edge("second", END)
    described = project.describe_graph(builder.compile(), name="a", version="1", entrypoint="g")
    assert described["kind"] == "langgraph"
    assert described["nodes"] == ["first", "second"]
    assert {"source": "first", "target": "second", "conditional": False} in described["edges"]
    assert [f["name"] for f in described["state"]] == ["text", "count"]


# --- spans of runs ------------------------------------------------------------------------


def _wired(method: str, hook: str) -> bool:
    return hook in inspect.getsource(getattr(CompiledGraph, method))


def traced(graph_cls: type[CompiledGraph]) -> type[CompiledGraph]:
    """`graph_cls` calling the tracing hooks as svc.runtime calls them once
    they are wired in (the class itself then): see `traced_graph` and
    `traced_node`."""
    namespace = {}
    if not _wired("step", "traced_node"):

        def step(self, state, node, fn, native=True):
            if tracing.node_spans:
                fn = tracing.traced_node(node, fn)
            CompiledGraph.step(self, state, node, fn, native)

        namespace["step"] = step
    if not _wired("_run_to_deadline", "traced_graph"):

        def _run_to_deadline(self, state):
            # self is the run's own copy (_started): run() may be replaced on it
            if tracing.graph_runs:
                self.run = tracing.traced_graph(self.name, self.run)
            return graph_cls._run_to_deadline(self, state)

        namespace["_run_to_deadline"] = _run_to_deadline
    return type(graph_cls.__name__, (graph_cls,), namespace) if namespace else graph_cls


TRACED = {"app": {"name": "svc-tests-app"}, "tracing": {"enabled": True, "project": "traced"}}


def test_a_compiled_graph_sends_its_run_and_one_child_run_per_node(langsmith):
    assert tracing.configure_tracing(TRACED) is True
    assert os.environ["LANGSMITH_TRACING"] == "true"
    assert os.environ["LANGSMITH_PROJECT"] == "traced"
    graph = traced(ContractCore)()
    assert graph.invoke({"text": "hi"})["reply"] == "Hello, hi! count=1"
    assert asyncio.run(graph.ainvoke({"text": "yo"}))["reply"] == "Hello, yo! count=1"
    tracing.flush_traces(FLUSH_SECONDS)

    assert ("POST", "/runs/multipart") in langsmith.paths()
    roots = langsmith.roots()
    assert [r["name"] for r in roots] == ["contract_core", "contract_core"]
    for root, text in zip(roots, ["hi", "yo"], strict=True):
        assert root["run_type"] == "chain" and root["session_name"] == "traced"
        assert root["inputs"]["text"] == text and root["outputs"]["count"] == 1
        nodes = langsmith.children(root)
        # route is a condition in the run loop, not a node that runs
        assert [n["name"] for n in nodes] == ["prepare", "tag", "greet"]
        assert all(n["run_type"] == "chain" and n["trace_id"] == root["id"] for n in nodes)
        prepare, tag, greet = nodes
        assert prepare["inputs"] == {
            "text": text,
            "mode": "normal",
            "count": 0,
            "tags": [],
            "reply": None,
        }
        assert prepare["outputs"] == {"count": 1}
        assert (tag["inputs"]["count"], tag["outputs"]) == (1, {"tags": "seen"})
        assert greet["inputs"]["tags"] == ["seen"]  # the state before the node
        assert greet["outputs"] == {"reply": f"Hello, {text}! count=1"}
        assert all(n.get("end_time") and not n.get("error") for n in [root, *nodes])
    assert len(langsmith.runs) == 8


def test_a_failing_node_ends_its_run_and_the_graphs_with_the_error(langsmith):
    tracing.configure_tracing(TRACED)
    with pytest.raises(SvcError, match="deliberate failure"):
        traced(ContractCore)().invoke({"text": "panic"})
    tracing.flush_traces(FLUSH_SECONDS)
    (root,) = langsmith.roots()
    (prepare,) = langsmith.children(root)
    assert prepare["name"] == "prepare" and "deliberate failure" in prepare["error"]
    assert root["error"] and root.get("end_time")


def test_trace_nodes_false_sends_the_graph_run_only(langsmith):
    tracing.configure_tracing({**TRACED, "tracing": {**TRACED["tracing"], "trace_nodes": False}})
    assert (tracing.graph_runs, tracing.node_spans) == (True, False)
    traced(ContractCore)().invoke({"text": "hi"})
    tracing.flush_traces(FLUSH_SECONDS)
    assert [r["name"] for r in langsmith.runs.values()] == ["contract_core"]


def test_tracing_off_sends_nothing(langsmith, monkeypatch):
    monkeypatch.setenv("LANGSMITH_TRACING", "false")  # as the config leaves it
    assert tracing.configure_tracing({"tracing": {"enabled": False}}) is False
    assert (tracing.graph_runs, tracing.node_spans) == (False, False)
    traced(ContractCore)().invoke({"text": "hi"})
    # the hooks themselves pass through when LangSmith tracing is off
    assert tracing.traced_node("n", lambda s: {"x": 1})({}) == {"x": 1}
    assert tracing.traced_graph("g", lambda s: s)({"a": 1}) == {"a": 1}
    _langgraph_graph().invoke({"text": "hi"})
    tracing.flush_traces(FLUSH_SECONDS)
    assert langsmith.requests == []


class State(TypedDict, total=False):
    text: str
    count: int


def first(state):
    return {"count": 1}


def second(state):
    return {"text": state["text"] + "!"}


def to_second(state):
    return "go"


def _langgraph_graph():
    builder = GraphBuilder(State)
    builder.add_node("first", first).add_node("second", second).set_entry_point("first")
    builder.add_conditional_edges("first", to_second, {"go": "second"})
    builder.add_edge("second", END)
    return builder.compile()


def test_a_langgraph_graph_gets_one_child_run_per_node_from_langchain(langsmith):
    """No SDK hook: LangGraph's own callbacks trace the graph and its nodes."""
    tracing.configure_tracing(TRACED)
    assert _langgraph_graph().invoke({"text": "hi"}) == {"text": "hi!", "count": 1}
    tracing.flush_traces(FLUSH_SECONDS)
    (root,) = langsmith.roots()
    assert (root["name"], root["session_name"]) == ("LangGraph", "traced")
    nodes = langsmith.children(root)
    assert [n["name"] for n in nodes] == ["first", "second"]
    assert nodes[0]["inputs"] == {"text": "hi"} and nodes[0]["outputs"] == {"count": 1}
    # the router of a conditional edge runs inside its source node's run
    assert [r["name"] for r in langsmith.children(nodes[0])] == ["to_second"]


def test_configure_tracing_defaults_and_variables_already_set(langsmith, monkeypatch):
    assert tracing.configure_tracing({"app": {"name": "desk"}, "tracing": {"enabled": True}})
    assert os.environ["LANGSMITH_PROJECT"] == "desk"  # no tracing.project: the app's name
    assert (tracing.graph_runs, tracing.node_spans) == (True, True)
    monkeypatch.setenv("LANGSMITH_PROJECT", "ops")
    monkeypatch.setenv("LANGSMITH_TRACING", "false")
    assert tracing.configure_tracing(TRACED) is True
    assert (os.environ["LANGSMITH_PROJECT"], os.environ["LANGSMITH_TRACING"]) == ("ops", "false")
    assert tracing.tracing_project(TRACED) == "ops"
    traced(ContractCore)().invoke({"text": "hi"})  # LANGSMITH_TRACING=false wins
    tracing.flush_traces(FLUSH_SECONDS)
    assert langsmith.runs == {}
