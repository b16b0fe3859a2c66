"""OpenTelemetry (svc.telemetry): the span tree and the metrics of
docs/telemetry.md, read back from the SDK's in-memory exporter and reader,
through the app's HTTP routes; traceparent in and out; an unreachable
collector. The same tree read back from a real collector (Jaeger), on every
target, is the e2e test `telemetry`."""

import json
import socket
import time

import pytest
from fastapi.testclient import TestClient
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from svc import telemetry
from svc.errors import SvcError
from svc.runtime import (
    CompiledGraph,
    Field,
    HttpTool,
    Model,
    StateSchema,
    call_http_tool,
    chat,
    cond_eq,
    map_items,
    register_http_tool,
)
from svc.server import create_app

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
CALLER_SPAN = "00f067aa0ba902b7"
TRACEPARENT = f"00-{TRACE_ID}-{CALLER_SPAN}-01"
CONFIG = {
    "app": {"name": "traced"},
    "server": {"auth": {"type": "none"}},
    "tracing": {"enabled": True},
}
MODEL = Model("gpt-test", base_url_env="TRACED_MODEL_URL", api_key_env="TRACED_MODEL_KEY")
LOOKUP = register_http_tool("lookup", HttpTool("env:TRACED_TOOL_URL", timeout_ms=2000))


def ask(state):
    return {"answer": chat("ask", MODEL, "Be brief.", state["question"])}


def lookup(state):
    return {"record": call_http_tool("lookup", LOOKUP, {"q": state["question"]})}


def boom(state):
    raise RuntimeError("deliberate failure")


class Traced(CompiledGraph):
    """ask (llm) -> route (router) -> lookup (tool) | boom (function)."""

    name = "traced"
    schema = StateSchema(
        [
            Field("question", "string", required=True),
            Field("answer", "string"),
            Field("record", "object"),
        ]
    )
    node_kinds = {"ask": "llm", "route": "router", "lookup": "tool", "boom": "function"}  # noqa: RUF012

    def run(self, state):
        self.check(0)
        self.step(state, "ask", ask)
        self.check(1)
        self.routed("route")
        if cond_eq(state["question"], "fail"):
            self.step(state, "boom", boom)
        else:
            self.step(state, "lookup", lookup)
        return state


@pytest.fixture
def upstream(stub, monkeypatch):
    """A model stub reporting token usage and an HTTP tool stub; both keep
    what they received."""
    reply = {
        "choices": [{"message": {"role": "assistant", "content": "short"}}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 3},
    }
    model = stub(lambda req: (200, json.dumps(reply).encode()))
    tool = stub(lambda req: (200, b'{"id": 7}'))
    monkeypatch.setenv("TRACED_MODEL_URL", model.url)
    monkeypatch.setenv("TRACED_MODEL_KEY", "k")
    monkeypatch.setenv("TRACED_TOOL_URL", tool.url + "/lookup")
    return model, tool


@pytest.fixture(params=["fastapi", "starlette"])
def traced(upstream, request):
    """A client of the Traced graph's app with telemetry on, its spans and
    metrics read back in memory: (client, spans(), metrics()). On both app
    classes (`uvicorn app.main:app` and `svc run`)."""
    exporter, reader = InMemorySpanExporter(), InMemoryMetricReader()
    assert telemetry.configure(CONFIG, span_exporter=exporter, metric_reader=reader)
    client = TestClient(create_app(Traced(), config=CONFIG, framework=request.param))
    client.__enter__()

    def spans():
        telemetry.flush()
        return {s.name: s for s in exporter.get_finished_spans()}

    def metrics():
        found = {}
        for rm in reader.get_metrics_data().resource_metrics:
            for sm in rm.scope_metrics:
                for m in sm.metrics:
                    found.setdefault(m.name, []).extend(m.data.data_points)
        return found

    yield client, spans, metrics
    client.__exit__(None, None, None)


