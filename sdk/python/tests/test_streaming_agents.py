"""Streamed agents (the repository's docs/http-contract.md, "Streaming",
"Agents and tool-calling `llm` nodes"): each worker turn streams its text
until the reply calls tools, a supervisor withdraws a member's answer before
it runs the next, an answer that arrives whole is one token, and what a node
writes is the concatenation of the deltas it sent after its last
`tokens_discarded`. A loopback chat-completions stub streams the replies."""

import contextlib
import json
import threading
import time

import pytest
from fastapi.testclient import TestClient
from test_agents import REMOTE_CONFIG
from test_streaming import SSE, asked_for_streams, in_stream, outline, streamed, wait_for

from svc import agent, run_agent, streaming, supervisor, tool, worker_agent
from svc.agents import Worker, run_worker
from svc.errors import SvcError
from svc.llm import chat_turn
from svc.model_calls import Model
from svc.runtime import CompiledGraph, Field, StateSchema, text
from svc.server import create_app, events

KEY = "agents-key-7c2a"
MODEL = Model("stub-model", base_url_env="AGENT_MODEL_URL", api_key_env="AGENT_MODEL_KEY")
ASK = [{"role": "user", "content": "What is a refund?"}]
NOT_A_CHUNK = "a chunk of the model's stream is not a chat-completion chunk"


def tc(call_id: str, name: str, arguments: dict) -> dict:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


def chunk(delta: dict, wait: float = 0, **choice) -> tuple[float, bytes]:
    """A stub stream's piece: one chunk with `delta`, sent after `wait` seconds."""
    return wait, json.dumps({"choices": [{"index": 0, "delta": delta, **choice}]}).encode()


