"""The HTTP face of a graph: the HTTP contract (the repository's docs/http-contract.md).

Routes are plain Starlette routes on a FastAPI app: each handler reads the
request itself, which keeps /invoke cheap and gives every error, including
FastAPI's own 404/405/422, the one envelope `{"error": {code, message, details?}}`.

With `graph.streaming: true` a request that accepts `text/event-stream` is
answered with the run's events as it goes (the contract's "Streaming";
svc.server.events.EventStream, svc.streaming.RunStream); its checks before
the run are answered as JSON all the same.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import logging
import os
import threading
import uuid
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

from svc import registry, telemetry, usage
from svc.config import (
    app_identity,
    check_secrets,
    graph_settings,
    load_config,
    project_root,
    server_settings,
)
from svc.contract import (
    MAX_REQUEST_BYTES,
    JsonResponses,
    discard,
    read_json,
    too_large,
)
from svc.errors import ConfigError, Interrupted, SvcError, bad_request, require

log = logging.getLogger("svc.server")

_STATUS_CODES = {
    400: "bad_request",
    401: "unauthorized",
    404: "not_found",
    405: "method_not_allowed",
    413: "payload_too_large",
    415: "unsupported_media_type",
    422: "invalid_state",
}


class _Auth:
    """Checks the credential in constant time (over digests, so that the key's
    length does not leak either). The key is never logged or echoed."""

    def __init__(self, scheme: str, key: str):
        self.scheme = scheme
        self._digest = hashlib.sha256(key.encode()).digest()
        self.challenge = {"WWW-Authenticate": "Bearer"} if scheme == "bearer" else None

    def allows(self, headers: Any) -> bool:
        if self.scheme == "api_key":
            got = headers.get("x-api-key")
        else:
            h = headers.get("authorization") or ""
            if h[:7].lower() != "bearer ":
                return False
            got = h[7:].strip()
        if not got:
            return False
        # Starlette decodes headers as latin-1: that gives back the bytes sent.
        digest = hashlib.sha256(got.encode("latin-1", "replace")).digest()
        return hmac.compare_digest(digest, self._digest)


def _state_of(obj: Any, schema: Any) -> dict:
    """The state of a request body: `{"state": {...}}` or `{"messages": [...]}`."""
    if not isinstance(obj, dict):
        raise bad_request("the body must be a JSON object")
    if "state" in obj:
        if len(obj) != 1:
            raise bad_request("a request with `state` may not have other fields")
        if not isinstance(obj["state"], dict):
            raise bad_request("`state` must be a JSON object")
        return obj["state"]
    if "messages" in obj and len(obj) == 1:
        if schema is not None and schema.field("messages") is None:
            raise bad_request('this graph has no `messages` field: send {"state": {...}}')
        if not isinstance(obj["messages"], list):
            raise bad_request("`messages` must be a list of {role, content} objects")
        return {"messages": obj["messages"]}
    raise bad_request('send {"state": {...}} (or {"messages": [...]})')


def wants_event_stream(headers: Any) -> bool:
    """Whether Accept lists text/event-stream (any case, parameters aside)
    with a quality above 0; `*/*` alone does not count."""
    for accept in headers.getlist("accept"):
        for part in accept.split(","):
            media, *params = part.split(";")
            if media.strip().lower() != "text/event-stream":
                continue
            quality = 1.0
            for param in params:
                name, _, value = param.partition("=")
                if name.strip().lower() == "q":
                    try:
                        quality = float(value)
                    except ValueError:
                        quality = 0.0
            if quality > 0:
                return True
    return False


def _failure_data(error: SvcError) -> dict:
    """run_failed's data: the status and the envelope of the JSON answer."""
    return {"status": error.status, **error.to_body()["error"]}


def _finished_data(body: dict) -> dict:
    """run_finished's data: the JSON answer's body (`result`, and `threadId`
    on a checkpointed graph, `usage` when the run asked a model)."""
    return {k: v for k, v in body.items() if k != "interrupt"}


def _with_usage(body: dict, meter: usage.Meter | None) -> dict:
    """`body` (an answer, a terminal event's data) with the run's usage
    beside the rest, once the run asked a model; errors before a run
    started (no meter yet) have none."""
    spent = meter.reported() if meter is not None else None
    if spent is not None:
        body["usage"] = spent
    return body


