"""How state values are rendered into text and tested by router conditions.

Both follow the Go runtime (backends/go/runtime/text.go and conditions.go)
so that one graph routes and renders alike on every target. Python's bool is
a subclass of int; here, as in JSON, a boolean is never a number.
"""

from __future__ import annotations

import json
import math
from typing import Any

# encoding/json escapes these even in otherwise plain strings.
_GO_ESCAPES = str.maketrans(
    {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
)


def number(v: Any) -> float | None:
    """The value as a float when it is a JSON number, else None."""
    if isinstance(v, bool):
        return None
    if isinstance(v, float):
        return v
    if isinstance(v, int):
        try:
            return float(v)
        except OverflowError:  # Go cannot read such a number either
            return None
    return None


def text(value: Any) -> str:
    """A state value inside a template: strings as they are, None as nothing,
    everything else as compact JSON with sorted keys (as Go's encoding/json
    writes it; a value JSON cannot hold renders as "")."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return json.dumps(value) if math.isfinite(value) else ""
    try:
        encoded = json.dumps(
            value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
        )
    except (TypeError, ValueError):
        return ""
    return encoded.translate(_GO_ESCAPES)


# Router operators. A missing field (None) never satisfies eq, the ordering
# operators or in; ne holds for it.


def cond_eq(value: Any, want: Any) -> bool:
    if value is None:
        return False
    a = number(value)
    if a is not None:
        b = number(want)
        return b is not None and a == b
    return type(value) is type(want) and value == want


def cond_ne(value: Any, want: Any) -> bool:
    return not cond_eq(value, want)


def _compare(value: Any, want: Any) -> int | None:
    """-1, 0 or 1: numbers numerically, strings lexically; None when incomparable."""
    a = number(value)
    if a is not None:
        b = number(want)
        if b is None:
            return None
        return (a > b) - (a < b)
    if isinstance(value, str) and isinstance(want, str):
        return (value > want) - (value < want)
    return None


def cond_gt(value: Any, want: Any) -> bool:
    c = _compare(value, want)
    return c is not None and c > 0


def cond_ge(value: Any, want: Any) -> bool:
    c = _compare(value, want)
    return c is not None and c >= 0


def cond_lt(value: Any, want: Any) -> bool:
    c = _compare(value, want)
    return c is not None and c < 0


def cond_le(value: Any, want: Any) -> bool:
    c = _compare(value, want)
    return c is not None and c <= 0


def cond_in(value: Any, options: Any) -> bool:
    return any(cond_eq(value, o) for o in options or ())


def cond_exists(value: Any) -> bool:
    return value is not None


def cond_truthy(value: Any) -> bool:
    """false, 0, "", empty lists and objects and None are falsy."""
    if value is None:
        return False
    if isinstance(value, (bool, str, list, dict)):
        return bool(value)
    n = number(value)
    return n is None or n != 0
