"""Agents: tool-calling workers on an OpenAI-compatible chat-completions API.

A worker is a loop: the model sees the agent's instructions, the caller's
input and the tools it may call; every tool call it makes runs and its result
goes back to it, until it answers without tool calls (the agent's output) or
has been called `max_turns` times (an `execution_error` with
`details.reason` `max_turns`).

Each run happens in an isolated child scope: the conversation, the tool
calls and their results stay inside `run_agent`, which returns only the
final answer; the caller decides where it goes in its own state. An agent
with `roles` runs only for a caller holding one of them (`details.reason`
`forbidden` otherwise), and so does a tool with `roles`: a worker offers the
model only the tools its caller may use, and a call to another one by name
ends the run the same way.

A supervisor routes a task between member agents (workers or other
supervisors) with the model or with a `route` function of its own, until it
routes to finish; see `supervisor`. Delegation carries the caller's roles.

`@agent` declares a local agent (a function), a remote one (another svc
service reached over its `/invoke`, with a credential from
`external_services`) or an A2A one (any Agent2Agent agent, found by its agent
card; see svc.a2a_peers). `handoff` is LangGraph's `Command` for graph
nodes; `make_handoff_tool` lets a worker pass its task to another agent.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from svc.errors import RegistrationError, SvcError, upstream_error
from svc.registry import (
    _decorator,
    _named,
    _names,
    _register,
    _registry,
    enforce_policies,
    get,
    persona_prompt,
    tool,
)
from svc.upstream import Model, _timeout, chat_message, post_json, resolve_endpoint

DEFAULT_MAX_TURNS = 8

# JSON Schema types for the annotations a tool's parameters commonly have.
_JSON_TYPES = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    dict: "object",
    list: "array",
}


def agent_error(agent: str, reason: str, message: str) -> SvcError:
    """An `execution_error` of an agent run, with its reason."""
    return SvcError(500, "execution_error", message, {"node": agent, "reason": reason})


@dataclass(frozen=True)
class Worker:
    """A tool-calling agent; see the module docstring."""

    name: str
    instructions: str
    tools: tuple[str, ...] = ()
    model: Model | None = None
    max_turns: int = DEFAULT_MAX_TURNS
    roles: tuple[str, ...] = ()
    description: str = ""


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

    def register(fn: Callable) -> Callable:
        agent_name = _named(fn, None if callable(name) else name)
        meta = {
            "kind": "worker",
            "role": role,
            "tools": _names(tools, "tools"),
            "persona": dict(persona) if isinstance(persona, dict) else persona,
            "instructions": instructions,
            "model": model,
            "max_turns": max_turns,
            "roles": _names(roles, "roles"),
            "description": description or (inspect.getdoc(fn) or "").split("\n")[0],
        }
        return _register("agents", agent_name, fn, meta)

    return _decorator(name, register)


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


def _persona_text(persona: str | dict) -> str:
    """A registered persona's prompt, or the sentences a persona dict says."""
    if isinstance(persona, str):
        return persona_prompt(persona)
    said = []
    if persona.get("role"):
        said.append(f"You are the {persona['role']}.")
    if persona.get("tone"):
        said.append(f"Answer in a {persona['tone']} tone.")
    return " ".join(said)


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
    service: none). See svc.a2a_peers."""
    if transport not in TRANSPORTS:
        raise RegistrationError(f"transport {transport!r} is not one of {', '.join(TRANSPORTS)}")
    if transport == "remote" and not service:
        raise RegistrationError(
            "a remote agent needs service=: its credential comes from external_services.<service>"
        )
    if transport == "a2a":
        _check_a2a(agent_card_url, service, skill_id, timeout_ms)

    def register(fn: Callable) -> Callable:
        meta = {
            "kind": transport,
            "roles": _names(roles, "roles"),
            "description": description or (inspect.getdoc(fn) or "").split("\n")[0],
            "service": service,
            "url": url,
            "input_field": input_field,
            "output_field": output_field,
            "timeout_ms": timeout_ms,
            "agent_card_url": agent_card_url,
            "skill_id": skill_id,
        }
        return _register("agents", _named(fn, None if callable(name) else name), fn, meta)

    return _decorator(name, register)


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


def run_remote(name: str, task: str, deadline: float | None = None) -> str:
    """Posts the task to the remote service's /invoke; returns its output field."""
    from svc.clients import service_auth, service_config

    meta = get("agents", name).meta
    cfg, base_url = service_config(meta["service"])
    # `url` may be `env:NAME`: resolve it before appending the path.
    base = resolve_endpoint(name, meta["url"] or base_url)
    endpoint = base.rstrip("/") + "/invoke"
    reply = post_json(
        name,
        endpoint,
        service_auth(meta["service"], cfg),
        {"state": {meta["input_field"]: task}},
        timeout=_timeout(meta["timeout_ms"] / 1000, deadline),
        feature="run_agent()",
    )
    result = reply.get("result") if isinstance(reply, dict) else None
    output = result.get(meta["output_field"]) if isinstance(result, dict) else None
    if output is None:
        raise upstream_error(
            name,
            "invalid_json",
            f'agent "{name}": the reply has no result.{meta["output_field"]}',
        )
    return output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)


