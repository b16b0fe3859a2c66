"""The state schema of a graph: field types, defaults, validation, reducers.

Validation and reducers follow the Go runtime (backends/go/runtime/graph/state.go)
so a request gets the same answer from every target: unknown fields are
reported first (sorted by name), then wrong types (in field order, a field
declared with its schema checked against it too), then missing required
fields; an absent field and a null one are the same.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable
from typing import Any

from svc.errors import execution_error, invalid_state
from svc.structured import problem
from svc.values import number

TYPES = ("string", "integer", "number", "boolean", "object", "array", "messages")
# "any" accepts every value; it exists for LangGraph states whose annotations
# have no IR type (the server's adapter), never in a graph document.
_ALL_TYPES = (*TYPES, "any")
_INT64 = (-(2**63), 2**63)  # what an integer field holds on every target


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


class Item:
    """The element type of an array field."""

    __slots__ = ("items", "type")

    def __init__(self, type: str, items: Item | None = None):
        if type not in _ALL_TYPES:
            raise ValueError(f"unknown item type {type!r}: use one of {', '.join(TYPES)}")
        if items is not None and type != "array":
            raise ValueError("only an array item may declare items")
        self.type = type
        self.items = items


class Replace:
    """A patch value that replaces an append field instead of extending it."""

    __slots__ = ("value",)

    def __init__(self, value: Any):
        self.value = value

    def __repr__(self) -> str:
        return f"Replace({self.value!r})"


def _is_message(v: Any) -> bool:
    return (
        isinstance(v, dict)
        and len(v) == 2
        and isinstance(v.get("role"), str)
        and isinstance(v.get("content"), str)
    )


def _checker(type: str, items: Item | None) -> Callable[[Any], bool]:
    """A function telling whether a (non-null) value has the type."""
    if type == "string":
        return lambda v: isinstance(v, str)
    if type == "integer":
        return lambda v: (
            isinstance(v, int) and not isinstance(v, bool) and _INT64[0] <= v < _INT64[1]
        )
    if type == "number":
        return lambda v: (n := number(v)) is not None and math.isfinite(n)
    if type == "boolean":
        return lambda v: isinstance(v, bool)
    if type == "object":
        return lambda v: isinstance(v, dict)
    if type == "messages":
        return lambda v: isinstance(v, list) and all(_is_message(x) for x in v)
    if type == "array":
        if items is None:
            return lambda v: isinstance(v, list)
        item_ok = _checker(items.type, items.items)
        return lambda v: isinstance(v, list) and all(item_ok(x) for x in v)
    return lambda v: True


def _describe(type: str, items: Item | None) -> str:
    if type == "array" and items is not None:
        return "array of " + _describe(items.type, items.items)
    if type == "messages":
        return "messages (a list of {role, content})"
    return type


def _json_copy(v: Any) -> Any:
    """A deep copy of a JSON value (faster than copy.deepcopy)."""
    if isinstance(v, dict):
        return {k: _json_copy(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_json_copy(x) for x in v]
    return v


def _q(name: str) -> str:
    return json.dumps(name, ensure_ascii=False)


class Field:
    """One declared state field."""

    __slots__ = (
        "append",
        "check",
        "default",
        "description",
        "items",
        "name",
        "required",
        "schema",
        "type",
    )

    def __init__(
        self,
        name: str,
        type: str,
        *,
        items: Item | None = None,
        append: bool = False,
        required: bool = False,
        default: Any = MISSING,
        schema: dict[str, Any] | None = None,
    ):
        if type not in _ALL_TYPES:
            raise ValueError(
                f"field {name!r}: unknown type {type!r}: use one of {', '.join(TYPES)}"
            )
        if items is not None and type != "array":
            raise ValueError(f"field {name!r}: only an array field may declare items")
        if append and type not in ("array", "messages", "any"):
            raise ValueError(f"field {name!r}: the append reducer needs an array or messages field")
        self.name = name
        self.type = type
        self.items = items
        self.append = append
        self.required = required
        # The field's whole JSON Schema (a field with properties), which a
        # request's value must also match (svc.structured.problem).
        self.schema = schema
        self.check = _checker(type, items)
        self.description = _describe(type, items)
        if default is None:
            default = MISSING
        if default is not MISSING and not self.check(default):
            raise ValueError(f"field {name!r}: the default {default!r} is not {self.description}")
        self.default = default

    def check_schema(self, value: Any, what: str = "state field") -> None:
        """422 invalid_state (details.path: the pointer within `value`) when
        `value`, of the field's type, does not match the field's schema;
        `what` names the value in the message."""
        found = None if self.schema is None else problem(self.schema, value)
        if found is not None:
            pointer, issue = found
            e = invalid_state(
                self.name,
                f'{what} {_q(self.name)} does not match its schema at "{pointer}": {issue}',
            )
            e.details = {**(e.details or {}), "path": pointer}
            raise e

    def fresh_default(self) -> Any:
        """A copy of the default, so no request sees another's changes; None for none."""
        d = self.default
        if d is MISSING:
            return None
        return _json_copy(d) if isinstance(d, (dict, list)) else d


class StateSchema:
    """The fields of a graph's state, with validation and reducers."""

    def __init__(self, fields: Iterable[Field]):
        self.fields: tuple[Field, ...] = tuple(fields)
        self._index = {f.name: f for f in self.fields}
        if len(self._index) != len(self.fields):
            raise ValueError("state field names must be unique")
        self._required = tuple(f for f in self.fields if f.required)
        self.field_names: tuple[str, ...] = tuple(self._index)

    def field(self, name: str) -> Field | None:
        return self._index.get(name)

    def new_state(self, data: dict) -> dict:
        """Validates a request's state and completes it with the defaults."""
        if not self._index.keys() >= data.keys():
            for k in sorted(data, key=str):
                if k not in self._index:
                    raise invalid_state(str(k), f"unknown state field {_q(str(k))}")
        state = {}
        for f in self.fields:
            v = data.get(f.name)
            if v is not None:
                if not f.check(v):
                    raise invalid_state(f.name, f"state field {_q(f.name)} must be {f.description}")
                f.check_schema(v)
                state[f.name] = v
            else:
                state[f.name] = f.fresh_default()
        for f in self._required:
            if state[f.name] is None:
                raise invalid_state(f.name, f"required state field {_q(f.name)} is missing")
        return state

    def apply(self, state: dict, patch: Any, node: str) -> None:
        """Merges a node's patch into the state, honouring each field's reducer."""
        if patch is None:
            return
        if not isinstance(patch, dict):
            raise execution_error(
                node,
                f"node {_q(node)} returned {type(patch).__name__} "
                "instead of a state patch (a dict)",
            )
        for k in sorted(patch, key=str) if len(patch) > 1 else patch:
            f = self._index.get(k)
            if f is None:
                raise execution_error(
                    node, f"node {_q(node)} returned unknown state field {_q(str(k))}"
                )
            v = patch[k]
            if isinstance(v, Replace):
                v = v.value
            elif f.append:
                current = state.get(k)
                v = (current if isinstance(current, list) else []) + (
                    v if isinstance(v, list) else [v]
                )
            if v is not None and not f.check(v):
                raise execution_error(
                    node, f"node {_q(node)} wrote a value that is not {f.description} to {_q(k)}"
                )
            state[k] = v
