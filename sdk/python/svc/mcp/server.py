"""MCP servers of a project: decorated classes and the exposed graph (the "mcp" extra).

A class decorated `@svc_mcp_server("docs")` is one MCP server; its methods
marked `@mcp_tool`, `@mcp_resource` and `@mcp_prompt` are what it offers.
The decorators only record; the MCP SDK (2.x, `MCPServer`) is imported when a
server is built, so `import svc` never needs it.

`create_app()` serves the project's servers and, with `mcp: {expose: true}` in
the config, the entrypoint graph as one tool, at `/mcp` (streamable HTTP,
behind the app's credential); `svc-py mcp --root PATH` serves them over stdio.
A tool that raises answers an error result (`isError`) with the exception's
text, never an empty success.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import inspect
import json
import logging
import re
import sys
from collections.abc import AsyncIterator, Callable, Iterable
from typing import Any

from svc import registry
from svc.contract import MAX_RESPONSE_BYTES
from svc.errors import ConfigError, RegistrationError, SvcError, require

log = logging.getLogger("svc.mcp")

KIND = "mcp_servers"
# How a server is reached: "streamable_http" servers are mounted at /mcp by
# create_app() (and served by `svc-py mcp` too); "stdio" ones only by `svc-py mcp`.
PROTOCOLS = ("streamable_http", "stdio")
_TOOL_NAME = re.compile(r"[A-Za-z0-9_.-]{1,128}")
_MARK = "__svc_mcp__"


# --- decorators --------------------------------------------------------------------


def _mark(fn: Any, kind: str, options: dict[str, Any]) -> Any:
    if not callable(fn):
        raise RegistrationError(f"@mcp_{kind} must decorate a method, not {fn!r}")
    setattr(fn, _MARK, (kind, options))
    return fn


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise RegistrationError(f"{what} must be text, not {value!r}")
    return value


def mcp_tool(name: str | Callable | None = None, description: str = "") -> Any:
    """A method of an `@svc_mcp_server` class callable as an MCP tool.

    Its parameters (with their annotations) are the tool's input schema;
    `description` defaults to the docstring. Works bare or called."""
    _text(description, "description")

    def mark(fn: Any) -> Any:
        tool_name = name if isinstance(name, str) else fn.__name__
        return _mark(fn, "tool", {"name": tool_name, "description": description})

    if callable(name):
        return mark(name)
    if name is not None:
        _text(name, "the tool's name")
    return mark


def mcp_resource(name: str, uri: str, mime_type: str = "text/plain") -> Callable[[Any], Any]:
    """A method of an `@svc_mcp_server` class read as the MCP resource `uri`.

    It returns text, bytes, or a value sent as JSON. A URI with `{param}`
    parts is a template: the method takes those parameters."""
    for value, what in ((name, "the resource's name"), (uri, "the resource's uri")):
        if not _text(value, what):
            raise RegistrationError(f"{what} must not be empty")
    _text(mime_type, "mime_type")
    return lambda fn: _mark(fn, "resource", {"name": name, "uri": uri, "mime_type": mime_type})


def mcp_prompt(name: str | Callable | None = None, description: str = "") -> Any:
    """A method of an `@svc_mcp_server` class rendered as an MCP prompt: it
    returns the text of a user message (or messages). Works bare or called."""
    _text(description, "description")

    def mark(fn: Any) -> Any:
        prompt_name = name if isinstance(name, str) else fn.__name__
        return _mark(fn, "prompt", {"name": prompt_name, "description": description})

    if callable(name):
        return mark(name)
    if name is not None:
        _text(name, "the prompt's name")
    return mark


def _members(cls: type) -> list[tuple[str, str, dict[str, Any]]]:
    """The marked methods of a class (a subclass's definition wins)."""
    found: dict[str, tuple[str, dict[str, Any]]] = {}
    for klass in reversed(cls.__mro__):
        for attr, value in vars(klass).items():
            mark = getattr(value, _MARK, None)
            if mark is not None:
                found[attr] = mark
            else:
                found.pop(attr, None)
    members, seen = [], set()
    for attr, (kind, options) in found.items():
        key = (kind, options["uri"] if kind == "resource" else options["name"])
        if key in seen:
            raise RegistrationError(
                f"{cls.__qualname__} defines the {kind} {key[1]!r} twice (method {attr})"
            )
        seen.add(key)
        members.append((attr, kind, options))
    return members


def svc_mcp_server(name: str, protocol: str = "streamable_http") -> Callable[[type], type]:
    """Registers a class as the MCP server `name`; one instance serves every request.

    `protocol` is "streamable_http" (mounted at /mcp by create_app() and served
    by `svc-py mcp`) or "stdio" (served by `svc-py mcp` only)."""
    if not isinstance(name, str) or not name:
        raise RegistrationError(
            "@svc_mcp_server needs the server's name, like @svc_mcp_server('docs')"
        )
    if protocol not in PROTOCOLS:
        raise RegistrationError(f"protocol {protocol!r} is not one of {', '.join(PROTOCOLS)}")

    def register(cls: type) -> type:
        if not isinstance(cls, type):
            raise RegistrationError(f"@svc_mcp_server({name!r}) must decorate a class")
        members = _members(cls)
        if not members:
            raise RegistrationError(
                f"{cls.__qualname__} has no @mcp_tool, @mcp_resource or @mcp_prompt method"
            )
        cls.__svc_name__ = name
        return registry.register(KIND, name, cls, {"protocol": protocol, "members": members})

    return register


def registered(transport: str = "stdio") -> list[registry.Component]:
    """The registered servers served over `transport` ("streamable_http" or
    "stdio", which serves them all), in name order."""
    servers = sorted(registry.registered(KIND), key=lambda c: c.name)
    if transport == "stdio":
        return servers
    return [c for c in servers if c.meta["protocol"] == transport]


# --- configuration -------------------------------------------------------------------


def mcp_section(config: dict) -> dict:
    section = config.get("mcp")
    if section is None:
        return {}
    if not isinstance(section, dict):
        raise ConfigError(f"mcp must be a mapping, not {section!r}")
    return section


def exposed_tool_name(config: dict) -> str | None:
    """`None` unless `mcp.expose` is true; then `mcp.tool_name`, or "" for the
    graph's own name."""
    section = mcp_section(config)
    expose = section.get("expose", False)
    if not isinstance(expose, bool):
        raise ConfigError(f"mcp.expose must be true or false, not {expose!r}")
    if not expose:
        return None
    tool_name = section.get("tool_name")
    if tool_name is None:
        return ""
    if not isinstance(tool_name, str) or not _TOOL_NAME.fullmatch(tool_name):
        raise ConfigError(
            f"mcp.tool_name {tool_name!r} is not a tool name: use 1 to 128 letters, digits, "
            "'_', '-' or '.'"
        )
    return tool_name


def wanted(config: dict, transport: str = "streamable_http") -> bool:
    """Whether there is anything to serve over MCP (without importing the SDK)."""
    return bool(registered(transport)) or exposed_tool_name(config) is not None


async def _settled(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


@contextlib.asynccontextmanager
async def clients_running(config: dict) -> AsyncIterator[None]:
    """Starts the MCP clients (`svc.mcp.client`) for as long as the context
    lasts, when the config has `mcp.servers` or the project imported that
    module; otherwise does nothing and imports nothing."""
    if "servers" not in mcp_section(config) and "svc.mcp.client" not in sys.modules:
        yield
        return
    # import_module, not `from svc import ...`: what sys.modules holds wins.
    mcp_client = importlib.import_module("svc.mcp.client")
    try:
        await _settled(mcp_client.start_all(config))
        yield
    finally:  # also after a failed start: what did open is closed
        await _settled(mcp_client.stop_all())


# --- the graph as a tool ---------------------------------------------------------------

_MESSAGE = {
    "type": "object",
    "properties": {"role": {"type": "string"}, "content": {"type": "string"}},
    "required": ["role", "content"],
    "additionalProperties": False,
}


def _type_schema(type_: str, items: Any, nullable: bool = False) -> dict[str, Any]:
    if type_ == "any":
        return {}
    if type_ == "messages":
        schema: dict[str, Any] = {"type": "array", "items": _MESSAGE}
    else:
        schema = {"type": type_}
        if type_ == "array" and items is not None:
            schema["items"] = _type_schema(items.type, items.items)
    if nullable:
        schema["type"] = [schema["type"], "null"]
    return schema


def state_json_schema(schema: Any, *, output: bool = False) -> dict[str, Any]:
    """The JSON Schema of a graph's state (a StateSchema, or None for any object).

    As input: the declared fields with their types and defaults, the required
    ones listed, no others allowed. As output (`output=True`): every field is
    present and may be null, as in an /invoke result."""
    if schema is None:
        return {"type": "object"}
    properties = {}
    for f in schema.fields:
        prop = _type_schema(f.type, f.items, nullable=output)
        if not output and f.fresh_default() is not None:
            prop["default"] = f.fresh_default()
        properties[f.name] = prop
    required = list(schema.field_names) if output else [f.name for f in schema.fields if f.required]
    out: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        out["required"] = required
    if not output:
        out["additionalProperties"] = False
    return out


def _encode(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


async def run_graph(runner: Any, arguments: dict) -> dict:
    """One run as /invoke does it: validation, guardrails, policies, the run."""
    state = runner.validate(arguments)
    guarded = registry.has_guardrails()
    if guarded:
        registry.run_guardrails("input", state)
    registry.enforce_policies({"action": "run", "state": state})
    result = await runner.arun(state)
    if guarded:
        registry.run_guardrails("output", result)
    return result


def expose_graph(runner: Any, tool_name: str | None = None, description: str | None = None) -> Any:
    """The MCP tool (an `mcp.server.mcpserver.tools.Tool`) running the graph
    of `runner`: named `tool_name` (default: the graph's name), described by
    `description` (default: what it runs), its arguments are the input state,
    its result the final state as structured content and as JSON text. A
    failed run is an error result whose structured content is the contract's
    envelope `{"error": {code, message, details?}}`.

    Pass it to `MCPServer(tools=[...])`."""
    require("mcp.server.mcpserver", "mcp", "expose_graph()")
    from mcp.server.mcpserver.tools import Tool
    from mcp.server.mcpserver.utilities.func_metadata import func_metadata
    from mcp_types import CallToolResult, TextContent

    from svc.adapters import CompiledGraphRunner

    def answer(body: dict, is_error: bool = False) -> Any:
        return CallToolResult(
            content=[TextContent(type="text", text=_encode(body))],
            structured_content=body,
            is_error=is_error,
        )

    def failed(e: SvcError) -> Any:
        return answer(e.to_body(), is_error=True)

    async def call(arguments: dict) -> Any:
        try:
            result = await run_graph(runner, arguments)
        except SvcError as e:
            return failed(e)
        except Exception as e:
            log.error("the run failed", exc_info=e)
            return failed(
                SvcError(500, "execution_error", f"the run failed: {type(e).__name__}: {e}")
            )
        try:
            size = len(_encode(result).encode())
        except (TypeError, ValueError):
            return failed(SvcError(500, "execution_error", "the result cannot be encoded as JSON"))
        if size > MAX_RESPONSE_BYTES:
            return failed(
                SvcError(
                    500,
                    "execution_error",
                    "the response is larger than 4 MiB",
                    {"reason": "response_too_large"},
                )
            )
        return answer(result)

    class GraphTool(Tool):
        """A tool whose arguments are a whole state, checked by the graph's own schema."""

        async def run(self, arguments: dict, context: Any, convert_result: bool = False) -> Any:
            return await call(dict(arguments or {}))

    def no_arguments() -> None:
        pass

    metadata = func_metadata(no_arguments, structured_output=False)
    # Generated graphs type-check every write and return every field: their
    # result is published as an output schema; other graphs' results are not checked.
    if isinstance(runner, CompiledGraphRunner):
        metadata.output_schema = state_json_schema(runner.schema, output=True)
    name = tool_name or runner.name
    return GraphTool(
        fn=call,
        name=name,
        description=description
        or (
            f'Runs the graph "{runner.name}": the arguments are its input state, '
            "the result is its final state."
        ),
        parameters=state_json_schema(runner.schema),
        fn_metadata=metadata,
        is_async=True,
    )


# --- building servers --------------------------------------------------------------------


def _guarded(fn: Callable, error: type[Exception], passthrough: tuple[type, ...]) -> Callable:
    """`fn` with its exceptions turned into `error` (a ToolError or ResourceError)
    that keeps their text, which the SDK would otherwise hide."""

    def failure(e: Exception) -> Exception:
        if isinstance(e, SvcError):
            return error(f"{e.code}: {e.message}")
        return error(f"{type(e).__name__}: {e}")

    if inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def async_call(*args: Any, **kwargs: Any) -> Any:
            try:
                return await fn(*args, **kwargs)
            except passthrough:
                raise
            except Exception as e:
                raise failure(e) from e

        return async_call

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except passthrough:
            raise
        except Exception as e:
            raise failure(e) from e

    return call


def _add_members(server: Any, component: registry.Component, taken: dict[tuple, str]) -> None:
    from mcp.server.mcpserver.exceptions import MCPServerError, ResourceError, ToolError
    from mcp.shared.exceptions import MCPError

    passthrough = (MCPServerError, MCPError)
    try:
        instance = component.obj()
    except Exception as e:
        raise RegistrationError(
            f'cannot create the MCP server "{component.name}" ({component.obj.__qualname__}()): '
            f"{type(e).__name__}: {e}"
        ) from e
    for attr, kind, options in component.meta["members"]:
        key = (kind, options["uri"] if kind == "resource" else options["name"])
        if key in taken:
            raise RegistrationError(
                f'the MCP {kind} "{key[1]}" is defined by both {taken[key]} and '
                f'the MCP server "{component.name}"'
            )
        taken[key] = f'the MCP server "{component.name}"'
        fn = getattr(instance, attr)
        description = options.get("description") or None
        try:
            if kind == "tool":
                server.add_tool(
                    _guarded(fn, ToolError, passthrough),
                    name=options["name"],
                    description=description,
                )
            elif kind == "resource":
                server.resource(
                    options["uri"], name=options["name"], mime_type=options["mime_type"]
                )(_guarded(fn, ResourceError, passthrough))
            else:
                server.prompt(name=options["name"], description=description)(fn)
        except RegistrationError:
            raise
        except Exception as e:
            raise RegistrationError(
                f'MCP server "{component.name}": the {kind} {key[1]!r} '
                f"({component.obj.__qualname__}.{attr}) cannot be served: {e}"
            ) from e


def _new_server(name: str, version: str, tools: list) -> Any:
    mcpserver = require("mcp.server.mcpserver", "mcp", "an MCP server")
    return mcpserver.MCPServer(name, version=version, tools=tools)


def build_server(name: str, *, version: str = "") -> Any:
    """The `MCPServer` of the registered `@svc_mcp_server` named `name`."""
    component = registry.get(KIND, name)
    server = _new_server(name, version, [])
    _add_members(server, component, {})
    return server


def build_app_server(
    config: dict,
    runner: Any = None,
    *,
    transport: str = "streamable_http",
    name: str = "svc-app",
    version: str = "",
    more_tools: Iterable[tuple[Any, str]] = (),
) -> Any:
    """One `MCPServer` named `name` holding every server registered for
    `transport`, when the config says `mcp.expose` the graph of `runner` as
    a tool, and `more_tools` (each a tool and who offers it, as the graphs of
    an `@svc_graph_server`); None when there is nothing to serve. Two
    offering the same tool, prompt or resource are refused."""
    tool_name = exposed_tool_name(config)
    components = registered(transport)
    more_tools = list(more_tools)
    if tool_name is None and not components and not more_tools:
        return None
    tools, taken = [], {}
    if tool_name is not None:
        if runner is None:
            raise ConfigError("mcp.expose is true but there is no graph to expose")
        tool = expose_graph(runner, tool_name or None)
        tools.append(tool)
        taken[("tool", tool.name)] = f'the exposed graph "{runner.name}"'
    for tool, owner in more_tools:
        if ("tool", tool.name) in taken:
            raise RegistrationError(
                f'the MCP tool "{tool.name}" is defined by both {taken[("tool", tool.name)]} '
                f"and {owner}"
            )
        tools.append(tool)
        taken[("tool", tool.name)] = owner
    server = _new_server(name, version, tools)
    for component in components:
        _add_members(server, component, taken)
    return server


def http_endpoint(server: Any, max_request_bytes: int) -> tuple[Any, Any]:
    """The ASGI app answering MCP's streamable HTTP at one path, and the
    session manager to run in the app's lifespan.

    Stateless, with JSON answers: every request stands alone, so any worker or
    replica can answer it and nothing is kept between requests (no session to
    expire, nothing lost on a restart); the tools need no server-to-client
    requests, which are what sessions are for."""
    from mcp.server.transport_security import TransportSecuritySettings

    server.streamable_http_app(
        stateless_http=True,
        json_response=True,
        max_request_body_size=max_request_bytes,
        # No Host/Origin allow-list: the address the app is reached at is not
        # known here, and the credential guards /mcp as it guards /invoke.
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    manager = server.session_manager
    return manager.handle_request, manager


def serve_stdio(root: Any = None, config: dict | None = None) -> int:
    """Serves the project's MCP servers (all of them) and its exposed graph
    over stdin/stdout until the client closes them."""
    require("mcp.server.mcpserver", "mcp", "svc mcp")
    import anyio

    from svc import rag
    from svc.config import app_identity, load_config
    from svc.project import SvcApp

    if config is None:
        config = load_config(root)
    app = SvcApp(root, config=config)
    # stdout carries the protocol: what the project prints on import goes to stderr.
    with contextlib.redirect_stdout(sys.stderr):
        app.bootstrap()
        runner = app.runner() if exposed_tool_name(config) is not None else None
        rag.build_indexes()
    name, version = app_identity(config)
    if "name" not in (config.get("app") or {}) and runner is not None:
        name = runner.name
    server = build_app_server(config, runner, transport="stdio", name=name, version=version)
    if server is None:
        raise ConfigError(
            "nothing to serve over MCP: register a class with @svc_mcp_server "
            "or set mcp.expose: true in the config"
        )

    async def serve() -> None:
        async with clients_running(config):
            await server.run_stdio_async()

    anyio.run(serve)
    return 0