@dataclass(frozen=True)
class RemoteAgent:
    """A registered agent as a callable handle: `run(task, caller_roles=...)`."""

    name: str

    def run(self, task: str, caller_roles: Iterable[str] = ()) -> str:
        return run_agent(task, self.name, caller_roles)


def remote_agent(name: str) -> RemoteAgent:
    """The registered remote agent `name`, to run as `remote_agent(n).run(task)`."""
    kind = get("agents", name).meta["kind"]
    if kind != "remote":
        raise LookupError(f'agent "{name}" is a {kind} agent, not a remote one')
    return RemoteAgent(name)


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
    member_names = _names(members, "members")
    if not member_names:
        raise RegistrationError("a supervisor needs members=[...] (agent names)")
    if FINISH in member_names:
        raise RegistrationError(f'"{FINISH}" is the routing decision to stop, not a member name')
    if isinstance(model, str):
        model = Model(model)

    def register(fn: Callable) -> Callable:
        meta = {
            "kind": "supervisor",
            "members": member_names,
            "router": router,
            "max_rounds": max_rounds,
            "model": model,
            "instructions": instructions,
            "roles": _names(roles, "roles"),
            "description": description or (inspect.getdoc(fn) or "").split("\n")[0],
        }
        return _register("agents", _named(fn, None if callable(name) else name), fn, meta)

    return _decorator(name, register)


@dataclass(frozen=True)
class Team:
    """A supervisor, built: `run(task, caller_roles=...)` gives its answer."""

    name: str

    def run(self, task: str, caller_roles: Iterable[str] = ()) -> str:
        return run_agent(task, self.name, caller_roles)

    def invoke(self, state: dict) -> dict:
        """Graph-style: `{"input": ...}` in, `{"output": ...}` out."""
        return {"output": self.run(state.get("input", ""), state.get("caller_roles", ()))}


@dataclass(frozen=True)
class SupervisorHandle:
    name: str

    def build(self) -> Team:
        """Checks the membership (every member registered, no cycle) and
        returns the runnable team."""
        _check_members(self.name, ())
        return Team(self.name)


def get_supervisor(name: str) -> SupervisorHandle:
    c = get("agents", name)
    if c.meta["kind"] != "supervisor":
        raise LookupError(f'agent "{name}" is a {c.meta["kind"]}, not a supervisor')
    return SupervisorHandle(name)


def _check_members(name: str, path: tuple[str, ...]) -> None:
    if name in path:
        cycle = " -> ".join((*path[path.index(name) :], name))
        raise RegistrationError(f"supervisors form a membership cycle: {cycle}")
    c = get("agents", name)
    for member in c.meta.get("members", ()):
        _check_members(member, (*path, name))