def chunks_of(message: dict) -> list:
    """A whole message as a provider streams it: the role, the text in two
    pieces, each call's head, then the calls' arguments in halves
    interleaved across calls (head0, head1, a0, b0, a1, b1), the finish."""
    pieces = [chunk({"role": "assistant"})]
    content = message.get("content")
    if content:
        half = len(content) // 2
        pieces += [chunk({"content": content[:half]}), chunk({"content": content[half:]})]
    calls = message.get("tool_calls") or []
    for i, call in enumerate(calls):
        head = {**call, "index": i, "function": {**call["function"], "arguments": ""}}
        pieces.append(chunk({"tool_calls": [head]}))
    arguments = [call["function"]["arguments"] for call in calls]
    for part in (0, 1):
        for i, a in enumerate(arguments):
            piece = a[: len(a) // 2] if part == 0 else a[len(a) // 2 :]
            pieces.append(chunk({"tool_calls": [{"index": i, "function": {"arguments": piece}}]}))
    pieces.append(chunk({}, finish_reason="tool_calls" if calls else "stop"))
    return pieces


def answering(script):
    """A stub model: `script(request body)` gives the whole message (streamed
    when the request asks for a stream) or a stub answer of its own."""

    def respond(req):
        body = req.json()
        message = script(body)
        if isinstance(message, tuple):
            return message
        if body.get("stream"):
            return "stream", chunks_of(message), True
        return 200, json.dumps({"choices": [{"index": 0, "message": message}]}).encode()

    return respond


@pytest.fixture
def model(stub, monkeypatch):
    def start(script):
        s = stub(answering(script) if callable(script) else lambda req: script)
        monkeypatch.setenv("AGENT_MODEL_URL", s.url + "/v1")
        return s

    return start


def written(sent: list) -> str:
    """What the events (type, node, data) say the node writes: its deltas
    after its last tokens_discarded."""
    deltas: list[str] = []
    for type_, _, data in sent:
        if type_ == "token":
            deltas.append(data["delta"])
        elif type_ == "tokens_discarded":
            deltas = []
    return "".join(deltas)


def kinds(sent: list) -> list[str]:
    return [t if t == "token" else f"{t}:{d['reason']}" for t, _, d in sent]


def system(body: dict) -> str:
    return body["messages"][0]["content"]


def tool_results(body: dict) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


# --- a worker and its tools ------------------------------------------------------------

PREAMBLE = {
    "role": "assistant",
    "content": "Let me check.",
    "tool_calls": [
        tc("h1", "lookup", {"word": "refund"}),
        tc("h2", "lookup", {"word": "return"}),
    ],
}
ANSWER = "helped: refund: found + return: found"


def register_helper(max_turns: int = 10):
    @tool
    def lookup(word: str) -> str:
        """Looks a word up."""
        return f"{word}: found"

    @worker_agent(model=MODEL, tools=["lookup"], description="helps", max_turns=max_turns)
    def helper():
        return "You help."


def helping(first: dict = PREAMBLE):
    """The helper's model: `first`, then an answer quoting the tool results."""

    def script(body):
        found = tool_results(body)
        return {"role": "assistant", "content": "helped: " + " + ".join(found)} if found else first

    return script


# --- chat_turn -----------------------------------------------------------------------


def test_a_turn_streams_its_text_and_puts_interleaved_tool_calls_back_together(model):
    s = model(helping())
    tools = [{"type": "function", "function": {"name": "lookup"}}]
    message, sent = in_stream("agent", lambda: chat_turn("helper", MODEL, ASK, tools=tools))
    assert message == PREAMBLE
    assert sent == [
        ("token", "node", {"delta": "Let me"}),
        ("token", "node", {"delta": " check."}),
        ("tokens_discarded", "node", {"reason": "tool_calls"}),
    ]
    body = s.received[0].json()
    assert body["stream"] is True and body["tools"] == tools
    assert s.received[0].headers["accept"] == "text/event-stream"


def test_a_turn_without_text_has_no_content_and_sends_nothing(model):
    model(helping({**PREAMBLE, "content": None}))
    message, sent = in_stream("agent", lambda: chat_turn("helper", MODEL, ASK, tools=None))
    assert message == {**PREAMBLE, "content": None} and sent == []


def test_tool_call_pieces_are_joined_by_index_as_providers_send_them(model):
    pieces = [
        chunk({"role": "assistant", "content": None}),
        chunk({"tool_calls": [{"index": 0, "id": "", "function": {"name": "look"}}]}),
        chunk({"tool_calls": [{"index": 0, "id": "c1", "type": "function", "function": None}]}),
        chunk({"tool_calls": [{"index": 0, "id": "c9", "function": {"name": "up"}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"q":'}}]}),
        chunk(
            {"content": "not sent", "tool_calls": [{"index": 0, "function": {"arguments": "1}"}}]}
        ),
        # Whole calls without an index take their position in the chunk; null is skipped.
        chunk({"tool_calls": [None, {"id": "c2", "function": {"name": "other", "arguments": ""}}]}),
        chunk({"tool_calls": [{"index": 5, "function": {"name": "no_id"}}]}),
        chunk({}, finish_reason="tool_calls"),
    ]
    model(("stream", pieces, True))
    message, sent = in_stream("agent", lambda: chat_turn("helper", MODEL, ASK, tools=None))
    assert message == {
        "role": "assistant",
        "content": "not sent",
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "lookup", "arguments": '{"q":1}'},
            },
            {"id": "c2", "type": "function", "function": {"name": "other", "arguments": ""}},
            {"type": "function", "function": {"name": "no_id"}},
        ],
    }
    assert sent == []  # the text came after the first tool-call piece


@pytest.mark.parametrize(
    ("kind", "muted"), [("function", False), ("subgraph", False), ("agent", True)]
)
def test_a_turn_elsewhere_is_a_json_call(model, kind, muted):
    s = model(helping())

    def ask():
        with streaming.muted() if muted else contextlib.nullcontext():
            return chat_turn("helper", MODEL, ASK, tools=None)

    assert in_stream(kind, ask) == (PREAMBLE, [])
    assert ask() == PREAMBLE  # not in a streamed run
    assert asked_for_streams(s) == [False, False]


def bad(*deltas) -> tuple:
    return "stream", [chunk(d) for d in deltas], True


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        *[
            (bad({"tool_calls": [{"index": index}]}), "invalid_json")
            for index in ("0", -1, True, 1.5, 1 << 31)
        ],
        (bad({"tool_calls": [{"index": 0, "function": 3}]}), "invalid_json"),
        (bad({"tool_calls": [{"index": 0, "function": {"arguments": {}}}]}), "invalid_json"),
        (bad({"tool_calls": [{"index": 0, "id": 3}]}), "invalid_json"),
        (bad({"tool_calls": [3]}), "invalid_json"),
        (bad({"tool_calls": {}}), "invalid_json"),
        (bad({"content": 3}), "invalid_json"),
        (("stream", [(0, b'{"choices": [3]}')], True), "invalid_json"),
        (("stream", [(0, b"{not json")], True), "invalid_json"),
        (("stream", [chunk({"content": "Hel"})], False), "connect"),
        (
            bad(
                {"tool_calls": [{"index": 0, "function": {"arguments": "x" * (3 << 20)}}]},
                {"content": "y" * (11 << 17)},
            ),
            "too_large",
        ),
        ((500, b"{}"), "status"),
        (("stream", [chunk({"content": "t"}, 0.1)] * 20, True), "timeout"),
    ],
)
def test_a_streamed_turn_fails_with_the_contracts_reasons(model, waits, answer, reason):
    model(answer)
    deadline = 0.35 if reason == "timeout" else None
    started = time.monotonic()
    error, _ = in_stream(
        "agent", lambda: chat_turn("helper", MODEL, ASK, tools=None, deadline=deadline)
    )
    assert isinstance(error, SvcError), error
    assert (error.status, error.details["node"], error.details["reason"]) == (502, "helper", reason)
    if reason == "invalid_json":
        assert error.message == f'node "helper": {NOT_A_CHUNK}'
    if reason == "too_large":
        assert error.message == 'node "helper": the model\'s reply is larger than 4194304 bytes'
    assert time.monotonic() - started < 1.5


