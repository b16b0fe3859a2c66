"""Tracing (the "tracing" extra), graph registration, and the log format of
the `tracing` section. (What is registered, a project's description, is
svc.project's `describe_project`.)

Tracing goes to LangSmith through its client, configured by the client's own
environment variables: `LANGSMITH_TRACING`, `LANGSMITH_PROJECT`,
`LANGSMITH_ENDPOINT` and `LANGSMITH_API_KEY` (the `LANGCHAIN_` names work
too). `configure_tracing` sets the first two from the config when they are
unset.

What a run records, once tracing is on:

- a LangGraph graph (`GraphBuilder.compile()`, or any LangGraph compiled
  graph): LangChain's tracer, which LangGraph calls by itself, records one
  run for the graph (named "LangGraph" unless the graph was compiled with a
  name or invoked with a `run_name`) and one child run per node executed,
  named after the node (routers of conditional edges appear inside their
  source node's run). Nothing in the SDK is involved, so `trace_nodes` does
  not change it.
- a compiled graph (`CompiledGraph`): the runtime wraps each run in
  `traced_graph` (when `graph_runs`) and each node in `traced_node` (when
  `node_spans`, i.e. `tracing.trace_nodes`, true unless set false): one run
  of type "chain" named after the graph, and in it one child run per node
  executed, named after the node, with the state the node was given as its
  inputs and its patch as its outputs.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable
from typing import Any

from svc import telemetry
from svc.errors import ConfigError, require

LOG_FORMATS = ("text", "json")

# What compiled graphs trace, set by configure_tracing. svc.runtime reads them
# on every run and step, so they are plain module attributes (cheap when off).
graph_runs = False
node_spans = False

_KEY_VARIABLES = ("LANGSMITH_API_KEY", "LANGCHAIN_API_KEY")
_PROJECT_VARIABLES = ("LANGSMITH_PROJECT", "LANGCHAIN_PROJECT")


def _reread_environment() -> None:
    """The langsmith client caches what it reads from the environment: forget
    it, so that variables set now (by configure_tracing or env.yaml) count."""
    from langsmith import utils

    for name in ("get_env_var", "get_tracer_project"):
        cache_clear = getattr(getattr(utils, name, None), "cache_clear", None)
        if cache_clear is not None:
            cache_clear()


def _env(names: tuple[str, ...]) -> str | None:
    for name in names:
        value = os.environ.get(name, "").strip()
        if value:
            return value
    return None


def tracing_project(config: dict) -> str:
    """The LangSmith project of the traces and of `svc register`:
    LANGSMITH_PROJECT (or LANGCHAIN_PROJECT) when set, else `tracing.project`,
    else the app's name."""
    from svc.config import app_identity

    section = config.get("tracing") or {}
    return _env(_PROJECT_VARIABLES) or str(section.get("project") or app_identity(config)[0])


def configure_tracing(config: dict) -> bool:
    """Turns tracing on when `tracing.enabled`; returns whether it is on.

    OpenTelemetry unless OTEL_SDK_DISABLED=true (svc.telemetry: OTLP to where
    the OTEL_ variables say). LangSmith as well when its key is set (LANGSMITH_API_KEY or
    LANGCHAIN_API_KEY) or LANGSMITH_TRACING=true: then it sets
    LANGSMITH_TRACING=true and LANGSMITH_PROJECT (`tracing.project`, else
    the app's name) unless they are set: variables already set win. Compiled
    graphs then trace their runs, and their nodes unless `tracing.trace_nodes`
    is false.
    """
    global graph_runs, node_spans
    section = config.get("tracing") or {}
    graph_runs = node_spans = False
    # Off with OTEL_SDK_DISABLED=true, which leaves LangSmith alone.
    exporting = telemetry.configure(config)
    if not section.get("enabled"):
        return False
    if not _env(_KEY_VARIABLES) and os.environ.get("LANGSMITH_TRACING", "").lower() != "true":
        return exporting  # OpenTelemetry only: LangSmith is for those who set its key
    require("langsmith", "tracing", "configure_tracing()")
    os.environ.setdefault("LANGSMITH_TRACING", "true")
    if not _env(_PROJECT_VARIABLES):
        os.environ["LANGSMITH_PROJECT"] = tracing_project(config)
    _reread_environment()
    graph_runs = True
    node_spans = section.get("trace_nodes", True) is not False
    return True


def require_api_key(
    fix: str = "set it to register the graph "
    "(or pass --describe-only to print the description without registering)",
) -> None:
    """A ConfigError unless LANGSMITH_API_KEY (or LANGCHAIN_API_KEY) is set;
    `fix` says what to do about it."""
    if not _env(_KEY_VARIABLES):
        raise ConfigError(f"LANGSMITH_API_KEY is not set: {fix}")


