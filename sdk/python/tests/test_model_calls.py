"""Model calls' retries, timeouts and fallbacks (svc.model_calls; the rules of
the repository's spec, "Model calls"), against a loopback chat-completions
stub. The waits between attempts are recorded instead of waited (the `waits`
fixture) but in the tests that say they wait for real; times are checked only
as lower bounds."""

import email.utils
import json
import threading
import time

import pytest
from test_streaming import in_stream
from test_streaming_agents import chunk

from svc import model_calls, streaming
from svc.errors import SvcError
from svc.llm import chat, chat_message, chat_turn, classify_intent
from svc.model_calls import Model, Retry

ASK = [{"role": "user", "content": "hi"}]


def reply(content="stub answer"):
    return 200, json.dumps({"choices": [{"message": {"content": content}}]}).encode()


def script(*answers):
    """A stub's respond: the answers in turn, the last one ever after."""
    answers = list(answers)
    return lambda _req: answers.pop(0) if len(answers) > 1 else answers[0]


@pytest.fixture
def model(stub, monkeypatch):
    """A stub answering `answers` (see script) and a Model asking it, with
    `options` (timeout_ms, retry, ...)."""

    def start(*answers, **options):
        s = stub(script(*answers))
        monkeypatch.setenv("MODEL_URL", s.url + "/v1")
        return s, Model("m", base_url_env="MODEL_URL", **options)

    return start


def failure(fn, *args, **kwargs) -> dict:
    with pytest.raises(SvcError) as e:
        fn(*args, **kwargs)
    assert (e.value.status, e.value.code) == (502, "upstream_error"), e.value.to_body()
    return e.value.details


def test_the_defaults_and_zero_as_the_default():
    assert Model("m") == Model("m", timeout_ms=0, retry=Retry(0, 0, 0))
    assert (Model("m").timeout_ms, Model("m").retry) == (60000, Retry(3, 500, 8000))
    assert Model("m", fallbacks=[Model("f")]).fallbacks == (Model("f"),)
    for wrong in (lambda: Retry(11), lambda: Retry(-1), lambda: Retry(max_delay_ms=-5)):
        with pytest.raises(ValueError):
            wrong()
    with pytest.raises(ValueError, match="nested fallbacks"):
        Model("m", fallbacks=(Model("f", fallbacks=(Model("g"),)),))


def test_a_429_with_retry_after_is_asked_again_after_it(stub, monkeypatch):
    """A real wait: the second attempt comes at least Retry-After later."""
    arrived: list[float] = []
    answers = script((429, b"{}", {"Retry-After": "1"}), reply())

    def respond(req):
        arrived.append(time.monotonic())
        return answers(req)

    s = stub(respond)
    monkeypatch.setenv("MODEL_URL", s.url)
    m = Model("m", base_url_env="MODEL_URL", retry=Retry(max_delay_ms=2000))
    asked: list[float] = []
    slept = model_calls.retry_sleep
    monkeypatch.setattr(model_calls, "retry_random", lambda: 0.0)
    monkeypatch.setattr(model_calls, "retry_sleep", lambda d: (asked.append(d), slept(d)))
    assert chat("ask", m, "", "hi") == "stub answer"
    assert asked == [1.0] and len(s.received) == 2
    assert arrived[1] - arrived[0] >= 1.0


def test_a_503_every_time_spends_the_attempts(model, waits):
    s, m = model((503, b"{}"))
    details = failure(chat, "ask", m, "", "hi")
    assert details == {
        "node": "ask",
        "reason": "status",
        "status": 503,
        "model": "m",
        "attempts": 3,
    }
    assert len(s.received) == 3 and len(waits) == 2


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
def test_a_status_of_a_refused_request_is_not_asked_again(model, waits, status):
    s, m = model((status, b'{"error": {"message": "no"}}'), reply())
    details = failure(chat_message, "ask", m, ASK)
    assert (details["status"], details["model"], details["attempts"]) == (status, "m", 1)
    assert len(s.received) == 1 and waits == []


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"{not json", "invalid_json"),
        (b'{"choices": []}', "invalid_json"),
        (b'"' + b"a" * (4 << 20) + b'"', "too_large"),
    ],
)
def test_a_reply_that_cannot_be_read_is_not_asked_again(model, waits, body, reason):
    s, m = model((200, body), reply())
    details = failure(chat, "ask", m, "", "hi")
    assert (details["reason"], details["attempts"]) == (reason, 1)
    assert len(s.received) == 1 and waits == []