# --- workers -------------------------------------------------------------------------


def test_a_worker_streams_its_reply_and_withdraws_a_preamble(model):
    register_helper()
    s = model(helping())
    answer, sent = in_stream("agent", lambda: run_agent("What is a refund?", "helper"))
    assert answer == ANSWER == written(sent)
    assert kinds(sent) == ["token", "token", "tokens_discarded:tool_calls", "token", "token"]
    assert asked_for_streams(s) == [True, True]
    # The JSON run asks the same: the pieces were put back together exactly.
    assert run_agent("What is a refund?", "helper") == ANSWER
    assert asked_for_streams(s)[2:] == [False, False]
    assert s.received[3].json()["messages"] == s.received[1].json()["messages"]
    assert s.received[1].json()["messages"][2] == PREAMBLE


def test_a_worker_without_a_preamble_streams_just_its_reply(model):
    register_helper()
    model(helping({**PREAMBLE, "content": None}))
    answer, sent = in_stream("agent", lambda: run_agent("What is a refund?", "helper"))
    assert answer == ANSWER == written(sent) and kinds(sent) == ["token", "token"]


def test_a_tool_calling_llm_node_streams_its_workers_turns(model):
    register_helper()
    model(helping())
    worker = Worker("node", "You help.", tools=("lookup",), model=MODEL)
    answer, sent = in_stream("llm", lambda: run_worker(worker, "What is a refund?"))
    assert answer == ANSWER == written(sent)
    assert kinds(sent) == ["token", "token", "tokens_discarded:tool_calls", "token", "token"]


def test_max_turns_still_bounds_a_streamed_worker(model):
    register_helper(max_turns=2)
    s = model(lambda body: PREAMBLE)  # it never answers
    error, sent = in_stream("agent", lambda: run_agent("x", "helper"))
    assert error.details == {"node": "helper", "reason": "max_turns"}
    assert len(s.received) == 2 and kinds(sent)[-1] == "tokens_discarded:tool_calls"


# --- supervisors and whole answers ---------------------------------------------------


def register_team():
    @worker_agent(model=MODEL, description="drafts")
    def drafter():
        return "You draft."

    @worker_agent(model=MODEL, description="polishes")
    def polisher():
        return "You polish."

    @supervisor(members=["drafter", "polisher"], model=MODEL)
    def team():
        return "Route the work."


def teamwork(body):
    """The team's model: routing is never streamed (a streamed one fails);
    the drafter, then the polisher, then finish."""
    said, user = system(body), body["messages"][-1]["content"]
    if said.startswith("Route the work."):
        if body.get("stream"):
            return 500, b"{}"
        route = "finish" if "polisher answered" in user else None
        route = route or ("polisher" if "drafter answered" in user else "drafter")
        return {"role": "assistant", "content": route}
    if said == "You draft.":
        return {"role": "assistant", "content": "draft 1"}
    return {"role": "assistant", "content": "polished"}


