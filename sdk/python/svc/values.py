"""How state values are rendered into text and tested by router conditions.

Both behave as the Go and Java runtimes do (backends/go/runtime/graph/text.go and
conditions.go) so that one graph routes and renders alike on every target;
the shared vectors in fixtures/json-text/ pin the text form. Python's bool
is a subclass of int; here, as in JSON, a boolean is never a number.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any


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
    everything else as JSON in the text form of every target ("Templates" in
    docs/ir-reference.md): no spaces, keys sorted by code point, only what
    JSON requires escaped (not <, > or &; non-ASCII as it is), integers with
    all their digits and other numbers as JavaScript writes them (2.0 as 2,
    1e-07 as 1e-7). A value JSON cannot hold (NaN, a set, a non-string key)
    renders as ""."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    out: list[str] = []
    try:
        _append(out, value)
    except (TypeError, ValueError, RecursionError):
        return ""
    return "".join(out)


def fill_fields(template: str, state: Mapping[str, Any]) -> str:
    """`template` with each `{{field}}` (the name inside stripped of spaces)
    replaced by `text(state.get(field))`, so a missing field is ""; an
    unclosed `{{` stays as text. What the marketplace connectors (svc/webhook,
    svc/slack-notify, svc/kv-cache) fill their config strings with, as the Go
    runtime's fillFields does."""
    out = []
    rest = template
    while True:
        start = rest.find("{{")
        end = rest.find("}}", start + 2) if start >= 0 else -1
        if end < 0:
            break
        out.append(rest[:start])
        out.append(text(state.get(rest[start + 2 : end].strip())))
        rest = rest[end + 2 :]
    out.append(rest)
    return "".join(out)


def _append(out: list[str], v: Any) -> None:
    if v is None:
        out.append("null")
    elif isinstance(v, str):
        out.append(_encode_string(v))
    elif isinstance(v, bool):
        out.append("true" if v else "false")
    elif isinstance(v, int):
        out.append(int.__repr__(v))
    elif isinstance(v, float):
        out.append(_float_text(v))
    elif isinstance(v, (list, tuple)):
        out.append("[")
        for i, item in enumerate(v):
            if i:
                out.append(",")
            _append(out, item)
        out.append("]")
    elif isinstance(v, dict):
        if not all(isinstance(k, str) for k in v):
            raise TypeError("an object key that is not a string")
        out.append("{")
        for i, k in enumerate(sorted(v)):  # str order is code point order
            if i:
                out.append(",")
            out.append(_encode_string(k))
            out.append(":")
            _append(out, v[k])
        out.append("}")
    else:
        raise TypeError(f"{type(v).__name__} is not JSON")


# Quotes, backslashes and U+0000 to U+001F (\b, \f, \n, \r, \t, else
# \u00XX in lower case) are escaped; everything else is kept.
_encode_string = json.encoder.encode_basestring


def _float_text(x: float) -> str:
    """JavaScript's Number::toString: the shortest digits that read back as
    x (Python's repr finds them), without an exponent from 1e-6 up to 1e21,
    else with one (1e-7, 1e+21); -0.0 is 0."""
    if not math.isfinite(x):
        raise ValueError("NaN and infinity are not JSON")
    if x == 0:
        return "0"
    mantissa, _, exp = float.__repr__(abs(x)).partition("e")
    whole, _, frac = mantissa.partition(".")
    digits = (whole + frac).lstrip("0")
    # x is 0.<digits> times 10 ** n
    n = len(whole) + int(exp or 0) - (len(whole + frac) - len(digits))
    digits = digits.rstrip("0")
    k = len(digits)
    sign = "-" if x < 0 else ""
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * -n + digits
    e = n - 1
    head = digits[0] + ("." + digits[1:] if k > 1 else "")
    return f"{sign}{head}e{'+' if e > 0 else '-'}{abs(e)}"


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
