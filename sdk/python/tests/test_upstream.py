import json

import pytest

from svc.errors import SvcError
from svc.runtime import (
    HttpTool,
    Model,
    as_list,
    assistant_message,
    call_http_tool,
    chat,
    classify_intent,
    text_items,
)

BIG = b'"' + b"a" * (4 * 1024 * 1024 + 16) + b'"'


def tool_reply(req):
    mode = req.json().get("mode")
    return {
        "slow": ("slow", 1.0, b"{}"),
        "status": (503, b'{"error": "down"}'),
        "invalid_json": (200, b"{not json"),
        "nan": (200, b"[NaN]"),
        "too_large": (200, BIG),
        "too_large_status": (500, BIG),
        "hangup": "hangup",
    }.get(mode, (200, json.dumps({"mode": mode, "source": "stub"}).encode()))


def upstream_failure(fn, *args, **kwargs):
    with pytest.raises(SvcError) as e:
        fn(*args, **kwargs)
    assert e.value.status == 502 and e.value.code == "upstream_error"
    return e.value.details


def test_http_tool_result_and_request(stub, monkeypatch):
    s = stub(tool_reply)
    monkeypatch.setenv("TOOL_URL", s.url + "/tool")
    monkeypatch.setenv("TEAM_TOKEN", "t-1")
    tool = HttpTool("env:TOOL_URL", headers={"X-Team": "${TEAM_TOKEN}-${NOT_SET_ANYWHERE}"})
    assert call_http_tool("lookup", tool, {"mode": "ok"}) == {"mode": "ok", "source": "stub"}
    req = s.received[0]
    assert req.path == "/tool" and req.json() == {"mode": "ok"}
    assert req.headers["content-type"] == "application/json"
    assert req.headers["x-team"] == "t-1-"


@pytest.mark.parametrize(
    ("mode", "reason"),
    [
        ("slow", "timeout"),
        ("status", "status"),
        ("invalid_json", "invalid_json"),
        ("nan", "invalid_json"),
        ("too_large", "too_large"),
        ("too_large_status", "too_large"),  # size is checked before the status, as in Go
        ("hangup", "connect"),
    ],
)
def test_http_tool_failures(stub, mode, reason):
    s = stub(tool_reply)
    tool = HttpTool(s.url + "/tool", timeout_ms=300)
    details = upstream_failure(call_http_tool, "lookup", tool, {"mode": mode})
    assert details["node"] == "lookup" and details["reason"] == reason
    assert ("status" in details) == (reason == "status")
    if reason == "status":
        assert details["status"] == 503


def test_the_run_deadline_bounds_the_call(stub):
    s = stub(tool_reply)
    tool = HttpTool(s.url, timeout_ms=10000)
    details = upstream_failure(call_http_tool, "lookup", tool, {"mode": "slow"}, deadline=0.2)
    assert details["reason"] == "timeout"
    assert upstream_failure(call_http_tool, "n", tool, {}, deadline=0)["reason"] == "timeout"


@pytest.mark.parametrize(
    ("endpoint", "message"),
    [
        ("env:SVC_TEST_UNSET_URL", "SVC_TEST_UNSET_URL is not set"),
        ("ftp://example.com/x", "is not an http"),
        ("not a url", "is not an http"),
        ("http://", "is not an http"),
    ],
)
def test_bad_endpoints_are_connect_errors(endpoint, message, monkeypatch):
    monkeypatch.delenv("SVC_TEST_UNSET_URL", raising=False)
    with pytest.raises(SvcError, match=message) as e:
        call_http_tool("t", HttpTool(endpoint), {})
    assert e.value.details == {"node": "t", "reason": "connect"}


def test_connection_refused_is_connect(stub):
    s = stub(tool_reply)
    url = s.url
    s.close()
    assert upstream_failure(call_http_tool, "t", HttpTool(url), {})["reason"] == "connect"


def test_unencodable_input_is_an_execution_error(stub):
    s = stub(tool_reply)
    with pytest.raises(SvcError) as e:
        call_http_tool("t", HttpTool(s.url), {"x": {1, 2}})
    assert e.value.code == "execution_error" and e.value.details == {"node": "t"}


def chat_reply(req):
    body = req.json()
    text = json.dumps(body["messages"])
    if "llm-status" in text:
        return (500, b'{"error": {"message": "provider down"}}')
    if "no-choices" in text:
        return (200, b'{"choices": []}')
    if "not-json" in text:
        return (200, b"<html>")
    content = "first\n\n  second\n" if "Ideas" in text else "stub answer"
    return (200, json.dumps({"choices": [{"message": {"content": content}}]}).encode())