def handoff(agent: str, update: dict | None = None) -> Any:
    """Hands control to the graph node named `agent`, writing `update` to the
    state on the way: LangGraph's `Command(goto=..., update=...)`, returned
    from a node of a graph built with LangGraph (the "graph" extra)."""
    from svc.errors import require

    types = require("langgraph.types", "graph", "handoff()")
    if update is not None and not isinstance(update, dict):
        raise TypeError(f"handoff update must be a dict of state fields, not {update!r}")
    return types.Command(goto=agent, update=update or {})


@dataclass(frozen=True)
class _Transfer:
    """What a handoff tool returns inside a worker: run `agent` instead."""

    agent: str


def make_handoff_tool(agent: str, description: str = "") -> str:
    """Registers a tool `transfer_to_<agent>` and returns its name. A worker
    that has it among its tools and calls it stops, and `agent` answers the
    task instead (with the caller's roles, after the policies)."""
    name = f"transfer_to_{agent}"

    def transfer() -> _Transfer:
        return _Transfer(agent)

    transfer.__doc__ = description or f"Hand the task to the agent {agent}."
    transfer.__name__ = name
    transfer.__qualname__ = f"make_handoff_tool.{name}"
    tool(name=name)(transfer)
    return name


def worker(name: str) -> Worker:
    """The registered worker `name`, with its instructions resolved."""
    c = get("agents", name)
    meta = c.meta
    parts = []
    if meta["persona"]:
        parts.append(_persona_text(meta["persona"]))
    if meta["role"]:
        parts.append(f"You are the {meta['role']}.")
    written = c.obj()
    if written is not None and not isinstance(written, str):
        raise TypeError(f'agent "{name}" must return its instructions as a string or None')
    parts.append(written if written is not None else meta["instructions"])
    return Worker(
        name=name,
        instructions="\n\n".join(p for p in parts if p),
        tools=meta["tools"],
        model=meta["model"],
        max_turns=meta["max_turns"],
        roles=meta["roles"],
        description=meta["description"],
    )


def tool_schema(fn: Callable, input_schema: dict | None) -> dict:
    """The JSON Schema of a tool's arguments: its `input_schema`, else one
    object property per parameter (typed from simple annotations)."""
    if input_schema is not None:
        return input_schema
    properties: dict[str, Any] = {}
    required = []
    try:  # annotations may be strings (`from __future__ import annotations`)
        params = inspect.signature(fn, eval_str=True).parameters.values()
    except (NameError, TypeError):
        params = inspect.signature(fn).parameters.values()
    for p in params:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        ty = _JSON_TYPES.get(p.annotation) if isinstance(p.annotation, type) else None
        properties[p.name] = {"type": ty} if ty else {}
        if p.default is p.empty:
            required.append(p.name)
    return {"type": "object", "properties": properties, "required": required}


def _tool_allowed(name: str, caller_roles: tuple[str, ...]) -> bool:
    """Whether a caller holding `caller_roles` may use the tool (one of its
    `roles` suffices; a tool without roles is anyone's)."""
    allowed = get("tools", name).meta["roles"]
    return not allowed or bool(set(caller_roles).intersection(allowed))


def _tool_specs(agent: Worker, caller_roles: tuple[str, ...]) -> list[dict]:
    """The tools offered to the model: those of the agent its caller may use."""
    specs = []
    for name in agent.tools:
        if not _tool_allowed(name, caller_roles):
            continue
        c = get("tools", name)
        specs.append(
            {
                "type": "function",
                "function": {
                    "name": name,
                    "description": c.meta["description"],
                    "parameters": tool_schema(c.obj, c.meta["input_schema"]),
                },
            }
        )
    return specs


