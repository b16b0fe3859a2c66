"""Structured output (docs/ir-reference.md, "Structured output"): an `llm`
node whose output field is an object with properties asks the model for
one JSON object of the field's schema (`chat_json`), and a request's value
for a field declared with its schema is checked the same way (`problem`,
svc.state).

The schemas are the compiler's subset: an object with `properties`, every
one of them `required` and no other key allowed; an array with `items`;
string, integer, number, boolean. `problem` finds the first mismatch in a
fixed order, so every target names the same one.
"""

from __future__ import annotations

import json
import time
from typing import Any

from svc import model_calls
from svc.errors import SvcError, upstream_error
from svc.llm import completion, first_message, prompt
from svc.model_calls import Model, Tokens
from svc.request_json import parse_float
from svc.wire import STRUCTURED_OUTPUT

_TYPES = ("string", "integer", "number", "boolean", "object", "array")


def _fits(kind: str, value: Any) -> bool:
    """Whether `value` has the JSON type `kind`: null fits none, a bool is no
    number, an integer is a number without a fraction (3.0 is one)."""
    if kind == "string":
        return isinstance(value, str)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "object":
        return isinstance(value, dict)
    if kind == "array":
        return isinstance(value, list)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return kind == "number" or isinstance(value, int) or value.is_integer()


def _pointer(parent: str, key: str | int) -> str:
    return parent + "/" + str(key).replace("~", "~0").replace("/", "~1")


def problem(schema: dict[str, Any], value: Any, pointer: str = "") -> tuple[str, str] | None:
    """The first place where `value` does not match `schema`: its JSON pointer
    (`pointer`, where `value` itself sits, is "" for a whole value) and what
    is wrong there ("expected <type>", "missing", "not allowed"); None when
    it matches.

    Each value's type is checked first. In an object, the `required` names
    in their order: one absent is missing, one present is checked in turn;
    then, with `"additionalProperties": false` (every object of a generated
    schema), the first key not in `properties`, in sorted order, is not
    allowed. An array's items are checked by index."""
    kind = schema.get("type")
    if kind not in _TYPES:
        return None  # a value the schema does not describe (none of the subset's)
    if not _fits(kind, value):
        return pointer, f"expected {kind}"
    if kind == "object":
        properties = schema.get("properties") or {}
        for name in schema.get("required") or ():
            if name not in value:
                return _pointer(pointer, name), "missing"
            found = problem(properties.get(name) or {}, value[name], _pointer(pointer, name))
            if found is not None:
                return found
        if schema.get("additionalProperties") is False:
            # Code point order is UTF-8's byte order, which the other targets sort by.
            for key in sorted(value):
                if key not in properties:
                    return _pointer(pointer, key), "not allowed"
    elif kind == "array":
        items = schema.get("items") or {}
        for index, item in enumerate(value):
            found = problem(items, item, _pointer(pointer, index))
            if found is not None:
                return found
    return None


def _read(schema: dict[str, Any], reply: str) -> tuple[Any, tuple[str, str] | None]:
    """The reply parsed and its first problem, if any. A whole number written
    3.0 is read as the integer 3, as a request's JSON is."""
    try:
        value = json.loads(reply, parse_float=parse_float, parse_constant=_no_constant)
    except (ValueError, RecursionError):
        return None, ("", "not JSON")
    return value, problem(schema, value)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _reply_text(node: str, reply: Any) -> str:
    """The JSON text of a structured reply: the input of its structured_output
    tool call (only an anthropic reply has one, svc.anthropic.completion),
    else its content."""
    message = first_message(reply)
    if isinstance(message, dict):
        for call in message.get("tool_calls") or ():
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict) and function.get("name") == STRUCTURED_OUTPUT:
                return function.get("arguments") or ""
        content = message.get("content")
        if isinstance(content, str):
            return content
    raise upstream_error(
        node,
        "invalid_json",
        f"node {json.dumps(node)}: the model reply has no choices[0].message.content",
    )


def _ask(
    node: str,
    model: Model,
    messages: list[dict[str, Any]],
    schema: dict[str, Any],
    deadline: float | None,
) -> tuple[str, str]:
    """One model call asking for JSON of `schema` (never streamed); returns
    the reply's text and the name of the model that gave it."""

    def attempt(m: Model, timeout: float) -> tuple[tuple[str, str], Tokens]:
        reply, used = completion(node, m, messages, None, timeout, "chat_json()", schema)
        return (_reply_text(node, reply), m.name), used

    return model_calls.call(node, model, deadline, attempt)


def chat_json(
    node: str,
    model: Model,
    system: str,
    user: str,
    schema: dict[str, Any],
    *,
    deadline: float | None = None,
) -> dict:
    """Asks for one JSON object of `schema` (an `llm` node writing an object
    field with properties) and returns it. A reply that does not match is
    asked for once more, with the reply and its first problem appended to
    the prompt; a second one that does not match fails the run (502
    upstream_error, invalid_output). Each ask is a model call of its own;
    `deadline` (seconds left in the run) bounds both."""
    messages = prompt(system, user)
    started = time.monotonic()
    reply, _ = _ask(node, model, messages, schema, deadline)
    value, found = _read(schema, reply)
    if found is None:
        return value
    pointer, issue = found
    again = [
        *messages,
        {"role": "assistant", "content": reply},
        {
            "role": "user",
            "content": f'The reply did not match the JSON schema at "{pointer}": {issue}. '
            "Answer again with only JSON that matches the schema.",
        },
    ]
    left = None if deadline is None else deadline - (time.monotonic() - started)
    reply, answered = _ask(node, model, again, schema, left)
    value, found = _read(schema, reply)
    if found is None:
        return value
    pointer, issue = found
    error: SvcError = upstream_error(
        node,
        "invalid_output",
        f"node {json.dumps(node)}: the model's reply did not match the output schema "
        f'at "{pointer}": {issue}',
    )
    error.details = {**(error.details or {}), "path": pointer, "problem": issue, "model": answered}
    raise error
