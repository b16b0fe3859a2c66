"""Worker agents against a loopback stub of the chat-completions API that
scripts its replies in the standard `tool_calls` format."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any, TypedDict

import pytest

from svc import (
    END,
    GraphBuilder,
    SvcError,
    components,
    get_supervisor,
    handoff,
    persona,
    run_agent,
    supervisor,
    tool,
    worker_agent,
)
from svc.agents import tool_schema
from svc.errors import RegistrationError
from svc.model_calls import Model
from svc.runtime import CompiledGraph, Field, StateSchema

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


def register_refunds(ran: list) -> None:
    """A worker with an open tool and one only admins may use."""

    @tool
    def lookup(q: str) -> str:
        """Looks a fact up."""
        return f"{q}: found"

    @tool(roles=["admin"])
    def refund(order: str) -> str:
        """Refunds an order."""
        ran.append(order)
        return f"{order} refunded"

    @worker_agent(name="clerk", tools=["lookup", "refund"], model=MODEL)
    def clerk():
        return "You help."


def offered(request) -> list[str]:
    return [t["function"]["name"] for t in request.json().get("tools", [])]


def test_a_tool_with_roles_is_offered_only_to_callers_holding_one(model_stub):
    ran = []
    register_refunds(ran)
    refund = {
        "role": "assistant",
        "content": None,
        "tool_calls": [call("c", "refund", {"order": "A1"})],
    }
    done = {"role": "assistant", "content": "done"}
    s = model_stub(done, done, refund, done)
    assert run_agent("help", "clerk", caller_roles=["guest"]) == "done"
    assert run_agent("help", "clerk") == "done"  # no roles at all
    assert run_agent("help", "clerk", caller_roles=["guest", "admin"]) == "done"
    assert [offered(r) for r in s.received] == [
        ["lookup"],
        ["lookup"],
        ["lookup", "refund"],
        ["lookup", "refund"],
    ]
    assert ran == ["A1"]


def test_a_call_to_a_tool_the_caller_may_not_use_is_forbidden(model_stub):
    ran = []
    register_refunds(ran)
    model_stub(
        {"role": "assistant", "content": None, "tool_calls": [call("c", "refund", {"order": "A1"})]}
    )
    with pytest.raises(SvcError) as e:
        run_agent("refund A1", "clerk", caller_roles=["guest"])
    assert (e.value.status, e.value.code) == (500, "execution_error")
    assert e.value.details == {"node": "clerk", "reason": "forbidden"}
    assert e.value.message == (
        'agent "clerk" called the tool "refund", which runs only for the roles admin; '
        "the caller holds guest"
    )
    assert ran == []


class Desk(CompiledGraph):
    """A python-svc project's agent node (tests/snapshots/python-svc__agent_node.snap):
    the node runs the agent with the callerRoles the graph document gives it."""

    name = "desk"
    schema = StateSchema([Field("question", "string", required=True), Field("answer", "string")])
    node_names = ("helper",)
    caller_roles: tuple[str, ...] = ()

    def helper(self, state: dict, deadline: float | None = None) -> dict:
        reply = run_agent(
            state["question"], "clerk", caller_roles=self.caller_roles, deadline=deadline
        )
        return {"answer": reply}

    def run(self, state: dict) -> dict:
        self.check(0)
        self.step(state, "helper", lambda s: self.helper(s, self.remaining()), native=False)
        return state


class DeskState(TypedDict, total=False):
    question: str
    answer: str


def desk_builder(caller_roles: tuple[str, ...]) -> Any:
    """The same node in a GraphBuilder graph (LangGraph)."""

    def helper(state: DeskState) -> dict:
        return {"answer": run_agent(state["question"], "clerk", caller_roles=caller_roles)}

    builder = GraphBuilder(DeskState)
    builder.add_node("helper", helper).set_entry_point("helper").add_edge("helper", END)
    return builder.compile()


def desk(kind: str, caller_roles: tuple[str, ...]) -> Any:
    if kind == "builder":
        return desk_builder(caller_roles)
    return type("Desk", (Desk,), {"caller_roles": caller_roles})()


@pytest.mark.parametrize("kind", ["compiled", "builder"])
def test_tool_roles_hold_in_a_served_graph(kind, model_stub):
    from fastapi.testclient import TestClient

    from svc.server import create_app

    ran = []
    register_refunds(ran)
    refund = {
        "role": "assistant",
        "content": None,
        "tool_calls": [call("c", "refund", {"order": "A1"})],
    }
    s = model_stub(refund, refund, {"role": "assistant", "content": "refunded"})
    config = {"server": {"auth": {"type": "none"}}}
    body = {"state": {"question": "refund A1"}}
    with TestClient(create_app(desk(kind, ("guest",)), config=config)) as client:
        r = client.post("/invoke", json=body)
    assert r.status_code == 500, r.text
    assert r.json()["error"]["code"] == "execution_error"
    assert r.json()["error"]["details"] == {"node": "clerk", "reason": "forbidden"}
    with TestClient(create_app(desk(kind, ("admin",)), config=config)) as client:
        r = client.post("/invoke", json=body)
    assert r.status_code == 200, r.text
    assert r.json()["result"]["answer"] == "refunded"
    assert [offered(r) for r in s.received] == [
        ["lookup"],
        ["lookup", "refund"],
        ["lookup", "refund"],
    ]
    assert ran == ["A1"]


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


@pytest.mark.parametrize(
    ("answer", "reason"), [((503, b"{}"), "status"), ((200, b'{"choices": []}'), "invalid_json")]
)
def test_a_model_failure_is_an_upstream_error(stub, monkeypatch, waits, answer, reason):
    register_researcher(model=MODEL)
    s = stub(lambda _req: answer)
    monkeypatch.setenv("STUB_BASE", s.url)
    with pytest.raises(SvcError) as e:
        run_agent("go", "researcher")
    assert e.value.code == "upstream_error"
    assert e.value.details["reason"] == reason
    # The worker's model call is retried on a 503, not on a reply it cannot read.
    assert e.value.details["attempts"] == len(s.received) == (3 if reason == "status" else 1)


def test_a_later_turn_has_only_what_is_left_of_the_deadline(stub, monkeypatch, waits):
    """The second turn starts 0.6 s into a 1 s deadline: a 0.6 s
    Retry-After would end past it, so that turn is not asked again."""
    register_researcher(model=MODEL)
    looked_up = {
        "role": "assistant",
        "content": None,
        "tool_calls": [call("c1", "lookup", {"q": "a"})],
    }
    answers = iter([("slow", 0.6, json.dumps({"choices": [{"message": looked_up}]}).encode())])
    s = stub(lambda _req: next(answers, (503, b"{}", {"Retry-After": "0.6"})))
    monkeypatch.setenv("STUB_BASE", s.url)
    with pytest.raises(SvcError) as e:
        run_agent("go", "researcher", deadline=1.0)
    assert (e.value.details["status"], e.value.details["attempts"]) == (503, 1)
    assert len(s.received) == 2 and waits == []


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


def test_handoff_is_a_langgraph_command():
    from langgraph.types import Command

    assert handoff("billing", update={"topic": "refund"}) == Command(
        goto="billing", update={"topic": "refund"}
    )
    with pytest.raises(TypeError):
        handoff("billing", update=["topic"])


def test_a_handoff_tool_passes_the_task_to_another_agent(model_stub):
    from svc import make_handoff_tool

    echo_workers(roles_b=["editor"])
    transfer = make_handoff_tool("polisher")

    @worker_agent(model=MODEL, tools=[transfer])
    def triage():
        return "Pass polishing work on."

    s = model_stub(
        {"role": "assistant", "content": None, "tool_calls": [call("h", transfer, {})]},
        {"role": "assistant", "content": "polished by the polisher"},
    )
    assert run_agent("polish this", "triage", caller_roles=["editor"]) == "polished by the polisher"
    assert s.received[0].json()["tools"][0]["function"]["name"] == "transfer_to_polisher"
    # The polisher got the original task, in a fresh conversation of its own.
    assert s.received[1].json()["messages"] == [
        {"role": "system", "content": "You polish."},
        {"role": "user", "content": "polish this"},
    ]
    # The handoff is a delegation: the target's roles still apply.
    model_stub({"role": "assistant", "content": None, "tool_calls": [call("h", transfer, {})]})
    with pytest.raises(SvcError) as e:
        run_agent("polish this", "triage", caller_roles=["writer"])
    assert e.value.details == {"node": "polisher", "reason": "forbidden"}


def echo_workers(roles_b=()):
    """Two workers whose model replies are scripted by the test."""

    @worker_agent(model=MODEL, description="drafts")
    def drafter():
        return "You draft."

    @worker_agent(model=MODEL, description="polishes", roles=roles_b)
    def polisher():
        return "You polish."


def test_a_custom_supervisor_routes_across_members_then_finishes(model_stub):
    echo_workers()
    seen = []

    @supervisor(members=["drafter", "polisher"], router="custom")
    def team(state):
        seen.append(dict(state))
        return ["drafter", " Polisher ", "finish"][state["round"]]

    s = model_stub(
        {"role": "assistant", "content": "draft 1"},
        {"role": "assistant", "content": "polished"},
    )
    assert get_supervisor("team").build().run("write a poem") == "polished"
    assert seen == [
        {"input": "write a poem", "round": 0, "last_member": None, "last_output": None},
        {"input": "write a poem", "round": 1, "last_member": "drafter", "last_output": "draft 1"},
        {"input": "write a poem", "round": 2, "last_member": "polisher", "last_output": "polished"},
    ]
    # The second member gets the input followed by the last member's output.
    assert s.received[1].json()["messages"][-1] == {
        "role": "user",
        "content": "write a poem\n\ndraft 1",
    }
    assert components()["agents"] == ["drafter", "polisher", "team"]


def test_an_llm_supervisor_asks_the_model_which_member_acts(model_stub):
    echo_workers()

    @supervisor(members=["drafter", "polisher"], model=MODEL)
    def team():
        return "Route the work."

    s = model_stub(
        {"role": "assistant", "content": "drafter"},
        {"role": "assistant", "content": "draft 1"},
        {"role": "assistant", "content": " FINISH\n"},
    )
    assert run_agent("write", "team") == "draft 1"
    routing = s.received[0].json()["messages"]
    assert routing[0]["content"] == (
        "Route the work.\nAnswer with exactly one of these names:\n"
        "- drafter: drafts\n- polisher: polishes\n- finish: the task is done"
    )
    assert s.received[2].json()["messages"][1]["content"] == "write\n\ndrafter answered:\ndraft 1"


def test_a_bad_route_and_too_many_rounds_are_execution_errors(model_stub):
    echo_workers()

    @supervisor(members=["drafter"], model=MODEL, max_rounds=2)
    def team():
        return None

    model_stub({"role": "assistant", "content": "the janitor"})
    with pytest.raises(SvcError) as e:
        run_agent("x", "team")
    assert e.value.details == {"node": "team", "reason": "bad_route"}

    @supervisor(name="looper", members=["drafter"], router="custom", max_rounds=2)
    def looper(state):
        return "drafter"

    s = model_stub({"role": "assistant", "content": "a"}, {"role": "assistant", "content": "b"})
    with pytest.raises(SvcError) as e:
        run_agent("x", "looper")
    assert e.value.details == {"node": "looper", "reason": "max_rounds"}
    assert len(s.received) == 2


def test_delegation_carries_the_callers_roles(model_stub):
    echo_workers(roles_b=["editor"])

    @supervisor(members=["drafter", "polisher"], router="custom")
    def team(state):
        return ["drafter", "polisher", "finish"][state["round"]]

    model_stub(*[{"role": "assistant", "content": "ok"}] * 4)
    with pytest.raises(SvcError) as e:
        run_agent("x", "team", caller_roles=["writer"])
    assert e.value.details == {"node": "polisher", "reason": "forbidden"}
    assert run_agent("x", "team", caller_roles=["editor"]) == "ok"


def test_membership_cycles_and_bad_supervisors_are_refused():
    @supervisor(name="a", members=["b"], router="custom")
    def a(state):
        return "finish"

    @supervisor(name="b", members=["a"], router="custom")
    def b(state):
        return "finish"

    with pytest.raises(RegistrationError, match="a -> b -> a"):
        get_supervisor("a").build()
    with pytest.raises(RegistrationError):
        supervisor(members=[])
    with pytest.raises(RegistrationError):
        supervisor(members=["x"], router="vote")
    with pytest.raises(RegistrationError):
        supervisor(members=["finish"])


def test_policies_are_asked_before_each_delegation(model_stub):
    from svc import business_policy

    echo_workers()
    asked = []

    @business_policy
    def no_polishing(context):
        asked.append((context["action"], context["agent"], context["caller_roles"]))
        return "deny" if context["agent"] == "polisher" else "allow"

    @supervisor(members=["drafter", "polisher"], router="custom")
    def team(state):
        return ["drafter", "polisher", "finish"][state["round"]]

    model_stub({"role": "assistant", "content": "draft"})
    with pytest.raises(SvcError) as e:
        run_agent("x", "team", caller_roles=["writer"])
    assert (e.value.status, e.value.code) == (403, "policy_denied")
    assert e.value.details == {"policy": "no_polishing"}
    assert asked == [
        ("delegate", "team", ["writer"]),
        ("delegate", "drafter", ["writer"]),
        ("delegate", "polisher", ["writer"]),
    ]


REMOTE_CONFIG = """
external_services:
  billing:
    serverUrl: {url}
    auth: {{type: api_key, token: "${{BILLING_KEY}}"}}