def test_chat(stub, monkeypatch):
    s = stub(chat_reply)
    monkeypatch.setenv("STUB_BASE", s.url + "/v1/")
    monkeypatch.setenv("STUB_KEY", "stub-key")
    model = Model(
        "stub-model",
        temperature=0.2,
        max_tokens=50,
        base_url_env="STUB_BASE",
        api_key_env="STUB_KEY",
    )
    assert chat("ask", model, "  ", "Q: ok") == "stub answer"
    req = s.received[0]
    assert req.path == "/v1/chat/completions"
    assert req.headers["authorization"] == "Bearer stub-key"
    assert req.json() == {
        "model": "stub-model",
        "messages": [{"role": "user", "content": "Q: ok"}],
        "temperature": 0.2,
        "max_tokens": 50,
    }
    monkeypatch.delenv("STUB_KEY")
    plain = Model("m", base_url_env="STUB_BASE", api_key_env="STUB_KEY")
    assert as_list(chat("ideas", plain, "You list.", "Ideas please")) == ["first", "second"]
    req = s.received[1]
    assert "authorization" not in req.headers
    assert req.json() == {
        "model": "m",
        "messages": [
            {"role": "system", "content": "You list."},
            {"role": "user", "content": "Ideas please"},
        ],
    }


@pytest.mark.parametrize(
    ("prompt", "reason"),
    [("llm-status", "status"), ("no-choices", "invalid_json"), ("not-json", "invalid_json")],
)
def test_chat_failures(stub, monkeypatch, waits, prompt, reason):
    s = stub(chat_reply)
    monkeypatch.setenv("STUB_BASE", s.url)
    details = upstream_failure(chat, "ask", Model("m", base_url_env="STUB_BASE"), "", prompt)
    assert details["reason"] == reason and details["node"] == "ask"
    # A 500 is asked again (three attempts by default); a reply it cannot read is not.
    attempts = 3 if reason == "status" else 1
    assert (details["model"], details["attempts"], len(s.received)) == ("m", attempts, attempts)


def test_chat_with_an_invalid_base_url(monkeypatch):
    monkeypatch.setenv("STUB_BASE", "nowhere")
    details = upstream_failure(chat, "ask", Model("m", base_url_env="STUB_BASE"), "", "hi")
    assert details["reason"] == "connect"


def test_list_shape_helpers():
    assert as_list('["a", "b"]') == ["a", "b"]
    assert as_list(' [1, {"k": 2}] ') == [1, {"k": 2}]
    assert as_list("first\n\n  second  \n") == ["first", "second"]
    assert as_list("[not json") == ["[not json"]
    assert as_list('{"a": 1}') == ['{"a": 1}']
    assert as_list("") == []
    assert text_items([1, "a", None, {"k": True}]) == ["1", "a", "", '{"k":true}']
    assert assistant_message("hi") == [{"role": "assistant", "content": "hi"}]


INTENTS = [
    {
        "name": "billing",
        "description": "Invoices, refunds and payments",
        "examples": ["Where is my invoice?", "I was charged twice"],
    },
    {"name": "Tech_Support", "examples": ["The app crashes"]},
    {"name": "sales"},
]


def replying(content):
    """A chat-completions stub whose every reply is `content`."""
    body = json.dumps({"choices": [{"message": {"role": "assistant", "content": content}}]})
    return lambda _req: (200, body.encode())


def test_classify_intent_names_the_declared_intent(stub, monkeypatch):
    s = stub(replying(" Billing\n"))
    monkeypatch.setenv("STUB_BASE", s.url + "/v1")
    model = Model("m", base_url_env="STUB_BASE")
    assert classify_intent("triage", model, INTENTS, "Why was I charged twice?") == "billing"
    req = s.received[0]
    assert req.path == "/v1/chat/completions"
    system, user = req.json()["messages"]
    assert user == {"role": "user", "content": "Why was I charged twice?"}
    assert system["role"] == "system"
    assert system["content"] == (
        "Classify the user's message into exactly one of these intents:\n"
        "- billing: Invoices, refunds and payments\n"
        '  Examples: "Where is my invoice?"; "I was charged twice"\n'
        "- Tech_Support\n"
        '  Examples: "The app crashes"\n'
        "- sales\n"
        'Answer with the intent\'s name only. If none of them fits, answer "other".'
    )


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("tech_support", "Tech_Support"),  # the name as declared
        ("SALES", "sales"),
        ("It is billing.", "unsure"),
        ("", "unsure"),
        ("weather", "unsure"),
    ],
)
def test_classify_intent_falls_back_on_any_other_reply(stub, monkeypatch, reply, expected):
    s = stub(replying(reply))
    monkeypatch.setenv("STUB_BASE", s.url)
    model = Model("m", base_url_env="STUB_BASE")
    assert classify_intent("triage", model, INTENTS, "hm", fallback="unsure") == expected
    assert 'answer "unsure"' in s.received[0].json()["messages"][0]["content"]


def test_classify_intent_failures(stub, monkeypatch, waits):
    s = stub(replying(None))
    monkeypatch.setenv("STUB_BASE", s.url)
    model = Model("m", base_url_env="STUB_BASE")
    details = upstream_failure(classify_intent, "triage", model, INTENTS, "hi")
    assert details == {"node": "triage", "reason": "invalid_json", "model": "m", "attempts": 1}
    down = stub(lambda _req: (500, b"{}"))
    monkeypatch.setenv("STUB_BASE", down.url)
    details = upstream_failure(classify_intent, "triage", model, INTENTS, "hi")
    assert (details["reason"], details["attempts"]) == ("status", 3)
    for intents in ([], [{"description": "no name"}]):
        with pytest.raises(SvcError) as e:
            classify_intent("triage", model, intents, "hi")
        assert e.value.code == "execution_error" and e.value.details == {"node": "triage"}
