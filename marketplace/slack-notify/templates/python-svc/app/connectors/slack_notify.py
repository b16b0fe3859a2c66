"""The svc/slack-notify connector: posts a message, its {{field}} references
filled from the state, to a Slack-style incoming webhook as {"text": ...}.

Any 2xx reply is success (Slack answers "ok" as plain text); every failure is
an `upstream_error` with the reason connect, timeout or status. The webhook
URL is a secret: it is read from the environment and never put in a message.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from svc.errors import upstream_error
from svc.upstream import http_client
from svc.values import text


def fill(message: str, state: Mapping[str, Any]) -> str:
    """The message with each {{field}} replaced by the state's value as text;
    an unclosed {{ stays as it is."""
    out = []
    rest = message
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


def _endpoint(node: str, url: str) -> str:
    endpoint = url
    if url.startswith("env:"):
        endpoint = os.environ.get(url[4:], "")
        if not endpoint:
            raise upstream_error(
                node,
                "connect",
                f"node {json.dumps(node)}: the webhook URL variable {url[4:]} "
                "is not set",
            )
    parts = urlsplit(endpoint)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise upstream_error(
            node,
            "connect",
            f"node {json.dumps(node)}: the webhook URL is not an http(s) URL",
        )
    return endpoint


def post(
    node: str,
    state: Mapping[str, Any],
    *,
    url: str,
    text: str,
    timeout_ms: int = 10000,
    output_key: str | None = None,
) -> dict:
    """Runs one slack-notify node and returns its state patch: the message
    sent under `output_key`, or nothing when it is None."""
    import httpx

    endpoint = _endpoint(node, url)
    message = fill(text, state)
    client = http_client("the svc/slack-notify connector")
    try:
        resp = client.post(endpoint, json={"text": message}, timeout=timeout_ms / 1000)
    except httpx.TimeoutException:
        raise upstream_error(
            node, "timeout", f"node {json.dumps(node)}: the webhook call timed out"
        ) from None
    except httpx.HTTPError:
        raise upstream_error(
            node, "connect", f"node {json.dumps(node)}: cannot reach the webhook"
        ) from None
    if not 200 <= resp.status_code <= 299:
        raise upstream_error(
            node,
            "status",
            f"node {json.dumps(node)}: the webhook answered {resp.status_code}",
            status=resp.status_code,
        )
    return {} if output_key is None else {output_key: message}
