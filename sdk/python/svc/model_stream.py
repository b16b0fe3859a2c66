"""Model calls of a streamed run (svc.streaming): the provider is asked for
a stream of server-sent events, and the text of its reply goes to the
client as `token` events as it arrives.

`chat_streamed` is chat() of an `llm` node; `turn_streamed` is one turn of
an agent's worker (chat_turn), whose text is sent until its first tool-call
piece, then withdrawn (`tokens_discarded`). Either is one model call
(svc.model_calls.call), retried and falling back only while no token of it
reached the client.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from typing import Any

from svc import model_calls, streaming, telemetry, wire
from svc.errors import SvcError, upstream_error
from svc.model_calls import Model, Retryable, Tokens
from svc.upstream import (
    MAX_UPSTREAM_BYTES,
    cut_on_cancel,
    request_body,
    status_error,
    streaming_client,
    transport_error,
)


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
) -> Tokens:
    """One request of a streamed run (an attempt of model_calls.call, within
    `timeout` seconds): the provider is asked for a stream and `each` gets
    every chat-completion chunk its events stand for (wire.stream_reader),
    as they arrive, until the event that ends the stream; the text `each`
    returns is sent as a token. A ValueError from `each` or the reader (a
    line that is not JSON) is invalid_json; `too_large` is also a line over
    MAX_UPSTREAM_BYTES; a stream that ends before its last event is a
    connect error, and so is an error event of the stream that another
    attempt may not meet (Retryable): either is retried only while no token
    reached the client. A run cancelled meanwhile ends with cancelled_error,
    its connection cut at once (cut_on_cancel).

    Returns the tokens the stream's last chunk reports (an OpenAI-compatible
    provider is asked for that chunk, which carries the whole reply's usage
    and no choices); a last chunk without usage reports none."""
    reached = False  # a token of this request reached the client
    with telemetry.chat_span(model.name, model.provider) as span:
        req = wire.request(node, model, messages, tools)
        read = wire.stream_reader(req, node)
        endpoint = req.endpoint
        q = json.dumps(node)
        payload = request_body(node, "upstream", wire.stream_body(req))
        client = streaming_client(feature)
        import httpx

        ends = time.monotonic() + timeout
        sent = {"Content-Type": "application/json", "Accept": "text/event-stream", **req.headers}
        telemetry.inject(sent)
        try:
            if stream.cancelled:
                raise streaming.cancelled_error()
            with (
                cut_on_cancel(stream) as extensions,
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
                    raise status_error(node, "upstream", resp.status_code, retry_after)
                last = None
                for data in _data_lines(resp, stream, ends, too_large):
                    try:
                        chunk, done = read(data)
                        token = None
                        if chunk is not None:
                            telemetry.record_reply(span, chunk, model.name, provider=req.provider)
                            token, last = each(chunk), chunk
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
                    if done:
                        return wire.reply_tokens(last)
            if stream.cancelled:
                raise streaming.cancelled_error()
            ended = f"node {q}: the model's stream ended before {read.end}"
            error: SvcError = Retryable(upstream_error(node, "connect", ended))
        except Retryable as e:  # a status or a stream error event worth another attempt
            error = e
        except (httpx.HTTPError, httpx.InvalidURL) as e:
            if stream.cancelled:
                raise streaming.cancelled_error() from None
            error = transport_error(node, endpoint, "upstream", e)
        # The client has the tokens sent: the call cannot start over after them.
        raise SvcError(error.status, error.code, error.message, error.details) if reached else error


def chat_streamed(
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

    def attempt(m: Model, timeout: float) -> tuple[str, Tokens]:
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

        used = _stream_chunks(node, m, messages, None, timeout, stream, each, too_large, "chat()")
        return "".join(text), used

    return model_calls.call(node, model, deadline, attempt)


def turn_streamed(
    node: str,
    model: Model,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None,
    deadline: float | None,
    stream: streaming.RunStream,
    feature: str,
) -> dict[str, Any]:
    """chat_turn() in a streamed run's `agent` or `llm` node: the reply's
    text is sent as tokens until its first tool-call piece, then withdrawn
    (`tokens_discarded`, `tool_calls`). Returns the assistant message a
    whole reply would have held (_Turn)."""
    too_large = upstream_error(
        node,
        "too_large",
        f"node {json.dumps(node)}: the model's reply is larger than {MAX_UPSTREAM_BYTES} bytes",
    )

    def attempt(m: Model, timeout: float) -> tuple[dict[str, Any], Tokens]:
        turn = _Turn()

        def each(chunk: Any) -> str | None:
            content = turn.add(chunk)
            if turn.size > MAX_UPSTREAM_BYTES:
                raise too_large
            if turn.calling:
                stream.discard("tool_calls")  # once: then nothing of the turn stands
                return None
            return content

        used = _stream_chunks(node, m, messages, tools, timeout, stream, each, too_large, feature)
        return turn.message(), used

    return model_calls.call(node, model, deadline, attempt)
