"""Running agents: tool-calling workers on a model's API (chat completions, or Anthropic's
Messages API: svc.wire).

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

Agents are declared in svc.agents.decorators; a remote agent is another svc
service's `/invoke`, an A2A one is called through svc.a2a.peers.

In a streamed run (svc.streaming) an agent's text goes to the graph node
under way as it comes: each worker turn streams (chat_turn), a supervisor
withdraws a member's answer before it runs the next member, and an answer
that arrives whole (a remote, A2A or local agent's) is one token. Routing
calls never stream, and the code of tools, custom routers and local agents
is muted. A cancelled run makes no further model call, tool call or round.
"""

from __future__ import annotations

import inspect
import json
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from svc import streaming, telemetry
from svc.agents.decorators import DEFAULT_MAX_TURNS, FINISH, Transfer
from svc.errors import RegistrationError, SvcError, upstream_error
from svc.llm import chat_message, chat_turn
from svc.model_calls import Model
from svc.registry import enforce_policies, get, names, persona_prompt
from svc.upstream import call_timeout, post_json, resolve_endpoint

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


def run_remote(name: str, task: str, deadline: float | None = None) -> str:
    """Posts the task to the remote service's /invoke; returns its output field."""
    from svc.config.services import service_auth, service_config

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
        timeout=call_timeout(meta["timeout_ms"] / 1000, deadline),
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
) -> tuple[str, str | Transfer]:
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
        with telemetry.tool_span(name):
            result = c.obj(arguments) if c.meta["arguments"] == "object" else c.obj(**arguments)
    except SvcError:
        raise
    except Exception as e:
        raise agent_error(
            agent.name, "tool_error", f'agent "{agent.name}": tool "{name}" failed: {e}'
        ) from None
    if isinstance(result, Transfer):
        return call_id, result
    text = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)
    return call_id, text


def _clock(deadline: float | None) -> Callable[[], float | None]:
    """The seconds left of `deadline` (seconds left now) whenever asked: a
    loop's later calls must not get the time its first one had, or their
    retries would wait past the run's deadline."""
    if deadline is None:
        return lambda: None
    ends = time.monotonic() + deadline
    return lambda: max(0.0, ends - time.monotonic())


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
    left = _clock(deadline)
    for _ in range(agent.max_turns):
        streaming.check_cancelled()
        message = chat_turn(
            agent.name, agent.model, messages, tools=tools, deadline=left(), feature="run_agent()"
        )
        calls = message.get("tool_calls") or []
        if not calls:
            content = message.get("content")
            return content if isinstance(content, str) else ""
        messages.append(
            {"role": "assistant", "content": message.get("content"), "tool_calls": calls}
        )
        for call in calls:
            streaming.check_cancelled()
            with streaming.muted():  # what the tool's code asks a model is not the node's text
                call_id, result = _call_tool(agent, call, caller_roles)
            if isinstance(result, Transfer):
                return run_agent(task, result.agent, caller_roles, deadline=left())
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
    left = _clock(deadline)
    for round_ in range(c.meta["max_rounds"]):
        streaming.check_cancelled()
        state["round"] = round_
        if c.meta["router"] == "custom":
            with streaming.muted():
                decision = c.obj(dict(state))
        else:
            decision = _route_llm(c, task, state, left())
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
        stream = streaming.replies()
        if stream is not None:  # the last member's answer is not the supervisor's after all
            stream.discard("next_member")
        state["last_output"] = run_agent(given, member, caller_roles, deadline=left())
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
    held = names(caller_roles, "caller_roles")
    c = get("agents", agent)
    allowed = c.meta["roles"]
    if allowed and not set(held).intersection(allowed):
        raise agent_error(
            agent,
            "forbidden",
            f'agent "{agent}" runs only for the roles {", ".join(allowed)}; '
            f"the caller holds {', '.join(sorted(held)) or 'none'}",
        )
    streaming.check_cancelled()
    enforce_policies(
        {"action": "delegate", "agent": agent, "caller_roles": list(held), "task": task}
    )
    kind = c.meta["kind"]
    with telemetry.agent_span(agent, remote=kind in ("remote", "a2a")):
        if kind == "supervisor":
            return run_supervisor(agent, task, held, deadline)
        if kind == "remote":
            output = run_remote(agent, task, deadline)
        elif kind == "a2a":
            from svc.a2a.peers import invoke_a2a_agent

            output = invoke_a2a_agent(agent, task, deadline=deadline)
        elif kind == "local":
            with streaming.muted():  # its answer is sent whole, below
                output = c.obj(task)
            if not isinstance(output, str):
                raise agent_error(
                    agent,
                    "bad_output",
                    f'agent "{agent}" returned {type(output).__name__}, not text',
                )
        else:
            return run_worker(worker(agent), task, caller_roles=held, deadline=deadline)
        stream = streaming.replies()
        if stream is not None:  # an answer that arrived whole is one token
            stream.whole(output)
        return output
