"""The anthropic provider (svc.anthropic, svc.wire) against a loopback stub of
the Messages API: the request each kind of call sends, the reply it reads,
whole and streamed, the usage, and the retries and fallbacks of model calls
across providers. Go's anthropic_test.go holds the same cases."""

import json

import pytest
from test_streaming import in_stream

from svc import run_agent, tool, usage, worker_agent
from svc.anthropic import messages_of
from svc.errors import SvcError
from svc.llm import chat, classify_intent
from svc.model_calls import Model, Retry
from svc.usage import Meter, Usage
from svc.wire import request

URL_ENV, KEY_ENV = "SVC_TEST_ANTHROPIC_URL", "SVC_TEST_ANTHROPIC_KEY"
CLAUDE = Model("claude-test", provider="anthropic", base_url_env=URL_ENV, api_key_env=KEY_ENV)


def messages_stub(stub, monkeypatch, respond):
    """A stub of the Messages API whose base URL (with a trailing /, which the
    request drops) and key are CLAUDE's variables."""
    s = stub(respond)
    monkeypatch.setenv(URL_ENV, s.url + "/")
    monkeypatch.setenv(KEY_ENV, "sk-ant-test")
    return s


def script(*answers):
    """A stub's respond: the answers in turn, the last one ever after; an
    answer that is a function gets the request's body."""
    answers = list(answers)

    def respond(req):
        answer = answers.pop(0) if len(answers) > 1 else answers[0]
        return answer(req.json()) if callable(answer) else answer

    return respond


def text_block(text):
    return {"type": "text", "text": text}


def tool_use(call_id, name, given):
    return {"type": "tool_use", "id": call_id, "name": name, "input": given}


def whole(stop, *blocks):
    """A whole Messages API reply: input 5 and output 7 tokens."""
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": list(blocks),
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 5, "output_tokens": 7},
    }


def sse(*events):
    """A Messages API stream: each event as its event: and data: lines."""
    lines = [f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events]
    return 200, "".join(lines).encode(), {"Content-Type": "text/event-stream"}


MESSAGE_START = {
    "type": "message_start",
    "message": {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "content": [],
        "model": "claude-test",
        "stop_reason": None,
        "usage": {"input_tokens": 5, "output_tokens": 1},
    },
}
PING = {"type": "ping"}


def block_delta(index, delta):
    return {"type": "content_block_delta", "index": index, "delta": delta}


def text_delta(index, text):
    return block_delta(index, {"type": "text_delta", "text": text})


def stream_error(kind, message):
    return {"type": "error", "error": {"type": kind, "message": message}}


def stream_of(stop, *blocks):
    """The events of what whole(stop, *blocks) says, as the API streams it: a
    text block in two deltas, a tool_use block's input in two pieces of JSON,
    and the output tokens (7) in message_delta."""
    events = [MESSAGE_START, PING]
    for i, block in enumerate(blocks):
        if block["type"] == "text":
            half = len(block["text"]) // 2
            events += [
                {"type": "content_block_start", "index": i, "content_block": text_block("")},
                text_delta(i, block["text"][:half]),
                text_delta(i, block["text"][half:]),
            ]
        else:
            given = json.dumps(block["input"])
            half = len(given) // 2
            events += [
                {
                    "type": "content_block_start",
                    "index": i,
                    "content_block": {**block, "input": {}},
                },
                block_delta(i, {"type": "input_json_delta", "partial_json": given[:half]}),
                block_delta(i, {"type": "input_json_delta", "partial_json": given[half:]}),
            ]
        events.append({"type": "content_block_stop", "index": i})
    events += [
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": 7},
        },
        {"type": "message_stop"},
    ]
    return events


def reply_of(stop, *blocks):
    """An answer with what whole(stop, *blocks) says: streamed when asked for a stream."""

    def answer(body):
        if body.get("stream"):
            return sse(*stream_of(stop, *blocks))
        return 200, json.dumps(whole(stop, *blocks)).encode()

    return answer