MAX_THREAD_ID = 256  # characters of a threadId


class _Streamed(NamedTuple):
    """A streamed run that passed its checks: `execute(emit)` runs it to the
    JSON answer's body; `meter` counts its usage, for its run_failed."""

    execute: Callable[[Any], Awaitable[dict]]
    meter: usage.Meter


class _ThreadRun(NamedTuple):
    """A run on a thread that passed its checks and holds the thread."""

    thread_id: str
    generation: int
    first: tuple  # its first event: run_started or resumed
    start: Callable[[Any], Awaitable[dict]]  # runs it, given its emit (or None)
    meter: usage.Meter  # its usage; a resumed run's goes on from the pause


def _thread_request(obj: Any, schema: Any) -> tuple[str | None, dict | None, Any]:
    """(threadId or None, state or None, resume value) of a request to a graph
    with a checkpointer: `{"state": ..., "threadId"?: ...}` (or the messages
    form with a threadId) starts a run, `{"threadId": ..., "resume": v}`
    resumes one."""
    if not isinstance(obj, dict):
        raise bad_request("the body must be a JSON object")
    thread_id = None
    if "threadId" in obj:
        thread_id = obj["threadId"]
        if not isinstance(thread_id, str) or not 0 < len(thread_id) <= MAX_THREAD_ID:
            raise bad_request(
                f"`threadId` must be a non-empty string of at most {MAX_THREAD_ID} characters"
            )
    if "resume" in obj:
        if thread_id is None:
            raise bad_request("a resume needs the `threadId` of the paused thread")
        if len(obj) != 2:
            raise bad_request('a resume is {"threadId": "...", "resume": <value>} and nothing else')
        return thread_id, None, obj["resume"]
    rest = {k: v for k, v in obj.items() if k != "threadId"}
    return thread_id, _state_of(rest, schema), None


class _Guarded:
    """An ASGI app (the MCP endpoint) behind a check of the request's headers:
    `refuse(request)` returns the answer to a refused request, else None."""

    def __init__(self, app: Any, refuse: Any, request_type: type):
        self.app = app
        self.refuse = refuse
        self.Request = request_type

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        request = self.Request(scope, receive)
        refused = self.refuse(request)
        if refused is not None:
            await discard(request)
            await refused(scope, receive, send)
            return
        await self.app(scope, receive, send)


def _key(settings: Any) -> str | None:
    if settings.auth == "none":
        return None
    key = os.environ.get(settings.key_env)
    if not key:
        where = "as Authorization: Bearer <token>" if settings.auth == "bearer" else "in X-API-Key"
        raise ConfigError(
            f"{settings.key_env} is not set: set it to the key clients must send ({where}), "
            "or set server.auth.type to none"
        )
    return key


