"""Request bodies read with the contract's JSON rules ("Request JSON" in the
HTTP contract), identically to the Go and Java services: UTF-8 only, a
leading byte-order mark ignored, no escape that leaves a lone UTF-16
surrogate, at most 128 levels of nesting, no duplicate key in an object, and
numbers within the range of a 64-bit float.

The standard library's parser does the parsing; this module adds the checks
it does not make (it accepts duplicates, lone surrogates and out-of-range
numbers, and fails deep bodies with RecursionError rather than ValueError).
"""

from __future__ import annotations

import decimal
import json
import sys
from typing import Any

MAX_DEPTH = 128

_BOM = b"\xef\xbb\xbf"
_MAX_FLOAT = sys.float_info.max
_INT64 = (-(2**63), 2**63)


class RequestJSONError(ValueError):
    """The body is not acceptable JSON; `field` names the state field of a
    duplicate key when there is one."""

    def __init__(self, message: str, field: str | None = None):
        super().__init__(message)
        self.field = field


class _Duplicated(dict):
    """An object in which `key` appeared more than once."""

    key: str = ""


def _object(pairs: list[tuple[str, Any]]) -> dict:
    obj = dict(pairs)
    if len(obj) == len(pairs):
        return obj
    seen: set[str] = set()
    for k, _ in pairs:
        if k in seen:
            dup = _Duplicated(obj)
            dup.key = k
            return dup
        seen.add(k)
    return obj  # pragma: no cover - len() differs only with a duplicate


def _constant(name: str) -> Any:
    raise RequestJSONError(f"{name} is not JSON")


def parse_float(text: str) -> float | int:
    """json.loads' parse_float: a number written with a fraction or an
    exponent, as every target reads it (a model's structured reply too)."""
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise RequestJSONError(f"the number {_short(text)} is outside the range of a 64-bit float")
    # A whole number written with a fraction or an exponent (2.0, 1e3) is
    # the integer it equals, as JSON Schema counts it, when a 64-bit integer
    # holds it; decided on the exact text, not on the rounded float.
    exact = decimal.Decimal(text)
    if exact == exact.to_integral_value() and _INT64[0] <= exact < _INT64[1]:
        return int(exact)
    return value


def _int(text: str) -> int:
    value = int(text)
    if abs(value) > _MAX_FLOAT:
        raise RequestJSONError(f"the number {_short(text)} is outside the range of a 64-bit float")
    return value


def _short(text: str) -> str:
    return text if len(text) <= 40 else text[:37] + "..."


def loads(body: bytes) -> Any:
    """The JSON value of a request body; RequestJSONError says what is wrong."""
    if body.startswith(_BOM):
        body = body[3:]
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise RequestJSONError("the body is not valid UTF-8") from None
    try:
        value = json.loads(
            text,
            object_pairs_hook=_object,
            parse_constant=_constant,
            parse_float=parse_float,
            parse_int=_int,
        )
    except RequestJSONError:
        raise
    except RecursionError:
        raise RequestJSONError(f"the body nests deeper than {MAX_DEPTH} levels") from None
    except ValueError:
        raise RequestJSONError("the body is not JSON") from None
    _check(value)
    return value


def _check(value: Any) -> None:
    """Depth, duplicates and lone surrogates, walked without recursion."""
    stack: list[tuple[Any, int, bool]] = [(value, 1, False)]
    while stack:
        v, depth, is_state = stack.pop()
        if isinstance(v, str):
            if not v.isascii():
                _check_text(v)
            continue
        if not isinstance(v, (dict, list)):
            continue
        if depth > MAX_DEPTH:
            raise RequestJSONError(f"the body nests deeper than {MAX_DEPTH} levels")
        if isinstance(v, list):
            stack.extend((x, depth + 1, False) for x in v)
            continue
        top = depth == 1
        if isinstance(v, _Duplicated):
            # The state's own keys are state fields: the value of the body's
            # "state", or the body itself in a form without "state".
            named = is_state or (top and v.key != "state")
            raise RequestJSONError(
                f"the key {json.dumps(v.key)} appears twice in one object",
                v.key if named else None,
            )
        for k, x in v.items():
            if not k.isascii():
                _check_text(k)
            stack.append((x, depth + 1, top and k == "state"))


def _check_text(s: str) -> None:
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        raise RequestJSONError("the body has a lone UTF-16 surrogate escape") from None
