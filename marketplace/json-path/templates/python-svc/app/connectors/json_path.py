"""The svc/json-path connector: a node copies one value out of a JSON state
field into another field.

The path was parsed when the graph compiled; steps are keys (str) and indexes
(int, negative from the end).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from svc.errors import execution_error

_MISSING = object()


def _step(value: Any, step: str | int) -> Any:
    """value[step]: a key of an object or an index of a list."""
    if isinstance(step, str):
        return value.get(step, _MISSING) if isinstance(value, dict) else _MISSING
    if isinstance(value, list) and -len(value) <= step < len(value):
        return value[step]
    return _MISSING


def describe(steps: Sequence[str | int]) -> str:
    """Steps written as a path: $.items[0]["a b"]."""
    out = ["$"]
    for s in steps:
        if isinstance(s, int):
            out.append(f"[{s}]")
        elif s.replace("_", "a").replace("$", "a").replace("-", "0").isalnum() and (
            s[0].isalpha() or s[0] in "_$"
        ):
            out.append(f".{s}")
        else:
            out.append(f"[{json.dumps(s)}]")
    return "".join(out)


def extract(
    node: str,
    state: Mapping[str, Any],
    *,
    source: str,
    steps: Sequence[str | int],
    output_key: str,
    default: str | None = None,
) -> dict:
    """Runs one json-path node. `default` is the default as JSON text (None
    when the node has none): it is written when the path does not resolve;
    without it the node fails, naming the step where it stopped."""
    value = state.get(source, _MISSING)
    stop = 0 if value is _MISSING else None
    for i, step in enumerate(steps):
        if stop is not None:
            break
        value = _step(value, step)
        if value is _MISSING:
            stop = i + 1
    if stop is None:
        return {output_key: value}
    if default is not None:
        return {output_key: json.loads(default)}
    if stop == 0:
        raise execution_error(
            node, f"node {json.dumps(node)}: the state field {source!r} is not set"
        )
    raise execution_error(
        node,
        f"node {json.dumps(node)}: {describe(steps[: stop - 1])} of {source!r} "
        f"has no value at {describe(steps[:stop])}",
    )