def test_a_run_is_one_span_tree_under_the_server_span(traced, upstream):
    client, spans, _ = traced
    assert client.get("/health").status_code == 200  # not traced: probes would bury the runs
    r = client.post("/invoke", json={"state": {"question": "where?"}})
    assert r.status_code == 200, r.text
    s = spans()
    assert set(s) == {
        "POST /invoke",
        "invoke_workflow traced",
        "llm ask",
        "chat gpt-test",
        "router route",
        "tool lookup",
        "execute_tool lookup",
    }
    parent = {name: span.parent.span_id if span.parent else None for name, span in s.items()}
    sid = {name: span.context.span_id for name, span in s.items()}
    assert parent["POST /invoke"] is None
    assert parent["invoke_workflow traced"] == sid["POST /invoke"]
    for node in ("llm ask", "router route", "tool lookup"):
        assert parent[node] == sid["invoke_workflow traced"], node
    assert parent["chat gpt-test"] == sid["llm ask"]
    assert parent["execute_tool lookup"] == sid["tool lookup"]
    assert len({span.context.trace_id for span in s.values()}) == 1

    server = s["POST /invoke"]
    assert server.kind == SpanKind.SERVER
    assert dict(server.attributes) == {
        "http.request.method": "POST",
        "http.route": "/invoke",
        "http.response.status_code": 200,
        "url.scheme": "http",
    }
    run = s["invoke_workflow traced"].attributes
    assert run["gen_ai.operation.name"] == "invoke_workflow"
    assert run["gen_ai.workflow.name"] == "traced"
    assert dict(s["llm ask"].attributes) == {"svc.node.id": "ask", "svc.node.kind": "llm"}
    call = s["chat gpt-test"]
    assert call.kind == SpanKind.CLIENT
    assert dict(call.attributes) == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "gpt-test",
        "gen_ai.usage.input_tokens": 11,
        "gen_ai.usage.output_tokens": 3,
    }
    tool = s["execute_tool lookup"].attributes
    assert tool["gen_ai.operation.name"] == "execute_tool"
    assert tool["gen_ai.tool.name"] == "lookup"
    assert all(span.status.status_code != StatusCode.ERROR for span in s.values())
    # No prompt or reply text unless asked for.
    assert not any("gen_ai.input.messages" in span.attributes for span in s.values())


def test_the_callers_traceparent_is_kept_and_sent_upstream(traced, upstream):
    client, spans, _ = traced
    model, tool = upstream
    r = client.post(
        "/invoke", json={"state": {"question": "where?"}}, headers={"traceparent": TRACEPARENT}
    )
    assert r.status_code == 200, r.text
    s = spans()
    assert {format(span.context.trace_id, "032x") for span in s.values()} == {TRACE_ID}
    assert format(s["POST /invoke"].parent.span_id, "016x") == CALLER_SPAN
    # Each upstream call carries the trace, its parent the span of the call.
    sent_model = model.received[0].headers["traceparent"].split("-")
    sent_tool = tool.received[0].headers["traceparent"].split("-")
    assert sent_model[1] == sent_tool[1] == TRACE_ID
    assert sent_model[2] == format(s["chat gpt-test"].context.span_id, "016x")
    assert sent_tool[2] == format(s["execute_tool lookup"].context.span_id, "016x")


def test_a_failing_node_marks_its_span_and_the_runs_with_the_code(traced):
    client, spans, metrics = traced
    r = client.post("/invoke", json={"state": {"question": "fail"}})
    assert r.status_code == 500 and r.json()["error"]["code"] == "execution_error"
    s = spans()
    for name in ("function boom", "invoke_workflow traced"):
        assert s[name].status.status_code == StatusCode.ERROR, name
        assert s[name].attributes["error.type"] == "execution_error", name
    assert s["POST /invoke"].status.status_code == StatusCode.ERROR
    assert s["POST /invoke"].attributes["error.type"] == "500"
    assert s["llm ask"].status.status_code == StatusCode.UNSET
    runs = metrics()["svc.runs"]
    assert [(p.attributes["svc.run.outcome"], p.value) for p in runs] == [("execution_error", 1)]


