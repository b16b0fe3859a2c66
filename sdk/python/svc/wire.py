"""What one attempt of a model call sends, and what its reply reports.

The runtime's messages, tools and replies are chat-completions shaped; a
request is built here for the model it asks (a fallback sends its own name,
base URL and key).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from svc.model_calls import Model, Tokens
from svc.upstream import DEFAULT_BASE_URL, resolve_endpoint
from svc.usage import count


@dataclass(frozen=True)
class Request:
    """One attempt's request: where it goes, its headers and its JSON body."""

    endpoint: str
    headers: dict[str, str]
    body: dict[str, Any]


def request(
    node: str, model: Model, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None
) -> Request:
    """A chat-completions request: POST <base>/chat/completions (the base URL
    variable, else DEFAULT_BASE_URL), Authorization when the key variable is
    set; the body has model, messages, tools (only when there are any),
    temperature (when set) and max_tokens (when positive)."""
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
    return Request(endpoint, headers, body)


def reply_tokens(reply: Any) -> Tokens:
    """The tokens a chat completion (or a stream's usage chunk) reports:
    usage.prompt_tokens and usage.completion_tokens, 0 for what it leaves out."""
    usage = reply.get("usage") if isinstance(reply, dict) else None
    if not isinstance(usage, dict):
        return 0, 0
    return count(usage.get("prompt_tokens")), count(usage.get("completion_tokens"))
