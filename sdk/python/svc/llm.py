"""The model calls the runtime makes: `chat` (an `llm` node; a structured
one is svc.structured's `chat_json`), `chat_message` and `chat_turn` (an
agent's worker, a tool-calling `llm` node, a supervisor's routing) and
`classify_intent` (an `intent_classifier` node).

Each is one svc.model_calls.call: its attempts, their retries and the
model's fallbacks, counted into the run's usage (svc.usage). Each attempt
is one request (svc.wire) over svc.upstream's HTTP client. In a streamed
run (svc.streaming) `chat()` of an `llm` node and `chat_turn()` ask for a
stream and send the text as `token` events as it arrives (svc.model_stream).
"""

from __future__ import annotations

import json
from typing import Any

from svc import model_calls, streaming, telemetry, wire
from svc.errors import execution_error, upstream_error
from svc.model_calls import Model, Tokens
from svc.model_stream import chat_streamed, turn_streamed
from svc.upstream import loads_strict, post_json
from svc.values import text


def completion(
    node: str,
    model: Model,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None,
    timeout: float,
    feature: str,
    schema: dict[str, Any] | None = None,
) -> tuple[Any, Tokens]:
    """One request for a whole reply (an attempt of model_calls.call, within
    `timeout` seconds), asked for as JSON of `schema` when given (wire.request);
    returns the reply as a chat completion, whatever the provider, and the
    tokens it reports."""
    req = wire.request(node, model, messages, tools, schema)
    with telemetry.chat_span(model.name, model.provider) as span:
        raw = post_json(node, req.endpoint, req.headers, req.body, timeout=timeout, feature=feature)
        reply = wire.completion(req, raw)
        telemetry.record_reply(span, reply, model.name, messages, provider=req.provider)
    return reply, wire.reply_tokens(reply)


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
    the assistant message a whole reply would have held: role, content
    (None without text) and its tool_calls put back together by index.
    Errors name `node` (the agent); the tokens are the graph node's."""
    stream = streaming.replies()
    if stream is None:
        return chat_message(node, model, messages, tools=tools, deadline=deadline, feature=feature)
    return turn_streamed(node, model, messages, tools, deadline, stream, feature)


def first_message(reply: Any) -> Any:
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
    """One model call (with `tools` offered, if any); returns the
    reply's `choices[0].message`, which may hold `tool_calls`."""

    def attempt(m: Model, timeout: float) -> tuple[dict[str, Any], Tokens]:
        reply, used = completion(node, m, messages, tools, timeout, feature)
        message = first_message(reply)
        if not isinstance(message, dict):
            raise upstream_error(
                node,
                "invalid_json",
                f"node {json.dumps(node)}: the model reply has no choices[0].message",
            )
        return message, used

    return model_calls.call(node, model, deadline, attempt)


def _chat_text(
    node: str, model: Model, messages: list[dict[str, Any]], deadline: float | None, feature: str
) -> str:
    """One model call without tools; returns the reply's
    choices[0].message.content, checked within the call so that its failure
    names the model and attempts too (model_calls.call)."""

    def attempt(m: Model, timeout: float) -> tuple[str, Tokens]:
        reply, used = completion(node, m, messages, None, timeout, feature)
        message = first_message(reply)
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, str):
            raise upstream_error(
                node,
                "invalid_json",
                f"node {json.dumps(node)}: the model reply has no choices[0].message.content",
            )
        return content, used

    return model_calls.call(node, model, deadline, attempt)


def prompt(system: str, user: str) -> list[dict[str, Any]]:
    """The messages of an `llm` node's prompt: its parts that are not blank."""
    messages = []
    if system.strip():
        messages.append({"role": "system", "content": system})
    if user.strip():
        messages.append({"role": "user", "content": user})
    return messages


def chat(node: str, model: Model, system: str, user: str, *, deadline: float | None = None) -> str:
    """Sends the non-empty prompt parts and returns the reply text (streamed,
    in a streamed run's `llm` node)."""
    messages = prompt(system, user)
    stream = streaming.current(("llm",))
    if stream is not None:
        return chat_streamed(node, model, messages, deadline, stream)
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
