import pytest

from svc.errors import SvcError
from svc.runtime import MISSING, Field, Item, Replace, StateSchema


def schema():
    return StateSchema(
        [
            Field("text", "string", required=True),
            Field("count", "integer", default=0),
            Field("score", "number"),
            Field("flag", "boolean"),
            Field("meta", "object", default={"k": [1]}),
            Field("tags", "array", items=Item("string"), append=True, default=[]),
            Field("grid", "array", items=Item("array", Item("integer"))),
            Field("messages", "messages", append=True),
            Field("any_list", "array"),
        ]
    )


def invalid(fn, *args):
    with pytest.raises(SvcError) as e:
        fn(*args)
    assert e.value.status == 422 and e.value.code == "invalid_state"
    return e.value.details["field"], e.value.message


def test_every_field_is_present_with_defaults():
    s = schema().new_state({"text": "hi"})
    assert s == {
        "text": "hi",
        "count": 0,
        "score": None,
        "flag": None,
        "meta": {"k": [1]},
        "tags": [],
        "grid": None,
        "messages": None,
        "any_list": None,
    }
    assert list(s) == list(schema().field_names)


def test_defaults_are_copied_per_request():
    sc = schema()
    first = sc.new_state({"text": "a"})
    first["meta"]["k"].append(2)
    first["tags"].append("x")
    second = sc.new_state({"text": "b"})
    assert second["meta"] == {"k": [1]} and second["tags"] == []


def test_null_is_absent():
    s = schema().new_state({"text": "a", "count": None})
    assert s["count"] == 0
    assert invalid(schema().new_state, {"text": None}) == (
        "text",
        'required state field "text" is missing',
    )


def test_validation_order_unknown_then_type_then_missing():
    data = {"zeta": 1, "alpha": 2, "count": "x"}  # also misses text
    assert invalid(schema().new_state, data)[0] == "alpha"  # unknown, sorted
    assert invalid(schema().new_state, {"flag": 1, "count": "x"})[0] == "count"  # field order
    assert invalid(schema().new_state, {"count": 1}) == (
        "text",
        'required state field "text" is missing',
    )
    assert invalid(schema().new_state, {"text": 5}) == ("text", 'state field "text" must be string')


@pytest.mark.parametrize(
    ("field", "good", "bad"),
    [
        ("count", [0, -3, 2**63 - 1], [True, False, 1.0, 2.5, "1", 2**63]),
        ("score", [0, 1.5, -2, 10**20], [True, "1", float("nan"), float("inf"), 10**400]),
        ("flag", [True, False], [0, 1, "true"]),
        ("meta", [{}, {"a": 1}], [[], "x", 1]),
        ("tags", [[], ["a"]], [["a", 1], "a", [None]]),
        ("grid", [[[1, 2], []]], [[[1.5]], [1], [[True]]]),
        (
            "messages",
            [[], [{"role": "user", "content": "hi"}]],
            [
                [{"role": "user"}],
                [{"role": "user", "content": 1}],
                [{"role": "user", "content": "x", "extra": 1}],
                {"role": "user", "content": "x"},
            ],
        ),
        ("any_list", [[1, "a", None]], [{}]),
    ],
)
def test_types(field, good, bad):
    for v in good:
        assert schema().new_state({"text": "t", field: v})[field] == v
    for v in bad:
        assert invalid(schema().new_state, {"text": "t", field: v})[0] == field, v


def test_field_declarations_are_checked():
    with pytest.raises(ValueError, match="unknown type"):
        Field("x", "float")
    with pytest.raises(ValueError, match="append"):
        Field("x", "string", append=True)
    with pytest.raises(ValueError, match="items"):
        Field("x", "string", items=Item("string"))
    with pytest.raises(ValueError, match="default"):
        Field("x", "integer", default=True)
    with pytest.raises(ValueError, match="unique"):
        StateSchema([Field("x", "string"), Field("x", "integer")])
    assert Field("x", "string", default=None).default is MISSING


def node_error(sc, state, patch):
    with pytest.raises(SvcError) as e:
        sc.apply(state, patch, "n1")
    assert e.value.status == 500 and e.value.code == "execution_error"
    assert e.value.details == {"node": "n1"}
    return e.value.message


def test_reducers():
    sc = schema()
    st = sc.new_state({"text": "t", "tags": ["a"]})
    sc.apply(st, {"tags": ["b", "c"]}, "n")
    sc.apply(st, {"tags": "d"}, "n")
    assert st["tags"] == ["a", "b", "c", "d"]
    sc.apply(st, {"tags": Replace(["z"])}, "n")
    assert st["tags"] == ["z"]
    sc.apply(st, {"messages": {"role": "assistant", "content": "x"}}, "n")
    sc.apply(st, {"messages": [{"role": "user", "content": "y"}]}, "n")
    assert [m["content"] for m in st["messages"]] == ["x", "y"]
    sc.apply(st, {"count": 4, "text": "u"}, "n")
    assert (st["count"], st["text"]) == (4, "u")
    sc.apply(st, {"score": None}, "n")
    assert st["score"] is None
    sc.apply(st, None, "n")  # a None patch changes nothing
    sc.apply(st, {"count": Replace(7)}, "n")
    assert st["count"] == 7


def test_append_does_not_mutate_the_old_list():
    sc = schema()
    given = ["a"]
    st = sc.new_state({"text": "t", "tags": given})
    sc.apply(st, {"tags": "b"}, "n")
    assert given == ["a"] and st["tags"] == ["a", "b"]


def test_bad_patches_name_the_node():
    sc = schema()
    st = sc.new_state({"text": "t"})
    assert node_error(sc, st, {"nope": 1}) == 'node "n1" returned unknown state field "nope"'
    assert "not integer" in node_error(sc, st, {"count": True})
    assert "not array of string" in node_error(sc, st, {"tags": 1})
    assert "instead of a state patch" in node_error(sc, st, ["count"])
    # sorted order: "aaa" (unknown) is reported before "count"
    assert "aaa" in node_error(sc, st, {"count": "x", "aaa": 1})
