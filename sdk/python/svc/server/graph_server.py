"""A class whose `@graph` builders are served together: `@svc_graph_server`.

    @svc_graph_server("catalog", protocol="mcp", port=9100)
    class Catalog:
        @graph("search", entrypoint=True)
        def search(self):
            return SearchGraph()

        @graph("summarize")
        def summarize(self):
            ...

Each `@graph` method stays an ordinary registered graph: its builder is
called on one instance of the class, created when the first graph is built.
`svc-py run` serves every graph of the class over `protocol`, next to
`/invoke` (which keeps running the entrypoint graph):

- "http": `POST /graphs/<name>/invoke`, the `/invoke` contract (credential,
  envelopes, limits, `threadId`/`resume`) for that graph; an unknown name is
  `404 not_found`;
- "mcp": one MCP tool per graph at `/mcp`, named after it (`expose_graph`);
- "a2a": one A2A skill per graph at `/a2a`, its id the graph's name; a
  message names it in its metadata, `{"skillId": "<name>"}`.

It listens on `port` unless `svc-py run --port` says otherwise (see
`svc.cli.run_port`). A service has at most one graph server.
"""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Callable
from typing import Any

from svc import registry
from svc.config import graph_settings
from svc.errors import ConfigError, RegistrationError

KIND = "graph_servers"
PROTOCOLS = ("http", "mcp", "a2a")
HTTP_PATH = "/graphs/{graph}/invoke"
# One rule for every protocol: a path segment, an MCP tool name and an A2A skill id.
_GRAPH_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}")


def _builder(value: Any) -> tuple[str, Callable] | None:
    """(graph name, builder) when a class attribute is a registered `@graph`
    builder, written above or below @staticmethod (or @classmethod)."""
    graphs = {c.name: c for c in registry.registered("graphs")}
    for fn in (value, getattr(value, "__func__", None)):
        name = getattr(fn, "__svc_name__", None)
        component = graphs.get(name) if isinstance(name, str) else None
        if component is not None and component.obj is fn:
            return name, fn
    return None


def _graphs(cls: type) -> dict[str, tuple[str, Callable]]:
    """The `@graph` builders of a class by attribute, in declaration order
    (a subclass's definition wins)."""
    found: dict[str, tuple[str, Callable]] = {}
    for klass in reversed(cls.__mro__):
        for attr, value in vars(klass).items():
            member = _builder(value)
            if member is not None:
                found[attr] = member
            else:
                found.pop(attr, None)
    return found


def _bound(attr: str, fn: Callable, instance: Callable[[], Any]) -> Callable:
    """The builder the registry calls with no argument: the method of the instance."""

    @functools.wraps(fn)  # the same origin, so a reload replaces it
    def build() -> Any:
        return getattr(instance(), attr)()

    return build