def test_a_supervisor_withdraws_a_members_answer_before_the_next(model):
    register_team()
    s = model(teamwork)
    answer, sent = in_stream("agent", lambda: run_agent("write", "team"))
    assert answer == "polished" == written(sent)
    assert kinds(sent) == ["token", "token", "tokens_discarded:next_member", "token", "token"]
    assert asked_for_streams(s) == [False, True, False, True, False]


def test_whole_answers_are_one_token(model, stub, tmp_path, monkeypatch):
    peer = stub(lambda req: (200, json.dumps({"result": {"answer": "42 EUR"}}).encode()))
    (tmp_path / "application.yaml").write_text(REMOTE_CONFIG.format(url=peer.url))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("BILLING_KEY", "billing-secret")

    @agent(transport="remote", service="billing", output_field="answer")
    def billing_peer():
        """Answers billing questions."""

    @agent
    def shout(task: str) -> str:
        return task.upper()

    @agent
    def hush(task: str) -> str:
        return ""

    @supervisor(members=["billing_peer", "hush", "shout"], router="custom")
    def desk(state):
        return ["billing_peer", "shout", "hush", "finish"][state["round"]]

    assert in_stream("agent", lambda: run_agent("hi", "billing_peer")) == (
        "42 EUR",
        [("token", "node", {"delta": "42 EUR"})],
    )
    assert in_stream("agent", lambda: run_agent("hi", "hush")) == ("", [])
    answer, sent = in_stream("agent", lambda: run_agent("hi", "desk"))
    assert answer == "" == written(sent)
    assert kinds(sent) == [
        "token",
        "tokens_discarded:next_member",
        "token",
        "tokens_discarded:next_member",
    ]


def test_code_of_tools_routers_and_local_agents_sends_nothing(model):
    register_team()

    @tool
    def consult(question: str) -> str:
        """Asks the drafter."""
        return run_agent(question, "drafter")

    @worker_agent(model=MODEL, tools=["consult"])
    def asker():
        return "You ask."

    @agent
    def relay(task: str) -> str:
        return run_agent(task, "drafter")

    @supervisor(members=["relay"], router="custom")
    def desk(state):
        run_agent("which?", "drafter")
        return ["relay", "finish"][state["round"]]

    def script(body):
        if system(body) == "You ask.":
            found = tool_results(body)
            if found:
                return {"role": "assistant", "content": "asked: " + found[0]}
            return {
                "role": "assistant",
                "content": None,
                "tool_calls": [tc("a1", "consult", {"question": "which?"})],
            }
        return teamwork(body)

    s = model(script)
    answer, sent = in_stream("agent", lambda: run_agent("x", "asker"))
    assert answer == "asked: draft 1" == written(sent) and kinds(sent) == ["token", "token"]
    assert asked_for_streams(s) == [True, False, True]  # the drafter in the tool: JSON

    answer, sent = in_stream("agent", lambda: run_agent("x", "desk"))
    assert answer == "draft 1" == written(sent)
    assert sent == [("token", "node", {"delta": "draft 1"})]  # the relay's answer, whole
    assert asked_for_streams(s)[3:] == [False, False, False]


# --- cancel --------------------------------------------------------------------------


def cancelled_after(seconds: float, agent_name: str, at: list):
    """Runs the agent while another thread cancels the run after `seconds`
    (`at` gets the time)."""
    stream = streaming.active()

    def cancel():
        at.append(time.monotonic())
        stream.cancel()

    threading.Timer(seconds, cancel).start()
    return run_agent("x", agent_name)


def test_a_cancel_mid_turn_cuts_the_call_and_ends_the_loop(model):
    register_helper()
    s = model(("stream", [chunk({"content": f"t{i} "}, 0.1) for i in range(40)], True))
    at: list[float] = []
    started = time.monotonic()
    error, sent = in_stream("agent", lambda: cancelled_after(0.35, "helper", at))
    assert isinstance(error, SvcError) and error.code == "client_closed_request"
    assert time.monotonic() - started < 1.5 and sent and kinds(sent) == ["token"] * len(sent)
    wait_for(lambda: s.cut, 3)
    assert s.cut[0] - at[0] < 1
    assert len(s.received) == 1


