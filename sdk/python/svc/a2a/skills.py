"""The A2A agent's skills as served (`Skill`): the methods of the
`@svc_a2a_server` class, and the graph answering the skills of `a2a.skills`
(`graph_skills`, `graph_call`).
"""

from __future__ import annotations

import asyncio
import copy
import inspect
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from svc import registry
from svc.a2a.agent import a2a_section, check_skill_id, names_of
from svc.errors import ConfigError, RegistrationError, SvcError

SKILL_KEYS = ("id", "name", "description", "tags", "roles", "examples")


@dataclass(frozen=True)
class Skill:
    """One skill as served: `call(text, state)` gives the reply text."""

    id: str
    name: str
    description: str
    tags: tuple[str, ...]
    roles: tuple[str, ...]
    examples: tuple[str, ...]
    call: Callable[[str, dict], Any]


def method_skills(component: registry.Component) -> list[Skill]:
    """The skills of the registered `@svc_a2a_server` class, on one instance of it."""
    try:
        instance = component.obj()
    except Exception as e:
        raise RegistrationError(
            f'cannot create the A2A server "{component.name}" ({component.obj.__qualname__}()): '
            f"{type(e).__name__}: {e}"
        ) from e
    skills = []
    for attr, options in component.meta["members"]:
        method = getattr(instance, attr)

        async def call(text: str, state: dict, method: Callable = method) -> Any:
            if inspect.iscoroutinefunction(method):
                return await method(text, state)
            return await asyncio.to_thread(method, text, state)

        skills.append(
            Skill(
                options["id"],
                options["name"],
                options["description"],
                tuple(options["tags"]),
                tuple(options["roles"]),
                tuple(options["examples"]),
                call,
            )
        )
    return skills


def _input_of(schema: Any, input_field: Any) -> Callable[[str], dict]:
    """How a message's text becomes the graph's input state: `a2a.input_field`
    when configured, else the first required string field, else a user
    message appended to the `messages` field."""

    def into(field: Any, name: str) -> Callable[[str], dict]:
        if field is not None and field.type == "messages":
            return lambda text: {name: [{"role": "user", "content": text}]}
        return lambda text: {name: text}

    if input_field is not None:
        if not isinstance(input_field, str) or not input_field:
            raise ConfigError(f"a2a.input_field must be a field name, not {input_field!r}")
        field = schema.field(input_field) if schema is not None else None
        if schema is not None and field is None:
            raise ConfigError(f"a2a.input_field: the graph has no state field {input_field!r}")
        if field is not None and field.type not in ("string", "messages", "any"):
            raise ConfigError(
                f"a2a.input_field: the field {input_field!r} is {field.type}, "
                "not string or messages"
            )
        chosen, build = field, into(field, input_field)
    elif schema is None:
        raise ConfigError(
            "a2a: the graph declares no state schema: set a2a.input_field to the field "
            "that takes the message's text"
        )
    else:
        chosen = next((f for f in schema.fields if f.required and f.type == "string"), None)
        if chosen is None:
            chosen = schema.field("messages")
            if chosen is None or chosen.type != "messages":
                raise ConfigError(
                    "a2a: the graph has no required string field and no messages field for "
                    "the message's text: set a2a.input_field"
                )
        build = into(chosen, chosen.name)
    if schema is not None:
        others = [f.name for f in schema.fields if f.required and f is not chosen]
        if others:
            raise ConfigError(
                f"a2a: the graph requires the state field(s) {', '.join(others)}, which an "
                "A2A message does not give"
            )
    return build


