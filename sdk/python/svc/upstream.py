"""Calls from a run to the outside: model providers, and the HTTP call of
HTTP tools (svc.http_tools) and of the marketplace connectors (resolve_url
and post, which the connectors' python-svc code imports instead of carrying
a client of its own).

Every way a call can fail maps to one `upstream_error` reason of the HTTP
contract, in the order the Go runtime checks them (upstream.go): the
endpoint (connect), the transport (timeout or connect), the size of the
reply (too_large, before its status), the status, then the JSON.

In a streamed run (svc.streaming) `chat()` of an `llm` node asks the model
for a stream and sends its text as `token` events as it arrives, and so does
`chat_turn()`, one turn of an agent's worker, until its reply calls tools.

Every model call (chat, chat_message, chat_turn, classify_intent) is one
svc.model_calls.call: its attempts, their retries and the model's fallbacks.
A failure another attempt may not meet is raised as a model_calls.Retryable.
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

from svc import model_calls, streaming, telemetry
from svc.errors import SvcError, execution_error, require, upstream_error
from svc.model_calls import RETRY_STATUSES, Model, Retryable
from svc.values import fill_fields, text

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
    each call opens its own, which a cancelled run shuts down (_cut_on_cancel)."""
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
    client leaving cuts at once (_cut_on_cancel): cancelled_error.
    """
    stream = streaming.active()
    client = http_client(feature) if stream is None else streaming_client(feature)
    import httpx

    q = json.dumps(node)
    payload = _request_body(node, service, body)
    timeout = call_timeout(timeout, deadline)
    timed_out = f"node {q}: the {service} call timed out"
    if timeout is not None and timeout <= 0:
        raise upstream_error(node, "timeout", timed_out)
    sent = {"Content-Type": "application/json", "Accept": "application/json"}
    sent.update(headers or {})
    telemetry.inject(sent)
    ends = None if timeout is None else time.monotonic() + timeout
    streaming.check_cancelled()
    cut = contextlib.nullcontext({}) if stream is None else _cut_on_cancel(stream)
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
        raise _transport_error(node, endpoint, service, e) from None
    if not 200 <= status <= 299:
        raise _status_error(node, service, status, retry_after)
    if not read_reply:
        return None
    try:
        return loads_strict(bytes(data))
    except ValueError:
        raise upstream_error(
            node, "invalid_json", f"node {q}: the {service} reply is not valid JSON"
        ) from None


def _request_body(node: str, service: str, body: Any) -> bytes:
    """The JSON of a request (compact, NaN refused); an execution_error when
    `body` cannot be encoded."""
    try:
        return json.dumps(body, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode()
    except (TypeError, ValueError) as e:
        raise execution_error(
            node, f"node {json.dumps(node)}: cannot encode the {service} request: {e}"
        ) from None


def _transport_error(node: str, endpoint: str, service: str, e: Exception) -> SvcError:
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


def _status_error(node: str, service: str, status: int, retry_after: str | None) -> SvcError:
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


# --- model providers -----------------------------------------------------------------


def _completion_request(
    node: str, model: Model, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None
) -> tuple[str, dict[str, str], dict[str, Any]]:
    """The endpoint, headers and body of a chat-completions call."""
    body: dict[str, Any] = {"model": model.name, "messages": messages}
    if tools:
        body["tools"] = tools
    if model.temperature is not None:
        body["temperature"] = model.temperature
    if model.max_tokens:
        body["max_tokens"] = model.max_tokens
    base = os.environ.get(model.base_url_env) or DEFAULT_BASE_URL
    endpoint = resolve_endpoint(node, base.rstrip("/") + "/chat/completions")
    headers = {}
    key = os.environ.get(model.api_key_env)
    if key:
        headers["Authorization"] = "Bearer " + key
    return endpoint, headers, body


def _completion(
    node: str,
    model: Model,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None,
    timeout: float,
    feature: str,
) -> Any:
    """One chat-completions request (an attempt of model_calls.call, within
    `timeout` seconds); returns the parsed reply."""
    endpoint, headers, body = _completion_request(node, model, messages, tools)
    with telemetry.chat_span(model.name) as span:
        reply = post_json(node, endpoint, headers, body, timeout=timeout, feature=feature)
        telemetry.record_reply(span, reply, model.name, messages)
    return reply


def _field(obj: dict, key: str, kind: type) -> Any:
    """obj[key] of a streamed chunk when it is a `kind`, None when null or
    absent; ValueError otherwise (the chunk is not a chat-completion chunk)."""
    value = obj.get(key)
    if value is not None and not isinstance(value, kind):
        raise ValueError(f"{key} is a {kind.__name__}")
    return value


def _delta(chunk: Any) -> dict[str, Any]:
    """choices[0].delta of one chunk of a model's stream ({} when the chunk
    carries none: usage, a finish reason); ValueError when it is not a
    chat-completion chunk."""
    if not isinstance(chunk, dict):
        raise ValueError("a chunk is a JSON object")
    choices = _field(chunk, "choices", list) or [None]
    if choices[0] is None:
        return {}
    if not isinstance(choices[0], dict):
        raise ValueError("choices[0] is an object")
    return _field(choices[0], "delta", dict) or {}


class _Turn:
    """One reply of a worker's turn, put back together from its stream's
    chunks into what a whole reply's choices[0].message would have been
    (docs/http-contract.md, "Agents and tool-calling `llm` nodes")."""

    def __init__(self) -> None:
        self.content: list[str] | None = None
        self.calls: dict[int, dict[str, str]] = {}  # by index: id, type, name, arguments
        self.size = 0  # UTF-8 bytes of the text and the tool-call pieces
        self.calling = False  # a tool-call piece came: the text is no longer sent

    def add(self, chunk: Any) -> str:
        """Takes one chunk in; returns its text ("" for none). ValueError
        when it is not a chat-completion chunk."""
        delta = _delta(chunk)
        content = _field(delta, "content", str) or ""
        for position, piece in enumerate(_field(delta, "tool_calls", list) or ()):
            if piece is not None:
                self._add_call(position, piece)
        if content:
            self.size += len(content.encode())
            self.content = self.content or []
            self.content.append(content)
        return content

    def _add_call(self, position: int, piece: Any) -> None:
        if not isinstance(piece, dict):
            raise ValueError("a tool-call piece is an object")
        index = piece.get("index")
        if index is None:  # a provider that sends whole calls
            index = position
        # bool is an int to Python, not to JSON.
        if type(index) is not int or not 0 <= index < 1 << 31:
            raise ValueError("a tool call's index is a non-negative integer")
        function = _field(piece, "function", dict) or {}
        found = [(k, _field(piece, k, str)) for k in ("id", "type")]
        found += [(k, _field(function, k, str)) for k in ("name", "arguments")]
        call = self.calls.setdefault(index, {})
        for key, value in found:
            if value is None:
                continue
            self.size += len(value.encode())
            if key in ("name", "arguments"):
                call[key] = call.get(key, "") + value
            elif value and key not in call:  # the first non-empty one is kept
                call[key] = value
        self.calling = True

    def message(self) -> dict[str, Any]:
        message: dict[str, Any] = {
            "role": "assistant",
            "content": None if self.content is None else "".join(self.content),
        }
        if self.calls:
            message["tool_calls"] = [
                _assembled_call(self.calls[index]) for index in sorted(self.calls)
            ]
        return message


def _assembled_call(call: dict[str, str]) -> dict[str, Any]:
    """A tool call as a whole reply has it; a field no piece carried stays
    absent, so the worker finds the call malformed as in a whole reply."""
    assembled: dict[str, Any] = {} if "id" not in call else {"id": call["id"]}
    assembled["type"] = call.get("type", "function")
    assembled["function"] = {k: call[k] for k in ("name", "arguments") if k in call}
    return assembled


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
def _cut_on_cancel(stream: streaming.RunStream) -> Iterator[dict[str, Any]]:
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


def _data_lines(
    resp: Any, stream: streaming.RunStream, ends: float, too_large: SvcError
) -> Iterator[bytes]:
    """The `data:` values of a server-sent event stream as they arrive;
    cancelled_error once the run is cancelled, `too_large` for a line over
    MAX_UPSTREAM_BYTES."""
    import httpx

    pending = b""
    for chunk in resp.iter_bytes():
        if stream.cancelled:
            raise streaming.cancelled_error()
        # httpx's read timeout is per chunk; the call as a whole is bounded too.
        if time.monotonic() > ends:
            raise httpx.ReadTimeout("the stream passed its deadline")
        pending += chunk
        *lines, pending = pending.split(b"\n")
        if len(pending) > MAX_UPSTREAM_BYTES:
            raise too_large
        for line in lines:
            if line.startswith(b"data:"):
                yield line[5:].strip()


def _stream_chunks(
    node: str,
    model: Model,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None,
    timeout: float,
    stream: streaming.RunStream,
    each: Callable[[Any], str | None],
    too_large: SvcError,
    feature: str,
) -> None:
    """One chat-completions request of a streamed run (an attempt of
    model_calls.call, within `timeout` seconds): the provider is asked for a
    stream ("stream": true) and `each` gets every chunk, parsed, as it
    arrives, until `data: [DONE]`; the text it returns is sent as a token.
    A ValueError from `each` (or a line that is not JSON) is invalid_json;
    `too_large` is also a line over MAX_UPSTREAM_BYTES; a stream that ends
    before `data: [DONE]` is a connect error; a run cancelled meanwhile ends
    with cancelled_error, its connection cut at once (_cut_on_cancel)."""
    reached = False  # a token of this request reached the client
    with telemetry.chat_span(model.name) as span:
        endpoint, headers, body = _completion_request(node, model, messages, tools)
        body["stream"] = True
        q = json.dumps(node)
        payload = _request_body(node, "upstream", body)
        client = streaming_client(feature)
        import httpx

        ends = time.monotonic() + timeout
        sent = {"Content-Type": "application/json", "Accept": "text/event-stream", **headers}
        telemetry.inject(sent)
        try:
            if stream.cancelled:
                raise streaming.cancelled_error()
            with (
                _cut_on_cancel(stream) as extensions,
                client.stream(
                    "POST",
                    endpoint,
                    content=payload,
                    headers=sent,
                    timeout=timeout,
                    extensions=extensions,
                ) as resp,
            ):
                if not 200 <= resp.status_code <= 299:
                    retry_after = resp.headers.get("retry-after")
                    raise _status_error(node, "upstream", resp.status_code, retry_after)
                for data in _data_lines(resp, stream, ends, too_large):
                    if data == b"[DONE]":
                        return
                    try:
                        chunk = loads_strict(data)
                        telemetry.record_reply(span, chunk, model.name)
                        token = each(chunk)
                    except ValueError:
                        raise upstream_error(
                            node,
                            "invalid_json",
                            f"node {q}: a chunk of the model's stream "
                            "is not a chat-completion chunk",
                        ) from None
                    if token:
                        stream.token(token)
                        reached = True
            if stream.cancelled:
                raise streaming.cancelled_error()
            ended = f"node {q}: the model's stream ended before [DONE]"
            error: SvcError = Retryable(upstream_error(node, "connect", ended))
        except (httpx.HTTPError, httpx.InvalidURL) as e:
            if stream.cancelled:
                raise streaming.cancelled_error() from None
            error = _transport_error(node, endpoint, "upstream", e)
        # The client has the tokens sent: the call cannot start over after them.
        raise SvcError(error.status, error.code, error.message, error.details) if reached else error


def _chat_streamed(
    node: str,
    model: Model,
    messages: list[dict[str, Any]],
    deadline: float | None,
    stream: streaming.RunStream,
) -> str:
    """chat() in a streamed run: each non-empty choices[0].delta.content is
    sent as a token as it arrives (_stream_chunks). Returns the deltas
    joined, so the node writes what the whole reply would have made it
    write."""
    too_large = upstream_error(
        node,
        "too_large",
        f"node {json.dumps(node)}: the model's text is larger than {MAX_UPSTREAM_BYTES} bytes",
    )

    def attempt(m: Model, timeout: float) -> str:
        text: list[str] = []
        size = 0

        def each(chunk: Any) -> str:
            nonlocal size
            delta = _field(_delta(chunk), "content", str) or ""
            size += len(delta.encode())
            if size > MAX_UPSTREAM_BYTES:
                raise too_large
            text.append(delta)
            return delta

        _stream_chunks(node, m, messages, None, timeout, stream, each, too_large, "chat()")
        return "".join(text)

    return model_calls.call(node, model, deadline, attempt)


def chat_turn(
    node: str,
    model: Model,
    messages: list[dict[str, Any]],
    *,
    tools: list[dict[str, Any]] | None,
    deadline: float | None = None,
    feature: str = "run_agent()",
) -> dict[str, Any]:
    """One model call of a worker's tool-calling loop: chat_message(), or in
    a streamed run's `agent` or `llm` node (streaming.replies()) a streamed
    call that sends the reply's text as tokens until its first tool-call
    piece, then withdraws them (`tokens_discarded`, `tool_calls`). Returns
    the assistant message a whole reply would have held (_Turn): role,
    content (None without text) and its tool_calls put back together by
    index. Errors name `node` (the agent); the tokens are the graph node's."""
    stream = streaming.replies()
    if stream is None:
        return chat_message(node, model, messages, tools=tools, deadline=deadline, feature=feature)
    too_large = upstream_error(
        node,
        "too_large",
        f"node {json.dumps(node)}: the model's reply is larger than {MAX_UPSTREAM_BYTES} bytes",
    )

    def attempt(m: Model, timeout: float) -> dict[str, Any]:
        turn = _Turn()

        def each(chunk: Any) -> str | None:
            content = turn.add(chunk)
            if turn.size > MAX_UPSTREAM_BYTES:
                raise too_large
            if turn.calling:
                stream.discard("tool_calls")  # once: then nothing of the turn stands
                return None
            return content

        _stream_chunks(node, m, messages, tools, timeout, stream, each, too_large, feature)
        return turn.message()

    return model_calls.call(node, model, deadline, attempt)


