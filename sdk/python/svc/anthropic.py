"""The anthropic provider: Anthropic's Messages API, as go's anthropic.go
speaks it.

Only the wire format of one attempt differs from chat completions: the
runtime's messages, tools, replies and stream chunks stay chat-completions
shaped (agents, bound tools, supervisors and intent classifiers read them
as they are), and are converted here as a request is sent (`request`) and
as its reply is read (`completion`, `StreamReader`). Retries, fallbacks,
usage and budget (svc.model_calls.call) are the same as openai's; the HTTP
calls are svc.upstream's, so a failed status is the same upstream_error
whatever the error body says.
"""

from __future__ import annotations

import json
import os
from typing import Any

from svc.errors import SvcError, upstream_error
from svc.model_calls import Model, Retryable
from svc.upstream import resolve_endpoint

BASE_URL = "https://api.anthropic.com"
VERSION = "2023-06-01"  # the API version the mapping is written against
# The API requires max_tokens: what a model without max_tokens asks for.
MAX_TOKENS = 4096


def request(
    node: str,
    model: Model,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None,
    tool_choice: str | None = None,
) -> tuple[str, dict[str, str], dict[str, Any]]:
    """The endpoint, headers and body of a Messages API call: POST
    <base>/v1/messages (the base URL variable, else BASE_URL), the key as
    x-api-key (never Authorization) and anthropic-version; the body has the
    system messages as the top-level `system`, the other messages and the
    tools in the API's form, and `tool_choice` names the tool the reply must
    use (None: the model chooses)."""
    system, turns = messages_of(messages)
    body: dict[str, Any] = {
        "model": model.name,
        "max_tokens": model.max_tokens or MAX_TOKENS,
        "messages": turns,
    }
    if system:
        body["system"] = system
    if tools:
        body["tools"] = [_tool(t) for t in tools]
    if tool_choice is not None:
        body["tool_choice"] = {"type": "tool", "name": tool_choice}
    if model.temperature is not None:
        body["temperature"] = model.temperature
    base = os.environ.get(model.base_url_env) or BASE_URL
    endpoint = resolve_endpoint(node, base.rstrip("/") + "/v1/messages")
    headers = {"anthropic-version": VERSION}
    key = os.environ.get(model.api_key_env)
    if key:
        headers["x-api-key"] = key
    return endpoint, headers, body