def test_the_fallback_answers_once_the_primary_is_spent(stub, monkeypatch, waits):
    primary = stub(lambda _req: (503, b"{}"))
    backup = stub(lambda _req: reply("from the backup"))
    monkeypatch.setenv("PRIMARY_URL", primary.url)
    monkeypatch.setenv("PRIMARY_KEY", "key-p")
    monkeypatch.setenv("BACKUP_URL", backup.url)
    monkeypatch.setenv("BACKUP_KEY", "key-b")
    fallback = Model("backup", max_tokens=9, base_url_env="BACKUP_URL", api_key_env="BACKUP_KEY")
    m = Model(
        "primary",
        base_url_env="PRIMARY_URL",
        api_key_env="PRIMARY_KEY",
        retry=Retry(max_attempts=2),
        fallbacks=(fallback,),
    )
    assert chat("ask", m, "", "hi") == "from the backup"
    assert [r.json()["model"] for r in primary.received] == ["primary", "primary"]
    assert [r.headers["authorization"] for r in primary.received] == ["Bearer key-p"] * 2
    (asked,) = backup.received
    assert asked.json() == {"model": "backup", "messages": ASK, "max_tokens": 9}
    assert asked.headers["authorization"] == "Bearer key-b"
    assert len(waits) == 1  # between the primary's attempts; none before the fallback


def test_the_last_model_that_failed_names_the_error(stub, monkeypatch, waits):
    primary = stub(lambda _req: (503, b"{}"))
    backup = stub(lambda _req: (502, b"{}"))
    monkeypatch.setenv("PRIMARY_URL", primary.url)
    monkeypatch.setenv("BACKUP_URL", backup.url)
    m = Model(
        "primary",
        base_url_env="PRIMARY_URL",
        fallbacks=(Model("backup", base_url_env="BACKUP_URL", retry=Retry(max_attempts=2)),),
    )
    details = failure(classify_intent, "triage", m, [{"name": "billing"}], "hi")
    assert (details["status"], details["model"], details["attempts"]) == (502, "backup", 5)
    assert (len(primary.received), len(backup.received), len(waits)) == (3, 2, 3)


def test_a_failure_that_is_not_retried_asks_no_fallback(stub, monkeypatch, waits):
    primary = stub(lambda _req: (401, b"{}"))
    backup = stub(lambda _req: reply())
    monkeypatch.setenv("PRIMARY_URL", primary.url)
    monkeypatch.setenv("BACKUP_URL", backup.url)
    m = Model(
        "primary", base_url_env="PRIMARY_URL", fallbacks=(Model("b", base_url_env="BACKUP_URL"),)
    )
    details = failure(chat, "ask", m, "", "hi")
    assert (details["status"], details["model"], details["attempts"]) == (401, "primary", 1)
    assert backup.received == []


def test_an_attempt_past_timeout_ms_is_cut_and_asked_again(model, waits):
    s, m = model(("slow", 1.0, reply("late")[1]), reply("in time"), timeout_ms=200)
    started = time.monotonic()
    # Had the first attempt not been cut at 200 ms, its late answer would be the result.
    assert chat("ask", m, "", "hi") == "in time"
    assert time.monotonic() - started >= 0.15  # a lower bound, with room for the clocks
    assert len(s.received) == 2 and len(waits) == 1


def test_attempts_that_all_time_out_end_with_the_timeout(model, waits):
    s, m = model(("slow", 1.0, b"{}"), timeout_ms=100, retry=Retry(max_attempts=2))
    details = failure(chat_message, "ask", m, ASK)
    assert (details["reason"], details["attempts"], len(s.received)) == ("timeout", 2, 2)