def _call_tool(
    agent: Worker, call: Any, caller_roles: tuple[str, ...]
) -> tuple[str, str | _Transfer]:
    """Runs one tool call of the model; returns (call id, result text), or
    the transfer a handoff tool asked for."""
    try:
        call_id = call["id"]
        name = call["function"]["name"]
        raw = call["function"].get("arguments") or "{}"
    except (KeyError, TypeError):
        raise agent_error(
            agent.name, "bad_tool_call", f'agent "{agent.name}": a malformed tool call {call!r}'
        ) from None
    if name not in agent.tools:
        raise agent_error(
            agent.name,
            "bad_tool_call",
            f'agent "{agent.name}" called "{name}", which is not one of its tools '
            f"({', '.join(agent.tools) or 'none'})",
        )
    if not _tool_allowed(name, caller_roles):
        # Not offered to the model, but named anyway: refused as an agent is.
        allowed = get("tools", name).meta["roles"]
        raise agent_error(
            agent.name,
            "forbidden",
            f'agent "{agent.name}" called the tool "{name}", which runs only for the roles '
            f"{', '.join(allowed)}; the caller holds {', '.join(sorted(caller_roles)) or 'none'}",
        )
    try:
        arguments = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        arguments = None
    if not isinstance(arguments, dict):
        raise agent_error(
            agent.name,
            "bad_tool_call",
            f'agent "{agent.name}": the arguments of "{name}" are not a JSON object: {raw!r}',
        )
    c = get("tools", name)
    try:
        # An SvcError (an HTTP tool's upstream_error) keeps its own answer.
        result = c.obj(arguments) if c.meta["arguments"] == "object" else c.obj(**arguments)
    except SvcError:
        raise
    except Exception as e:
        raise agent_error(
            agent.name, "tool_error", f'agent "{agent.name}": tool "{name}" failed: {e}'
        ) from None
    if isinstance(result, _Transfer):
        return call_id, result
    text = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)
    return call_id, text


def run_worker(
    agent: Worker,
    task: str,
    *,
    caller_roles: tuple[str, ...] = (),
    deadline: float | None = None,
) -> str:
    """The worker's answer to `task`; see the module docstring. `deadline`
    is the seconds left in the run, as for `chat()`."""
    if agent.model is None:
        raise agent_error(
            agent.name,
            "no_model",
            f'agent "{agent.name}" has no model: pass model= to @worker_agent',
        )
    messages: list[dict[str, Any]] = []
    if agent.instructions.strip():
        messages.append({"role": "system", "content": agent.instructions})
    messages.append({"role": "user", "content": task})
    tools = _tool_specs(agent, caller_roles)
    for _ in range(agent.max_turns):
        message = chat_message(
            agent.name, agent.model, messages, tools=tools, deadline=deadline, feature="run_agent()"
        )
        calls = message.get("tool_calls") or []
        if not calls:
            content = message.get("content")
            return content if isinstance(content, str) else ""
        messages.append(
            {"role": "assistant", "content": message.get("content"), "tool_calls": calls}
        )
        for call in calls:
            call_id, result = _call_tool(agent, call, caller_roles)
            if isinstance(result, _Transfer):
                return run_agent(task, result.agent, caller_roles, deadline=deadline)
            messages.append({"role": "tool", "tool_call_id": call_id, "content": result})
    raise agent_error(
        agent.name,
        "max_turns",
        f'agent "{agent.name}" did not answer within {agent.max_turns} model calls (max_turns)',
    )