def svc_graph_server(
    name: str, protocol: str = "http", port: int | None = None
) -> Callable[[type], type]:
    """Serves the `@graph` methods of the decorated class over `protocol`
    ("http", "mcp" or "a2a") on `port` (1 to 65535; None: the server's
    configured port). See the module's documentation for the paths."""
    if not isinstance(name, str) or not name.strip():
        raise RegistrationError(
            '@svc_graph_server needs the server\'s name, like @svc_graph_server("catalog")'
        )
    if protocol not in PROTOCOLS:
        raise RegistrationError(
            f"@svc_graph_server({name!r}): protocol {protocol!r} is not one of "
            f"{', '.join(PROTOCOLS)}"
        )
    if port is not None and (
        not isinstance(port, int) or isinstance(port, bool) or not 1 <= port <= 65535
    ):
        raise RegistrationError(
            f"@svc_graph_server({name!r}): the port {port!r} is not a port number: "
            "give a whole number from 1 to 65535, or leave it out to use server.port"
        )

    def register(cls: type) -> type:
        if not isinstance(cls, type):
            raise RegistrationError(f"@svc_graph_server({name!r}) must decorate a class")
        members = _graphs(cls)
        if not members:
            raise RegistrationError(
                f"{cls.__qualname__} has no @graph method: decorate the methods that "
                'build its graphs with @graph("name")'
            )
        for graph_name, _ in members.values():
            if not _GRAPH_NAME.fullmatch(graph_name):
                raise RegistrationError(
                    f'{cls.__qualname__}: the graph name "{graph_name}" cannot be served: use '
                    "1 to 128 letters, digits, '_', '-' or '.', starting with a letter, "
                    "digit or '_'"
                )
        graphs = {
            graph_name: (inspect.getdoc(fn) or "").split("\n")[0]
            for graph_name, fn in members.values()
        }
        meta = {"protocol": protocol, "port": port, "graphs": graphs}
        registry.register_only(
            KIND,
            name,
            cls,
            meta,
            lambda other: (
                f'two graph servers: "{other.name}" ({registry.origin(other.obj)}) and '
                f'"{name}" ({registry.origin(cls)}); a service has one: put every graph '
                "in one class"
            ),
        )

        @functools.cache  # one instance builds every graph of the class
        def instance() -> Any:
            try:
                return cls()
            except Exception as e:
                raise RegistrationError(
                    f'cannot create the graph server "{name}" ({cls.__qualname__}()): '
                    f"{type(e).__name__}: {e}"
                ) from e

        for attr, (graph_name, fn) in members.items():
            registry.get("graphs", graph_name).obj = _bound(attr, fn, instance)
        cls.__svc_name__ = name
        return cls

    return register


def registered() -> registry.Component | None:
    """The registered graph server, if any."""
    return next(iter(registry.registered(KIND)), None)


def info() -> dict[str, Any] | None:
    """What `svc-py info` shows of the graph server (None without one)."""
    server = registered()
    if server is None:
        return None
    return {
        "name": server.name,
        "protocol": server.meta["protocol"],
        "port": server.meta["port"],
        "graphs": list(server.meta["graphs"]),
    }


def runners(config: dict, built: dict[str, Any] | None = None) -> dict[str, Any]:
    """The runner of each graph of the graph server, by name, in the class's
    order. A runner in `built` (the entrypoint's) is reused, so that the
    graph's two paths share one runner and its thread store."""
    from svc.adapters import runner_for
    from svc.graph import GraphBuilder

    server = registered()
    if server is None:
        return {}
    settings = graph_settings(config)
    out = {}
    for name in server.meta["graphs"]:
        if built and name in built:
            out[name] = built[name]
            continue
        graph = registry.get("graphs", name).obj()
        if isinstance(graph, GraphBuilder):
            graph = graph.compile()
        out[name] = runner_for(graph, settings, name)
    return out


def mcp_tools(runners: dict[str, Any]) -> list[tuple[Any, str]]:
    """One MCP tool per graph, named after it, with who offers it (for
    `build_app_server`'s clash message)."""
    from svc.mcp.server import expose_graph

    server = registered()
    owner = f'the graph server "{server.name}"'
    descriptions = server.meta["graphs"]
    return [
        (expose_graph(runner, name, descriptions[name] or None), owner)
        for name, runner in runners.items()
    ]


def a2a_skills(config: dict, runners: dict[str, Any]) -> list[Any]:
    """One A2A skill per graph, its id and name the graph's (open to every
    caller the agent accepts). A message's text goes into each graph as
    `svc.a2a.skills.graph_call` says; `a2a.input_field` and `a2a.output_field`
    apply to every graph."""
    from svc.a2a.skills import Skill, graph_call

    server = registered()
    skills = []
    for name, runner in runners.items():
        try:
            call = graph_call(config, runner)
        except ConfigError as e:
            raise ConfigError(
                f'the graph "{name}" of the graph server "{server.name}" cannot be an A2A '
                f"skill: {e}"
            ) from None
        description = server.meta["graphs"][name] or f'Runs the graph "{name}".'
        skills.append(Skill(name, name, description, (name,), (), (), call))
    return skills