def _first_message(reply: Any) -> Any:
    try:
        return reply["choices"][0]["message"]
    except (KeyError, IndexError, TypeError):
        return None


def chat_message(
    node: str,
    model: Model,
    messages: list[dict[str, Any]],
    *,
    tools: list[dict[str, Any]] | None = None,
    deadline: float | None = None,
    feature: str = "chat()",
) -> dict[str, Any]:
    """One chat-completions call (with `tools` offered, if any); returns the
    reply's `choices[0].message`, which may hold `tool_calls`."""

    def attempt(m: Model, timeout: float) -> dict[str, Any]:
        message = _first_message(_completion(node, m, messages, tools, timeout, feature))
        if not isinstance(message, dict):
            raise upstream_error(
                node,
                "invalid_json",
                f"node {json.dumps(node)}: the model reply has no choices[0].message",
            )
        return message

    return model_calls.call(node, model, deadline, attempt)


def _chat_text(
    node: str, model: Model, messages: list[dict[str, Any]], deadline: float | None, feature: str
) -> str:
    """One chat-completions call without tools; returns the reply's
    choices[0].message.content, checked within the call so that its failure
    names the model and attempts too (model_calls.call)."""

    def attempt(m: Model, timeout: float) -> str:
        message = _first_message(_completion(node, m, messages, None, timeout, feature))
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, str):
            raise upstream_error(
                node,
                "invalid_json",
                f"node {json.dumps(node)}: the model reply has no choices[0].message.content",
            )
        return content

    return model_calls.call(node, model, deadline, attempt)