def _route_llm(c: Any, task: str, state: dict, deadline: float | None) -> str:
    model = c.meta["model"]
    if model is None:
        raise agent_error(
            c.name, "no_model", f'supervisor "{c.name}" has no model: pass model= to @supervisor'
        )
    written = c.obj()
    lines = [written if isinstance(written, str) else c.meta["instructions"]]
    lines.append("Answer with exactly one of these names:")
    for m in c.meta["members"]:
        description = get("agents", m).meta.get("description") or ""
        lines.append(f"- {m}: {description}" if description else f"- {m}")
    lines.append(f"- {FINISH}: the task is done")
    user = task
    if state["last_member"] is not None:
        user += f"\n\n{state['last_member']} answered:\n{state['last_output']}"
    messages = [
        {"role": "system", "content": "\n".join(x for x in lines if x)},
        {"role": "user", "content": user},
    ]
    content = chat_message(c.name, model, messages, deadline=deadline, feature="run_agent()").get(
        "content"
    )
    return content if isinstance(content, str) else ""


def run_supervisor(
    name: str, task: str, caller_roles: tuple[str, ...], deadline: float | None = None
) -> str:
    """The supervisor's answer to `task`; see @supervisor."""
    c = get("agents", name)
    _check_members(name, ())
    members = c.meta["members"]
    state: dict[str, Any] = {"input": task, "round": 0, "last_member": None, "last_output": None}
    for round_ in range(c.meta["max_rounds"]):
        state["round"] = round_
        if c.meta["router"] == "custom":
            decision = c.obj(dict(state))
        else:
            decision = _route_llm(c, task, state, deadline)
        choice = decision.strip().lower() if isinstance(decision, str) else None
        if choice == FINISH:
            return state["last_output"] or ""
        member = next((m for m in members if m.lower() == choice), None)
        if member is None:
            raise agent_error(
                name,
                "bad_route",
                f'supervisor "{name}" routed to {decision!r}, which is neither one of its '
                f"members ({', '.join(members)}) nor {FINISH!r}",
            )
        given = task if state["last_output"] is None else f"{task}\n\n{state['last_output']}"
        state["last_output"] = run_agent(given, member, caller_roles, deadline=deadline)
        state["last_member"] = member
    raise agent_error(
        name,
        "max_rounds",
        f'supervisor "{name}" did not finish within {c.meta["max_rounds"]} routing decisions '
        "(max_rounds)",
    )


def run_agent(
    task: str | dict,
    agent: str,
    caller_roles: Iterable[str] = (),
    *,
    deadline: float | None = None,
) -> str:
    """Runs the registered agent on `task` (text, or a state whose `input`
    field is the text) with the caller's roles; returns only its answer."""
    if isinstance(task, dict):
        task = task.get("input", "")
    if not isinstance(task, str):
        raise TypeError(f"run_agent needs the task as text, not {type(task).__name__}")
    held = _names(caller_roles, "caller_roles")
    c = get("agents", agent)
    allowed = c.meta["roles"]
    if allowed and not set(held).intersection(allowed):
        raise agent_error(
            agent,
            "forbidden",
            f'agent "{agent}" runs only for the roles {", ".join(allowed)}; '
            f"the caller holds {', '.join(sorted(held)) or 'none'}",
        )
    enforce_policies(
        {"action": "delegate", "agent": agent, "caller_roles": list(held), "task": task}
    )
    kind = c.meta["kind"]
    if kind == "supervisor":
        return run_supervisor(agent, task, held, deadline)
    if kind == "remote":
        return run_remote(agent, task, deadline)
    if kind == "a2a":
        from svc.a2a_peers import invoke_a2a_agent

        return invoke_a2a_agent(agent, task, deadline=deadline)
    if kind == "local":
        output = c.obj(task)
        if not isinstance(output, str):
            raise agent_error(
                agent, "bad_output", f'agent "{agent}" returned {type(output).__name__}, not text'
            )
        return output
    return run_worker(worker(agent), task, caller_roles=held, deadline=deadline)


def agents_info() -> dict[str, dict[str, Any]]:
    """Every registered agent's kind, roles and limits (what /info shows), so
    an operator can see what an agent may do without reading its code."""
    out: dict[str, dict[str, Any]] = {}
    for name in sorted(_registry["agents"]):
        meta = _registry["agents"][name].meta
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
