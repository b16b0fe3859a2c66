"""What one attempt of a model call sends, in its provider's wire format,
and how its reply reads.

The runtime's messages, tools, replies and stream chunks are
chat-completions shaped whatever the provider: a request carries them in
the wire format of the model it asks (a fallback sends its own name, base
URL and key, and may speak another provider), and its reply, whole
(`completion`) or streamed (`stream_reader`), is read back as a chat
completion. `openai` is chat completions itself; `anthropic` is
svc.anthropic's.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Protocol

from svc import anthropic
from svc.model_calls import Model, Tokens
from svc.upstream import DEFAULT_BASE_URL, loads_strict, resolve_endpoint
from svc.usage import count


class StreamReader(Protocol):
    """Reads the data of each event of a streamed reply, in order."""

    end: str  # what the last event is called, for a stream cut before it

    def __call__(self, data: bytes) -> tuple[Any, bool]:
        """The chat-completion chunk the event stands for (None: none) and
        whether it ends the stream. A ValueError: the data is no chunk."""
        ...


@dataclass(frozen=True)
class Request:
    """One attempt's request: its provider, where it goes, its headers and its JSON body."""

    provider: str
    endpoint: str
    headers: dict[str, str]
    body: dict[str, Any]


# The name of a structured call's schema (openai) or of its one tool (anthropic).
STRUCTURED_OUTPUT = "structured_output"


def request(
    node: str,
    model: Model,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None,
    schema: dict[str, Any] | None = None,
) -> Request:
    """The request of `model` for `messages` and `tools`. A chat-completions
    request is POST <base>/chat/completions (the base URL variable, else
    DEFAULT_BASE_URL), with Authorization when the key variable is set; its
    body has model, messages, tools (only when there are any), temperature
    (when set) and max_tokens (when positive).

    With `schema` (a structured call, svc.structured) the reply is asked for
    as JSON of that schema in the form of the model's provider, so that a
    fallback of the other provider asks in its own: a strict json_schema
    response_format, or the Messages API's one tool the reply must use
    (its input is the reply)."""
    if model.provider == "anthropic":
        choice = None
        if schema is not None:
            function = {
                "name": STRUCTURED_OUTPUT,
                "description": "Answer with this tool's input.",
                "parameters": schema,
            }
            tools, choice = [{"type": "function", "function": function}], STRUCTURED_OUTPUT
        return Request("anthropic", *anthropic.request(node, model, messages, tools, choice))
    body: dict[str, Any] = {"model": model.name, "messages": messages}
    if tools:
        body["tools"] = tools
    if schema is not None:
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": STRUCTURED_OUTPUT, "strict": True, "schema": schema},
        }
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
    return Request("openai", endpoint, headers, body)


def completion(req: Request, reply: Any) -> Any:
    """A whole reply to `req` as the chat completion it stands for."""
    return anthropic.completion(reply) if req.provider == "anthropic" else reply


def stream_body(req: Request) -> dict[str, Any]:
    """The body of `req` asking for a stream. Chat completions also ask for
    the usage chunk, which ends the stream with the whole reply's usage."""
    body = {**req.body, "stream": True}
    if req.provider == "openai":
        body["stream_options"] = {"include_usage": True}
    return body


class _Chunks:
    """An OpenAI-compatible stream: the data of each event is a chunk, up
    to the data [DONE] that ends the stream."""

    end = "[DONE]"

    def __call__(self, data: bytes) -> tuple[Any, bool]:
        if data == b"[DONE]":
            return None, True
        return loads_strict(data), False


def stream_reader(req: Request, node: str) -> StreamReader:
    """What reads the events of `req`'s streamed reply (see StreamReader);
    failures it reports name `node`."""
    return anthropic.StreamReader(node) if req.provider == "anthropic" else _Chunks()


def reply_tokens(reply: Any) -> Tokens:
    """The tokens a chat completion (or a stream's last chunk) reports:
    usage.prompt_tokens and usage.completion_tokens, 0 for what it leaves out."""
    usage = reply.get("usage") if isinstance(reply, dict) else None
    if not isinstance(usage, dict):
        return 0, 0
    return count(usage.get("prompt_tokens")), count(usage.get("completion_tokens"))
