"""svc.upstream.post and resolve_url: the HTTP call and URL of HTTP tools,
model providers and the marketplace connectors, against a loopback stub."""

import json

import pytest

from svc.errors import SvcError
from svc.upstream import MAX_UPSTREAM_BYTES, post, post_json, resolve_url

BIG = b"x" * (MAX_UPSTREAM_BYTES + 1)


def failure(fn, *args, **kwargs):
    with pytest.raises(SvcError) as e:
        fn(*args, **kwargs)
    assert e.value.status == 502 and e.value.code == "upstream_error"
    assert e.value.details["node"] == "hook"
    return e.value


def test_post_sends_json_with_the_headers_as_they_are(stub, monkeypatch):
    s = stub(lambda _req: (200, b'{"ok": true, "n": 1.5}'))
    monkeypatch.setenv("SVC_TEST_POST_TOKEN", "secret")
    reply = post(
        "hook",
        s.url + "/in",
        {"q": "hé", "n": [1, None]},
        headers={"X-Token": "${SVC_TEST_POST_TOKEN}", "X-Plain": "v"},
        timeout=5,
        service="webhook",
    )
    assert reply == {"ok": True, "n": 1.5}
    req = s.received[0]
    assert req.path == "/in"
    assert req.body == '{"q":"hé","n":[1,null]}'.encode()
    assert req.headers["content-type"] == "application/json"
    assert req.headers["accept"] == "application/json"
    assert req.headers["x-token"] == "${SVC_TEST_POST_TOKEN}"  # not expanded
    assert req.headers["x-plain"] == "v"
    # post_json expands ${NAME} before calling post.
    post_json("hook", s.url, {"X-Token": "${SVC_TEST_POST_TOKEN}"}, {}, timeout=5, feature="t")
    assert s.received[1].headers["x-token"] == "secret"


@pytest.mark.parametrize(
    "answer",
    [(204, b""), (200, b"ok"), (202, b"accepted, not JSON"), (200, b"{} {}")],
    ids=["empty-204", "plain-ok", "plain-202", "not-json"],
)
def test_post_without_reading_the_reply_accepts_any_2xx(stub, answer):
    s = stub(lambda _req: answer)
    assert post("hook", s.url, {"text": "hi"}, timeout=5, read_reply=False) is None
    assert s.received[0].json() == {"text": "hi"}


@pytest.mark.parametrize(
    ("answer", "read_reply", "reason"),
    [
        ((503, b'{"error": "busy"}'), True, "status"),
        ((404, b""), False, "status"),
        ((200, b'{"ok": '), True, "invalid_json"),
        ((200, b"{} {}"), True, "invalid_json"),
        ((200, b"[NaN]"), True, "invalid_json"),
        ((200, b""), True, "invalid_json"),
        ((200, BIG), True, "too_large"),
        ((200, BIG), False, "too_large"),
        ((500, BIG), True, "too_large"),  # the size is checked before the status
        (("slow", 1.0, b"{}"), True, "timeout"),
        (("slow", 1.0, b"{}"), False, "timeout"),
        ("hangup", True, "connect"),
    ],
)
def test_post_failures_have_their_reasons(stub, answer, read_reply, reason):
    s = stub(lambda _req: answer)
    err = failure(post, "hook", s.url, {}, timeout=0.3, service="webhook", read_reply=read_reply)
    assert err.details["reason"] == reason
    assert ("status" in err.details) == (reason == "status")
    if reason == "status":
        assert err.details["status"] == answer[0]
        assert err.message == f'node "hook": the webhook answered {answer[0]}'
    assert "webhook" in err.message
    assert s.url not in err.message


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ((503, b""), 'node "hook": the webhook answered 503'),
        ((200, b"<html>"), 'node "hook": the webhook reply is not valid JSON'),
        ((200, BIG), f'node "hook": the webhook reply is larger than {MAX_UPSTREAM_BYTES} bytes'),
        (("slow", 1.0, b"{}"), 'node "hook": the webhook call timed out'),
    ],
)
def test_messages_name_the_node_and_the_service(stub, answer, message):
    s = stub(lambda _req: answer)
    assert failure(post, "hook", s.url, {}, timeout=0.3, service="webhook").message == message


