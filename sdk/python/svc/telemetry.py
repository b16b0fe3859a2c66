"""OpenTelemetry traces and metrics over OTLP (the "tracing" extra): what
`settings.tracing.enabled` means on every target, with the span tree and the
metrics of docs/telemetry.md, so a dashboard built for one target reads the
others.

Configured only by the standard variables: OTEL_EXPORTER_OTLP_ENDPOINT (and
the per-signal endpoints, headers, timeout), OTEL_EXPORTER_OTLP_PROTOCOL
(`http/protobuf` by default, or `grpc`), OTEL_SERVICE_NAME (default: the
app's name, which is the graph's id in a generated project),
OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER, OTEL_BSP_*, and
OTEL_TRACES_EXPORTER / OTEL_METRICS_EXPORTER (`otlp` or `none`), and
OTEL_SDK_DISABLED (`true`: off, as without `tracing.enabled`).

Spans wait in the batch processor's bounded queue and leave from its
thread, so a slow or missing collector never holds a request: when the
queue is full spans are dropped. `shutdown()` (the server's lifespan end,
on SIGTERM) exports what is queued, within a bound.

Everything here is a no-op until `configure()` turned it on, and cheap
then: the runtime calls `span()` on every node.
"""

from __future__ import annotations

import atexit
import contextlib
import inspect
import json
import os
import threading
import time
from collections.abc import Iterator, MutableMapping
from types import SimpleNamespace
from typing import Any

from svc.errors import ConfigError, SvcError, require

# The GenAI semantic conventions' names (their packages mark them
# deprecated while they move to semantic-conventions-genai; the strings stay).
OPERATION = "gen_ai.operation.name"
PROVIDER = "gen_ai.provider.name"
REQUEST_MODEL = "gen_ai.request.model"
INPUT_TOKENS = "gen_ai.usage.input_tokens"
OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
WORKFLOW = "gen_ai.workflow.name"
TOOL = "gen_ai.tool.name"
AGENT_ID = "gen_ai.agent.id"
AGENT_NAME = "gen_ai.agent.name"
ERROR_TYPE = "error.type"
NODE_ID = "svc.node.id"
NODE_KIND = "svc.node.kind"
BRANCH = "svc.branch"
ITEM = "svc.item"
OUTCOME = "svc.run.outcome"

# Buckets the conventions advise for the two GenAI histograms.
TOKEN_BUCKETS = [4**i for i in range(14)]
DURATION_BUCKETS = [0.01 * 2**i for i in range(14)]
# http.server.request.duration's: the HTTP conventions' advice.
HTTP_DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10]

PROTOCOLS = ("http/protobuf", "grpc")
# How long a stopping service waits for its last export, at most.
SHUTDOWN_SECONDS = 3.0

_on = False
_nodes = False  # `tracing.trace_nodes`: a span per node
_content = False  # CONTENT_FLAG: prompts and replies on chat spans
_tracer: Any = None
_providers: list[Any] = []
_instruments: dict[str, Any] = {}
_lock = threading.Lock()
_exit_hook = False
_globals_set = False


def enabled() -> bool:
    return _on


CONTENT_FLAG = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"


def _protocol(signal: str) -> str:
    value = (
        os.environ.get(f"OTEL_EXPORTER_OTLP_{signal}_PROTOCOL")
        or os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL")
        or "http/protobuf"
    ).strip()
    if value not in PROTOCOLS:
        raise ConfigError(
            f"OTEL_EXPORTER_OTLP_PROTOCOL {value!r} is not served: "
            f"use one of {', '.join(PROTOCOLS)}"
        )
    return value


def _exporter_wanted(variable: str) -> bool:
    value = (os.environ.get(variable) or "otlp").strip()
    if value not in ("otlp", "none"):
        raise ConfigError(f"{variable} {value!r} is not served: use otlp or none")
    return value == "otlp"


def _span_exporter() -> Any:
    if _protocol("TRACES") == "grpc":
        require("opentelemetry.exporter.otlp.proto.grpc", "tracing", "OTLP over gRPC")
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
    else:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    return OTLPSpanExporter()


def _metric_exporter() -> Any:
    if _protocol("METRICS") == "grpc":
        require("opentelemetry.exporter.otlp.proto.grpc", "tracing", "OTLP over gRPC")
        from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import OTLPMetricExporter
    else:
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
    return OTLPMetricExporter()