def reply_text(value: Any) -> str:
    """A state value as reply text: text as it is, a messages list as its last
    message's content, anything else as JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and value and isinstance(value[-1], dict):
        content = value[-1].get("content")
        if isinstance(content, str) and "role" in value[-1]:
            return content
    return json.dumps(value, ensure_ascii=False)


def last_written(result: dict, before: dict, written: list[str]) -> str | None:
    """The field the run wrote last that differs from its input: from the
    nodes' patches in order (`written`), else the last changed field of the
    final state (a graph that reports no node events)."""
    for name in reversed(written):
        if name in result and result[name] != before.get(name):
            return name
    changed = [k for k, v in result.items() if v != before.get(k)]
    return changed[-1] if changed else None


def graph_call(config: dict, runner: Any) -> Callable[[str, dict], Any]:
    """The `call(text, state)` of a skill running the graph of `runner`.

    The message's text goes into the input field (`_input_of`); the reply is
    `a2a.output_field` of the final state when configured, else the field
    the run wrote last (`last_written`), as text (`reply_text`). A run goes
    as on /invoke: validation, input guardrails, business policies (the
    context also holds `a2a: {skill, subject, roles}`), the run under the
    graph's deadline, output guardrails."""
    section = a2a_section(config)
    schema = runner.schema
    build = _input_of(schema, section.get("input_field"))
    output_field = section.get("output_field")
    if output_field is not None:
        if not isinstance(output_field, str) or not output_field:
            raise ConfigError(f"a2a.output_field must be a field name, not {output_field!r}")
        if schema is not None and schema.field(output_field) is None:
            raise ConfigError(f"a2a.output_field: the graph has no state field {output_field!r}")
    names = set(schema.field_names) if schema is not None else None

    async def call(text: str, state: dict) -> str:
        written: list[str] = []

        def emit(kind: str, node: Any, data: Any, branch: str | None = None) -> None:
            patch = data.get("patch") if isinstance(data, dict) else None
            if kind != "node_finished" or not isinstance(patch, dict):
                return
            for key in patch:
                if names is None or key in names:
                    if key in written:
                        written.remove(key)
                    written.append(key)

        validated = runner.validate(build(text))
        before = copy.deepcopy(validated)
        guarded = registry.has_guardrails()
        if guarded:
            registry.run_guardrails("input", validated)
        caller = state["a2a_identity"]
        registry.enforce_policies(
            {
                "action": "run",
                "state": validated,
                "a2a": {"skill": state["skill_id"], **caller},
            }
        )
        result = await runner.arun(validated, emit=emit)
        if guarded:
            registry.run_guardrails("output", result)
        field = output_field or last_written(result, before, written)
        if field is None:
            raise SvcError(
                500,
                "execution_error",
                "the run changed no state field to answer with: set a2a.output_field",
            )
        value = result.get(field)
        if value is None:
            raise SvcError(500, "execution_error", f'the run left the reply field "{field}" empty')
        return reply_text(value)

    return call


def graph_skills(config: dict, runner: Any) -> list[Skill]:
    """The skills of `a2a.skills`, each running the graph of `runner`
    (`graph_call`). Without `a2a.skills`, one skill named after the graph."""
    section = a2a_section(config)
    call = graph_call(config, runner)
    written = section.get("skills")
    if written is None:
        written = [{"id": _graph_skill_id(runner.name), "name": runner.name}]
    if not isinstance(written, list) or not written:
        raise ConfigError("a2a.skills must be a non-empty list of {id, name, description?, ...}")
    skills = []
    for i, entry in enumerate(written):
        where = f"a2a.skills[{i}]"
        if not isinstance(entry, dict):
            raise ConfigError(f"{where} must be a mapping of id, name, description, tags, roles")
        unknown = sorted(set(entry) - set(SKILL_KEYS))
        if unknown:
            raise ConfigError(f"{where}: unknown key(s) {', '.join(unknown)}")
        sid = check_skill_id(entry.get("id"), where, ConfigError)
        name = entry.get("name") or sid
        description = entry.get("description") or name
        if not isinstance(name, str) or not isinstance(description, str):
            raise ConfigError(f"{where}: name and description must be text")
        tags = names_of(entry.get("tags"), f"{where}.tags") or (sid,)
        roles = names_of(entry.get("roles"), f"{where}.roles")
        examples = names_of(entry.get("examples"), f"{where}.examples")
        skills.append(Skill(sid, name, description, tags, roles, examples, call))
    return skills


def _graph_skill_id(name: str) -> str:
    sid = re.sub(r"[^A-Za-z0-9_.:-]", "_", name)[:128]
    return sid or "graph"