def test_metrics_count_requests_runs_nodes_and_tokens(traced):
    client, _, metrics = traced
    for _ in range(2):
        assert client.post("/invoke", json={"state": {"question": "q"}}).status_code == 200
    assert client.post("/invoke", json={"state": {}}).status_code == 422
    m = metrics()
    by_status = {
        p.attributes["http.response.status_code"]: p.count
        for p in m["http.server.request.duration"]
        if p.attributes.get("http.route") == "/invoke"
    }
    assert by_status == {200: 2, 422: 1}
    assert [(p.attributes["svc.run.outcome"], p.value) for p in m["svc.runs"]] == [("ok", 2)]
    kinds = {p.attributes["svc.node.kind"]: p.count for p in m["svc.node.duration"]}
    assert kinds == {"llm": 2, "router": 2, "tool": 2}
    tokens = {p.attributes["gen_ai.token.type"]: p.sum for p in m["gen_ai.client.token.usage"]}
    assert tokens == {"input": 22, "output": 6}
    (duration,) = m["gen_ai.client.operation.duration"]
    assert duration.count == 2 and duration.attributes["gen_ai.request.model"] == "gpt-test"


def test_trace_nodes_false_keeps_the_run_and_calls_without_node_spans(upstream):
    exporter = InMemorySpanExporter()
    config = {**CONFIG, "tracing": {"enabled": True, "trace_nodes": False}}
    telemetry.configure(config, span_exporter=exporter, metric_reader=InMemoryMetricReader())
    Traced().invoke({"question": "q"})
    telemetry.flush()
    s = {span.name: span for span in exporter.get_finished_spans()}
    assert set(s) == {"invoke_workflow traced", "chat gpt-test", "execute_tool lookup"}
    run = s["invoke_workflow traced"].context.span_id
    assert all(s[n].parent.span_id == run for n in ("chat gpt-test", "execute_tool lookup"))


def test_message_content_only_with_the_capture_flag(upstream, monkeypatch):
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    exporter = InMemorySpanExporter()
    telemetry.configure(CONFIG, span_exporter=exporter, metric_reader=InMemoryMetricReader())
    Traced().invoke({"question": "where?"})
    telemetry.flush()
    (call,) = [s for s in exporter.get_finished_spans() if s.name == "chat gpt-test"]
    assert json.loads(call.attributes["gen_ai.input.messages"]) == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "where?"},
    ]
    assert json.loads(call.attributes["gen_ai.output.messages"]) == [
        {"role": "assistant", "content": "short"}
    ]


def test_tracing_off_records_nothing_and_sends_no_traceparent(upstream):
    model, _ = upstream
    assert telemetry.configure({"tracing": {"enabled": False}}) is False
    Traced().invoke({"question": "q"})
    assert "traceparent" not in model.received[0].headers


def test_otel_sdk_disabled_turns_telemetry_off_at_run_time(upstream, monkeypatch):
    model, _ = upstream
    # An exporter value configure() would refuse: with the SDK off it is not read.
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "zipkin")
    monkeypatch.setenv("OTEL_SDK_DISABLED", "TRUE")
    assert telemetry.configure(CONFIG) is False
    assert not telemetry.enabled()
    app = create_app(Traced(), config=CONFIG, framework="starlette")
    assert not any(m.cls is telemetry.ServerSpans for m in app.user_middleware)
    with TestClient(app) as client:
        r = client.post(
            "/invoke", json={"state": {"question": "q"}}, headers={"traceparent": TRACEPARENT}
        )
    assert r.status_code == 200
    assert "traceparent" not in model.received[0].headers


def test_a_streamed_run_left_before_it_began_still_ends_its_span(upstream):
    """A client gone while the run waits for a worker thread: the run still
    runs, stops at its first check, and its span ends as
    client_closed_request (before, the waiting run was dropped: no span)."""
    import asyncio
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from svc.streaming import RunStream

    exporter = InMemorySpanExporter()
    telemetry.configure(CONFIG, span_exporter=exporter, metric_reader=InMemoryMetricReader())
    stream = RunStream(lambda *event: None)

    async def leave() -> None:
        loop = asyncio.get_running_loop()
        loop.set_default_executor(ThreadPoolExecutor(max_workers=1))
        gate = threading.Event()
        busy = loop.run_in_executor(None, gate.wait)  # the run waits behind it
        run = asyncio.ensure_future(Traced().arun({"question": "q"}, emit=stream))
        for _ in range(3):
            await asyncio.sleep(0)
        stream.cancel()
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run
        gate.set()
        await busy

    asyncio.run(leave())  # waits for the executor's threads
    telemetry.flush()
    runs = [s for s in exporter.get_finished_spans() if s.name == "invoke_workflow traced"]
    assert [s.attributes.get("error.type") for s in runs] == ["client_closed_request"]