def _resource(default_name: str) -> Any:
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource

    resource = Resource.create()  # OTEL_RESOURCE_ATTRIBUTES, OTEL_SERVICE_NAME
    if str(resource.attributes.get(SERVICE_NAME, "")).startswith("unknown_service"):
        resource = resource.merge(Resource({SERVICE_NAME: default_name}))
    return resource


def sdk_disabled() -> bool:
    """OTEL_SDK_DISABLED=true, the standard switch that turns the SDK off at
    run time: configure() then leaves telemetry off, so nothing is traced,
    measured, exported or propagated and no middleware is added (the SDK's
    own providers would still run svc's span code, as no-ops)."""
    return os.environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true"


def configure(config: dict, *, span_exporter: Any = None, metric_reader: Any = None) -> bool:
    """Turns OpenTelemetry on when `tracing.enabled`; returns whether it is on.

    The tracer and meter providers become the process's global ones. Tests
    pass `span_exporter` / `metric_reader` (an in-memory exporter or
    reader) instead of OTLP. Configuring again replaces the providers."""
    global _on, _nodes, _content, _tracer, _api
    section = config.get("tracing") or {}
    if not section.get("enabled") or sdk_disabled():
        _on = False
        return False
    require("opentelemetry.sdk", "tracing", "configure_tracing()")
    from opentelemetry import context, metrics, propagate, trace
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
    from opentelemetry.sdk.metrics.view import ExplicitBucketHistogramAggregation, View
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    from svc.config import app_identity

    name, version = app_identity(config)
    resource = _resource(name)
    shutdown(0.5)
    # No exit hook of their own: theirs waits 30 s for a missing collector;
    # shutdown() is bounded (the server's lifespan, and atexit here).
    # The sampler is OTEL_TRACES_SAMPLER's.
    tracer_provider = TracerProvider(resource=resource, shutdown_on_exit=False)
    if span_exporter is None and _exporter_wanted("OTEL_TRACES_EXPORTER"):
        span_exporter = _span_exporter()
    if span_exporter is not None:
        tracer_provider.add_span_processor(BatchSpanProcessor(span_exporter, **_batching()))
    readers = []
    if metric_reader is not None:
        readers.append(metric_reader)
    elif _exporter_wanted("OTEL_METRICS_EXPORTER"):
        readers.append(PeriodicExportingMetricReader(_metric_exporter()))
    meter_provider = MeterProvider(
        resource=resource,
        shutdown_on_exit=False,
        metric_readers=readers,
        views=[
            View(
                instrument_name="gen_ai.client.token.usage",
                aggregation=ExplicitBucketHistogramAggregation(TOKEN_BUCKETS),
            ),
            View(
                instrument_name="gen_ai.client.operation.duration",
                aggregation=ExplicitBucketHistogramAggregation(DURATION_BUCKETS),
            ),
        ],
    )
    global _globals_set
    if not _globals_set:
        # The API's global providers can be set once per process (for code
        # of the user's own that asks them for a tracer); svc's spans use
        # the providers of the last configure().
        trace.set_tracer_provider(tracer_provider)
        metrics.set_meter_provider(meter_provider)
        _globals_set = True
    with _lock:
        _providers[:] = [tracer_provider, meter_provider]
    _tracer = tracer_provider.get_tracer("svc", version)
    meter = meter_provider.get_meter("svc", version)
    _instruments.update(
        tokens=meter.create_histogram(
            "gen_ai.client.token.usage", unit="{token}", description="Tokens used by model calls"
        ),
        model_duration=meter.create_histogram(
            "gen_ai.client.operation.duration", unit="s", description="Duration of model calls"
        ),
        runs=meter.create_counter("svc.runs", unit="{run}", description="Runs by outcome"),
        node_duration=meter.create_histogram(
            "svc.node.duration", unit="s", description="Duration of node runs by kind"
        ),
        http_duration=meter.create_histogram(
            "http.server.request.duration",
            unit="s",
            description="Duration of HTTP server requests",
            explicit_bucket_boundaries_advisory=HTTP_DURATION_BUCKETS,
        ),
    )
    _api = SimpleNamespace(
        attach=context.attach,
        detach=context.detach,
        set_span_in_context=trace.set_span_in_context,
        inject=propagate.inject,
        extract=propagate.extract,
        propagator=propagate.get_global_textmap,
        Status=trace.Status,
        ERROR=trace.StatusCode.ERROR,
        INTERNAL=trace.SpanKind.INTERNAL,
        CLIENT=trace.SpanKind.CLIENT,
        SERVER=trace.SpanKind.SERVER,
    )
    _nodes = section.get("trace_nodes", True) is not False
    _content = os.environ.get(CONTENT_FLAG, "").strip().lower() == "true"
    _on = True
    global _exit_hook
    if not _exit_hook:
        atexit.register(shutdown)
        _exit_hook = True
    return True


