"""The MCP servers a run may call: each declared once, with `register_mcp_server`
(what generated code does) or in the `mcp.servers` section of the config,
and reached over stdio (a child process), SSE or streamable HTTP.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from svc.config import as_written, secret_variable
from svc.errors import ConfigError, RegistrationError

TRANSPORTS = ("stdio", "sse", "streamable_http")
DEFAULT_TIMEOUT_MS = 30000


def _str_map(value: Any, what: str, where: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise RegistrationError(f"{where}: {what} must map names to strings, not {value!r}")
    return dict(value)


@dataclass(frozen=True)
class McpServer:
    """An MCP server and how to reach it.

    stdio runs `command` with `args` (a child of the service); sse and
    streamable_http connect to `url`, which may be `env:NAME`. `env` values
    are `${NAME}` or `env:NAME` (a child's environment is where its secrets
    go, and secrets come from the service's environment only: any other
    value is refused), header values may hold `${NAME}`: they are read when a
    session opens, and an unset variable is a ConfigError naming it.
    `timeout_ms` bounds opening a session and every call.
    """

    id: str
    transport: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict, hash=False)
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict, hash=False)
    timeout_ms: int = DEFAULT_TIMEOUT_MS

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id.strip():
            raise RegistrationError(
                f"an MCP server needs an id (a non-empty string), not {self.id!r}"
            )
        where = f'MCP server "{self.id}"'
        if self.transport not in TRANSPORTS:
            raise RegistrationError(
                f"{where}: transport {self.transport!r} is not one of {', '.join(TRANSPORTS)}"
            )
        args = self.args
        if isinstance(args, str) or not all(isinstance(a, str) for a in args or ()):
            raise RegistrationError(f"{where}: args must be a list of strings, not {args!r}")
        object.__setattr__(self, "args", tuple(args or ()))
        object.__setattr__(self, "env", _str_map(self.env, "env", where))
        for key, value in self.env.items():
            secret_variable(value, f"{where}: env.{key}", RegistrationError)
        object.__setattr__(self, "headers", _str_map(self.headers, "headers", where))
        if self.transport == "stdio":
            if not isinstance(self.command, str) or not self.command.strip():
                raise RegistrationError(f"{where}: the stdio transport needs a command")
        elif not isinstance(self.url, str) or not self.url.strip():
            raise RegistrationError(f"{where}: the {self.transport} transport needs a url")
        ms = self.timeout_ms
        if isinstance(ms, bool) or not isinstance(ms, int) or ms <= 0:
            raise RegistrationError(f"{where}: timeout_ms must be a positive integer, not {ms!r}")


# server id -> its declaration
_servers: dict[str, McpServer] = {}


def register_mcp_server(server: McpServer) -> McpServer:
    """Remembers `server` by its id; registering the same id again replaces it
    (an open session to the old declaration is closed on next use)."""
    if not isinstance(server, McpServer):
        raise RegistrationError(
            f"register_mcp_server needs an McpServer, not {type(server).__name__}"
        )
    _servers[server.id] = server
    return server


_CONFIG_KEYS = ("id", "transport", "command", "args", "env", "url", "headers", "timeout_ms")


def servers_from_config(config: dict) -> list[McpServer]:
    """The servers of the `mcp.servers` section: a list of `{id, transport,
    command?, args?, env?, url?, headers?, timeout_ms?}` (or `timeoutMs`).

    The application config resolves `${NAME}` itself, to null when NAME is
    unset; write `env:NAME` to have the variable read (and checked) when the
    session opens instead. `env` is taken as written, so that a value written
    inline is refused and `${NAME}` is read when the session opens."""
    section = (config or {}).get("mcp") or {}
    if not isinstance(section, dict):
        raise ConfigError("mcp must be a mapping (with a servers list)")
    entries = section.get("servers") or []
    if not isinstance(entries, list):
        raise ConfigError("mcp.servers must be a list of servers")
    written = as_written(config or {}, "mcp.servers")
    out: list[McpServer] = []
    seen: set[str] = set()
    for i, entry in enumerate(entries):
        where = f"mcp.servers[{i}]"
        if not isinstance(entry, dict):
            raise ConfigError(f"{where} must be a mapping, not {entry!r}")
        if isinstance(entry.get("id"), str):
            where += f' (id "{entry["id"]}")'
        entry = {**entry, "env": written[i].get("env")}
        values = {k: entry[k] for k in _CONFIG_KEYS if entry.get(k) is not None}
        if "timeout_ms" not in values and entry.get("timeoutMs") is not None:
            values["timeout_ms"] = entry["timeoutMs"]
        for key in ("env", "headers"):
            nulls = [k for k, v in (entry.get(key) or {}).items() if v is None]
            if isinstance(entry.get(key), dict) and nulls:
                raise ConfigError(
                    f"{where}: {key}.{nulls[0]} is null (an unset ${{NAME}}?); "
                    "set the variable, or write env:NAME"
                )
        unknown = sorted(set(entry) - set(_CONFIG_KEYS) - {"timeoutMs"})
        if unknown:
            raise ConfigError(f"{where}: unknown key(s) {', '.join(unknown)}")
        if "id" not in values or "transport" not in values:
            raise ConfigError(f"{where} needs an id and a transport")
        try:
            server = McpServer(**values)
        except (RegistrationError, TypeError) as e:
            raise ConfigError(f"{where}: {e}") from None
        if server.id in seen:
            raise ConfigError(f'{where}: the id "{server.id}" is used twice')
        seen.add(server.id)
        out.append(server)
    return out


def declared(server_id: str) -> McpServer:
    """The server declared as `server_id`; a ConfigError naming it otherwise."""
    try:
        return _servers[server_id]
    except KeyError:
        raise ConfigError(
            f'no MCP server "{server_id}" is declared (mcp.servers in application.yaml, '
            "or register_mcp_server)"
        ) from None


def all_declared() -> list[McpServer]:
    """Every declared server, in id order."""
    return [_servers[k] for k in sorted(_servers)]


def forget_all() -> None:
    """Forgets every declared server (for tests)."""
    _servers.clear()