def chat(node: str, model: Model, system: str, user: str, *, deadline: float | None = None) -> str:
    """Sends the non-empty prompt parts and returns the reply text (streamed,
    in a streamed run's `llm` node)."""
    messages = []
    if system.strip():
        messages.append({"role": "system", "content": system})
    if user.strip():
        messages.append({"role": "user", "content": user})
    stream = streaming.current(("llm",))
    if stream is not None:
        return _chat_streamed(node, model, messages, deadline, stream)
    return _chat_text(node, model, messages, deadline, "chat()")


def as_list(reply: str) -> list:
    """Keeps the list shape: a reply that is a JSON array is that list,
    otherwise every non-empty line (stripped) is one item."""
    trimmed = reply.strip()
    if trimmed.startswith("["):
        try:
            value = loads_strict(trimmed)
        except ValueError:
            value = None
        if isinstance(value, list):
            return value
    return [line.strip() for line in reply.split("\n") if line.strip()]


def classify_intent(
    node: str,
    model: Model,
    intents: list[dict],
    text: str,
    fallback: str = "other",
    *,
    deadline: float | None = None,
) -> str:
    """The name of the intent of `text`, as declared, or `fallback`.

    One model call: the system prompt lists each intent (`name`, with its
    `description` and `examples` when given) and asks for one name. A reply
    that is not one of the names (trimmed, any case) gives `fallback`, so a
    chatty model routes to the fallback branch instead of failing the run.
    """
    names: dict[str, str] = {}
    lines = ["Classify the user's message into exactly one of these intents:"]
    for intent in intents:
        name = intent.get("name") if isinstance(intent, dict) else None
        if not isinstance(name, str) or not name.strip():
            raise execution_error(
                node, f"node {json.dumps(node)}: an intent needs a name, not {intent!r}"
            )
        names.setdefault(name.strip().lower(), name)
        description = intent.get("description")
        lines.append(f"- {name}: {description}" if description else f"- {name}")
        examples = [e for e in intent.get("examples") or () if isinstance(e, str)]
        if examples:
            lines.append(
                "  Examples: " + "; ".join(json.dumps(e, ensure_ascii=False) for e in examples)
            )
    if not names:
        raise execution_error(node, f"node {json.dumps(node)}: no intents to classify into")
    lines.append(
        f"Answer with the intent's name only. If none of them fits, answer {json.dumps(fallback)}."
    )
    messages = [
        {"role": "system", "content": "\n".join(lines)},
        {"role": "user", "content": text},
    ]
    content = _chat_text(node, model, messages, deadline, "classify_intent()")
    return names.get(content.strip().lower(), fallback)


def text_items(items: list) -> list:
    """Every item rendered as text, for list outputs written to string lists."""
    return [text(v) for v in items]


def assistant_message(reply: str) -> list:
    return [{"role": "assistant", "content": reply}]