def flush(timeout: float = 5.0) -> None:
    """Exports the spans queued so far (tests read them back after it)."""
    with _lock:
        providers = list(_providers)
    if providers:
        providers[0].force_flush(int(timeout * 1000))


# Batching defaults of every svc target (docs/telemetry.md), larger than the
# SDK's 2048-span queue and 512-span batches, which a busy service fills
# before a collector on the same machine answers one export.
QUEUE_SIZE, BATCH_SIZE = 8192, 2048


def _batching() -> dict[str, int]:
    """The batch processor's queue and batch sizes, each unless
    OTEL_BSP_MAX_QUEUE_SIZE / OTEL_BSP_MAX_EXPORT_BATCH_SIZE sets it (the
    SDK reads those itself when no argument is given)."""
    sizes = {}
    if not os.environ.get("OTEL_BSP_MAX_QUEUE_SIZE"):
        sizes["max_queue_size"] = QUEUE_SIZE
    if not os.environ.get("OTEL_BSP_MAX_EXPORT_BATCH_SIZE"):
        queue = sizes.get("max_queue_size")
        if queue is None:
            try:
                queue = int(os.environ["OTEL_BSP_MAX_QUEUE_SIZE"])
            except ValueError:
                queue = 2048  # what the SDK makes of a bad value
        sizes["max_export_batch_size"] = min(BATCH_SIZE, max(queue, 1))
    return sizes


def shutdown(timeout: float = SHUTDOWN_SECONDS) -> None:
    """Exports what is queued and stops the providers, within `timeout`
    seconds in all: an unreachable collector (whose exporter retries for
    longer) never holds a stopping service past it."""
    global _on
    with _lock:
        providers, _providers[:] = list(_providers), []
    _on = False
    if not providers:
        return

    def stop() -> None:
        for provider in providers:
            with contextlib.suppress(Exception):
                provider.shutdown()

    worker = threading.Thread(target=stop, name="svc-telemetry-shutdown", daemon=True)
    worker.start()
    worker.join(timeout)


# --- spans ---------------------------------------------------------------------------


# What the span functions return when telemetry is off: entering it costs
# next to nothing (the runtime opens a node span on every step).
_OFF = contextlib.nullcontext()

# The API's pieces the spans use, bound by configure() (the extra may be
# absent while telemetry is off).
_api: Any = None


class _Span:
    """A span named `name`, the current span's child, current while its
    block runs. An SvcError leaving it marks it failed with the error's
    code (`error.type`), any other exception with its class name; both go
    on. A class rather than a generator: the runtime opens one per node."""

    __slots__ = ("_attributes", "_kind", "_name", "_span", "_token")

    def __init__(self, name: str, attributes: dict[str, Any], kind: Any) -> None:
        self._name, self._attributes, self._kind = name, attributes, kind

    def __enter__(self) -> Any:
        api = _api
        current = _tracer.start_span(self._name, kind=self._kind, attributes=self._attributes)
        self._token = api.attach(api.set_span_in_context(current))
        self._span = current
        return current

    def __exit__(self, kind: Any, error: Any, trace: Any) -> None:
        current = self._span
        if isinstance(error, SvcError):
            failed(current, error.code, error.message)
        elif isinstance(error, Exception):
            failed(current, type(error).__name__, str(error))
        _api.detach(self._token)
        current.end()


def span(
    name: str, attributes: dict[str, Any], *, client: bool = False
) -> contextlib.AbstractContextManager[Any]:
    """A span named `name` (see _Span); yields None when telemetry is off."""
    if not _on:
        return _OFF
    return _Span(name, attributes, _api.CLIENT if client else _api.INTERNAL)


def failed(current: Any, code: str, message: str) -> None:
    current.set_attribute(ERROR_TYPE, code)
    current.set_status(_api.Status(_api.ERROR, message))


def inject(headers: MutableMapping[str, str]) -> None:
    """Adds `traceparent` (and `tracestate`) of the current span to an
    outbound call's headers, so the trace goes on in the service called."""
    if _on:
        _api.inject(headers)


def workflow_span(graph: str) -> Any:
    return span(f"invoke_workflow {graph}", {OPERATION: "invoke_workflow", WORKFLOW: graph})