def tokens(events):
    return [data["delta"] for kind, _, data in events if kind == "token"]


def test_the_request_and_the_reply(stub, monkeypatch):
    s = messages_stub(
        stub, monkeypatch, script(reply_of("end_turn", text_block("Hello"), text_block(" there")))
    )
    model = Model(
        "claude-test",
        provider="anthropic",
        temperature=0.25,
        base_url_env=URL_ENV,
        api_key_env=KEY_ENV,
    )
    meter = Meter()
    with usage.metered(meter):
        assert chat("first", model, "Be brief.", "hi") == "Hello there"
    assert meter.usage == Usage(5, 7, 1, 1)
    sent = s.received[0]
    assert sent.path == "/v1/messages"
    assert sent.headers["x-api-key"] == "sk-ant-test"
    assert sent.headers["anthropic-version"] == "2023-06-01"
    assert sent.headers["content-type"] == "application/json"
    assert "authorization" not in sent.headers
    assert sent.json() == {
        "model": "claude-test",
        "max_tokens": 4096,
        "temperature": 0.25,
        "system": "Be brief.",
        "messages": [{"role": "user", "content": "hi"}],
    }


def test_the_provider_has_its_own_variables_and_base_url(monkeypatch):
    bare = Model("claude-test", provider="anthropic", max_tokens=100)
    assert (bare.base_url_env, bare.api_key_env) == ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY")
    assert (Model("m").base_url_env, Model("m").api_key_env) == (
        "OPENAI_BASE_URL",
        "OPENAI_API_KEY",
    )
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    sent = request("n", bare, [{"role": "user", "content": "hi"}], None)
    assert sent.endpoint == "https://api.anthropic.com/v1/messages"
    assert sent.headers == {"anthropic-version": "2023-06-01"}
    assert sent.body["max_tokens"] == 100
    with pytest.raises(ValueError, match="gemini"):
        Model("m", provider="gemini")


def test_the_runtimes_messages_in_the_apis_form():
    """Roles alternate, tool results are a user's blocks, the system is top-level."""
    call = {
        "id": "t1",
        "type": "function",
        "function": {"name": "lookup", "arguments": '{"word": "refund"}'},
    }
    no_arguments = {"id": "t2", "type": "function", "function": {"name": "now", "arguments": ""}}
    system, messages = messages_of(
        [
            {"role": "system", "content": "One."},
            {"role": "system", "content": "Two."},
            {"role": "user", "content": "task"},
            {"role": "assistant", "content": "Let me see.", "tool_calls": [call, no_arguments]},
            {"role": "tool", "tool_call_id": "t1", "content": "money back"},
            {"role": "tool", "tool_call_id": "t2", "content": "noon"},
            {"role": "user", "content": "and?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "t3", "type": "function", "function": {"name": "now", "arguments": "{}"}}
                ],
            },
        ]
    )
    assert system == "One.\n\nTwo."
    assert messages == [
        {"role": "user", "content": "task"},
        {
            "role": "assistant",
            "content": [
                text_block("Let me see."),
                tool_use("t1", "lookup", {"word": "refund"}),
                tool_use("t2", "now", {}),
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "money back"},
                {"type": "tool_result", "tool_use_id": "t2", "content": "noon"},
                text_block("and?"),
            ],
        },
        {"role": "assistant", "content": [tool_use("t3", "now", {})]},
    ]


def test_an_intent_classifiers_prompt_is_the_system(stub, monkeypatch):
    s = messages_stub(stub, monkeypatch, script(reply_of("end_turn", text_block(" Billing\n"))))
    intents = [{"name": "billing"}, {"name": "shipping"}]
    assert classify_intent("classify", CLAUDE, intents, "Where is my refund?") == "billing"
    assert s.received[0].json() == {
        "model": "claude-test",
        "max_tokens": 4096,
        "system": "Classify the user's message into exactly one of these intents:\n- billing\n"
        '- shipping\nAnswer with the intent\'s name only. If none of them fits, answer "other".',
        "messages": [{"role": "user", "content": "Where is my refund?"}],
    }


