"""The svc/json-path connector's helper."""

import pytest
from svc.errors import SvcError

from app.connectors.json_path import describe, extract

STATE = {
    "payload": {
        "items": [{"name": "Ada", "tags": ["a", "b"]}],
        "a b": {"c": None},
    }
}


@pytest.mark.parametrize(
    ("steps", "want"),
    [
        (["items", 0, "name"], "Ada"),
        (["items", -1, "tags", -1], "b"),
        (["a b", "c"], None),
        ([], STATE["payload"]),
    ],
)
def test_extracts_keys_and_indexes(steps, want):
    patch = extract("extract", STATE, source="payload", steps=steps, output_key="out")
    assert patch == {"out": want}


def test_unresolved_uses_the_default_or_fails():
    steps = ["items", 3, "name"]
    patch = extract(
        "extract",
        STATE,
        source="payload",
        steps=steps,
        output_key="out",
        default='{"n": 1}',
    )
    assert patch == {"out": {"n": 1}}
    with pytest.raises(SvcError) as raised:
        extract(
            "extract",
            STATE,
            source="payload",
            steps=["items", 0, "name", "first"],
            output_key="out",
        )
    assert raised.value.code == "execution_error"
    assert "$.items[0].name of 'payload' has no value at $.items[0].name.first" in str(
        raised.value
    )
    with pytest.raises(SvcError, match="'missing' is not set"):
        extract("extract", STATE, source="missing", steps=["a"], output_key="out")
    for steps in (["items", "0"], ["items", 0, 0], ["a b", "c", "d"]):
        with pytest.raises(SvcError):
            extract("extract", STATE, source="payload", steps=steps, output_key="o")


def test_paths_read_as_written():
    assert describe(["items", 0, "a b", "_x-1"]) == '$.items[0]["a b"]._x-1'