def test_a_cancel_while_a_supervisor_routes_cuts_the_routing_call(model):
    register_team()
    s = model(("stream", [], True, 5))  # no answer for 5 s: a JSON call waits
    at: list[float] = []
    error, sent = in_stream("agent", lambda: cancelled_after(0.2, "team", at))
    assert isinstance(error, SvcError) and error.code == "client_closed_request"
    assert sent == [] and asked_for_streams(s) == [False]
    wait_for(lambda: s.cut, 3)
    assert s.cut[0] - at[0] < 1


def test_a_cancelled_worker_makes_no_further_tool_or_model_call(model):
    ran = []

    @tool
    def stop(word: str) -> str:
        """Stops the run."""
        ran.append(word)
        streaming.active().cancel()
        return "stopped"

    @worker_agent(model=MODEL, tools=["stop"])
    def stopper():
        return "You stop."

    calls = [tc("s1", "stop", {"word": "a"}), tc("s2", "stop", {"word": "b"})]
    s = model(lambda body: {"role": "assistant", "content": None, "tool_calls": calls})
    error, _ = in_stream("agent", lambda: run_agent("x", "stopper"))
    assert isinstance(error, SvcError) and error.code == "client_closed_request"
    assert ran == ["a"] and len(s.received) == 1


# --- served ------------------------------------------------------------------------


class AskGraph(CompiledGraph):
    """One node, chosen by `mode`: the agent node `ask` (the helper), the
    agent node `ask_team` (the team), or the tool-calling llm node `look_up`."""

    name = "ask_graph"
    schema = StateSchema(
        [
            Field("question", "string", required=True),
            Field("mode", "string", default="ask"),
            Field("reply", "string"),
        ]
    )
    max_steps = 2
    request_timeout_ms = 20000
    node_names = ("ask", "ask_team", "look_up")
    node_kinds = {"ask": "agent", "ask_team": "agent", "look_up": "llm"}  # noqa: RUF012

    def run(self, state):
        self.check(0)
        node = state["mode"]

        def body(s):
            task = text(s["question"])
            if node == "look_up":
                worker = Worker("look_up", "You help.", tools=("lookup",), model=MODEL)
                return {"reply": run_worker(worker, task, deadline=self.remaining())}
            agent_name = "helper" if node == "ask" else "team"
            return {"reply": run_agent(task, agent_name, deadline=self.remaining())}

        self.step(state, node, body, native=False)
        return state


@pytest.mark.parametrize("mode", ["ask", "ask_team", "look_up"])
def test_a_served_agent_node_writes_what_its_tokens_say(model, monkeypatch, mode):
    register_helper()
    register_team()

    def script(body):
        return helping()(body) if system(body) == "You help." else teamwork(body)

    model(script)
    monkeypatch.setenv("SVC_API_KEY", KEY)
    app = create_app(AskGraph(), config={"graph": {"streaming": True}}, framework="starlette")
    with TestClient(app) as c:
        state = {"question": "What is a refund?", "mode": mode}
        r = c.post("/invoke", json={"state": state}, headers={"X-API-Key": KEY})
        assert r.status_code == 200, r.text
        found = streamed(c, state, headers={**SSE, "X-API-Key": KEY})
    assert found[-1]["data"]["result"] == r.json()["result"]
    finished = next(e for e in found if e["type"] == "node_finished")
    sent = [(e["type"], e["node"], e["data"]) for e in found if "node" in e]
    assert finished["data"]["patch"] == {"reply": written(sent)}
    discards = [e["data"]["reason"] for e in found if e["type"] == "tokens_discarded"]
    assert (
        discards
        == {"ask": ["tool_calls"], "ask_team": ["next_member"], "look_up": ["tool_calls"]}[mode]
    )
    assert set(outline(found)[1:-1]) == {
        f"{t}:{mode}" for t in ("node_started", "token", "tokens_discarded", "node_finished")
    }


def test_the_run_log_takes_tokens_discarded():
    run = events.Run("r1")
    run.emit("tokens_discarded", "ask", {"reason": "tool_calls"})
    assert list(run.events) == [
        {
            "run_id": "r1",
            "seq": 1,
            "type": "tokens_discarded",
            "node": "ask",
            "data": {"reason": "tool_calls"},
        }
    ]
