"""A project: its config, its registered components, its entrypoint graph
(`SvcApp`, what `svc run`, `create_app()` and `svc mcp` start from), and the
description of that graph that `svc register` records (`describe_project`).
"""

from __future__ import annotations

import importlib
import logging
import sys
from pathlib import Path
from typing import Any

from svc import registry
from svc.config import app_identity, check_secrets, graph_settings, load_config, project_root
from svc.errors import ConfigError, require
from svc.graph import START, GraphBuilder

# register_on_build logs as part of the tracing it configures.
log = logging.getLogger("svc.tracing")


class SvcApp:
    """A project: its config, its registered components, its entrypoint graph."""

    def __init__(self, root: str | Path | None = None, *, config: dict | None = None):
        self.root = project_root(root)
        self.config = config
        self.graph_name: str | None = None
        self._bootstrapped = False
        self._runner: Any = None

    def bootstrap(self) -> SvcApp:
        """Loads the config (unless given), refuses a secret written in it
        (check_secrets), and imports the project's `app` package, so that its
        decorators register its components."""
        if self.config is None:
            self.config = load_config(self.root)
        check_secrets(self.config)
        if str(self.root) not in sys.path:
            sys.path.insert(0, str(self.root))
        importlib.import_module("app")
        self._bootstrapped = True
        return self

    def build_graph(self) -> Any:
        """The entrypoint graph (config `graph.entrypoint`, else the registered
        one). With `tracing.register_on_build`, it is also registered with the
        tracing service, as `svc register` does, once built."""
        if not self._bootstrapped:
            self.bootstrap()
        entry = registry.entrypoint_graph(graph_settings(self.config).entrypoint)
        self.graph_name = entry.name
        graph = entry.obj()
        built = graph.compile() if isinstance(graph, GraphBuilder) else graph
        # The graph as written is described (a builder's edges), as by `svc register`.
        register_on_build(self.config, entry.name, graph)
        return built

    def runner(self) -> Any:
        """The entrypoint graph behind the interface the server uses (built once)."""
        if self._runner is None:
            from svc.adapters import runner_for

            graph = self.build_graph()
            self._runner = runner_for(graph, graph_settings(self.config), self.graph_name)
        return self._runner

    def invoke(self, state: dict) -> dict:
        """Runs the entrypoint graph on `state` in this thread; returns the final state."""
        runner = self.runner()
        guarded = registry.has_guardrails()
        if guarded:
            registry.run_guardrails("input", state)
        registry.enforce_policies({"action": "run", "state": state})
        result = runner.invoke(state)
        if guarded:
            registry.run_guardrails("output", result)
        return result


def register_on_build(config: dict, entrypoint: str, graph: Any) -> None:
    """Registers the entrypoint graph `graph` (as the project builds it) the
    way `svc register` does, when the config says `tracing.register_on_build`.
    SvcApp.build_graph calls it, so a service registers its graph each time
    it starts. A configuration that cannot register (no tracing extra, no
    LANGSMITH_API_KEY) stops the start; LangSmith being unreachable or
    refusing the request is logged as a warning, so an outage there does
    not stop a deployment."""
    if not (config.get("tracing") or {}).get("register_on_build"):
        return
    from svc.tracing import register_graph, require_api_key, tracing_project

    setting = "tracing.register_on_build"
    require("langsmith", "tracing", setting)
    require_api_key(
        f"set it (in the environment or env.yaml) to register the graph as {setting} asks, "
        f"or set {setting} to false"
    )
    try:
        project = register_graph(
            describe_project(config, entrypoint, graph), tracing_project(config)
        )
    except ConfigError as e:
        log.warning("%s: the graph %s was not registered: %s", setting, entrypoint, e)
        return
    log.info("registered graph %s in project %s (%s)", entrypoint, project, setting)


# --- describing a graph ------------------------------------------------------------


def _item(item: Any) -> dict:
    out = {"type": item.type}
    if item.items is not None:
        out["items"] = _item(item.items)
    return out


def _fields(schema: Any) -> list[dict]:
    fields = []
    for f in schema.fields:
        field: dict[str, Any] = {"name": f.name, "type": f.type}
        if f.items is not None:
            field["items"] = _item(f.items)
        field.update(required=f.required, append=f.append)
        fields.append(field)
    return fields


def _edge(source: str, target: str | None, conditional: bool = False) -> dict:
    return {"source": source, "target": target, "conditional": conditional}


def _builder_topology(builder: Any) -> dict:
    """A GraphBuilder's nodes and edges, read without compiling it."""
    from svc.adapters import schema_from_annotations

    nodes = list(builder.nodes)
    edges = [_edge(START, builder.entry)] if builder.entry is not None else []
    edges += [_edge(source, target) for source, target in builder.edges]
    for source, _router, mapping in builder.conditional_edges:
        if isinstance(mapping, dict):
            targets: list[Any] = list(dict.fromkeys(mapping.values()))
        elif mapping is not None:
            targets = list(mapping)
        else:
            targets = [None]  # the router returns node names: unknown here
        edges += [_edge(source, target, True) for target in targets]
    return {
        "kind": "graph_builder",
        "nodes": nodes,
        "edges": edges,
        "state": _fields(schema_from_annotations(builder.state_type)),
    }


def _langgraph_topology(graph: Any) -> dict:
    from svc.adapters import schema_from_annotations

    drawn = graph.get_graph()
    return {
        "kind": "langgraph",
        "nodes": [n for n in drawn.nodes if not n.startswith("__")],
        "edges": [_edge(e.source, e.target, bool(e.conditional)) for e in drawn.edges],
        "state": _fields(schema_from_annotations(graph.builder.state_schema)),
    }


def describe_graph(graph: Any, *, name: str, version: str, entrypoint: str) -> dict:
    """The JSON description of a project's entrypoint graph: the app's `name`
    and `version`, the graph's name (`entrypoint`), its kind, its nodes, its
    edges when they are known (a compiled graph's topology is its generated
    run loop: node names only) and its state fields. Needs no network."""
    from svc.runtime import CompiledGraph

    out: dict[str, Any] = {"name": name, "version": version, "entrypoint": entrypoint}
    if isinstance(graph, CompiledGraph) or (
        isinstance(graph, type) and issubclass(graph, CompiledGraph)
    ):
        out.update(kind="compiled", nodes=list(graph.node_names), state=_fields(graph.schema))
    elif isinstance(graph, GraphBuilder):
        out.update(_builder_topology(graph))
    elif callable(getattr(graph, "get_graph", None)) and hasattr(graph, "builder"):
        out.update(_langgraph_topology(graph))
    else:
        out.update(kind="other", nodes=list(getattr(graph, "node_names", None) or ()))
    return out


def describe_project(config: dict, entrypoint: str, graph: Any) -> dict:
    """What `svc register` records: describe_graph of the project's
    entrypoint graph, with the app's identity and the registered components."""
    name, version = app_identity(config)
    description = describe_graph(graph, name=name, version=version, entrypoint=entrypoint)
    description["components"] = registry.components()
    return description
