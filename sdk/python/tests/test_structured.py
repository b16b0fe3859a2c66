"""Structured output (svc.structured; docs/ir-reference.md, "Structured
output"): the order in which the validator names a reply's first problem,
chat_json's asks against loopback stubs of both providers (the request's
format, the second ask, the failure and its usage), and a request's state
checked against a field's schema."""

import json

import pytest
from test_anthropic import CLAUDE, messages_stub, tool_use, whole
from test_anthropic import script as anthropic_script
from test_streaming import in_stream

from svc import usage
from svc.adapters import check_resume
from svc.errors import SvcError
from svc.runtime import Field, Model, Retry, StateSchema, chat_json
from svc.structured import problem
from svc.threads.store import Thread
from svc.usage import Meter


def obj(properties, **more):
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
        **more,
    }


INVOICE = obj(
    {
        "total": {"type": "integer", "description": "cents"},
        "lines": {
            "type": "array",
            "items": obj({"item": {"type": "string"}, "price": {"type": "number"}}),
        },
        "paid": {"type": "boolean"},
    }
)
GOOD = {"total": 300, "lines": [{"item": "tea", "price": 1.5}], "paid": False}


# --- the validator -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "found"),
    [
        (GOOD, None),
        ({**GOOD, "total": 3.0}, None),  # a number without a fraction is an integer
        ({**GOOD, "total": 3.5}, ("/total", "expected integer")),
        ({**GOOD, "total": True}, ("/total", "expected integer")),
        (
            {**GOOD, "lines": [{"item": "tea", "price": False}]},
            ("/lines/0/price", "expected number"),
        ),
        ({**GOOD, "total": None}, ("/total", "expected integer")),  # null fits nothing
        ([], ("", "expected object")),
        # The required names in order: a nested problem of an earlier one comes first...
        ({"total": "3", "paid": False}, ("/total", "expected integer")),
        ({"lines": [], "paid": False}, ("/total", "missing")),
        # ...and items by index, each checked whole before the next.
        (
            {**GOOD, "lines": [{"item": "a", "price": 1}, {"price": "x"}, {"item": 2}]},
            ("/lines/1/item", "missing"),
        ),
        # Unknown keys after every required one, the first in sorted order.
        ({**GOOD, "zeta": 1, "b~/c": 1, "alpha": 1}, ("/alpha", "not allowed")),
        ({**GOOD, "zeta": 1, "b~/c": 1, "paid": 1}, ("/paid", "expected boolean")),
        ({**GOOD, "zeta": 1, "b~/c": 1}, ("/b~0~1c", "not allowed")),
        ({**GOOD, "lines": [{"item": "a", "price": 1, "x": 0}]}, ("/lines/0/x", "not allowed")),
    ],
)
def test_the_first_problem(value, found):
    assert problem(INVOICE, value) == found


def test_a_key_is_not_allowed_only_where_the_schema_says_so():
    free = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}
    assert problem(free, {"a": "x", "b": 1}) is None
    assert problem({"type": "array"}, [1, "x"]) is None  # an array without items


# --- chat_json -------------------------------------------------------------------------


def completion(content):
    usage_ = {"prompt_tokens": 3, "completion_tokens": 4}
    body = {"choices": [{"message": {"role": "assistant", "content": content}}], "usage": usage_}
    return 200, json.dumps(body).encode()


@pytest.fixture
def openai(stub, monkeypatch):
    """A chat-completions stub answering `contents` in turn (the last one
    ever after) and a Model asking it."""

    def start(*contents, **options):
        answers = list(contents)

        def respond(_req):
            answer = answers.pop(0) if len(answers) > 1 else answers[0]
            return completion(answer) if isinstance(answer, str) else answer

        s = stub(respond)
        monkeypatch.setenv("STRUCTURED_URL", s.url)
        return s, Model("gpt-test", base_url_env="STRUCTURED_URL", **options)

    return start


def metered(fn):
    meter = Meter()
    with usage.metered(meter):
        try:
            return fn(), meter.usage.to_json()
        except SvcError as e:
            return e, meter.usage.to_json()


def test_a_reply_that_matches_is_the_value(openai):
    s, m = openai(json.dumps({"total": 3.0, "lines": [], "paid": True}))
    value, used = metered(lambda: chat_json("extract", m, "You read invoices.", "Tea 3", INVOICE))
    assert value == {"total": 3, "lines": [], "paid": True}
    assert isinstance(value["total"], int)  # written as 3, as go and java-svc write it
    assert used == {"inputTokens": 3, "outputTokens": 4, "modelCalls": 1, "attempts": 1}
    body = s.received[0].json()
    assert body["messages"] == [
        {"role": "system", "content": "You read invoices."},
        {"role": "user", "content": "Tea 3"},
    ]
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "structured_output", "strict": True, "schema": INVOICE},
    }
    assert "tools" not in body and "stream" not in body


def test_a_reply_that_does_not_match_is_asked_for_again(openai):
    first = '{"total": "3", "lines": [], "paid": true}'
    s, m = openai(first, json.dumps(GOOD))
    value, used = metered(lambda: chat_json("extract", m, " ", "Tea 3", INVOICE))
    assert value == GOOD
    assert (used["modelCalls"], used["attempts"]) == (2, 2)
    asked = [r.json() for r in s.received]
    assert asked[0]["messages"] == [{"role": "user", "content": "Tea 3"}]  # a blank system: none
    assert asked[1]["messages"] == [
        {"role": "user", "content": "Tea 3"},
        {"role": "assistant", "content": first},
        {
            "role": "user",
            "content": 'The reply did not match the JSON schema at "/total": expected integer. '
            "Answer again with only JSON that matches the schema.",
        },
    ]
    assert asked[1]["response_format"] == asked[0]["response_format"]