def test_the_deadline_bounds_the_call(stub):
    s = stub(lambda _req: ("slow", 1.0, b"{}"))
    err = failure(post, "hook", s.url, {}, timeout=10, deadline=0.2)
    assert err.details["reason"] == "timeout"
    assert err.message == 'node "hook": the upstream call timed out'
    assert failure(post, "hook", s.url, {}, deadline=0).details["reason"] == "timeout"
    assert failure(post, "hook", s.url, {}, timeout=0).details["reason"] == "timeout"
    assert len(s.received) == 1  # no time left: nothing is sent


def test_connect_failures_never_repeat_the_url(stub):
    s = stub(lambda _req: (200, b"{}"))
    closed = s.url + "/secret-token"
    s.close()
    for endpoint in [closed, "http://127.0.0.1:notaport/secret-token"]:
        err = failure(post, "hook", endpoint, {}, timeout=2, service="webhook")
        assert err.details["reason"] == "connect", endpoint
        assert "secret-token" not in err.message and "webhook" in err.message


def test_an_unencodable_body_is_an_execution_error():
    for body in [{"x": {1, 2}}, {"x": float("nan")}]:
        with pytest.raises(SvcError) as e:
            post("hook", "http://127.0.0.1:9/", body, service="webhook")
        assert e.value.code == "execution_error" and e.value.details == {"node": "hook"}
        assert "cannot encode the webhook request" in e.value.message


def test_resolve_url(monkeypatch):
    monkeypatch.setenv("SVC_TEST_HOOK_URL", "https://hooks.example.com/T0/secret-token")
    state = {"id": 42}
    assert (
        resolve_url("hook", "env:SVC_TEST_HOOK_URL", service="webhook", state=state)
        == "https://hooks.example.com/T0/secret-token"
    )
    assert (
        resolve_url("hook", "http://h.example/{{ id }}", service="webhook", state=state)
        == "http://h.example/42"
    )
    # Without a state, a literal URL is taken as it is.
    assert resolve_url("hook", "http://h.example/{{id}}", service="webhook") == (
        "http://h.example/{{id}}"
    )


NOT_HTTP = "is not an http(s) URL"


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("env:SVC_TEST_HOOK_UNSET", "variable SVC_TEST_HOOK_UNSET is not set"),
        ("env:SVC_TEST_HOOK_EMPTY", "variable SVC_TEST_HOOK_EMPTY is not set"),
        ("env:SVC_TEST_HOOK_FTP", f"(the value of SVC_TEST_HOOK_FTP) {NOT_HTTP}"),
        ("env:SVC_TEST_HOOK_NOHOST", f"(the value of SVC_TEST_HOOK_NOHOST) {NOT_HTTP}"),
        ("env:SVC_TEST_HOOK_BAD", f"(the value of SVC_TEST_HOOK_BAD) {NOT_HTTP}"),
        ("ftp://example.com/x", f'("ftp://example.com/x") {NOT_HTTP}'),
        ("http://", f'("http://") {NOT_HTTP}'),
        ("{{id}}", f'("42") {NOT_HTTP}'),
    ],
)
def test_resolve_url_failures_are_connect_errors(monkeypatch, raw, message):
    monkeypatch.delenv("SVC_TEST_HOOK_UNSET", raising=False)
    monkeypatch.setenv("SVC_TEST_HOOK_EMPTY", "")
    monkeypatch.setenv("SVC_TEST_HOOK_FTP", "ftp://example.com/secret-token")
    monkeypatch.setenv("SVC_TEST_HOOK_NOHOST", "http:///secret-token")
    monkeypatch.setenv("SVC_TEST_HOOK_BAD", "http://[secret-token")
    err = failure(resolve_url, "hook", raw, service="webhook", state={"id": 42})
    assert err.details == {"node": "hook", "reason": "connect"}
    assert err.message == f'node "hook": the webhook URL {message}'
    assert "secret-token" not in err.message


def test_a_json_null_reply_is_returned(stub):
    s = stub(lambda _req: (200, json.dumps(None).encode()))
    assert post("hook", s.url, {}, timeout=5) is None