"""


def test_a_remote_agent_posts_to_the_other_services_invoke(stub, tmp_path, monkeypatch):
    from svc import agent, remote_agent

    def billing(req):
        if req.headers.get("x-api-key") != "billing-secret":
            return (401, b'{"error": {"code": "unauthorized", "message": "no"}}')
        question = req.json()["state"]["question"]
        return (200, json.dumps({"result": {"question": question, "answer": "42 EUR"}}).encode())

    s = stub(billing)
    (tmp_path / "application.yaml").write_text(REMOTE_CONFIG.format(url=s.url))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("BILLING_KEY", "billing-secret")

    @agent(
        transport="remote",
        service="billing",
        input_field="question",
        output_field="answer",
        roles=["support"],
    )
    def billing_peer():
        """Answers billing questions."""

    assert remote_agent("billing_peer").run("how much?", ["support"]) == "42 EUR"
    assert s.received[0].path == "/invoke"
    assert s.received[0].json() == {"state": {"question": "how much?"}}

    # A wrong credential is the other service's 401: an upstream status error.
    monkeypatch.setenv("BILLING_KEY", "wrong")
    from svc import config

    config.clear()
    with pytest.raises(SvcError) as e:
        run_agent("how much?", "billing_peer", caller_roles=["support"])
    assert e.value.code == "upstream_error"
    assert e.value.details == {"node": "billing_peer", "reason": "status", "status": 401}
    with pytest.raises(SvcError) as e:
        run_agent("how much?", "billing_peer")
    assert e.value.details["reason"] == "forbidden"


def test_a_remote_agent_url_may_name_an_environment_variable(stub, tmp_path, monkeypatch):
    from svc import agent

    s = stub(lambda req: (200, json.dumps({"result": {"answer": req.path}}).encode()))
    # serverUrl is a placeholder: the agent's own `url` wins.
    (tmp_path / "application.yaml").write_text(REMOTE_CONFIG.format(url="http://unused.invalid"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("BILLING_KEY", "billing-secret")

    @agent(transport="remote", service="billing", url="env:BILLING_URL", output_field="answer")
    def billing_by_env():
        """Answers billing questions."""

    with pytest.raises(SvcError) as e:
        run_agent("how much?", "billing_by_env")
    assert e.value.details == {"node": "billing_by_env", "reason": "connect"}
    assert "BILLING_URL" in e.value.message
    monkeypatch.setenv("BILLING_URL", s.url + "/peer/")
    assert run_agent("how much?", "billing_by_env") == "/peer/invoke"


def test_local_agents_and_unbuilt_transports():
    from svc import agent

    @agent
    def shout(task: str) -> str:
        return task.upper()

    @agent(name="broken")
    def broken(task: str):
        return 3

    assert run_agent("hi", "shout") == "HI"
    with pytest.raises(SvcError) as e:
        run_agent("hi", "broken")
    assert e.value.details == {"node": "broken", "reason": "bad_output"}
    with pytest.raises(RegistrationError, match="agent_card_url= or service="):
        agent(transport="a2a")
    with pytest.raises(RegistrationError, match="service="):
        agent(transport="remote")
    with pytest.raises(RegistrationError):
        agent(transport="pigeon")


def test_a_tool_taking_one_object_gets_the_arguments_as_a_dict(model_stub):
    seen = []

    @tool("lookup", arguments="object", description="Finds a customer.")
    def lookup_tool(state: dict) -> dict:
        """Not what the model is told."""
        seen.append(state)
        return {"customer": state["id"], "plan": "gold"}

    @worker_agent(model=MODEL, tools=["lookup"])
    def clerk():
        return "You look customers up."

    s = model_stub(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [call("c1", "lookup", {"id": "c-7", "verbose": True})],
        },
        {"role": "assistant", "content": "c-7 is on gold."},
    )
    assert run_agent("Which plan is c-7 on?", "clerk") == "c-7 is on gold."
    assert seen == [{"id": "c-7", "verbose": True}]
    assert s.received[0].json()["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "lookup",
                "description": "Finds a customer.",
                "parameters": {"type": "object"},
            },
        }
    ]
    assert s.received[1].json()["messages"][-1]["content"] == '{"customer": "c-7", "plan": "gold"}'


def test_tool_arguments_and_description_options():
    schema = {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}

    @tool("declared", arguments="object", input_schema=schema)
    def declared(state):
        """First line.

        More detail."""

    from svc.registry import get

    assert get("tools", "declared").meta["input_schema"] is schema
    assert get("tools", "declared").meta["description"] == "First line."
    with pytest.raises(RegistrationError, match="keywords, object"):
        tool("bad", arguments="positional")
    with pytest.raises(RegistrationError, match="description"):
        tool("bad", description=["no"])


def test_an_http_tool_registered_for_agents_posts_the_arguments(model_stub, stub, monkeypatch):
    from svc.runtime import HttpTool, register_http_tool

    crm = stub(lambda req: (200, json.dumps({"found": req.json()["email"]}).encode()))
    monkeypatch.setenv("CRM_URL", crm.url + "/lookup")
    given = HttpTool("env:CRM_URL", timeout_ms=2000)
    registered = register_http_tool("crm", given, description="Looks a customer up.")
    assert registered == replace(given, tool_id="crm")  # its spans are named after it

    @worker_agent(model=MODEL, tools=["crm"])
    def clerk():
        return "Use the CRM."

    s = model_stub(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [call("c1", "crm", {"email": "ada@example.com"})],
        },
        {"role": "assistant", "content": "found her"},
    )
    assert run_agent("find ada", "clerk") == "found her"
    assert crm.received[0].path == "/lookup"
    assert crm.received[0].json() == {"email": "ada@example.com"}
    function = s.received[0].json()["tools"][0]["function"]
    assert function == {
        "name": "crm",
        "description": "Looks a customer up.",
        "parameters": {"type": "object"},
    }
    assert s.received[1].json()["messages"][-1] == {
        "role": "tool",
        "tool_call_id": "c1",
        "content": '{"found": "ada@example.com"}',
    }
    assert components()["tools"] == ["crm"]


def test_an_http_tool_failure_stays_an_upstream_error(model_stub, stub, monkeypatch):
    from svc.runtime import HttpTool, register_http_tool

    down = stub(lambda _req: (503, b'{"error": "down"}'))
    register_http_tool("crm", HttpTool(down.url))

    @worker_agent(model=MODEL, tools=["crm"])
    def clerk():
        return "Use the CRM."

    model_stub(
        {"role": "assistant", "content": None, "tool_calls": [call("c1", "crm", {"q": 1})]},
    )
    with pytest.raises(SvcError) as e:
        run_agent("find ada", "clerk")
    assert (e.value.status, e.value.code) == (502, "upstream_error")
    assert e.value.details == {"node": "crm", "reason": "status", "status": 503}
    with pytest.raises(RegistrationError, match="HttpTool"):
        register_http_tool("crm", "http://example.com")


def test_a_persona_given_as_data_opens_the_instructions(model_stub):
    @worker_agent(model=MODEL, persona={"role": "billing assistant", "tone": "friendly"})
    def biller():
        return "Explain invoices."

    @worker_agent(model=MODEL, persona={"tone": "formal"})
    def formal():
        return None

    s = model_stub({"role": "assistant", "content": "ok"}, {"role": "assistant", "content": "ok"})
    run_agent("hi", "biller")
    run_agent("hi", "formal")
    assert s.received[0].json()["messages"][0] == {
        "role": "system",
        "content": "You are the billing assistant. Answer in a friendly tone.\n\nExplain invoices.",
    }
    assert s.received[1].json()["messages"][0] == {
        "role": "system",
        "content": "Answer in a formal tone.",
    }
    with pytest.raises(RegistrationError, match="mood"):
        worker_agent(persona={"mood": "grumpy"})
    with pytest.raises(RegistrationError, match="tone"):
        worker_agent(persona={"tone": 3})
    with pytest.raises(RegistrationError):
        worker_agent(persona=["analyst"])


def test_agents_info_shows_each_agents_kind_roles_and_limits():
    from svc import agent
    from svc.agents import agents_info

    register_researcher(model=MODEL, max_turns=3, roles=["support"])
    echo_workers()

    @supervisor(members=["drafter", "polisher"], router="custom", max_rounds=4, roles=["editor"])
    def team(state):
        return "finish"

    @agent
    def shout(task: str) -> str:
        return task.upper()

    @agent(transport="remote", service="billing")
    def billing_peer():
        """Answers billing questions."""

    info = agents_info()
    assert list(info) == ["billing_peer", "drafter", "polisher", "researcher", "shout", "team"]
    assert info["researcher"] == {
        "kind": "worker",
        "roles": ["support"],
        "maxTurns": 3,
        "tools": ["lookup"],
    }
    assert info["team"] == {
        "kind": "supervisor",
        "roles": ["editor"],
        "maxRounds": 4,
        "router": "custom",
        "members": ["drafter", "polisher"],
    }
    assert info["shout"] == {"kind": "local", "roles": []}
    assert info["billing_peer"] == {"kind": "remote", "roles": [], "service": "billing"}
    json.dumps(info)  # what /info answers