def test_an_agents_tool_use_round_whole_and_streamed(stub, monkeypatch):
    """The second request echoes the tool_use blocks and answers them with
    tool_result blocks of the same ids; the final text is the answer."""

    @tool
    def lookup(word: str) -> str:
        """Looks a word up."""
        return f"meaning of {word}"

    @worker_agent(name="helper", tools=["lookup"], model=CLAUDE)
    def helper():
        return "You help."

    calling = reply_of(
        "tool_use",
        text_block("Let me check."),
        tool_use("toolu_1", "lookup", {"word": "refund"}),
        tool_use("toolu_2", "lookup", {"word": "return"}),
    )
    answering = reply_of("end_turn", text_block("Refunds give money back."))
    s = messages_stub(stub, monkeypatch, script(calling, answering, calling, answering))
    meter = Meter()
    with usage.metered(meter):
        whole_answer = run_agent("What is a refund?", "helper")
        out, events = in_stream("agent", lambda: run_agent("What is a refund?", "helper"))
    assert whole_answer == out == "Refunds give money back."
    assert [(e[0], e[2]) for e in events] == [
        ("token", {"delta": "Let me"}),
        ("token", {"delta": " check."}),
        ("tokens_discarded", {"reason": "tool_calls"}),
        ("token", {"delta": "Refunds give"}),
        ("token", {"delta": " money back."}),
    ]
    assert meter.usage == Usage(20, 28, 4, 4)
    for second in (s.received[1].json(), s.received[3].json()):
        assert second["system"] == "You help."
        assert second["tools"] == [
            {
                "name": "lookup",
                "description": "Looks a word up.",
                "input_schema": {
                    "type": "object",
                    "properties": {"word": {"type": "string"}},
                    "required": ["word"],
                },
            }
        ]
        assert "tool_choice" not in second
        assert second["messages"] == [
            {"role": "user", "content": "What is a refund?"},
            {
                "role": "assistant",
                "content": [
                    text_block("Let me check."),
                    tool_use("toolu_1", "lookup", {"word": "refund"}),
                    tool_use("toolu_2", "lookup", {"word": "return"}),
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_1",
                        "content": "meaning of refund",
                    },
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_2",
                        "content": "meaning of return",
                    },
                ],
            },
        ]


def test_a_streamed_replys_text_deltas_are_tokens_and_its_usage_counts(stub, monkeypatch):
    s = messages_stub(stub, monkeypatch, script(reply_of("end_turn", text_block("Hello"))))
    meter = Meter()
    with usage.metered(meter):
        out, events = in_stream("llm", lambda: chat("first", CLAUDE, "", "hi"))
    assert out == "Hello" and tokens(events) == ["He", "llo"]
    assert meter.usage == Usage(5, 7, 1, 1)
    # No system prompt, no stream_options (an OpenAI field).
    assert s.received[0].json() == {
        "model": "claude-test",
        "max_tokens": 4096,
        "stream": True,
        "messages": [{"role": "user", "content": "hi"}],
    }


def failure(fn):
    with pytest.raises(SvcError) as e:
        fn()
    return e.value


def details(reason, status, attempts):
    d = {"node": "ask", "reason": reason, "model": "claude-test", "attempts": attempts}
    return {**d, "status": status} if status else d


HELLO = reply_of("end_turn", text_block("Hello"))


