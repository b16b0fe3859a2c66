"""The process-global registry and the decorators that fill it at import time.

A component that `svc info` does not list was never registered: its module
was not imported (the project's `app/__init__.py` imports every submodule).
Every decorator works bare (`@tool`) or called (`@tool(name="x")`) and
returns the decorated object unchanged.
"""

from __future__ import annotations

import dataclasses
import inspect
import logging
import typing
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from svc.errors import ConfigError, GuardrailViolation, RegistrationError

log = logging.getLogger("svc.registry")

KINDS = (
    "graphs",
    "nodes",
    "tools",
    "skills",
    "personas",
    "guardrails",
    "policies",
    "configurations",
    "agents",
    "mcp_servers",  # @svc_mcp_server classes (svc.mcp.server)
    "a2a_servers",  # the @svc_a2a_server class (svc.a2a.agent)
    "a2a_authenticators",  # @a2a_authenticator functions (svc.a2a.agent)
)
GUARDRAIL_ACTIONS = ("block", "warn")


@dataclass
class Component:
    kind: str
    name: str
    obj: Any
    meta: dict[str, Any] = field(default_factory=dict)


_registry: dict[str, dict[str, Component]] = {kind: {} for kind in KINDS}
# The @svc_graph_server class (svc.server.graph_server): not one of KINDS, whose
# names components() lists, since `svc info` shows it whole (protocol, port, graphs).
_registry["graph_servers"] = {}


def clear() -> None:
    """Forgets every registered component (for tests)."""
    for components_of_kind in _registry.values():
        components_of_kind.clear()


def origin(obj: Any) -> str:
    """Where `obj` was defined (`module.qualname`): a reload of the same
    module registers the same origin again, which replaces the entry."""
    return f"{getattr(obj, '__module__', '?')}.{getattr(obj, '__qualname__', repr(obj))}"


def register(kind: str, name: str, obj: Any, meta: dict[str, Any]) -> Any:
    """Registers `obj` as the component `name` of `kind`; returns `obj`. The
    same name registered from another origin is a RegistrationError."""
    existing = _registry[kind].get(name)
    # Importing the same module again (a reload) replaces its own entry.
    if existing is not None and origin(existing.obj) != origin(obj):
        raise RegistrationError(
            f'{kind[:-1]} "{name}" is registered twice: by {origin(existing.obj)} '
            f"and by {origin(obj)}"
        )
    _registry[kind][name] = Component(kind, name, obj, meta)
    return obj


def register_only(
    kind: str, name: str, obj: Any, meta: dict[str, Any], clash: Callable[[Component], str]
) -> Any:
    """Registers the one component of `kind` a service may have (its A2A
    server, its graph server): a reload of the same class replaces it, any
    other is a RegistrationError saying `clash(the registered one)`."""
    registered_now = _registry[kind]
    for key, other in list(registered_now.items()):
        if origin(other.obj) != origin(obj):
            raise RegistrationError(clash(other))
        del registered_now[key]  # a reload of the same class
    return register(kind, name, obj, meta)


def registered(kind: str) -> list[Component]:
    """The components of `kind`, in registration order."""
    return list(_registry[kind].values())


def decorator(target: Any, record: Callable[[Any], Any]) -> Any:
    """Supports both `@deco` and `@deco(...)`: `target` is the object when bare."""
    if callable(target):
        return record(target)
    return record


def names(values: Iterable[Any], what: str) -> tuple[str, ...]:
    """Component names given as names or as decorated objects (their
    `__svc_name__`); one string is one name."""
    if isinstance(values, str):
        values = (values,)
    out = []
    for v in values:
        name = v if isinstance(v, str) else getattr(v, "__svc_name__", None)
        if not isinstance(name, str):
            raise RegistrationError(f"{what} must be names, not {v!r}")
        out.append(name)
    return tuple(out)


def named(obj: Any, name: str | None) -> str:
    """`name`, else the object's own name, recorded on it as `__svc_name__`."""
    name = name or obj.__name__
    obj.__svc_name__ = name
    return name


def get(kind: str, name: str) -> Component:
    try:
        return _registry[kind][name]
    except KeyError:
        raise LookupError(f'no {kind[:-1]} named "{name}" is registered') from None


def components() -> dict[str, list[str]]:
    """Sorted names of every registered component, by kind (what /info shows)."""
    return {kind: sorted(_registry[kind]) for kind in KINDS}


# --- graphs and nodes -----------------------------------------------------------


def graph_node(name: str | Callable | None = None) -> Any:
    """A node handler: state in, partial-state dict out."""

    def record(fn: Callable) -> Callable:
        return register("nodes", named(fn, None if callable(name) else name), fn, {})

    return decorator(name, record)