def closed_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_unreachable_collector_changes_no_answer_and_stops_in_bounded_time(
    upstream, monkeypatch
):
    # OTLP over HTTP to a port nothing listens on, a short export interval.
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "otlp")
    monkeypatch.setenv("OTEL_METRICS_EXPORTER", "otlp")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{closed_port()}")
    monkeypatch.setenv("OTEL_BSP_SCHEDULE_DELAY", "10")
    monkeypatch.setenv("OTEL_METRIC_EXPORT_INTERVAL", "50")
    assert telemetry.configure(CONFIG)
    with TestClient(create_app(Traced(), config=CONFIG, framework="starlette")) as client:
        for _ in range(20):
            r = client.post("/invoke", json={"state": {"question": "q"}})
            assert r.status_code == 200 and r.json()["result"]["answer"] == "short"
        started = time.monotonic()
    # The app's lifespan ended with telemetry.shutdown(): bounded, not the
    # exporters' own retries.
    assert time.monotonic() - started < telemetry.SHUTDOWN_SECONDS + 1
    assert not telemetry.enabled()


def test_unknown_protocol_and_exporter_values_are_refused(monkeypatch):
    from svc.errors import ConfigError

    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "otlp")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
    with pytest.raises(ConfigError, match="OTEL_EXPORTER_OTLP_PROTOCOL 'http/json'"):
        telemetry.configure(CONFIG)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "zipkin")
    with pytest.raises(ConfigError, match="OTEL_TRACES_EXPORTER 'zipkin'"):
        telemetry.configure(CONFIG)


def test_the_service_name_defaults_to_the_app_and_the_variables_win(monkeypatch):
    def resource():
        exporter = InMemorySpanExporter()
        telemetry.configure(CONFIG, span_exporter=exporter, metric_reader=InMemoryMetricReader())
        with telemetry.workflow_span("traced"):
            pass
        telemetry.flush()
        (span,) = exporter.get_finished_spans()
        return span.resource.attributes

    first = resource()
    monkeypatch.setenv("OTEL_SERVICE_NAME", "desk")
    monkeypatch.setenv("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment.name=test")
    second = resource()
    assert first["service.name"] == "traced"
    assert second["service.name"] == "desk"
    assert second["deployment.environment.name"] == "test"