def messages_of(messages: list[dict[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    """Chat-completions messages in the Messages API's form: the system
    messages' text joined by a blank line, and the other messages in order
    as content blocks: an assistant's text (when not empty) and a tool_use
    block per tool call; a tool message a user's tool_result block. The API
    wants the roles to alternate, so consecutive messages of one role (a
    turn's tool results) are one message; a user's lone text is written as
    a plain string."""
    system: list[str] = []
    turns: list[tuple[str, list[dict[str, Any]]]] = []
    for msg in messages:
        content = msg.get("content")
        text = content if isinstance(content, str) else ""
        role, blocks = "user", []
        if msg.get("role") == "system":
            system.append(text)
            continue
        if msg.get("role") == "assistant":
            role = "assistant"
            if text:
                blocks.append({"type": "text", "text": text})
            for call in msg.get("tool_calls") or ():
                function = call.get("function") or {}
                blocks.append(
                    {
                        "type": "tool_use",
                        "id": call.get("id"),
                        "name": function.get("name"),
                        "input": _tool_input(function.get("arguments")),
                    }
                )
        elif msg.get("role") == "tool":
            blocks.append(
                {"type": "tool_result", "tool_use_id": msg.get("tool_call_id"), "content": text}
            )
        else:
            blocks.append({"type": "text", "text": text})
        if turns and turns[-1][0] == role:
            turns[-1][1].extend(blocks)
        else:
            turns.append((role, blocks))
    out = []
    for role, blocks in turns:
        lone_text = role == "user" and len(blocks) == 1 and blocks[0]["type"] == "text"
        out.append({"role": role, "content": blocks[0]["text"] if lone_text else blocks})
    return "\n\n".join(system), out


def _tool_input(arguments: Any) -> dict[str, Any]:
    """A tool call's arguments as the object tool_use.input must be: an
    empty object when they are not one (no arguments: "" or null)."""
    try:
        value = json.loads(arguments) if isinstance(arguments, str) else None
    except ValueError:
        value = None
    return value if isinstance(value, dict) else {}


def _tool(tool: dict[str, Any]) -> dict[str, Any]:
    """A chat-completions function tool as the API's: its parameters are the input_schema."""
    function = tool.get("function") or {}
    return {
        "name": function.get("name"),
        "description": function.get("description"),
        "input_schema": function.get("parameters"),
    }


def completion(reply: Any) -> dict[str, Any]:
    """A Messages API reply as the chat completion the runtime reads: one
    choice whose message's content is the text blocks joined ("" when none)
    and whose tool_calls are the tool_use blocks, and the usage's input and
    output tokens as prompt and completion tokens. Every stop_reason is a
    reply (a refusal too: its text is the answer). A reply without a
    content list is a completion without choices: the caller fails it as
    invalid_json."""
    blocks = reply.get("content") if isinstance(reply, dict) else None
    if not isinstance(blocks, list):
        return {}
    text, calls = [], []
    for block in blocks:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            text.append(block["text"])
        elif block.get("type") == "tool_use":
            # Compact with keys sorted, as every target writes a tool_use input as arguments.
            arguments = json.dumps(
                block.get("input"), separators=(",", ":"), ensure_ascii=False, sort_keys=True
            )
            function = {"name": block.get("name"), "arguments": arguments}
            calls.append({"id": block.get("id"), "type": "function", "function": function})
    message: dict[str, Any] = {"role": "assistant", "content": "".join(text)}
    if calls:
        message["tool_calls"] = calls
    usage = reply.get("usage")
    usage = usage if isinstance(usage, dict) else {}
    return {
        "choices": [{"message": message}],
        "usage": {
            "prompt_tokens": usage.get("input_tokens"),
            "completion_tokens": usage.get("output_tokens"),
        },
    }


class StreamReader:
    """Reads one Messages API stream as the chat-completion chunks it stands
    for: a text delta is a content chunk, a tool_use block's start and its
    input_json deltas are pieces of a tool call at the block's index, and
    message_stop ends the stream with the usage chunk (input tokens from
    message_start, output tokens from the last message_delta). Other events
    (ping, a block's stop, ones the API adds later) carry nothing the
    runtime reads."""

    end = "message_stop"

    def __init__(self, node: str):
        self.node = node
        self.input: Any = None
        self.output: Any = None

    def __call__(self, data: bytes) -> tuple[dict[str, Any] | None, bool]:
        """The chunk an event's data stands for (None: none) and whether it
        ends the stream. An error event fails the attempt: overloaded_error
        as the 529 it is before a stream starts, so it is retried while no
        token reached the client; any other is not retried."""
        try:
            event = json.loads(data)
        except ValueError:
            event = None
        if not isinstance(event, dict):
            raise upstream_error(
                self.node,
                "invalid_json",
                f"node {json.dumps(self.node)}: an event of the model's stream is not "
                "a Messages API event",
            )
        kind = event.get("type")
        if kind == "message_start":
            self.input = _object(_object(event.get("message")).get("usage")).get("input_tokens")
        elif kind == "message_delta":
            self.output = _object(event.get("usage")).get("output_tokens")
        elif kind == "content_block_start":
            block = _object(event.get("content_block"))
            if block.get("type") == "tool_use":
                function = {"name": block.get("name"), "arguments": ""}
                piece = {"id": block.get("id"), "type": "function", "function": function}
                return _call_chunk(event, piece), False
        elif kind == "content_block_delta":
            delta = _object(event.get("delta"))
            if delta.get("type") == "text_delta":
                return _chunk({"content": delta.get("text")}), False
            if delta.get("type") == "input_json_delta":
                return _call_chunk(
                    event, {"function": {"arguments": delta.get("partial_json")}}
                ), False
        elif kind == "message_stop":
            usage = {"prompt_tokens": self.input, "completion_tokens": self.output}
            return {"choices": [], "usage": usage}, True
        elif kind == "error":
            raise self._failed(_object(event.get("error")))
        return None, False

    def _failed(self, error: dict[str, Any]) -> SvcError:
        message = (
            f"node {json.dumps(self.node)}: the model's stream failed: "
            f"{error.get('type')}: {error.get('message')}"
        )
        if error.get("type") == "overloaded_error":
            return Retryable(upstream_error(self.node, "status", message, status=529))
        return upstream_error(self.node, "status", message)


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _chunk(delta: dict[str, Any]) -> dict[str, Any]:
    """The chat-completion chunk carrying `delta`."""
    return {"choices": [{"delta": delta}]}


def _call_chunk(event: dict[str, Any], piece: dict[str, Any]) -> dict[str, Any]:
    """The chunk carrying one piece of the tool call at the event's block index."""
    return _chunk({"tool_calls": [{"index": event.get("index", 0), **piece}]})
