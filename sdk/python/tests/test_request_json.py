"""The contract's "Request JSON" rules, as svc.request_json applies them."""

import pytest

from svc.request_json import MAX_DEPTH, RequestJSONError, loads


def nested(levels: int) -> bytes:
    return b"[" * levels + b"]" * levels


@pytest.mark.parametrize(
    "body",
    [
        b'{"text": "Ad\xff"}',
        b'{"te\xc3\x28xt": 1}',
        rb'{"text": "\ud800"}',
        rb'{"text": "a\udc00"}',
        rb'{"\ud800": 1}',
        rb'{"text": "\ud800\u0041"}',
        b'{"n": 1e400}',
        b'{"n": -1.5e309}',
        b'{"n": 1' + b"0" * 400 + b"}",
        b'{"n": NaN}',
        b'{"a": 1, "a": 2}',
        b'{"a": [{"b": 1, "b": 2}]}',
        nested(MAX_DEPTH + 1),
        nested(100_000),
        b'{"a": 1} x',
    ],
)
def test_refused(body):
    with pytest.raises(RequestJSONError):
        loads(body)


def test_accepted():
    assert loads(nested(MAX_DEPTH)) is not None
    assert loads(b'\xef\xbb\xbf{"a": 1}') == {"a": 1}
    assert loads(rb'{"t": "\ud83d\ude00"}') == {"t": "\U0001f600"}
    assert loads(b'{"n": 1e308, "m": 1e-400}') == {"n": 1e308, "m": 0.0}


def test_a_duplicate_state_field_is_named():
    def field(body: bytes):
        with pytest.raises(RequestJSONError) as e:
            loads(body)
        return e.value.field

    assert field(b'{"state": {"count": 1, "count": 2}}') == "count"
    assert field(b'{"count": 1, "count": 2}') == "count"  # the legacy raw state
    assert field(b'{"state": {}, "state": {}}') is None
    assert field(b'{"state": {"tags": [{"a": 1, "a": 2}]}}') is None


def test_a_whole_number_with_a_fraction_or_exponent_is_the_integer():
    value = loads(b'{"a": 2.0, "b": 1e3, "c": -0.0, "d": 2.5, "e": 9223372036854775807.0}')
    assert value == {"a": 2, "b": 1000, "c": 0, "d": 2.5, "e": 9223372036854775807}
    assert [type(value[k]) for k in "abcde"] == [int, int, int, float, int]
    # Past int64 it stays a float; decided on the exact text, not the rounded float.
    assert type(loads(b'{"a": 9223372036854775808.0}')["a"]) is float
    assert type(loads(b'{"a": 1.00000000000000000001}')["a"]) is float