def test_the_batch_queue_is_every_targets_unless_the_variables_set_it(monkeypatch):
    monkeypatch.delenv("OTEL_BSP_MAX_QUEUE_SIZE", raising=False)
    monkeypatch.delenv("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", raising=False)
    assert telemetry._batching() == {"max_queue_size": 8192, "max_export_batch_size": 2048}
    monkeypatch.setenv("OTEL_BSP_MAX_QUEUE_SIZE", "100")
    assert telemetry._batching() == {"max_export_batch_size": 100}
    monkeypatch.setenv("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "50")
    assert telemetry._batching() == {}


# --- parallel branches and map (svc.parallel) ----------------------------------------


def fan_graph(branches, kinds=None):
    """A graph whose parallel node `fan` runs `branches` ({name: [(node,
    body), ...]}; a body that is a dict of branches: a nested parallel node)
    and joins at `merge`, as the backend writes it."""

    class Fan(CompiledGraph):
        name = "fan"
        schema = StateSchema([Field("a", "string"), Field("log", "array", append=True)])
        max_steps = 20
        node_kinds = {"fan": "parallel", "merge": "join", **(kinds or {})}  # noqa: RUF012

        def run(self, state):
            current, steps = "fan", self.steps()
            while current != "end":
                steps.take()
                if current == "fan":
                    walks = [(name, self.walk(chain)) for name, chain in branches.items()]
                    self.parallel(state, "fan", steps, walks, max_concurrency=0)
                    current = "merge"
                else:
                    self.joined("merge")
                    current = "end"
            return state

        def walk(self, chain):
            def branch(state, steps):
                for node, body in chain:
                    steps.take()
                    if isinstance(body, dict):
                        walks = [(name, self.walk(inner)) for name, inner in body.items()]
                        self.parallel(state, node, steps, walks)
                    else:
                        self.step(state, node, body, native=False)

            return branch

    return Fan()


def logs(entry, seconds=0.0):
    def body(state):
        time.sleep(seconds)
        return {"log": [entry]}

    return body


class Child(CompiledGraph):
    """The child run of a map item: `answer`, which fails on a "fail" item."""

    name = "child"
    schema = StateSchema([Field("item", "object"), Field("answer", "string")])
    node_kinds = {"answer": "function"}  # noqa: RUF012

    def run(self, state):
        self.check(0)
        self.step(state, "answer", answer)
        return state


def answer(state):
    item = state["item"]
    if "fail" in item:
        raise SvcError(500, "upstream_error", "the item failed", {"node": "answer"})
    return {"answer": item["text"]}


class Mapped(CompiledGraph):
    name = "mapped"
    schema = StateSchema([Field("items", "array"), Field("answers", "array")])
    node_kinds = {"each": "map"}  # noqa: RUF012
    child = Child()

    def run(self, state):
        self.check(0)
        self.step(state, "each", self.each, native=False)
        return state

    def each(self, state):
        def run_item(k, item, left):
            if "bug" in item:
                raise RuntimeError("a bug")
            return self.child.run_child("each", {"item": item}, left).get("answer")

        return {"answers": map_items("each", state.get("items"), 10, 2, run_item, 5.0)}


def in_memory(config=CONFIG):
    """Telemetry on, read back in memory: (finished spans(), metrics reader)."""
    exporter, reader = InMemorySpanExporter(), InMemoryMetricReader()
    assert telemetry.configure(config, span_exporter=exporter, metric_reader=reader)

    def spans():
        telemetry.flush()
        return list(exporter.get_finished_spans())

    return spans, reader


def named(spans, name):
    (found,) = [s for s in spans if s.name == name]
    return found


def test_each_branch_run_is_a_span_under_the_parallel_nodes_and_over_its_nodes():
    spans, reader = in_memory()
    graph = fan_graph(
        {
            "weather": [("weather", logs("w", 0.05))],
            "news": [("news", logs("n")), ("more", lambda state: None)],
        }
    )
    assert graph.invoke({})["log"] == ["w", "n"]
    s = spans()
    assert sorted(x.name for x in s) == sorted(
        [
            "invoke_workflow fan",
            "parallel fan",
            "branch weather",
            "branch news",
            "node weather",
            "node news",
            "node more",
            "join merge",
        ]
    )
    run, fan = named(s, "invoke_workflow fan"), named(s, "parallel fan")
    assert fan.parent.span_id == run.context.span_id
    assert named(s, "join merge").parent.span_id == run.context.span_id
    for branch, nodes in (("weather", ["weather"]), ("news", ["news", "more"])):
        span = named(s, f"branch {branch}")
        assert span.kind == SpanKind.INTERNAL
        assert span.parent.span_id == fan.context.span_id
        assert span.context.trace_id == run.context.trace_id
        assert dict(span.attributes) == {"svc.node.id": "fan", "svc.branch": branch}
        assert span.status.status_code == StatusCode.UNSET
        for node in nodes:
            assert named(s, f"node {node}").parent.span_id == span.context.span_id
    # Not measured: svc.node.duration has the nodes' kinds only.
    kinds = set()
    for rm in reader.get_metrics_data().resource_metrics:
        for sm in rm.scope_metrics:
            for m in sm.metrics:
                if m.name == "svc.node.duration":
                    kinds.update(p.attributes["svc.node.kind"] for p in m.data.data_points)
    assert kinds == {"parallel", "node", "join"}


def test_a_failing_branch_marks_its_span_and_a_cancelled_one_ends_as_its_node_would():
    spans, _ = in_memory()
    boom = SvcError(500, "upstream_error", "the call failed", {"node": "bad"})

    def fails(state):
        time.sleep(0.05)
        raise boom

    graph = fan_graph(
        {
            "early": [("early", logs("e", 0.15))],
            "bad": [("bad", fails)],
            "late": [("late", logs("l", 0.1)), ("later", logs("l2"))],
        }
    )
    with pytest.raises(SvcError) as failed:
        graph.invoke({})
    assert failed.value.code == "upstream_error"
    s = spans()
    assert named(s, "branch early").status.status_code == StatusCode.UNSET
    for name, code in (
        ("branch bad", "upstream_error"),
        ("node bad", "upstream_error"),
        ("parallel fan", "upstream_error"),
        # cancelled by the failure at its next step, which never began
        ("branch late", "client_closed_request"),
    ):
        assert named(s, name).status.status_code == StatusCode.ERROR, name
        assert named(s, name).attributes["error.type"] == code, name
    assert named(s, "node late").status.status_code == StatusCode.UNSET
    assert not [x for x in s if x.name == "node later"]
    assert named(s, "node late").parent.span_id == named(s, "branch late").context.span_id


def test_a_nested_parallels_branches_hang_from_its_node_span_in_the_outer_branch():
    spans, _ = in_memory()
    inner = {"x": [("x", logs("x"))], "y": [("y", logs("y"))]}
    graph = fan_graph(
        {"outer": [("inner", inner)], "right": [("r", logs("r"))]}, kinds={"inner": "parallel"}
    )
    assert graph.invoke({})["log"] == ["x", "y", "r"]
    s = spans()
    outer, node = named(s, "branch outer"), named(s, "parallel inner")
    assert node.parent.span_id == outer.context.span_id
    for name in ("x", "y"):
        branch = named(s, f"branch {name}")
        assert branch.parent.span_id == node.context.span_id
        assert dict(branch.attributes) == {"svc.node.id": "inner", "svc.branch": name}
        assert named(s, f"node {name}").parent.span_id == branch.context.span_id
    assert named(s, "branch right").attributes["svc.node.id"] == "fan"


def test_each_map_item_is_a_span_under_the_map_nodes_and_over_its_child_run():
    spans, _ = in_memory()
    items = [{"text": "a"}, {"text": "b"}, {"text": "c"}]
    assert Mapped().invoke({"items": items})["answers"] == ["a", "b", "c"]
    s = spans()
    node = named(s, "map each")
    assert node.parent.span_id == named(s, "invoke_workflow mapped").context.span_id
    answers = [x for x in s if x.name == "function answer"]
    assert len(answers) == 3
    for k in range(3):
        item = named(s, f"item {k}")
        assert item.kind == SpanKind.INTERNAL
        assert item.parent.span_id == node.context.span_id
        assert dict(item.attributes) == {"svc.node.id": "each", "svc.item": k}
        assert isinstance(item.attributes["svc.item"], int)
        assert item.status.status_code == StatusCode.UNSET
        assert len([x for x in answers if x.parent.span_id == item.context.span_id]) == 1


def test_a_failing_item_marks_its_span_with_the_code_and_a_bug_as_an_execution_error():
    spans, _ = in_memory()
    with pytest.raises(SvcError) as failed:
        Mapped().invoke({"items": [{"text": "a"}, {"fail": True}]})
    assert (failed.value.code, failed.value.details) == (
        "upstream_error",
        {"node": "answer", "item": 1},
    )
    s = spans()
    assert named(s, "item 0").status.status_code == StatusCode.UNSET
    for name in ("item 1", "map each"):
        assert named(s, name).status.status_code == StatusCode.ERROR, name
        assert named(s, name).attributes["error.type"] == "upstream_error", name

    spans, _ = in_memory()
    with pytest.raises(SvcError) as failed:
        Mapped().invoke({"items": [{"bug": True}]})
    assert failed.value.code == "execution_error"
    assert failed.value.message == 'node "each" failed: RuntimeError: a bug'
    assert named(spans(), "item 0").attributes["error.type"] == "execution_error"


def test_trace_nodes_false_leaves_out_branch_and_item_spans():
    spans, _ = in_memory({**CONFIG, "tracing": {"enabled": True, "trace_nodes": False}})
    fan_graph({"a": [("a", logs("a"))], "b": [("b", logs("b"))]}).invoke({})
    Mapped().invoke({"items": [{"text": "a"}]})
    assert sorted(x.name for x in spans()) == ["invoke_workflow fan", "invoke_workflow mapped"]
