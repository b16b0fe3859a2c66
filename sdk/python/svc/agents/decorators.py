"""Declaring agents: `@worker_agent`, `@agent` (local, remote or A2A),
`@a2a_agent`, `@supervisor`, `make_handoff_tool`, and `handoff` for
LangGraph nodes; `agents_info()` is what they declared (the `agents` of
/info). svc.agents.run runs them.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from svc.errors import RegistrationError, require
from svc.model_calls import Model
from svc.registry import decorator, named, names, register, registered, tool

DEFAULT_MAX_TURNS = 8


def worker_agent(
    name: str | Callable | None = None,
    role: str = "",
    tools: Iterable[Any] = (),
    persona: str | dict | None = None,
    instructions: str = "",
    model: Model | str | None = None,
    max_turns: int = DEFAULT_MAX_TURNS,
    roles: Iterable[str] = (),
    description: str = "",
) -> Any:
    """A delegatable local agent. The decorated function returns its
    instructions (or None to use `instructions=`); `persona` names a
    registered @persona whose prompt comes first, or is `{"role", "tone"}`
    (either optional) said in a first paragraph; `role` says who it is,
    `tools` are registered @tool names it may call, `roles` the caller roles
    allowed to run it (any one suffices; none means anyone)."""
    if isinstance(max_turns, bool) or not isinstance(max_turns, int) or max_turns < 1:
        raise RegistrationError(f"max_turns must be a positive integer, not {max_turns!r}")
    if isinstance(model, str):
        model = Model(model)
    _check_persona(persona)

    def record(fn: Callable) -> Callable:
        agent_name = named(fn, None if callable(name) else name)
        meta = {
            "kind": "worker",
            "role": role,
            "tools": names(tools, "tools"),
            "persona": dict(persona) if isinstance(persona, dict) else persona,
            "instructions": instructions,
            "model": model,
            "max_turns": max_turns,
            "roles": names(roles, "roles"),
            "description": description or (inspect.getdoc(fn) or "").split("\n")[0],
        }
        return register("agents", agent_name, fn, meta)

    return decorator(name, record)


PERSONA_KEYS = ("role", "tone")


def _check_persona(persona: Any) -> None:
    if persona is None or isinstance(persona, str):
        return
    if not isinstance(persona, dict):
        raise RegistrationError(f"persona must be a persona name or a dict, not {persona!r}")
    for key, value in persona.items():
        if key not in PERSONA_KEYS:
            raise RegistrationError(f"persona key {key!r} is not one of {', '.join(PERSONA_KEYS)}")
        if not isinstance(value, str):
            raise RegistrationError(f"persona {key} must be text, not {value!r}")


TRANSPORTS = ("local", "remote", "a2a")
DEFAULT_REMOTE_TIMEOUT_MS = 20000


def agent(
    name: str | Callable | None = None,
    transport: str = "local",
    roles: Iterable[str] = (),
    description: str = "",
    service: str | None = None,
    url: str | None = None,
    input_field: str = "input",
    output_field: str = "output",
    timeout_ms: int = DEFAULT_REMOTE_TIMEOUT_MS,
    agent_card_url: str | None = None,
    skill_id: str | None = None,
) -> Any:
    """A delegatable agent. `transport="local"`: the decorated function
    `fn(task: str) -> str` is the agent. `transport="remote"`: another svc
    service; the task goes to `input_field` of `{"state": ...}` posted to
    `<url>/invoke` (`url` may be `env:NAME`; without it, the service's
    `serverUrl`), the answer is `output_field` of its `result`, and the
    credential comes from `external_services.<service>.auth` (never inline).
    `transport="a2a"`: an A2A agent whose card is at `agent_card_url`
    (`env:NAME` allowed; a base URL gets `/.well-known/agent-card.json`;
    without it, the service's `serverUrl`); the task is a message to its
    skill `skill_id` (in the message metadata, `skillId`), the answer its
    reply's text, the credential `external_services.<service>.auth` (no
    service: none). See svc.a2a.peers."""
    if transport not in TRANSPORTS:
        raise RegistrationError(f"transport {transport!r} is not one of {', '.join(TRANSPORTS)}")
    if transport == "remote" and not service:
        raise RegistrationError(
            "a remote agent needs service=: its credential comes from external_services.<service>"
        )
    if transport == "a2a":
        _check_a2a(agent_card_url, service, skill_id, timeout_ms)

    def record(fn: Callable) -> Callable:
        meta = {
            "kind": transport,
            "roles": names(roles, "roles"),
            "description": description or (inspect.getdoc(fn) or "").split("\n")[0],
            "service": service,
            "url": url,
            "input_field": input_field,
            "output_field": output_field,
            "timeout_ms": timeout_ms,
            "agent_card_url": agent_card_url,
            "skill_id": skill_id,
        }
        return register("agents", named(fn, None if callable(name) else name), fn, meta)

    return decorator(name, record)


def _check_a2a(agent_card_url: Any, service: Any, skill_id: Any, timeout_ms: Any) -> None:
    if isinstance(timeout_ms, bool) or not isinstance(timeout_ms, (int, float)) or timeout_ms <= 0:
        raise RegistrationError(f"timeout_ms must be a positive number, not {timeout_ms!r}")
    if agent_card_url is None and not service:
        raise RegistrationError(
            "an A2A agent needs agent_card_url= or service= (whose serverUrl serves the card)"
        )
    if agent_card_url is not None:
        ok = isinstance(agent_card_url, str)
        if ok and agent_card_url.startswith("env:"):
            ok = bool(agent_card_url[4:])
        elif ok:
            parts = urlsplit(agent_card_url)
            ok = parts.scheme in ("http", "https") and bool(parts.netloc)
        if not ok:
            raise RegistrationError(
                f"agent_card_url {agent_card_url!r} is not an http(s) URL or env:NAME"
            )
    if service is not None and (not isinstance(service, str) or not service):
        raise RegistrationError(f"service must be an external_services name, not {service!r}")
    if skill_id is not None and (not isinstance(skill_id, str) or not skill_id):
        raise RegistrationError(f"skill_id must be a skill's id, not {skill_id!r}")


def a2a_agent(
    name: Any = None,
    agent_card_url: str | None = None,
    service: str | None = None,
    roles: Iterable[str] = (),
    skill_id: str | None = None,
    description: str = "",
    timeout_ms: int = DEFAULT_REMOTE_TIMEOUT_MS,
) -> Any:
    """Declares the A2A agent `name` (default: the function's name), as
    `@agent(transport="a2a", ...)` does: its card at `agent_card_url`
    (`env:NAME` allowed), its credential `external_services.<service>.auth`,
    `roles` the caller roles `run_agent` requires (any one), `skill_id` the
    skill messages go to unless the call names another. Calls go through
    svc.a2a.peers."""
    return agent(
        name,
        transport="a2a",
        roles=roles,
        description=description,
        service=service,
        timeout_ms=timeout_ms,
        agent_card_url=agent_card_url,
        skill_id=skill_id,
    )


ROUTERS = ("llm", "custom")
DEFAULT_MAX_ROUNDS = 10
FINISH = "finish"


def supervisor(
    name: str | Callable | None = None,
    members: Iterable[Any] = (),
    router: str = "llm",
    max_rounds: int = DEFAULT_MAX_ROUNDS,
    model: Model | str | None = None,
    instructions: str = "",
    roles: Iterable[str] = (),
    description: str = "",
) -> Any:
    """Routes a task between member agents until it routes to finish.

    With `router="llm"` the decorated function returns the routing
    instructions (or None to use `instructions=`) and the model picks the
    next member; with `router="custom"` it is `route(state) -> str`, where
    `state` holds `input`, `round` (0 first), `last_member` and
    `last_output`, and returns a member or "finish". Each member gets the
    input, followed by the last member's output once one has run; the
    supervisor's answer is the last member's output. It makes at most
    `max_rounds` decisions (`details.reason` `max_rounds` past that).
    """
    if router not in ROUTERS:
        raise RegistrationError(f"router {router!r} is not one of {', '.join(ROUTERS)}")
    if isinstance(max_rounds, bool) or not isinstance(max_rounds, int) or max_rounds < 1:
        raise RegistrationError(f"max_rounds must be a positive integer, not {max_rounds!r}")
    member_names = names(members, "members")
    if not member_names:
        raise RegistrationError("a supervisor needs members=[...] (agent names)")
    if FINISH in member_names:
        raise RegistrationError(f'"{FINISH}" is the routing decision to stop, not a member name')
    if isinstance(model, str):
        model = Model(model)

    def record(fn: Callable) -> Callable:
        meta = {
            "kind": "supervisor",
            "members": member_names,
            "router": router,
            "max_rounds": max_rounds,
            "model": model,
            "instructions": instructions,
            "roles": names(roles, "roles"),
            "description": description or (inspect.getdoc(fn) or "").split("\n")[0],
        }
        return register("agents", named(fn, None if callable(name) else name), fn, meta)

    return decorator(name, record)


def handoff(agent: str, update: dict | None = None) -> Any:
    """Hands control to the graph node named `agent`, writing `update` to the
    state on the way: LangGraph's `Command(goto=..., update=...)`, returned
    from a node of a graph built with LangGraph (the "graph" extra)."""
    types = require("langgraph.types", "graph", "handoff()")
    if update is not None and not isinstance(update, dict):
        raise TypeError(f"handoff update must be a dict of state fields, not {update!r}")
    return types.Command(goto=agent, update=update or {})


@dataclass(frozen=True)
class Transfer:
    """What a handoff tool returns inside a worker: run `agent` instead."""

    agent: str


def make_handoff_tool(agent: str, description: str = "") -> str:
    """Registers a tool `transfer_to_<agent>` and returns its name. A worker
    that has it among its tools and calls it stops, and `agent` answers the
    task instead (with the caller's roles, after the policies)."""
    name = f"transfer_to_{agent}"

    def transfer() -> Transfer:
        return Transfer(agent)

    transfer.__doc__ = description or f"Hand the task to the agent {agent}."
    transfer.__name__ = name
    transfer.__qualname__ = f"make_handoff_tool.{name}"
    tool(name=name)(transfer)
    return name


def agents_info() -> dict[str, dict[str, Any]]:
    """Every registered agent's kind, roles and limits (what /info shows), so
    an operator can see what an agent may do without reading its code."""
    out: dict[str, dict[str, Any]] = {}
    for component in sorted(registered("agents"), key=lambda c: c.name):
        name, meta = component.name, component.meta
        kind = meta["kind"]
        entry: dict[str, Any] = {"kind": kind, "roles": list(meta["roles"])}
        if kind == "worker":
            entry["maxTurns"] = meta["max_turns"]
            entry["tools"] = list(meta["tools"])
        elif kind == "supervisor":
            entry["maxRounds"] = meta["max_rounds"]
            entry["router"] = meta["router"]
            entry["members"] = list(meta["members"])
        elif kind == "remote":
            entry["service"] = meta["service"]
        elif kind == "a2a":
            entry["service"] = meta["service"]
            if meta["skill_id"]:
                entry["skillId"] = meta["skill_id"]
        out[name] = entry
    return out