def create_app(
    graph: Any = None,
    *,
    config: dict | None = None,
    root: str | Path | None = None,
    threads: Any = None,
    framework: str = "fastapi",
) -> Any:
    """The FastAPI app serving `graph` (default: the project's entrypoint graph).

    `framework="starlette"` builds the same routes on a plain Starlette app,
    which `svc run` serves: importing FastAPI is most of a service's
    start-up time, and the contract's routes need none of it. Keep the
    default to add FastAPI routes to the app (`uvicorn app.main:app`).

    Raises ConfigError when the config holds a secret (check_secrets), when
    authentication is on and its key variable is unset, or when the
    embedding index of a rag node cannot be built.

    A graph with a checkpointer keeps its threads in a svc.threads.ThreadStore
    (10,000 threads, 24 h); `threads` replaces it (tests use small limits).

    `/mcp` (MCP over streamable HTTP, behind the same credential as /invoke)
    is mounted when an `@svc_mcp_server` is registered for it or the config
    says `mcp: {expose: true}`; the MCP clients of `svc.mcp_client` run for
    the app's lifetime when the config has `mcp.servers`.

    The A2A agent (`POST /a2a` and its card at `/.well-known/agent-card.json`
    and `/.well-known/agent.json`, see svc.a2a.server) is mounted when an
    `@svc_a2a_server` is registered or the config says `a2a: {enabled: true}`.

    The graphs of an `@svc_graph_server` (svc.server.graph_server) are served over
    its protocol: each at `POST /graphs/<name>/invoke` ("http"), as an MCP
    tool at `/mcp` ("mcp") or as an A2A skill at `/a2a` ("a2a").
    """
    if framework not in ("fastapi", "starlette"):
        raise ValueError(f'framework must be "fastapi" or "starlette", not {framework!r}')
    fastapi = require("fastapi", "server", "create_app()") if framework == "fastapi" else None
    require("starlette", "server", "create_app()")
    from starlette.exceptions import HTTPException
    from starlette.requests import Request
    from starlette.responses import Response, StreamingResponse

    class EventStreamResponse(StreamingResponse):
        """A streamed run's answer; `stop()` once it ends, however it ends."""

        def __init__(self, frames: Any, stop: Callable[[], None], headers: dict[str, str]):
            super().__init__(frames, headers=headers, media_type="text/event-stream")
            self.stop = stop

        async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
            try:
                await super().__call__(scope, receive, send)
            finally:
                self.stop()

    from svc import rag
    from svc.a2a import agent as a2a_agent
    from svc.a2a import server as a2a_server
    from svc.adapters import runner_for
    from svc.mcp import server as mcp_server
    from svc.project import SvcApp
    from svc.server import graph_server

    if config is None:
        config = load_config(root)
    check_secrets(config)
    settings = server_settings(config)
    streaming = graph_settings(config).streaming
    key = _key(settings)
    built: dict[str, Any] = {}  # the entrypoint's runner, by name, for the graph server
    if graph is None:
        project = SvcApp(root, config=config).bootstrap()
        runner = project.runner()
        built[project.graph_name] = runner
    else:
        runner = runner_for(graph, graph_settings(config), getattr(graph, "name", "graph"))
    # The project is imported by now: its rag nodes' indexes are built before
    # serving, so a broken embeddings endpoint fails here, not in a request.
    rag.build_indexes()
    name, version = app_identity(config)
    if "name" not in (config.get("app") or {}):
        name = runner.name
    auth = _Auth(settings.auth, key) if key is not None else None
    reply = JsonResponses(Response)
    unauthorized = SvcError(401, "unauthorized", "missing or wrong credential")
    if threads is not None:
        if not getattr(runner, "checkpointed", False):
            raise ValueError(f"the graph {runner.name!r} has no checkpointer: it keeps no threads")
        runner.use_threads(threads)
    served = graph_server.registered()
    protocol = served.meta["protocol"] if served is not None else None
    graph_runners = graph_server.runners(config, built)

    def denied(request: Any) -> Any:
        if auth is None or auth.allows(request.headers):
            return None
        return reply.error(unauthorized, auth.challenge)

    def serving(runner: Any) -> Any:
        """The handler of the /invoke contract for the graph of `runner`:
        `answer(request, run_log=None)`."""
        schema = runner.schema
        validate, arun = runner.validate, runner.arun
        budget = runner.budget
        store = runner.threads if getattr(runner, "checkpointed", False) else None
        # A durable store waits on its database: off the event loop.
        blocking = getattr(store, "blocking", False)

        async def kept(method: Any, *args: Any) -> Any:
            return await asyncio.to_thread(method, *args) if blocking else method(*args)

        async def run(state: dict, meter: usage.Meter, emit: Any = None) -> dict:
            guarded = registry.has_guardrails()
            if guarded:
                registry.run_guardrails("input", state)
            registry.enforce_policies({"action": "run", "state": state})
            with usage.metered(meter):
                result = await arun(state) if emit is None else await arun(state, emit=emit)
            if guarded:
                registry.run_guardrails("output", result)
            return result

        async def take_thread(obj: Any) -> _ThreadRun:
            """The checks of a run on a thread of a checkpointed graph (a new
            state, or a resume), up to taking the thread."""
            thread_id, data, value = _thread_request(obj, schema)
            if data is not None:
                state = validate(data)
                thread_id = thread_id or store.new_id()
                if registry.has_guardrails():
                    registry.run_guardrails("input", state)
                registry.enforce_policies({"action": "run", "state": state, "threadId": thread_id})
                generation = await kept(store.start, thread_id)  # 409 thread_busy

                def start_new(emit: Any) -> Any:
                    return runner.arun(state, emit=emit, thread_id=thread_id)

                first = ("run_started", None, {"state": state, "threadId": thread_id})
                return _ThreadRun(thread_id, generation, first, start_new, usage.Meter(budget))
            paused = await kept(store.paused, thread_id)  # 404 unknown or expired, 409 not paused
            runner.check_resume(paused, value)  # 422 against the interrupt's field
            registry.enforce_policies(
                {"action": "resume", "threadId": thread_id, "node": paused.node, "resume": value}
            )
            generation = await kept(store.claim, thread_id, paused.interrupt_id)  # one resume wins

            def start_resumed(emit: Any) -> Any:
                return runner.aresume(paused, value, emit=emit)

            first = ("resumed", paused.node, {"threadId": thread_id, "resume": value})
            meter = usage.Meter(budget, paused.usage)
            return _ThreadRun(thread_id, generation, first, start_resumed, meter)

        async def on_thread(taken: _ThreadRun, emit: Any) -> dict:
            """The run on a thread it took: its answer's body, the thread kept."""
            thread_id, generation, meter = taken.thread_id, taken.generation, taken.meter
            if emit is not None:
                emit(*taken.first)
            try:
                with usage.metered(meter):
                    result = await taken.start(emit)
            except Interrupted as i:
                await kept(store.pause, thread_id, generation, i, meter.usage)
                if emit is not None:
                    data = {"value": i.value, "threadId": thread_id}
                    emit("interrupted", i.node, _with_usage(data, meter))
                interrupt = {"node": i.node, "value": i.value}
                return _with_usage({"interrupt": interrupt, "threadId": thread_id}, meter)
            except BaseException:
                # The run's error says more than a database that is gone.
                with contextlib.suppress(SvcError):
                    await kept(store.fail, thread_id, generation)
                raise
            await kept(store.finish, thread_id, generation)
            if registry.has_guardrails():
                registry.run_guardrails("output", result)
            return _with_usage({"result": result, "threadId": thread_id}, meter)

        async def begin_streamed(obj: Any) -> _Streamed | None:
            """The checks before a streamed run (a failure is answered as
            JSON), then what runs it given its emit, with its meter; None
            for a request form that is answered as JSON all the same."""
            if store is not None:
                if not isinstance(obj, dict) or not ("state" in obj or "resume" in obj):
                    return None
                taken = await take_thread(obj)
                return _Streamed(partial(on_thread, taken), taken.meter)
            if not isinstance(obj, dict) or "state" not in obj:
                return None
            state = validate(_state_of(obj, schema))
            meter = usage.Meter(budget)

            async def execute(emit: Any) -> dict:
                emit("run_started", None, {"state": state})
                return _with_usage({"result": await run(state, meter, emit)}, meter)

            return _Streamed(execute, meter)

        async def answer(request: Any, run_log: Any = None) -> Any:
            """POST /invoke; `run_log` records the run's events (SVC_DEV_EVENTS=1)."""
            refused = denied(request)
            if refused is not None:
                await discard(request)
                return refused
            headers = {"X-Run-Id": run_log.id} if run_log is not None else None
            emit = run_log.emit if run_log is not None else None
            meter = None  # the run's, once it passed its checks
            try:
                obj = await read_json(request)
                if streaming and wants_event_stream(request.headers):
                    started = await begin_streamed(obj)
                    if started is not None:
                        return streamed(started, run_log)
                if store is not None:
                    taken = await take_thread(obj)
                    meter = taken.meter
                    body = await on_thread(taken, emit)
                else:
                    state = validate(_state_of(obj, schema))
                    meter = usage.Meter(budget)
                    if emit is not None:
                        emit("run_started", None, {"state": state})
                    body = _with_usage({"result": await run(state, meter, emit)}, meter)
            except Exception as e:
                await discard(request)
                error = failed(e)
                if emit is not None:
                    emit("run_failed", None, _with_usage(_failure_data(error), meter))
                return reply.json(error.status, _with_usage(error.to_body(), meter), headers)
            if emit is not None and "result" in body:
                emit("run_finished", None, _finished_data(body))
            return reply.json(200, body, headers)

        return answer

    def streamed(started: _Streamed, run_log: Any) -> Any:
        """The `200 text/event-stream` answer of a run that passed its checks:
        `started.execute(emit)` runs it to the JSON answer's body. The run starts now,
        so that it settles (its thread kept) even when the answer is never
        read; it stops when the answer ends, whether after its last event or
        because its client left."""
        from svc.server.events import EventStream
        from svc.streaming import RunStream, cancelled_error

        events = EventStream(run_log.id if run_log is not None else uuid.uuid4().hex, run_log)
        stream = RunStream(events.emit)
        events.stop = stream.cancel

        async def go() -> None:
            try:
                body = await started.execute(stream)
            except asyncio.CancelledError:
                stream(
                    "run_failed", None, _with_usage(_failure_data(cancelled_error()), started.meter)
                )
                raise
            except Exception as e:
                stream("run_failed", None, _with_usage(_failure_data(failed(e)), started.meter))
                return
            if "result" in body:
                stream("run_finished", None, _finished_data(body))

        running = asyncio.create_task(go())

        def stop() -> None:
            stream.cancel()
            # After the task's first step (scheduled first): a task cancelled
            # before it starts would not settle its thread.
            asyncio.get_running_loop().call_soon(running.cancel)

        headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
        if run_log is not None:
            headers["X-Run-Id"] = run_log.id
        return EventStreamResponse(events.frames(), stop, headers)

    def failed(e: Exception) -> SvcError:
        if isinstance(e, SvcError):
            return e
        log.error("the run failed", exc_info=e)
        return SvcError(500, "execution_error", f"the run failed: {type(e).__name__}: {e}")

    answer = serving(runner)

    async def invoke(request: Request) -> Any:
        return await answer(request)

    async def health(request: Request) -> Any:
        return reply.json(200, {"status": "ok"})

    async def info(request: Request) -> Any:
        refused = denied(request)
        if refused is not None:
            return refused
        from svc.agents import agents_info

        body = {
            "name": name,
            "version": version,
            "components": registry.components(),
            "agents": agents_info(),
        }
        return reply.json(200, body)

    routes = [("/health", health, ["GET"]), ("/info", info, ["GET"])]
    # The OpenAPI document the compiler wrote into the project: public, as
    # /health is (it holds the contract, no data).
    spec_file = project_root(root) / "openapi.json"
    if spec_file.is_file():
        spec = spec_file.read_bytes()

        async def openapi(request: Request) -> Any:
            return Response(spec, media_type="application/json")

        routes.append(("/openapi.json", openapi, ["GET"]))
    if os.environ.get("SVC_DEBUG_RUNTIME") == "1":
        # What the process holds (docs/http-contract.md, "Runtime counts"),
        # so an operator or a test can see abandoned requests leave nothing.
        async def runtime_counts(request: Request) -> Any:
            refused = denied(request)
            if refused is not None:
                return refused
            tasks = len(asyncio.all_tasks())
            return reply.json(200, {"tasks": tasks, "threads": threading.active_count()})

        routes.append(("/debug/runtime", runtime_counts, ["GET"]))
    runs = None
    if os.environ.get("SVC_DEV_EVENTS") == "1":
        from svc.server.events import RunLog, last_event_id, sse

        runs = RunLog()

        async def invoke_observed(request: Request) -> Any:
            # A refused request is no run: it gets no X-Run-Id.
            return await answer(request, None if denied(request) else runs.start())

        async def events(request: Request) -> Any:
            refused = denied(request)
            if refused is not None:
                return refused
            run_log = runs.get(request.path_params["run_id"])
            if run_log is None:
                return reply.error(SvcError(404, "not_found", "no such run"))

            after = last_event_id(request.headers.get("last-event-id"))

            async def stream() -> Any:
                async for event in run_log.follow(after):
                    yield sse(event)

            return StreamingResponse(stream(), media_type="text/event-stream")

        routes += [
            ("/invoke", invoke_observed, ["POST"]),
            ("/runs/{run_id}/events", events, ["GET"]),
        ]
    else:
        routes.append(("/invoke", invoke, ["POST"]))

    if protocol == "http":
        answers = {graph_name: serving(r) for graph_name, r in graph_runners.items()}

        async def invoke_graph(request: Request) -> Any:
            # The credential first: an unknown graph is no business of a stranger.
            refused = denied(request)
            if refused is None and request.path_params["graph"] not in answers:
                refused = reply.error(
                    SvcError(
                        404,
                        "not_found",
                        f'no graph "{request.path_params["graph"]}": this service serves '
                        f"{', '.join(answers)} at /graphs/<name>/invoke",
                    )
                )
            if refused is not None:
                await discard(request)
                return refused
            run_log = runs.start() if runs is not None else None
            return await answers[request.path_params["graph"]](request, run_log)

        routes.append((graph_server.HTTP_PATH, invoke_graph, ["POST"]))

    # MCP: the SDK is imported only when there is something to serve.
    mcp, manager = None, None
    graph_tools = graph_server.mcp_tools(graph_runners) if protocol == "mcp" else []
    if graph_tools or mcp_server.wanted(config):
        mcp = mcp_server.build_app_server(
            config,
            runner,
            # The graph server names the MCP server it is.
            name=served.name if graph_tools else name,
            version=version,
            more_tools=graph_tools,
        )
        handle, manager = mcp_server.http_endpoint(mcp, MAX_REQUEST_BYTES)

        def mcp_refused(request: Any) -> Any:
            refused = denied(request)
            length = request.headers.get("content-length") or ""
            if refused is None and length.isdigit() and int(length) > MAX_REQUEST_BYTES:
                return reply.error(too_large())
            return refused

        # POST only: stateless, with JSON answers, there is no stream to GET
        # and no session to DELETE (405 is what MCP asks for then).
        routes.append(("/mcp", _Guarded(handle, mcp_refused, Request), ["POST"]))

    # A2A: the SDK is imported only when there is an agent to publish.
    graph_skills = graph_server.a2a_skills(config, graph_runners) if protocol == "a2a" else []
    if graph_skills or a2a_agent.wanted(config):
        routes += a2a_server.http_routes(
            config,
            runner,
            # The agent's title when neither @svc_a2a_server nor a2a.title gives one.
            name=served.name if graph_skills else name,
            version=version,
            app_auth=auth,
            more_skills=graph_skills,
        )

    # Durable thread stores hold a database connection (svc.threads.checkpoints).
    closing = [
        r.threads
        for r in (runner, *graph_runners.values())
        if callable(getattr(getattr(r, "threads", None), "close", None))
    ]

    @contextlib.asynccontextmanager
    async def lifespan(_app: Any) -> Any:
        async with contextlib.AsyncExitStack() as stack:
            # Last out: spans of the other closings are exported too.
            stack.callback(telemetry.shutdown)
            for store in closing:
                stack.callback(store.close)
            await stack.enter_async_context(mcp_server.clients_running(config))
            await stack.enter_async_context(a2a_server.clients_closed())
            if manager is not None:
                await stack.enter_async_context(manager.run())
            yield

    if fastapi is not None:
        app = fastapi.FastAPI(
            title=name,
            version=version,
            docs_url=None,
            redoc_url=None,
            openapi_url=None,
            lifespan=lifespan,
            **telemetry.fastapi_arguments(fastapi.FastAPI),
        )
    else:
        from starlette.applications import Starlette

        app = Starlette(lifespan=lifespan)
    app.router.redirect_slashes = False  # /health/ is unknown, as on every target
    for path, endpoint, methods in routes:
        app.router.add_route(path, endpoint, methods=methods)

    async def http_error(request: Request, exc: HTTPException) -> Any:
        code = _STATUS_CODES.get(exc.status_code, "execution_error")
        if exc.status_code == 404:
            message = f"no such path: {request.url.path}"
        elif exc.status_code == 405:
            message = "use " + (exc.headers or {}).get("Allow", "another method")
        else:
            message = str(exc.detail)
        return reply.error(SvcError(exc.status_code, code, message), exc.headers)

    async def validation_error(request: Request, exc: Any) -> Any:
        first = (exc.errors() or [{}])[0]
        field = ".".join(str(p) for p in first.get("loc", ()))
        details = {"field": field} if field else None
        return reply.error(SvcError(422, "invalid_state", first.get("msg", "invalid"), details))

    app.add_exception_handler(HTTPException, http_error)
    if fastapi is not None:  # raised by FastAPI routes a user adds
        app.add_exception_handler(fastapi.exceptions.RequestValidationError, validation_error)
    app.state.svc_runner = runner
    app.state.svc_mcp = mcp
    telemetry.instrument(app)
    return app
