"""The svc/webhook connector: POSTs state fields as a JSON object to a URL.

The call is the SDK's (svc.upstream: resolve_url and post, the HTTP client of
HTTP tools and model providers), so every way it can fail is an
`upstream_error` with the reason an HTTP tool gives: connect, timeout, status,
too_large and, only when the reply is kept, invalid_json. Without an output
key the reply is not read as JSON, so any 2xx reply (an empty 204, plain
text) is success. Header values are `env:NAME` or text with `{{field}}`
placeholders (svc.values.fill_fields), sent as they are.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from svc.upstream import post, resolve_url
from svc.values import fill_fields


def _value(raw: str, state: Mapping[str, Any]) -> str:
    """A header value: `env:NAME` reads the environment ("" when unset)."""
    if raw.startswith("env:"):
        return os.environ.get(raw[4:], "")
    return fill_fields(raw, state)


def node_id(node: str | Callable[..., Any]) -> str:
    """A node's id: the string itself, or for the node function (a generated
    connector node passes `node`, its own function) the id `@graph_node`
    gave it; "webhook" when there is none."""
    if isinstance(node, str):
        return node
    name = getattr(node, "__svc_name__", None)
    return name if isinstance(name, str) else "webhook"


def send(
    node: str | Callable[..., Any],
    state: Mapping[str, Any],
    *,
    url: str,
    fields: Sequence[str] | None = None,
    headers: Mapping[str, str] | None = None,
    timeout_ms: int = 10000,
    output_key: str | None = None,
) -> dict:
    """Runs one webhook node and returns its state patch.

    `node` is the node's id or its function; `url` is `env:NAME` (never
    repeated in a message: it may hold a secret) or an http(s) URL that may
    hold `{{field}}`; `fields` None sends the whole state; `output_key` None
    ignores the reply.
    """
    node = node_id(node)
    endpoint = resolve_url(node, url, service="webhook", state=state)
    body = dict(state) if fields is None else {k: state.get(k) for k in fields}
    reply = post(
        node,
        endpoint,
        body,
        headers={k: _value(v, state) for k, v in (headers or {}).items()},
        timeout=timeout_ms / 1000,
        service="webhook",
        read_reply=output_key is not None,
        feature="the svc/webhook connector",
    )
    return {} if output_key is None else {output_key: reply}
