"""Calls from a run to the outside over HTTP: the one call of HTTP tools
(svc.http_tools), model providers (svc.llm) and the marketplace connectors
(resolve_url and post, which the connectors' python-svc code imports instead
of carrying a client of its own).

Every way a call can fail maps to one `upstream_error` reason of the HTTP
contract, in the order the Go runtime checks them (upstream.go): the
endpoint (connect), the transport (timeout or connect), the size of the
reply (too_large, before its status), the status, then the JSON. A failure
another attempt may not meet is raised as a model_calls.Retryable (which
only model calls retry).

In a streamed run (svc.streaming) every call has a connection of its own,
which the client leaving cuts at once (cut_on_cancel).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import socket
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any
from urllib.parse import urlsplit

from svc import streaming, telemetry
from svc.errors import SvcError, execution_error, require, upstream_error
from svc.model_calls import RETRY_STATUSES, Retryable
from svc.values import fill_fields

# What an HTTP tool or a model provider may send back.
MAX_UPSTREAM_BYTES = 4 << 20
DEFAULT_BASE_URL = "https://api.openai.com/v1"

_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")

_client: Any = None
_stream_client: Any = None
_client_lock = threading.Lock()


def http_client(feature: str) -> Any:
    """The process's one httpx.Client, so connections are reused across calls."""
    global _client
    if _client is not None:  # the common case: no import check per call
        return _client
    httpx = require("httpx", "http", feature)
    with _client_lock:
        if _client is None:
            _client = httpx.Client(follow_redirects=True)
    return _client


def streaming_client(feature: str) -> Any:
    """The httpx.Client of a streamed run's calls. It keeps no connection:
    each call opens its own, which a cancelled run shuts down (cut_on_cancel)."""
    global _stream_client
    if _stream_client is not None:
        return _stream_client
    httpx = require("httpx", "http", feature)
    with _client_lock:
        if _stream_client is None:
            _stream_client = httpx.Client(
                follow_redirects=True, limits=httpx.Limits(max_keepalive_connections=0)
            )
    return _stream_client


def expand_env(value: str) -> str:
    """`${NAME}` becomes the environment variable NAME ("" when unset)."""
    return _ENV_REF.sub(lambda m: os.environ.get(m.group(1), ""), value)


def resolve_endpoint(node: str, endpoint: str) -> str:
    """Reads `env:NAME` endpoints from the environment and checks the URL
    (resolve_url, which never repeats a value read from the environment)."""
    return resolve_url(node, endpoint, service="upstream")


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def loads_strict(data: bytes | str) -> Any:
    """json.loads without NaN/Infinity, which JSON (and Go) do not have."""
    return json.loads(data, parse_constant=_reject_constant)


def call_timeout(timeout: float | None, deadline: float | None) -> float | None:
    """The timeout of one call (seconds): its own `timeout` bounded by the
    `deadline` (the seconds left in the run); None for neither."""
    if deadline is None:
        return timeout
    return deadline if timeout is None else min(timeout, deadline)


def resolve_url(
    node: str, raw: str, *, service: str, state: Mapping[str, Any] | None = None
) -> str:
    """The http(s) URL of one call, as the marketplace connectors (svc/webhook,
    svc/slack-notify) resolve theirs: `env:NAME` is the variable NAME (unset or
    empty is a connect error naming NAME), anything else is the URL itself,
    its `{{field}}` placeholders filled from `state` (fill_fields) when given.
    A URL without an http(s) scheme and a host is a connect error. A value read
    from the environment is never repeated in a message: it may hold a secret.
    `service` names the upstream in messages ("webhook": "the webhook URL")."""
    q = json.dumps(node)
    if raw.startswith("env:"):
        name = raw[4:]
        endpoint = os.environ.get(name, "")
        if not endpoint:
            raise upstream_error(
                node, "connect", f"node {q}: the {service} URL variable {name} is not set"
            )
        what = f"the value of {name}"
    else:
        endpoint = raw if state is None else fill_fields(raw, state)
        what = json.dumps(endpoint)
    try:
        parts = urlsplit(endpoint)
    except ValueError:
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise upstream_error(
            node, "connect", f"node {q}: the {service} URL ({what}) is not an http(s) URL"
        )
    return endpoint