def test_retries_as_for_openai(stub, monkeypatch, waits):
    def ask():
        return chat("ask", CLAUDE, "", "hi")

    # 529 (overloaded) is retried.
    s = messages_stub(stub, monkeypatch, script((529, b'{"type": "error"}'), HELLO))
    assert ask() == "Hello" and len(s.received) == 2

    # An overloaded_error event before any text is retried, and so is a
    # stream cut before message_stop.
    for first in (
        sse(MESSAGE_START, stream_error("overloaded_error", "Overloaded")),
        sse(MESSAGE_START, PING),
    ):
        s = messages_stub(stub, monkeypatch, script(first, HELLO))
        out, events = in_stream("llm", ask)
        assert out == "Hello" and tokens(events) == ["He", "llo"] and len(s.received) == 2

    # A stream that ends inside an event's line is cut too: asked again
    # before any text, a connect failure after it (never invalid_json).
    cut = b'event: content_block_delta\ndata: {"type": "content_block_delta", "ind'
    for before in ((MESSAGE_START,), (MESSAGE_START, text_delta(0, "Hel"))):
        status, body, headers = sse(*before)
        s = messages_stub(stub, monkeypatch, script((status, body + cut, headers), HELLO))
        out, events = in_stream("llm", ask)
        if len(before) == 1:
            assert out == "Hello" and tokens(events) == ["He", "llo"] and len(s.received) == 2
        else:
            assert (out.details["reason"], len(s.received)) == ("connect", 1)
            assert out.message == 'node "ask": the model\'s stream ended before message_stop'

    # Once a token reached the client, an overloaded_error is final.
    cut = sse(MESSAGE_START, text_delta(0, "Hel"), stream_error("overloaded_error", "Overloaded"))
    messages_stub(stub, monkeypatch, script(cut, HELLO))
    e, events = in_stream("llm", ask)
    assert (e.status, e.code, e.details) == (502, "upstream_error", details("status", 529, 1))
    assert e.message == 'node "ask": the model\'s stream failed: overloaded_error: Overloaded'
    assert tokens(events) == ["Hel"]

    # Other error events, statuses that are not retryable, a reply without
    # content: one attempt.
    messages_stub(
        stub,
        monkeypatch,
        script(sse(MESSAGE_START, stream_error("api_error", "Internal server error")), HELLO),
    )
    e, _ = in_stream("llm", ask)
    assert (e.status, e.details) == (502, details("status", 0, 1))
    assert e.message == 'node "ask": the model\'s stream failed: api_error: Internal server error'
    for status in (400, 401, 403, 404):
        body = {"type": "error", "error": {"type": "invalid_request_error", "message": "no"}}
        s = messages_stub(stub, monkeypatch, script((status, json.dumps(body).encode()), HELLO))
        assert failure(ask).details == details("status", status, 1) and len(s.received) == 1
    no_content = json.dumps({"type": "message", "usage": {"input_tokens": 5}}).encode()
    messages_stub(stub, monkeypatch, script((200, no_content), HELLO))
    e = failure(ask)
    assert e.details == details("invalid_json", 0, 1)
    assert e.message == 'node "ask": the model reply has no choices[0].message.content'

    # A refusal is a reply.
    refusal = json.dumps(whole("refusal", text_block("I can't help with that."))).encode()
    s = messages_stub(stub, monkeypatch, script((200, refusal), HELLO))
    assert ask() == "I can't help with that." and len(s.received) == 1
    assert len(waits) == 4  # one per retry


def test_openai_falls_back_to_anthropic(stub, monkeypatch, waits):
    """A fallback may speak another provider: it gets its own request."""
    fallback = messages_stub(
        stub,
        monkeypatch,
        script((200, json.dumps(whole("end_turn", text_block("from claude"))).encode())),
    )
    primary = stub(lambda _req: (503, b"{}"))
    monkeypatch.setenv("SVC_TEST_OPENAI_URL", primary.url)
    model = Model(
        "gpt", base_url_env="SVC_TEST_OPENAI_URL", retry=Retry(max_attempts=2), fallbacks=(CLAUDE,)
    )
    meter = Meter()
    with usage.metered(meter):
        assert chat("ask", model, "", "hi") == "from claude"
    assert (len(primary.received), len(fallback.received)) == (2, 1)
    assert meter.usage == Usage(5, 7, 1, 3)
    sent = fallback.received[0]
    assert sent.path == "/v1/messages" and sent.headers["x-api-key"] == "sk-ant-test"
    assert "authorization" not in sent.headers
    assert sent.json() == {
        "model": "claude-test",
        "max_tokens": 4096,
        "messages": [{"role": "user", "content": "hi"}],
    }
