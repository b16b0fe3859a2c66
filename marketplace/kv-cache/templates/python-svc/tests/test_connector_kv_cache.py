"""The svc/kv-cache connector's helpers, called directly."""

from concurrent.futures import ThreadPoolExecutor

import pytest

from app.connectors import kv_cache
from app.connectors.kv_cache import cache_delete, cache_get, cache_set


@pytest.fixture
def now(monkeypatch):
    """A clock the test moves: `now[0]` is the time in seconds."""
    t = [1000.0]
    monkeypatch.setattr(kv_cache, "clock", lambda: t[0])
    return t


def _args(namespace, key="k", max_entries=10):
    return {"namespace": namespace, "max_entries": max_entries, "key": key}


def test_get_set_delete(now):
    args = _args("test-basic", key="answer:{{question}}")
    state = {"question": "why", "answer": None}
    assert cache_get(state, field="answer", hit_field="cached", **args) == {
        "cached": False
    }
    state["answer"] = "because"
    assert cache_set(state, field="answer", ttl_seconds=60, **args) == {}
    hit = cache_get({"question": "why"}, field="answer", hit_field="cached", **args)
    assert hit == {"answer": "because", "cached": True}
    other = cache_get({"question": "how"}, field="answer", hit_field="cached", **args)
    assert other == {"cached": False}
    assert cache_delete(state, **args) == {}
    assert cache_get(state, field="answer", hit_field="cached", **args) == {
        "cached": False
    }


def test_a_miss_without_hit_field_writes_nothing():
    assert cache_get({}, field="answer", **_args("test-nohit")) == {}


def test_entries_expire(now):
    args = _args("test-ttl")
    cache_set({"v": 1}, field="v", ttl_seconds=30, **args)
    now[0] += 29
    assert cache_get({}, field="v", hit_field="hit", **args) == {"v": 1, "hit": True}
    now[0] += 1
    assert cache_get({}, field="v", hit_field="hit", **args) == {"hit": False}


def test_setting_none_removes():
    args = _args("test-none")
    cache_set({"v": "x"}, field="v", ttl_seconds=30, **args)
    cache_set({"v": None}, field="v", ttl_seconds=30, **args)
    assert cache_get({}, field="v", hit_field="hit", **args) == {"hit": False}


def test_namespaces_are_separate():
    cache_set({"v": "in a"}, field="v", ttl_seconds=30, **_args("test-ns-a"))
    assert cache_get({}, field="v", hit_field="hit", **_args("test-ns-b")) == {
        "hit": False
    }
    assert cache_get({}, field="v", **_args("test-ns-a")) == {"v": "in a"}


def test_the_least_recently_used_entry_makes_room():
    def at(key):
        return _args("test-lru", key=key, max_entries=2)

    cache_set({"v": "a"}, field="v", ttl_seconds=30, **at("a"))
    cache_set({"v": "b"}, field="v", ttl_seconds=30, **at("b"))
    cache_get({}, field="v", **at("a"))  # a is now the most recent
    cache_set({"v": "c"}, field="v", ttl_seconds=30, **at("c"))
    hits = {k: cache_get({}, field="v", hit_field="hit", **at(k))["hit"] for k in "abc"}
    assert hits == {"a": True, "b": False, "c": True}


def test_values_are_copied():
    args = _args("test-copy")
    stored = {"list": ["x"]}
    cache_set({"v": stored}, field="v", ttl_seconds=30, **args)
    stored["list"][0] = "changed after set"
    got = cache_get({}, field="v", **args)["v"]
    got["list"][0] = "changed after get"
    assert cache_get({}, field="v", **args) == {"v": {"list": ["x"]}}


def test_concurrent_requests():
    def worker(i):
        for j in range(200):
            args = _args("test-concurrent", key=f"k{j % 70}", max_entries=50)
            cache_set({"v": i}, field="v", ttl_seconds=30, **args)
            cache_get({}, field="v", **args)
            if j % 10 == 0:
                cache_delete({}, **args)

    with ThreadPoolExecutor(8) as pool:
        for done in [pool.submit(worker, i) for i in range(8)]:
            done.result()
    assert len(kv_cache._namespaces["test-concurrent"]) <= 50


def test_keys_are_filled_from_the_state():
    state = {"name": "Ada", "n": 3, "v": "x"}
    filled = _args("test-keys", key="answer:{{ name }}{{n}}-{{missing}}")
    cache_set(state, field="v", ttl_seconds=30, **filled)
    hit = cache_get(
        {}, field="v", hit_field="hit", **_args("test-keys", "answer:Ada3-")
    )
    assert hit == {"v": "x", "hit": True}
    other = cache_get({"name": "Bob", "n": 3}, field="v", hit_field="hit", **filled)
    assert other == {"hit": False}