def register_graph(description: dict, project: str) -> str:
    """Records a graph's description as the metadata (`svc_graph`) of the
    LangSmith project `project`, creating the project or updating it; returns
    the project's name. Needs LANGSMITH_API_KEY; LANGSMITH_ENDPOINT says where."""
    langsmith = require("langsmith", "tracing", "register_graph()")
    from langsmith.utils import LangSmithError

    require_api_key()
    _reread_environment()
    # One request, and no background thread sending traces.
    client = langsmith.Client(auto_batch_tracing=False)
    try:
        client.create_project(
            project,
            description=f"graph {description.get('entrypoint')} of {description.get('name')}",
            metadata={"svc_graph": description},
            upsert=True,
        )
    except LangSmithError as e:
        where = getattr(client, "api_url", None) or "LangSmith"
        raise ConfigError(f"cannot register the graph at {where}: {e}") from None
    return project


# --- spans of compiled graphs ------------------------------------------------------


def _copy(value: Any) -> Any:
    """A copy of a state's containers, so that later merges cannot change
    what a span says it was given."""
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def _tracing_on() -> bool:
    from langsmith.utils import tracing_is_enabled

    return bool(tracing_is_enabled())


def traced_graph(name: str, run: Callable[..., dict]) -> Callable[..., dict]:
    """`run(state, ...)` recorded as a LangSmith run of type "chain" named
    `name`: its inputs the state the run starts from, its outputs the final
    state, its children the runs of its nodes (`traced_node`). An exception
    (a pause too) ends the run with that error and goes on.

    svc.runtime wraps each run of a CompiledGraph in it when `graph_runs`."""

    def traced(state: dict, *args: Any, **kwargs: Any) -> dict:
        if not _tracing_on():
            return run(state, *args, **kwargs)
        from langsmith import trace

        with trace(name, "chain", inputs=_copy(state), metadata={"svc_graph": name}) as span:
            result = run(state, *args, **kwargs)
            span.end(outputs=_copy(result) if isinstance(result, dict) else {"output": result})
        return result

    return traced


def traced_node(node: str, fn: Callable[[dict], Any]) -> Callable[[dict], Any]:
    """`fn(state)` recorded as a LangSmith run of type "chain" named `node`,
    a child of the current run (the graph's): its inputs the state `fn` is
    given, its outputs the patch it returns (`{}` for None).

    svc.runtime wraps each node of a CompiledGraph in it when `node_spans`."""

    def traced(state: dict) -> Any:
        if not _tracing_on():
            return fn(state)
        from langsmith import trace

        with trace(node, "chain", inputs=_copy(state), metadata={"svc_node": node}) as span:
            patch = fn(state)
            if patch is None:
                outputs = {}
            elif isinstance(patch, dict):
                outputs = _copy(patch)
            else:
                outputs = {"output": patch}
            span.end(outputs=outputs)
        return patch

    return traced


def flush_traces(timeout: float | None = None) -> None:
    """Waits (at most `timeout` seconds) until the langsmith client has sent
    the runs it queued; nothing to do when no run was traced."""
    require("langsmith", "tracing", "flush_traces()")
    from langsmith import run_trees

    client = getattr(run_trees, "_CLIENT", None)
    if client is not None:
        client.flush(timeout=timeout)


# --- logging -------------------------------------------------------------------------


class _JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False)


LOG_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
}


def configure_logging(config: dict, level: int | None = None) -> None:
    """Logs to stderr at `logging.level` (debug, info (default), warning,
    error) in `logging.format`: text (default) or json. Without
    `logging.format`, `tracing.log_format` (the older key) says the format.
    `level`, when given, replaces the configured level (`svc mcp` keeps
    stderr to warnings: stdout carries its protocol)."""
    section = config.get("logging") or {}
    key, fmt = "logging.format", section.get("format")
    if fmt is None:
        key, fmt = "tracing.log_format", (config.get("tracing") or {}).get("log_format", "text")
    if fmt not in LOG_FORMATS:
        raise ConfigError(f"{key} {fmt!r} is not one of text, json")
    if level is None:
        name = section.get("level", "info")
        if name not in LOG_LEVELS:
            raise ConfigError(f"logging.level {name!r} is not one of {', '.join(LOG_LEVELS)}")
        level = LOG_LEVELS[name]
    handler = logging.StreamHandler()
    handler.setFormatter(
        _JsonFormatter()
        if fmt == "json"
        else logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
