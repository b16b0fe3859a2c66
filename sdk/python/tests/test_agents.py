"""Worker agents against a loopback stub of the chat-completions API that
scripts its replies in the standard `tool_calls` format."""

from __future__ import annotations

import json

import pytest

from svc import SvcError, components, persona, run_agent, tool, worker_agent
from svc.agents import tool_schema
from svc.errors import RegistrationError
from svc.upstream import Model

MODEL = Model("stub-model", base_url_env="STUB_BASE", api_key_env="STUB_KEY")


def call(call_id: str, name: str, arguments: dict) -> dict:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


def scripted(*messages: dict):
    """A stub that answers the n-th request with the n-th message."""
    replies = iter(messages)

    def respond(_req):
        return (200, json.dumps({"choices": [{"message": next(replies)}]}).encode())

    return respond


@pytest.fixture
def model_stub(stub, monkeypatch):
    def start(*messages):
        s = stub(scripted(*messages))
        monkeypatch.setenv("STUB_BASE", s.url + "/v1")
        monkeypatch.setenv("STUB_KEY", "stub-key")
        return s

    return start


def register_researcher(**options):
    @tool
    def lookup(q: str, limit: int = 3) -> dict:
        """Looks a fact up."""
        return {"fact": f"{q} has {limit} facts"}

    @persona(role="analyst")
    def careful() -> str:
        return "Be careful."

    @worker_agent(
        name="researcher", tools=["lookup"], persona="careful", role="researcher", **options
    )
    def researcher():
        """Finds facts."""
        return "You research."


def test_a_worker_calls_its_tool_and_answers(model_stub):
    register_researcher(model=MODEL)
    s = model_stub(
        {"role": "assistant", "content": None, "tool_calls": [call("c1", "lookup", {"q": "ada"})]},
        {"role": "assistant", "content": "Ada has 3 facts."},
    )
    assert run_agent("Tell me about Ada", "researcher") == "Ada has 3 facts."

    first, second = (r.json() for r in s.received)
    assert s.received[0].path == "/v1/chat/completions"
    assert s.received[0].headers["authorization"] == "Bearer stub-key"
    assert first["messages"] == [
        {"role": "system", "content": "Be careful.\n\nYou are the researcher.\n\nYou research."},
        {"role": "user", "content": "Tell me about Ada"},
    ]
    assert first["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "lookup",
                "description": "Looks a fact up.",
                "parameters": {
                    "type": "object",
                    "properties": {"q": {"type": "string"}, "limit": {"type": "integer"}},
                    "required": ["q"],
                },
            },
        }
    ]
    # The tool's result goes back to the model, after its own call.
    assert second["messages"][2]["tool_calls"][0]["id"] == "c1"
    assert second["messages"][3] == {
        "role": "tool",
        "tool_call_id": "c1",
        "content": '{"fact": "ada has 3 facts"}',
    }
    assert components()["agents"] == ["researcher"]


def test_max_turns_bounds_the_loop(model_stub):
    register_researcher(model=MODEL, max_turns=2)
    looping = {
        "role": "assistant",
        "content": None,
        "tool_calls": [call("c", "lookup", {"q": "x"})],
    }
    s = model_stub(looping, looping, looping)
    with pytest.raises(SvcError) as e:
        run_agent({"input": "loop"}, "researcher")
    assert e.value.code == "execution_error"
    assert e.value.details == {"node": "researcher", "reason": "max_turns"}
    assert len(s.received) == 2


def test_roles_gate_the_caller(model_stub):
    register_researcher(model=MODEL, roles=["support"])
    model_stub({"role": "assistant", "content": "ok"})
    with pytest.raises(SvcError) as e:
        run_agent("hi", "researcher", caller_roles=["sales"])
    assert e.value.details == {"node": "researcher", "reason": "forbidden"}
    assert "support" in e.value.message
    assert run_agent("hi", "researcher", caller_roles=["sales", "support"]) == "ok"


@pytest.mark.parametrize(
    ("tool_call", "reason", "mentions"),
    [
        (call("c", "delete_everything", {}), "bad_tool_call", "not one of its tools"),
        (
            {"id": "c", "function": {"name": "lookup", "arguments": "[1]"}},
            "bad_tool_call",
            "not a JSON object",
        ),
        (call("c", "lookup", {"nope": 1}), "tool_error", 'tool "lookup" failed'),
    ],
)
def test_bad_tool_calls_fail_naming_the_agent_and_tool(model_stub, tool_call, reason, mentions):
    register_researcher(model=MODEL)
    model_stub({"role": "assistant", "content": None, "tool_calls": [tool_call]})
    with pytest.raises(SvcError) as e:
        run_agent("go", "researcher")
    assert e.value.details["reason"] == reason
    assert mentions in e.value.message


def test_a_model_failure_is_an_upstream_error(stub, monkeypatch):
    register_researcher(model=MODEL)
    s = stub(lambda _req: (503, b"{}"))
    monkeypatch.setenv("STUB_BASE", s.url)
    with pytest.raises(SvcError) as e:
        run_agent("go", "researcher")
    assert e.value.code == "upstream_error"
    assert e.value.details["reason"] == "status"


def test_registration_errors():
    with pytest.raises(RegistrationError):
        worker_agent(max_turns=0)
    register_researcher()
    with pytest.raises(SvcError) as e:
        run_agent("go", "researcher")
    assert e.value.details["reason"] == "no_model"
    with pytest.raises(LookupError):
        run_agent("go", "nobody")


def test_tool_schema_prefers_the_declared_input_schema():
    def f(a: str, b: float = 1.0, *rest, **more):
        return a

    assert tool_schema(f, None) == {
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": "number"}},
        "required": ["a"],
    }
    declared = {"type": "object", "properties": {"a": {"type": "string", "maxLength": 3}}}
    assert tool_schema(f, declared) is declared


def test_supervisors_and_handoffs_say_they_are_not_built():
    from svc import handoff, supervisor

    with pytest.raises(NotImplementedError, match="@supervisor"):
        supervisor(members=["a"])
    with pytest.raises(NotImplementedError, match="handoff"):
        handoff("a")