def run_finished(graph: str, outcome: str) -> None:
    """Counts a run: `ok`, `interrupted` or the error envelope's code."""
    if _on:
        _instruments["runs"].add(1, _attributes_of(WORKFLOW, graph, OUTCOME, outcome))


# Attribute sets the hot path would otherwise build on every span and
# measurement, made once per value pair (node ids, kinds and outcomes are
# few; error codes too, but only the first thousand pairs are kept).
_pairs: dict[tuple[str, str, str, str], dict[str, str]] = {}


def _attributes_of(key: str, value: str, key2: str, value2: str) -> dict[str, str]:
    found = _pairs.get((key, value, key2, value2))
    if found is None:
        found = {key: value, key2: value2}
        if len(_pairs) < 1000:
            _pairs[key, value, key2, value2] = found
    return found


def node_span(node: str, kind: str | None) -> contextlib.AbstractContextManager[Any]:
    """`<kind> <node id>`, and its duration in svc.node.duration by kind;
    nothing with `tracing.trace_nodes: false`."""
    if not (_on and _nodes):
        return _OFF
    kind = kind or "node"
    return _NodeSpan(f"{kind} {node}", _attributes_of(NODE_ID, node, NODE_KIND, kind), kind)


class _NodeSpan(_Span):
    __slots__ = ("_node_kind", "_started")

    def __init__(self, name: str, attributes: dict[str, Any], node_kind: str) -> None:
        super().__init__(name, attributes, _api.INTERNAL)
        self._node_kind = node_kind

    def __enter__(self) -> Any:
        self._started = time.perf_counter()
        return super().__enter__()

    def __exit__(self, kind: Any, error: Any, trace: Any) -> None:
        super().__exit__(kind, error, trace)
        if error is None:
            outcome = "ok"
        elif isinstance(error, SvcError):
            outcome = error.code
        else:  # a human_interrupt pause (a deadline's alarm is rarer)
            outcome = "interrupted"
        _instruments["node_duration"].record(
            time.perf_counter() - self._started,
            _attributes_of(NODE_KIND, self._node_kind, OUTCOME, outcome),
        )


def branch_span(node: str, branch: str) -> contextlib.AbstractContextManager[Any]:
    """`branch <branch>`: one run of the branch `branch` (its first node's
    registered name) of the parallel node `node`, the parent of the branch's
    node spans; nothing with `tracing.trace_nodes: false`. Not measured."""
    if not (_on and _nodes):
        return _OFF
    return _Span(f"branch {branch}", {NODE_ID: node, BRANCH: branch}, _api.INTERNAL)


def item_span(node: str, index: int) -> contextlib.AbstractContextManager[Any]:
    """`item <index>`: the child run of item `index` of the map node `node`,
    the parent of its node spans; nothing with `tracing.trace_nodes: false`.
    Not measured."""
    if not (_on and _nodes):
        return _OFF
    return _Span(f"item {index}", {NODE_ID: node, ITEM: index}, _api.INTERNAL)


def chat_span(model: str, provider: str = "openai") -> contextlib.AbstractContextManager[Any]:
    """`chat <model>`, a client span, and gen_ai.client.operation.duration."""
    return _chat_span(model, provider) if _on else _OFF


@contextlib.contextmanager
def _chat_span(model: str, provider: str) -> Iterator[Any]:
    attributes = {OPERATION: "chat", PROVIDER: provider, REQUEST_MODEL: model}
    started = time.perf_counter()
    error = None
    try:
        with span(f"chat {model}", attributes, client=True) as current:
            yield current
    except SvcError as e:
        error = e.code
        raise
    finally:
        measured = dict(attributes)
        if error is not None:
            measured[ERROR_TYPE] = error
        _instruments["model_duration"].record(time.perf_counter() - started, measured)


def record_reply(
    current: Any, reply: Any, model: str, messages: list | None = None, *, provider: str = "openai"
) -> None:
    """What a chat span learns from a reply (or a streamed chunk), read as a
    chat completion whatever its `provider`: its token usage, and with
    `messages` (the prompt) the prompt and reply."""
    _record_usage(current, reply, model, provider)
    if messages is not None:
        _record_messages(current, messages, reply)


def _record_messages(current: Any, messages: list, reply: Any) -> None:
    """The prompt and the reply's message on a chat span, as JSON
    (`gen_ai.input.messages`, `gen_ai.output.messages`), only when
    OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT is true: they may hold
    what a caller must not find in a tracing backend."""
    if current is None or not _content:
        return
    current.set_attribute("gen_ai.input.messages", json.dumps(messages, ensure_ascii=False))
    choices = reply.get("choices") if isinstance(reply, dict) else None
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        output = [choices[0].get("message")]
        current.set_attribute("gen_ai.output.messages", json.dumps(output, ensure_ascii=False))