def graph(
    name: str | Callable | None = None, entrypoint: bool = False, parent: str | None = None
) -> Any:
    """A function returning a graph (a GraphBuilder or a compiled graph).

    Exactly one graph is the entrypoint; `parent=` marks a subgraph of another.
    """
    if entrypoint and parent:
        raise RegistrationError("a subgraph (parent=...) cannot be the entrypoint")

    def record(fn: Callable) -> Callable:
        graph_name = named(fn, None if callable(name) else name)
        if entrypoint:
            for other in _registry["graphs"].values():
                if (
                    other.meta["entrypoint"]
                    and other.name != graph_name
                    and origin(other.obj) != origin(fn)
                ):
                    raise RegistrationError(
                        f'two entrypoint graphs: "{other.name}" ({origin(other.obj)}) and '
                        f'"{graph_name}" ({origin(fn)}); mark exactly one with entrypoint=True'
                    )
        return register("graphs", graph_name, fn, {"entrypoint": entrypoint, "parent": parent})

    return decorator(name, record)


def entrypoint_graph(name: str | None = None) -> Component:
    """The graph named by the config (`graph.entrypoint`), else the registered entrypoint."""
    if name:
        if name not in _registry["graphs"]:
            raise ConfigError(f'graph.entrypoint names "{name}", which is not a registered graph')
        return _registry["graphs"][name]
    for c in _registry["graphs"].values():
        if c.meta["entrypoint"]:
            return c
    raise RegistrationError(
        "no graph is registered with entrypoint=True (is its module imported by app/__init__.py?)"
    )


# --- tools, skills, personas ------------------------------------------------------


TOOL_ARGUMENTS = ("keywords", "object")


def tool(
    name: str | Callable | None = None,
    roles: Iterable[str] = (),
    tags: Iterable[str] = (),
    input_schema: dict | None = None,
    arguments: str = "keywords",
    description: str = "",
) -> Any:
    """A callable an LLM can invoke; `input_schema` is JSON Schema.

    `roles` are the caller roles allowed to use it (any one suffices; none
    means anyone): a worker offers it to the model only for such a caller,
    and a call to it by name for another caller is `forbidden` (svc.agents).

    The model's JSON arguments are passed as `fn(**arguments)` with
    `arguments="keywords"`, or as one dict, `fn(arguments)`, with
    `arguments="object"` (compiled tools take their input that way; any
    object is accepted unless `input_schema` says more). `description` is
    what the model is told the tool does (default: the docstring's first line).
    """
    if input_schema is not None and not isinstance(input_schema, dict):
        raise RegistrationError("input_schema must be a JSON Schema object (a dict)")
    if arguments not in TOOL_ARGUMENTS:
        raise RegistrationError(
            f"arguments {arguments!r} is not one of {', '.join(TOOL_ARGUMENTS)}"
        )
    if not isinstance(description, str):
        raise RegistrationError(f"description must be text, not {description!r}")
    if input_schema is None and arguments == "object":
        input_schema = {"type": "object"}

    def record(fn: Callable) -> Callable:
        meta = {
            "roles": names(roles, "roles"),
            "tags": names(tags, "tags"),
            "input_schema": input_schema,
            "arguments": arguments,
            "description": description or (inspect.getdoc(fn) or "").split("\n")[0],
        }
        return register("tools", named(fn, None if callable(name) else name), fn, meta)

    return decorator(name, record)


def skill(
    name: str | Callable | None = None, tools: Iterable[Any] = (), tags: Iterable[str] = ()
) -> Any:
    """A reusable capability built from tools (given by name or as decorated tools)."""

    def record(obj: Any) -> Any:
        meta = {"tools": names(tools, "tools"), "tags": names(tags, "tags")}
        return register("skills", named(obj, None if callable(name) else name), obj, meta)

    return decorator(name, record)


def persona(name: str | Callable | None = None, role: str = "", tone: str = "") -> Any:
    """An agent identity: a function returning its system prompt."""

    def record(fn: Callable) -> Callable:
        meta = {"role": role, "tone": tone}
        return register("personas", named(fn, None if callable(name) else name), fn, meta)

    return decorator(name, record)


def persona_prompt(name: str) -> str:
    prompt = get("personas", name).obj()
    if not isinstance(prompt, str):
        raise TypeError(f'persona "{name}" must return its system prompt as a string')
    return prompt


# --- guardrails -----------------------------------------------------------------


def _guardrail(kind: str, name: Any, action: str, description: str) -> Any:
    if action not in GUARDRAIL_ACTIONS:
        raise RegistrationError(
            f"guardrail action {action!r} is not one of {', '.join(GUARDRAIL_ACTIONS)}"
        )

    def record(fn: Callable) -> Callable:
        meta = {"kind": kind, "action": action, "description": description}
        return register("guardrails", named(fn, None if callable(name) else name), fn, meta)

    return decorator(name, record)


def input_guardrail(
    name: str | Callable | None = None, action: str = "block", description: str = ""
) -> Any:
    """Checks a state before the graph runs: returns False or raises to reject it."""
    return _guardrail("input", name, action, description)