def test_a_cut_connection_is_asked_again(model, waits):
    s, m = model("hangup", reply())
    assert chat("ask", m, "", "hi") == "stub answer"
    assert len(s.received) == 2 and len(waits) == 1


def test_no_connection_is_asked_again(model, waits):
    s, m = model(reply())
    s.close()
    details = failure(chat, "ask", m, "", "hi")
    assert (details["reason"], details["attempts"], len(waits)) == ("connect", 3, 2)


def test_an_unusable_base_url_is_not_asked_again(monkeypatch, waits):
    monkeypatch.setenv("MODEL_URL", "ftp://nowhere")
    details = failure(chat, "ask", Model("m", base_url_env="MODEL_URL"), "", "hi")
    assert (details["reason"], details["attempts"], waits) == ("connect", 1, [])


def test_the_waits_have_full_jitter_below_the_exponential_cap(model, waits):
    retry = Retry(max_attempts=7, initial_delay_ms=100, max_delay_ms=1000)
    _, m = model((503, b"{}"), retry=retry)
    failure(chat, "ask", m, "", "hi")  # the real random source
    caps = [0.1, 0.2, 0.4, 0.8, 1.0, 1.0]
    assert len(waits) == len(caps)
    assert all(0 <= w <= cap for w, cap in zip(waits, caps, strict=True)), waits


def test_the_wait_is_the_random_share_of_the_cap(model, waits, monkeypatch):
    monkeypatch.setattr(model_calls, "retry_random", lambda: 0.5)
    _, m = model((500, b"{}"), retry=Retry(max_attempts=5, initial_delay_ms=100, max_delay_ms=500))
    failure(chat, "ask", m, "", "hi")
    assert waits == [0.05, 0.1, 0.2, 0.25]


@pytest.mark.parametrize(
    ("retry_after", "wait"),
    [
        ("1", 1.0),
        ("0.5", 0.5),
        ("30", 2.0),  # capped at max_delay_ms
        (3600, 2.0),  # an HTTP date an hour from now, capped
        (-3600, 0.2),  # an hour ago: 0, and the jitter is longer
        ("0.1", 0.2),  # shorter than the jitter
        ("soon", 0.2),  # unreadable: the jitter
    ],
)
def test_retry_after_is_obeyed_when_longer_up_to_max_delay(
    model, waits, monkeypatch, retry_after, wait
):
    if isinstance(retry_after, int):  # made now: the test may run long after its collection
        retry_after = email.utils.formatdate(time.time() + retry_after, usegmt=True)
    monkeypatch.setattr(model_calls, "retry_random", lambda: 0.5)
    retry = Retry(max_attempts=2, initial_delay_ms=400, max_delay_ms=2000)
    _, m = model((429, b"{}", {"Retry-After": retry_after}), reply(), retry=retry)
    assert chat("ask", m, "", "hi") == "stub answer"
    assert waits == [wait]


def test_no_attempt_starts_when_its_wait_would_end_past_the_deadline(model, waits):
    s, m = model((503, b"{}", {"Retry-After": "5"}))
    details = failure(chat, "ask", m, "", "hi", deadline=2)
    assert (details["status"], details["attempts"], len(s.received), waits) == (503, 1, 1, [])


def test_the_deadline_bounds_each_attempt(model, waits):
    s, m = model(("slow", 1.0, b"{}"))
    started = time.monotonic()
    details = failure(chat, "ask", m, "", "hi", deadline=0.3)
    assert time.monotonic() - started >= 0.25  # a lower bound, with room for the clocks
    # The attempt ended with the run's time: no wait, no other attempt.
    assert (details["reason"], details["attempts"], len(s.received), waits) == ("timeout", 1, 1, [])


def test_a_call_whose_deadline_passed_makes_no_attempt(model, waits):
    s, m = model(reply())
    details = failure(chat, "ask", m, "", "hi", deadline=0)
    assert details == {"node": "ask", "reason": "timeout", "model": "m", "attempts": 0}
    assert s.received == []