def _record_usage(current: Any, reply: Any, model: str, provider: str = "openai") -> None:
    """The token counts of an OpenAI-style reply (`usage.prompt_tokens`,
    `completion_tokens`), on the chat span and in gen_ai.client.token.usage."""
    if current is None or not isinstance(reply, dict):
        return
    usage = reply.get("usage")
    if not isinstance(usage, dict):
        return
    base = {OPERATION: "chat", PROVIDER: provider, REQUEST_MODEL: model}
    for key, attribute, token_type in (
        ("prompt_tokens", INPUT_TOKENS, "input"),
        ("completion_tokens", OUTPUT_TOKENS, "output"),
    ):
        count = usage.get(key)
        if isinstance(count, int) and not isinstance(count, bool) and count >= 0:
            current.set_attribute(attribute, count)
            _instruments["tokens"].record(count, {**base, "gen_ai.token.type": token_type})


def tool_span(tool: str) -> Any:
    return span(f"execute_tool {tool}", {OPERATION: "execute_tool", TOOL: tool})


def agent_span(agent: str, remote: bool = False) -> Any:
    return span(
        f"invoke_agent {agent}",
        {OPERATION: "invoke_agent", AGENT_ID: agent, AGENT_NAME: agent},
        client=remote,
    )


# --- the HTTP server span ------------------------------------------------------------


def instrument(app: Any) -> None:
    """Puts the server-span middleware in front of `app` (a Starlette or
    FastAPI app): the server span of each request, named `<METHOD> <route>`
    (the route's template, as `POST /graphs/{graph}/invoke`), continuing the
    caller's `traceparent`, and http.server.request.duration by route and
    status; `GET /health` is neither. Nothing when telemetry is off."""
    if not _on:
        return
    app.add_middleware(
        ServerSpans,
        routes=app.router.routes,
        tracer=_tracer,
        duration=_instruments["http_duration"],
    )


def fastapi_arguments(cls: Any) -> dict[str, Any]:
    """What a FastAPI app class `cls` is made with while telemetry is on:
    FastAPI releases with telemetry of their own (their `telemetry`
    argument) make a server span and metrics once a global provider is set;
    theirs is turned off, so a request has one server span, svc's."""
    if _on and "telemetry" in inspect.signature(cls).parameters:
        return {"telemetry": {"tracing": False, "metrics": False, "logs": False}}
    return {}


class ServerSpans:
    """The server span and duration of each HTTP request, as the Go and Java
    targets make them: a plain ASGI middleware with the attributes of
    docs/telemetry.md (OpenTelemetry's ASGI instrumentation also decodes
    every header and records four more measurements a request, which cost
    python-svc more than the run itself)."""

    def __init__(self, app: Any, routes: list, tracer: Any, duration: Any) -> None:
        from starlette.routing import Match

        self.app, self.routes, self.tracer, self.duration = app, routes, tracer, duration
        self.full = Match.FULL
        # The propagators' header names, as the ASGI scope spells them.
        self.fields = {name.encode("latin-1") for name in _api.propagator().fields}

    def route(self, scope: dict) -> str | None:
        for route in self.routes:
            match, _ = route.matches(scope)
            if match == self.full and hasattr(route, "path"):
                return route.path
        return None

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["path"] == "/health" or not _on:
            await self.app(scope, receive, send)
            return
        api = _api
        method = scope["method"]
        attributes = {"http.request.method": method, "url.scheme": scope.get("scheme", "http")}
        name, route = method, self.route(scope)
        if route is not None:
            name = f"{method} {route}"
            attributes["http.route"] = route
        fields = self.fields
        carried = {
            k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"] if k in fields
        }
        parent = api.extract(carried) if carried else None
        current = self.tracer.start_span(
            name, context=parent, kind=api.SERVER, attributes=attributes
        )
        token = api.attach(api.set_span_in_context(current, parent))
        status = 500  # what the client gets when the app fails before answering
        started = time.perf_counter()

        async def sent(message: dict) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, sent)
        finally:
            attributes["http.response.status_code"] = status
            current.set_attribute("http.response.status_code", status)
            if status >= 500:
                current.set_attribute(ERROR_TYPE, str(status))
                current.set_status(api.Status(api.ERROR))
            current.end()
            self.duration.record(time.perf_counter() - started, attributes)
            api.detach(token)
