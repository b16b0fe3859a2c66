"""The svc/webhook connector: POSTs state fields as a JSON object to a URL.

Every way the call can fail is an `upstream_error` with the reason an HTTP
tool gives (svc.upstream.post_json): connect, timeout, status, too_large and,
only when the reply is kept, invalid_json. The call is made here rather than
with post_json because a webhook without an output key must accept any reply
(an empty 204 included), and because header values rendered from the state
must reach the webhook as they are, without `${NAME}` expansion.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from svc.errors import execution_error, upstream_error
from svc.upstream import MAX_UPSTREAM_BYTES, http_client, loads_strict
from svc.values import text


def render(template: str, state: Mapping[str, Any]) -> str:
    """Fills `{{field}}` placeholders with state values (as templates render
    them: svc.values.text); an unclosed `{{` is text."""
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


def _value(raw: str, state: Mapping[str, Any]) -> str:
    """A header value: `env:NAME` reads the environment ("" when unset)."""
    if raw.startswith("env:"):
        return os.environ.get(raw[4:], "")
    return render(raw, state)


def _endpoint(node: str, url: str, state: Mapping[str, Any]) -> str:
    """The URL of one call. A URL read from the environment is never repeated
    in a message: it may hold a secret."""
    if url.startswith("env:"):
        endpoint = os.environ.get(url[4:], "")
        if not endpoint:
            raise upstream_error(
                node,
                "connect",
                f"node {json.dumps(node)}: the webhook URL variable {url[4:]} "
                "is not set",
            )
        what = f"the value of {url[4:]}"
    else:
        endpoint = render(url, state)
        what = json.dumps(endpoint)
    try:
        parts = urlsplit(endpoint)
    except ValueError:
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise upstream_error(
            node,
            "connect",
            f"node {json.dumps(node)}: the webhook URL ({what}) is not an http(s) URL",
        )
    return endpoint


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

    `node` is the node's id or its function; `url` is `env:NAME` or an
    http(s) URL that may hold `{{field}}`; `fields` None sends the whole state;
    `output_key` None ignores the reply.
    """
    node = node_id(node)
    endpoint = _endpoint(node, url, state)
    body = dict(state) if fields is None else {k: state.get(k) for k in fields}
    try:
        payload = json.dumps(
            body, separators=(",", ":"), ensure_ascii=False, allow_nan=False
        )
    except (TypeError, ValueError) as e:
        raise execution_error(
            node, f"node {json.dumps(node)}: cannot encode the webhook request: {e}"
        ) from None
    sent = {"Content-Type": "application/json", "Accept": "application/json"}
    for k, v in (headers or {}).items():
        sent[k] = _value(v, state)
    status, data = _post(node, endpoint, sent, payload.encode(), timeout_ms / 1000)
    if not 200 <= status <= 299:
        raise upstream_error(
            node,
            "status",
            f"node {json.dumps(node)}: the webhook answered {status}",
            status=status,
        )
    if output_key is None:
        return {}
    try:
        reply = loads_strict(data)
    except ValueError:
        raise upstream_error(
            node,
            "invalid_json",
            f"node {json.dumps(node)}: the webhook reply is not valid JSON",
        ) from None
    return {output_key: reply}


def _post(
    node: str, endpoint: str, headers: dict[str, str], payload: bytes, timeout: float
) -> tuple[int, bytes]:
    """The status and body of one POST, the body read up to the size limit."""
    client = http_client("the svc/webhook connector")
    import httpx

    ends = time.monotonic() + timeout
    try:
        with client.stream(
            "POST", endpoint, content=payload, headers=headers, timeout=timeout
        ) as resp:
            data = bytearray()
            for chunk in resp.iter_bytes():
                data += chunk
                if len(data) > MAX_UPSTREAM_BYTES:
                    raise upstream_error(
                        node,
                        "too_large",
                        f"node {json.dumps(node)}: the webhook reply is larger than "
                        f"{MAX_UPSTREAM_BYTES} bytes",
                    )
                # httpx's read timeout is per chunk; the call as a whole is bounded too.
                if time.monotonic() > ends:
                    raise httpx.ReadTimeout("the webhook call timed out")
            return resp.status_code, bytes(data)
    except httpx.TimeoutException:
        raise upstream_error(
            node, "timeout", f"node {json.dumps(node)}: the webhook call timed out"
        ) from None
    except (httpx.InvalidURL, httpx.UnsupportedProtocol):
        raise upstream_error(
            node, "connect", f"node {json.dumps(node)}: invalid webhook URL"
        ) from None
    except httpx.HTTPError as e:
        raise upstream_error(
            node, "connect", f"node {json.dumps(node)}: cannot reach the webhook: {e}"
        ) from None