@pytest.mark.parametrize(
    "call",
    [
        lambda m: chat("n", m, "", "hi"),
        lambda m: chat_message("n", m, ASK),
        lambda m: chat_turn("n", m, ASK, tools=None),
        lambda m: classify_intent("n", m, [{"name": "stub answer"}], "hi"),
    ],
)
def test_every_model_call_is_retried(model, waits, call):
    s, m = model((503, b"{}"), reply())
    assert call(m) in ("stub answer", {"content": "stub answer"})
    assert len(s.received) == 2


# --- streamed calls ------------------------------------------------------------------


def test_a_stream_refused_before_its_first_token_is_asked_again(model, waits):
    s, m = model((503, b"{}"), ("stream", [(0, "Hel"), (0, "lo")], True))
    result, sent = in_stream("llm", lambda: chat("ask", m, "", "hi"))
    assert result == "Hello" and len(s.received) == 2
    assert [d["delta"] for t, _, d in sent if t == "token"] == ["Hel", "lo"]


def test_a_stream_cut_after_its_first_token_is_not(model, waits):
    s, m = model(("stream", [(0, "Hel")], False), ("stream", [(0, "Hello")], True))
    error, sent = in_stream("llm", lambda: chat("ask", m, "", "hi"))
    assert isinstance(error, SvcError) and error.details["reason"] == "connect"
    assert (error.details["attempts"], len(s.received), waits) == (1, 1, [])
    assert [t for t, _, _ in sent] == ["token"]


HEL = b'data: {"choices": [{"delta": {"content": "Hel"}}]}\n\n'


@pytest.mark.parametrize(
    "cut",
    [b'data: {"choices": [{"delta": {"cont', b"data: [DO", b"data: {}\n\n", HEL[:-2]],
)
def test_a_stream_cut_inside_a_line_is_a_cut_connection(model, waits, cut):
    """A stream that ends inside a line, or without [DONE], is asked again
    before its first token (a line without its end is no event); never
    invalid_json."""
    s, m = model((200, cut, {"Content-Type": "text/event-stream"}), ("stream", [(0, "Hi")], True))
    result, sent = in_stream("llm", lambda: chat("ask", m, "", "hi"))
    assert result == "Hi" and len(s.received) == 2
    assert [d["delta"] for t, _, d in sent if t == "token"] == ["Hi"]

    s, m = model((200, HEL + cut, {"Content-Type": "text/event-stream"}), reply())
    error, sent = in_stream("llm", lambda: chat("ask", m, "", "hi"))
    assert isinstance(error, SvcError) and error.details["reason"] == "connect"
    assert error.message == 'node "ask": the model\'s stream ended before [DONE]'
    assert len(s.received) == 1


def test_a_turn_cut_before_any_token_is_asked_again(model, waits):
    """A tool-call piece sends no token: the turn may start over."""
    call = {"index": 0, "id": "c1", "type": "function", "function": {"name": "f"}}
    cut = ("stream", [chunk({"tool_calls": [call]})], False)
    s, m = model(cut, ("stream", [chunk({"content": "Done."})], True))
    result, sent = in_stream("agent", lambda: chat_turn("helper", m, ASK, tools=None))
    assert result == {"role": "assistant", "content": "Done."}
    assert [t for t, _, _ in sent] == ["token"] and len(s.received) == 2


def test_a_cancel_ends_the_wait_at_once(model):
    """The real wait of a streamed run, cut short by its cancel: the run
    stops (client_closed_request) with no further attempt."""
    s, m = model((503, b"{}", {"Retry-After": "30"}), retry=Retry(max_delay_ms=30000))
    stream = streaming.RunStream(lambda *event: None)
    stream.begin("ask", "llm")
    threading.Timer(0.2, stream.cancel).start()
    token = streaming.enter(stream)
    started = time.monotonic()
    try:
        with pytest.raises(SvcError) as e:
            chat("ask", m, "", "hi")
    finally:
        streaming.leave(token)
    assert e.value.code == "client_closed_request" and len(s.received) == 1
    assert time.monotonic() - started < 20  # far from the 30 s asked for