def post(
    node: str,
    endpoint: str,
    body: Any,
    *,
    headers: Mapping[str, str] | None = None,
    timeout: float | None = None,
    deadline: float | None = None,
    service: str = "upstream",
    read_reply: bool = True,
    feature: str = "svc.upstream.post()",
) -> Any:
    """POSTs `body` as JSON to `endpoint`: the one HTTP call of HTTP tools, model
    providers (post_json) and the marketplace connectors (svc/webhook,
    svc/slack-notify), as the Go runtime's upstreamCall.post.

    `headers` are sent as they are (no `${NAME}` expansion), after
    Content-Type and Accept (application/json). `timeout` (seconds) bounds the
    whole call, reply included, and is itself bounded by `deadline` (the
    seconds left in the run); None for no bound. The reply is read up to
    MAX_UPSTREAM_BYTES. With `read_reply` it is parsed as strict JSON and
    returned; otherwise any 2xx reply (an empty 204, plain text) is success
    and None is returned.

    Every failure is an `upstream_error` with the contract's reason, checked
    in this order: connect (transport or invalid URL), timeout, too_large,
    status (with `details.status`), invalid_json. An unencodable body is an
    `execution_error`. Messages name the node and `service` ("webhook": "the
    webhook answered 503") but never the URL, which may hold a secret.
    `feature` names the caller when httpx (the extra `http`) is missing.

    In a streamed run the call has a connection of its own, which the
    client leaving cuts at once (cut_on_cancel): cancelled_error.
    """
    stream = streaming.active()
    client = http_client(feature) if stream is None else streaming_client(feature)
    import httpx

    q = json.dumps(node)
    payload = request_body(node, service, body)
    timeout = call_timeout(timeout, deadline)
    timed_out = f"node {q}: the {service} call timed out"
    if timeout is not None and timeout <= 0:
        raise upstream_error(node, "timeout", timed_out)
    sent = {"Content-Type": "application/json", "Accept": "application/json"}
    sent.update(headers or {})
    telemetry.inject(sent)
    ends = None if timeout is None else time.monotonic() + timeout
    streaming.check_cancelled()
    cut = contextlib.nullcontext({}) if stream is None else cut_on_cancel(stream)
    try:
        with (
            cut as extensions,
            client.stream(
                "POST",
                endpoint,
                content=payload,
                headers=sent,
                timeout=timeout,
                extensions=extensions,
            ) as resp,
        ):
            data = bytearray()
            for chunk in resp.iter_bytes():
                data += chunk
                if len(data) > MAX_UPSTREAM_BYTES:
                    raise upstream_error(
                        node,
                        "too_large",
                        f"node {q}: the {service} reply is larger than {MAX_UPSTREAM_BYTES} bytes",
                    )
                # httpx's read timeout is per chunk; the call as a whole is bounded too.
                if ends is not None and time.monotonic() > ends:
                    raise httpx.ReadTimeout(timed_out)
            status, retry_after = resp.status_code, resp.headers.get("retry-after")
    except (httpx.HTTPError, httpx.InvalidURL) as e:
        if stream is not None and stream.cancelled:
            raise streaming.cancelled_error() from None
        raise transport_error(node, endpoint, service, e) from None
    if not 200 <= status <= 299:
        raise status_error(node, service, status, retry_after)
    if not read_reply:
        return None
    try:
        return loads_strict(bytes(data))
    except ValueError:
        raise upstream_error(
            node, "invalid_json", f"node {q}: the {service} reply is not valid JSON"
        ) from None


def request_body(node: str, service: str, body: Any) -> bytes:
    """The JSON of a request (compact, NaN refused); an execution_error when
    `body` cannot be encoded."""
    try:
        return json.dumps(body, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode()
    except (TypeError, ValueError) as e:
        raise execution_error(
            node, f"node {json.dumps(node)}: cannot encode the {service} request: {e}"
        ) from None


def transport_error(node: str, endpoint: str, service: str, e: Exception) -> SvcError:
    """The upstream_error of an httpx failure (an HTTPError or InvalidURL):
    timeout, or connect; Retryable but for an unusable URL."""
    import httpx

    q = json.dumps(node)
    if isinstance(e, httpx.TimeoutException):
        timed_out = upstream_error(node, "timeout", f"node {q}: the {service} call timed out")
        return Retryable(timed_out)
    if isinstance(e, (httpx.InvalidURL, httpx.UnsupportedProtocol)):
        return upstream_error(node, "connect", f"node {q}: invalid {service} URL")
    # httpx's messages do not hold the URL; if one ever does, it is left out.
    detail = str(e) or type(e).__name__
    if endpoint and endpoint in detail:
        detail = type(e).__name__
    message = f"node {q}: cannot reach the {service}: {detail}"
    return Retryable(upstream_error(node, "connect", message))


def status_error(node: str, service: str, status: int, retry_after: str | None) -> SvcError:
    """The upstream_error of a reply's non-2xx `status` (Retryable for
    RETRY_STATUSES, with its Retry-After header `retry_after`)."""
    error = upstream_error(
        node, "status", f"node {json.dumps(node)}: the {service} answered {status}", status=status
    )
    return Retryable(error, retry_after) if status in RETRY_STATUSES else error


def post_json(
    node: str,
    endpoint: str,
    headers: dict[str, str] | None,
    body: Any,
    *,
    timeout: float | None,
    feature: str,
) -> Any:
    """POSTs `body` as JSON and returns the parsed reply (timeout in seconds):
    post() with the header values' `${NAME}` references expanded."""
    expanded = {k: expand_env(v) for k, v in (headers or {}).items()}
    return post(node, endpoint, body, headers=expanded, timeout=timeout, feature=feature)


def _shut_down(network_stream: Any) -> Callable[[], None]:
    """What cuts a connection from another thread: shutting its socket down
    wakes the read blocked on it, where closing it would not."""
    sock = network_stream.get_extra_info("socket")

    def cut() -> None:
        if sock is not None:
            with contextlib.suppress(OSError):  # closed already
                sock.shutdown(socket.SHUT_RDWR)

    return cut


@contextlib.contextmanager
def cut_on_cancel(stream: streaming.RunStream) -> Iterator[dict[str, Any]]:
    """The httpx extensions of a call that a cancel of `stream` cuts: its
    connection (of its own, streaming_client) is shut down from the
    cancelling thread as soon as it is open, so a read blocked on it, even
    before the reply's headers, ends at once."""
    forget: list[Callable[[], None]] = []

    def trace(event: str, info: dict) -> None:
        if event in ("connection.connect_tcp.complete", "connection.start_tls.complete"):
            forget.append(stream.on_cancel(_shut_down(info["return_value"])))

    try:
        yield {"trace": trace}
    finally:
        for f in forget:
            f()