def output_guardrail(
    name: str | Callable | None = None, action: str = "block", description: str = ""
) -> Any:
    """Checks the final state of a run: returns False or raises to reject it."""
    return _guardrail("output", name, action, description)


def has_guardrails() -> bool:
    return bool(_registry["guardrails"])


def run_guardrails(kind: str, state: dict) -> None:
    """Runs the `kind` ("input" or "output") guardrails in registration order.

    A guardrail fails when it returns False or raises; with action "block"
    that raises GuardrailViolation, with "warn" it is logged.
    """
    for g in list(_registry["guardrails"].values()):
        if g.meta["kind"] != kind:
            continue
        try:
            ok = g.obj(state) is not False
            reason = ""
        except GuardrailViolation:
            raise
        except Exception as e:
            ok, reason = False, f": {e}"
        if ok:
            continue
        message = f'{kind} guardrail "{g.name}" rejected the state{reason}'
        if g.meta["action"] == "block":
            raise GuardrailViolation(g.name, kind, message)
        log.warning("%s", message)


# --- business policies ------------------------------------------------------------


@dataclass(frozen=True)
class Decision:
    allowed: bool
    reason: str = ""
    policy: str | None = None

    @classmethod
    def allow(cls, reason: str = "") -> Decision:
        return cls(True, reason)

    @classmethod
    def deny(cls, reason: str = "") -> Decision:
        return cls(False, reason)


def business_policy(name: str | Callable | None = None, priority: int = 0) -> Any:
    """An organizational rule: returns "allow", "deny" or a Decision.

    The server asks every policy before a run with `{"action": "run",
    "state": ...}` and `run_agent` before each delegation with
    `{"action": "delegate", "agent": ..., "caller_roles": [...], "task": ...}`;
    a deny answers 403 `policy_denied` naming the policy."""

    def record(fn: Callable) -> Callable:
        order = len(_registry["policies"])
        meta = {"priority": priority, "order": order}
        return register("policies", named(fn, None if callable(name) else name), fn, meta)

    return decorator(name, record)


def evaluate_policies(context: Any) -> Decision:
    """Runs the policies, highest priority first; the first deny wins."""
    ordered = sorted(
        _registry["policies"].values(), key=lambda c: (-c.meta["priority"], c.meta["order"])
    )
    for p in ordered:
        result = p.obj(context)
        if isinstance(result, Decision):
            decision = result
        elif result in ("allow", "deny"):
            decision = Decision(result == "allow")
        else:
            raise TypeError(
                f'policy "{p.name}" returned {result!r}: return "allow", "deny" or a Decision'
            )
        if not decision.allowed:
            return Decision(False, decision.reason, p.name)
    return Decision(True)


def enforce_policies(context: dict[str, Any]) -> None:
    """Raises 403 `policy_denied` when a policy denies `context`."""
    if not _registry["policies"]:
        return
    decision = evaluate_policies(context)
    if not decision.allowed:
        from svc.errors import policy_denied

        what = context.get("action", "the request")
        reason = f": {decision.reason}" if decision.reason else ""
        raise policy_denied(decision.policy, f'policy "{decision.policy}" denied {what}{reason}')


# --- configuration sections -----------------------------------------------------------


def _build(cls: type, values: Any, where: str) -> Any:
    if not isinstance(values, dict):
        raise ConfigError(f"configuration section {where} must be a mapping, not {values!r}")
    try:
        hints = typing.get_type_hints(cls)
    except Exception:  # unresolvable annotations: no nested sections then
        hints = {}
    kwargs, missing = {}, []
    for f in dataclasses.fields(cls):
        if not f.init:
            continue
        if f.name in values:
            value = values[f.name]
            hint = hints.get(f.name)
            if dataclasses.is_dataclass(hint) and isinstance(hint, type):
                value = _build(hint, value, f"{where}.{f.name}")
            kwargs[f.name] = value
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            missing.append(f.name)
    if missing:
        raise ConfigError(
            f"configuration section {where} is missing required field(s): {', '.join(missing)}"
        )
    return cls(**kwargs)  # keys the class does not declare are ignored


def configuration(section: str) -> Callable[[type], type]:
    """Binds an application config section to a dataclass: `MyConfig.load()`."""
    if not isinstance(section, str) or not section:
        raise RegistrationError("@configuration needs the section name, like @configuration('db')")

    def record(cls: type) -> type:
        if not (isinstance(cls, type) and dataclasses.is_dataclass(cls)):
            raise RegistrationError(f"@configuration({section!r}) must decorate a dataclass")

        def load(klass: type, root: Any = None) -> Any:
            from svc.config import get_config

            return _build(klass, get_config(section, {}, root=root) or {}, f'"{section}"')

        cls.load = classmethod(load)
        return register("configurations", section, cls, {"class": cls.__qualname__})

    return record


def get_configuration(section: str, root: Any = None) -> Any:
    """An instance of the dataclass bound to `section`, read from the config."""
    return get("configurations", section).obj.load(root)
