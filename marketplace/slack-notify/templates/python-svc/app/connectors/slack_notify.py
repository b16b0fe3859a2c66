"""The svc/slack-notify connector: posts a message, its {{field}} references
filled from the state (svc.values.fill_fields), to a Slack-style incoming
webhook as {"text": ...}.

The call is the SDK's (svc.upstream: resolve_url and post, the HTTP client of
HTTP tools and model providers). Any 2xx reply is success (Slack answers "ok"
as plain text); every failure is an `upstream_error` with the reason connect,
timeout or status (or too_large, for a reply over svc.upstream's
MAX_UPSTREAM_BYTES). The webhook URL is a secret: it is read from the
environment and never put in a message.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from svc import upstream
from svc.values import fill_fields


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
    endpoint = upstream.resolve_url(node, url, service="webhook")
    message = fill_fields(text, state)
    upstream.post(
        node,
        endpoint,
        {"text": message},
        timeout=timeout_ms / 1000,
        service="webhook",
        read_reply=False,
        feature="the svc/slack-notify connector",
    )
    return {} if output_key is None else {output_key: message}
