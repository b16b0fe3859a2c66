"""The svc/kv-cache connector: an in-process key-value cache shared by every
request of the service.

Each namespace is its own cache of at most `max_entries` values (the node
that first uses a namespace sets its size); `cache_set` keeps a value for
`ttl_seconds`, and the least recently used value makes room for a new one
(cachetools' TLRUCache, which gives every entry its own time to live). Values
are copied in and out, so one request never sees another's changes. Keys
are filled from the state as templates are (svc.values.fill_fields).
"""

from __future__ import annotations

import copy
import threading
import time
from collections.abc import Mapping
from typing import Any

from cachetools import TLRUCache
from svc.values import fill_fields

# The cache's clock, in seconds (tests replace it).
clock = time.monotonic

_lock = threading.Lock()
_namespaces: dict[str, TLRUCache] = {}


def _expires(_key: str, entry: tuple[float, Any], now: float) -> float:
    return now + entry[0]


def _namespace(name: str, max_entries: int) -> TLRUCache:
    """The namespace's cache, made with room for `max_entries` on first use
    (call with the lock held)."""
    cache = _namespaces.get(name)
    if cache is None:
        cache = TLRUCache(max(1, max_entries), _expires, timer=lambda: clock())
        _namespaces[name] = cache
    return cache


def cache_get(
    state: Mapping[str, Any],
    *,
    namespace: str,
    max_entries: int,
    key: str,
    field: str,
    hit_field: str | None = None,
) -> dict:
    """A hit writes the value to `field`, a miss writes nothing there;
    `hit_field` (when given) receives True or False."""
    k = fill_fields(key, state)
    with _lock:
        entry = _namespace(namespace, max_entries).get(k)
        value = None if entry is None else copy.deepcopy(entry[1])
    patch: dict[str, Any] = {}
    if entry is not None:
        patch[field] = value
    if hit_field is not None:
        patch[hit_field] = entry is not None
    return patch


def cache_set(
    state: Mapping[str, Any],
    *,
    namespace: str,
    max_entries: int,
    key: str,
    field: str,
    ttl_seconds: int,
) -> dict:
    """Stores the value of `field` for `ttl_seconds`; an absent (None) value
    removes the key instead."""
    k = fill_fields(key, state)
    value = state.get(field)
    entry = None if value is None else (float(ttl_seconds), copy.deepcopy(value))
    with _lock:
        cache = _namespace(namespace, max_entries)
        if entry is None:
            cache.pop(k, None)
        else:
            cache[k] = entry
    return {}


def cache_delete(
    state: Mapping[str, Any], *, namespace: str, max_entries: int, key: str
) -> dict:
    """Removes the key."""
    k = fill_fields(key, state)
    with _lock:
        _namespace(namespace, max_entries).pop(k, None)
    return {}