def test_two_replies_that_do_not_match_fail_the_run(openai):
    s, m = openai("Sure! Here it is.", '{"total": 1, "lines": [], "paid": false, "note": ""}')
    e, used = metered(lambda: chat_json("extract", m, "", "Tea 3", INVOICE))
    assert (e.status, e.code) == (502, "upstream_error")
    assert e.details == {
        "node": "extract",
        "reason": "invalid_output",
        "path": "/note",
        "problem": "not allowed",
        "model": "gpt-test",
    }
    assert e.message == (
        'node "extract": the model\'s reply did not match the output schema at "/note": not allowed'
    )
    assert (used["modelCalls"], used["attempts"]) == (2, 2)
    again = s.received[1].json()["messages"][-1]["content"]
    assert again.startswith('The reply did not match the JSON schema at "": not JSON.')


def test_each_ask_is_a_model_call_with_retries_and_fallbacks(stub, openai, monkeypatch, waits):
    """The second ask's failure names the fallback that answered it, of the
    other provider, which asks in its own form."""
    messages_stub(
        stub,
        monkeypatch,
        anthropic_script(
            (200, json.dumps(whole("tool_use", tool_use("t1", "structured_output", []))).encode())
        ),
    )
    s, m = openai("[]", (503, b"{}"), retry=Retry(max_attempts=2), fallbacks=(CLAUDE,))
    e, used = metered(lambda: chat_json("extract", m, "", "Tea 3", INVOICE))
    assert (e.details["path"], e.details["problem"]) == ("", "expected object")
    assert e.details["model"] == "claude-test"
    assert (used["modelCalls"], used["attempts"]) == (2, 4) and len(waits) == 1
    assert len(s.received) == 3


def test_anthropic_is_made_to_use_the_tool_whose_input_is_the_reply(stub, monkeypatch):
    bad = whole("tool_use", tool_use("t1", "structured_output", {"total": 3, "paid": False}))
    good = whole("tool_use", tool_use("t2", "structured_output", {**GOOD, "total": 3.0}))
    s = messages_stub(
        stub,
        monkeypatch,
        anthropic_script((200, json.dumps(bad).encode()), (200, json.dumps(good).encode())),
    )
    value, used = metered(
        lambda: chat_json("extract", CLAUDE, "You read invoices.", "Tea", INVOICE)
    )
    assert value == {**GOOD, "total": 3}
    assert used == {"inputTokens": 10, "outputTokens": 14, "modelCalls": 2, "attempts": 2}
    first, second = (r.json() for r in s.received)
    assert first["tools"] == [
        {
            "name": "structured_output",
            "description": "Answer with this tool's input.",
            "input_schema": INVOICE,
        }
    ]
    assert first["tool_choice"] == {"type": "tool", "name": "structured_output"}
    assert first["system"] == "You read invoices."
    assert "response_format" not in first
    assert second["messages"] == [
        {"role": "user", "content": "Tea"},
        {"role": "assistant", "content": [{"type": "text", "text": '{"paid":false,"total":3}'}]},
        {
            "role": "user",
            "content": 'The reply did not match the JSON schema at "/lines": missing. '
            "Answer again with only JSON that matches the schema.",
        },
    ]
    assert (second["tools"], second["tool_choice"]) == (first["tools"], first["tool_choice"])


def test_a_reply_without_the_tool_is_read_from_its_text(stub, monkeypatch):
    text = {"type": "text", "text": json.dumps(GOOD)}
    messages_stub(
        stub, monkeypatch, anthropic_script((200, json.dumps(whole("end_turn", text)).encode()))
    )
    assert chat_json("extract", CLAUDE, "", "Tea", INVOICE) == GOOD


def test_a_streamed_run_does_not_stream_it(openai):
    s, m = openai(json.dumps(GOOD))
    value, sent = in_stream("llm", lambda: chat_json("extract", m, "", "Tea", INVOICE))
    assert value == GOOD and sent == []
    assert "stream" not in s.received[0].json()


# --- state fields declared with their schema --------------------------------------------


SCHEMA = StateSchema([Field("question", "string"), Field("invoice", "object", schema=INVOICE)])


def test_a_request_value_is_checked_against_the_field_schema():
    assert SCHEMA.new_state({"invoice": GOOD})["invoice"] == GOOD
    with pytest.raises(SvcError) as e:
        SCHEMA.new_state({"invoice": {**GOOD, "lines": [{"item": "tea"}]}})
    assert (e.value.status, e.value.code) == (422, "invalid_state")
    assert e.value.details == {"field": "invoice", "path": "/lines/0/price"}
    assert e.value.message == (
        'state field "invoice" does not match its schema at "/lines/0/price": missing'
    )
    # The type check comes first, with its own message.
    with pytest.raises(SvcError) as e:
        SCHEMA.new_state({"invoice": []})
    assert e.value.details == {"field": "invoice"}


def test_a_resume_value_is_checked_against_it_too():
    paused = Thread("t1", node="review", field="invoice")
    check_resume(SCHEMA, paused, GOOD)
    with pytest.raises(SvcError) as e:
        check_resume(SCHEMA, paused, {**GOOD, "paid": "yes"})
    assert e.value.details == {"field": "invoice", "path": "/paid"}
    assert e.value.message == (
        'the resume value for state field "invoice" does not match its schema at "/paid": '
        "expected boolean"
    )
