import json
from pathlib import Path

import pytest

from svc import request_json
from svc.runtime import (
    cond_eq,
    cond_exists,
    cond_ge,
    cond_gt,
    cond_in,
    cond_le,
    cond_lt,
    cond_ne,
    cond_truthy,
    text,
)
from svc.values import fill_fields

VECTORS = Path(__file__).resolve().parents[3] / "fixtures" / "json-text" / "vectors.json"


@pytest.mark.parametrize("reader", ["request", "json.loads"])
def test_text_gives_the_shared_vectors(reader):
    """The text form of every target (fixtures/json-text/vectors.json), on
    values read as a request is and as json.loads reads an upstream reply."""
    data = VECTORS.read_bytes()
    vectors = request_json.loads(data) if reader == "request" else json.loads(data)
    assert len(vectors) >= 40
    failures = [
        f"{v['name']}: got {text(v['value'])!r}, want {v['text']!r}"
        for v in vectors
        if text(v["value"]) != v["text"]
    ]
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize(
    ("value", "want"),
    [
        (None, ""),
        ("plain", "plain"),
        ((1, "<a>"), '[1,"<a>"]'),
        (10**30, "1000000000000000000000000000000"),
        (-0.0, "0"),
        (5e-324, "5e-324"),
        (float("nan"), ""),
        ({"bad": float("inf")}, ""),
        ({1: "x", "a": "y"}, ""),
        ({"set": {1}}, ""),
    ],
)
def test_text_of_python_values(value, want):
    assert text(value) == want


def test_text_concatenation_like_go():
    assert "a " + text(None) + text(2) + " " + text({"k": True}) == 'a 2 {"k":true}'


@pytest.mark.parametrize(
    ("template", "want"),
    [
        ("", ""),
        ("plain", "plain"),
        ("Hi {{name}}!", "Hi Ada!"),
        ("{{ name }}{{n}}", "Ada3"),
        ("{{tags}} {{missing}} {{none}}.", '["a"]  .'),
        ("{{ob}}", '{"a":1,"b":true}'),
        ("open {{ name", "open {{ name"),
        ("{{name}} and {{ name", "Ada and {{ name"),
        ("}} {{n}} }}", "}} 3 }}"),
        ("{{}}", ""),
    ],
)
def test_fill_fields(template, want):
    state = {"name": "Ada", "n": 3, "tags": ["a"], "none": None, "ob": {"b": True, "a": 1}}
    assert fill_fields(template, state) == want


def test_eq_and_ne():
    assert cond_eq("gold", "gold")
    assert cond_eq(5, 5.0)  # numbers compare numerically
    assert not cond_eq(None, "x") and not cond_eq(None, None)
    assert cond_ne(None, "x")
    assert not cond_eq(True, 1) and not cond_eq(1, True)  # a boolean is not a number
    assert not cond_eq(0, False)
    assert cond_eq(True, True) and cond_ne(True, False)
    assert not cond_eq("5", 5) and not cond_eq(5, "5")


def test_ordering():
    assert cond_gt(5, 3) and not cond_gt(3, 3)
    assert cond_ge(2.5, 2.5) and cond_ge(3, 2.5)
    assert cond_lt("a", "b") and cond_le("b", "b") and not cond_lt("b", "a")
    assert cond_lt("Z", "a")  # lexical by code point, as bytes in Go
    for op in (cond_gt, cond_ge, cond_lt, cond_le):
        assert not op(None, 1)
        assert not op("a", 1) and not op(1, "a")
        assert not op(True, 0) and not op(1, False)
        assert not op([1], [1])


def test_in_exists_truthy():
    assert cond_in("b", ["a", "b"]) and cond_in(2, [1, 2.0])
    assert not cond_in(None, ["a", None]) and not cond_in("x", None) and not cond_in(True, [1])
    assert cond_exists("") and cond_exists(0) and cond_exists(False) and not cond_exists(None)
    for falsy in (None, False, 0, 0.0, "", [], {}):
        assert not cond_truthy(falsy), falsy
    for truthy in (True, 1, -0.5, "no", [0], {"a": None}, 10**400):
        assert cond_truthy(truthy), truthy
