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
`forbidden` otherwise).

Supervisors, remote and A2A agents are not built yet: `@supervisor`,
`@agent(transport="remote")` and `handoff` raise `NotImplementedError`
naming what is missing (see the open issue on agents).
"""

from __future__ import annotations

import inspect
import json
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from svc.errors import RegistrationError, SvcError, upstream_error
from svc.registry import _decorator, _named, _names, _register, get, persona_prompt
from svc.upstream import DEFAULT_BASE_URL, Model, _timeout, post_json, resolve_endpoint

DEFAULT_MAX_TURNS = 8

# JSON Schema types for the annotations a tool's parameters commonly have.
_JSON_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean"}
_JSON_TYPES.update({dict: "object", list: "array"})


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
    persona: str | None = None,
    instructions: str = "",
    model: Model | str | None = None,
    max_turns: int = DEFAULT_MAX_TURNS,
    roles: Iterable[str] = (),
    description: str = "",
) -> Any:
    """A delegatable local agent. The decorated function returns its
    instructions (or None to use `instructions=`); `persona` names a
    registered @persona whose prompt comes first, `role` says who it is,
    `tools` are registered @tool names it may call, `roles` the caller roles
    allowed to run it (any one suffices; none means anyone)."""
    if isinstance(max_turns, bool) or not isinstance(max_turns, int) or max_turns < 1:
        raise RegistrationError(f"max_turns must be a positive integer, not {max_turns!r}")
    if isinstance(model, str):
        model = Model(model)

    def register(fn: Callable) -> Callable:
        agent_name = _named(fn, None if callable(name) else name)
        meta = {
            "kind": "worker",
            "role": role,
            "tools": _names(tools, "tools"),
            "persona": persona,
            "instructions": instructions,
            "model": model,
            "max_turns": max_turns,
            "roles": _names(roles, "roles"),
            "description": description or (inspect.getdoc(fn) or "").split("\n")[0],
        }
        return _register("agents", agent_name, fn, meta)

    return _decorator(name, register)


def _not_built(what: str) -> NotImplementedError:
    return NotImplementedError(f"{what} is not built yet in svc-sdk (the open issue on agents)")


def supervisor(*_args: Any, **_kwargs: Any) -> Any:
    """Routing over member agents: not built yet."""
    raise _not_built("@supervisor")


def handoff(*_args: Any, **_kwargs: Any) -> Any:
    """Handing a run to another agent: not built yet."""
    raise _not_built("handoff()")


def worker(name: str) -> Worker:
    """The registered worker `name`, with its instructions resolved."""
    c = get("agents", name)
    meta = c.meta
    parts = []
    if meta["persona"]:
        parts.append(persona_prompt(meta["persona"]))
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


def _tool_specs(agent: Worker) -> list[dict]:
    specs = []
    for name in agent.tools:
        c = get("tools", name)
        specs.append(
            {
                "type": "function",
                "function": {
                    "name": name,
                    "description": (inspect.getdoc(c.obj) or "").split("\n")[0],
                    "parameters": tool_schema(c.obj, c.meta.get("input_schema")),
                },
            }
        )
    return specs


def _call_tool(agent: Worker, call: Any) -> tuple[str, str]:
    """Runs one tool call of the model; returns (call id, result text)."""
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
    try:
        result = get("tools", name).obj(**arguments)
    except SvcError:
        raise
    except Exception as e:
        raise agent_error(
            agent.name, "tool_error", f'agent "{agent.name}": tool "{name}" failed: {e}'
        ) from None
    text = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)
    return call_id, text


def _model_reply(
    agent: Worker, model: Model, messages: list, tools: list, deadline: float | None
) -> dict:
    body: dict[str, Any] = {"model": model.name, "messages": messages}
    if tools:
        body["tools"] = tools
    if model.temperature is not None:
        body["temperature"] = model.temperature
    if model.max_tokens:
        body["max_tokens"] = model.max_tokens
    base = os.environ.get(model.base_url_env) or DEFAULT_BASE_URL
    endpoint = resolve_endpoint(agent.name, base.rstrip("/") + "/chat/completions")
    headers = {}
    key = os.environ.get(model.api_key_env)
    if key:
        headers["Authorization"] = "Bearer " + key
    reply = post_json(
        agent.name,
        endpoint,
        headers,
        body,
        timeout=_timeout(None, deadline),
        feature="run_agent()",
    )
    try:
        message = reply["choices"][0]["message"]
    except (KeyError, IndexError, TypeError):
        message = None
    if not isinstance(message, dict):
        raise upstream_error(
            agent.name,
            "invalid_json",
            f'agent "{agent.name}": the model reply has no choices[0].message',
        )
    return message


def run_worker(agent: Worker, task: str, *, deadline: float | None = None) -> str:
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
    tools = _tool_specs(agent)
    for _ in range(agent.max_turns):
        message = _model_reply(agent, agent.model, messages, tools, deadline)
        calls = message.get("tool_calls") or []
        if not calls:
            content = message.get("content")
            return content if isinstance(content, str) else ""
        messages.append(
            {"role": "assistant", "content": message.get("content"), "tool_calls": calls}
        )
        for call in calls:
            call_id, result = _call_tool(agent, call)
            messages.append({"role": "tool", "tool_call_id": call_id, "content": result})
    raise agent_error(
        agent.name,
        "max_turns",
        f'agent "{agent.name}" did not answer within {agent.max_turns} model calls (max_turns)',
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
    w = worker(agent)
    held = set(_names(caller_roles, "caller_roles"))
    if w.roles and not held.intersection(w.roles):
        raise agent_error(
            w.name,
            "forbidden",
            f'agent "{w.name}" runs only for the roles {", ".join(w.roles)}; '
            f"the caller holds {', '.join(sorted(held)) or 'none'}",
        )
    return run_worker(w, task, deadline=deadline)
