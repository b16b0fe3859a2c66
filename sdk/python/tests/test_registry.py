from dataclasses import dataclass, field

import pytest

from svc import (
    Decision,
    business_policy,
    components,
    configuration,
    evaluate_policies,
    get_configuration,
    graph,
    graph_node,
    input_guardrail,
    output_guardrail,
    persona,
    persona_prompt,
    registry,
    skill,
    tool,
)
from svc.errors import ConfigError, GuardrailViolation, RegistrationError


def test_components_lists_sorted_names_by_kind():
    @graph_node
    def b_node(state):
        return {}

    @graph_node("a_node")
    def other(state):
        return {}

    @tool
    def lookup(q: str) -> str:
        return q

    assert components() == {
        "graphs": [],
        "nodes": ["a_node", "b_node"],
        "tools": ["lookup"],
        "skills": [],
        "personas": [],
        "guardrails": [],
        "policies": [],
        "configurations": [],
        "agents": [],
        "mcp_servers": [],
        "a2a_servers": [],
        "a2a_authenticators": [],
    }
    assert other({}) == {}  # decorators return the function unchanged
    registry.clear()
    assert all(v == [] for v in components().values())


def test_duplicate_names_are_refused_but_a_reimport_replaces():
    def make():
        def node(state):
            return {}

        return node

    graph_node("x")(make())
    graph_node("x")(make())  # same module and qualname: a reload
    with pytest.raises(RegistrationError, match='node "x" is registered twice'):

        @graph_node("x")
        def different(state):
            return {}


def test_exactly_one_entrypoint():
    @graph(entrypoint=True)
    def first():
        return None

    @graph("sub", parent="first")
    def sub():
        return None

    with pytest.raises(RegistrationError) as e:

        @graph("second", entrypoint=True)
        def second():
            return None

    assert '"first"' in str(e.value) and '"second"' in str(e.value)
    assert registry.entrypoint_graph().name == "first"
    assert registry.get("graphs", "sub").meta == {"entrypoint": False, "parent": "first"}
    with pytest.raises(RegistrationError, match="subgraph"):
        graph("x", entrypoint=True, parent="first")


def test_tool_and_skill_metadata():
    schema = {"type": "object", "properties": {"q": {"type": "string"}}}

    @tool("search", roles=("reader",), tags=["web"], input_schema=schema)
    def search(q):
        return q

    @skill("research", tools=[search, "other"], tags="deep")
    class Research:
        pass

    t = registry.get("tools", "search")
    assert t.meta == {
        "roles": ("reader",),
        "tags": ("web",),
        "input_schema": schema,
        "arguments": "keywords",
        "description": "",
    }
    assert registry.get("skills", "research").meta == {
        "tools": ("search", "other"),
        "tags": ("deep",),
    }
    with pytest.raises(RegistrationError, match="JSON Schema"):
        tool("bad", input_schema="not a schema")
    with pytest.raises(RegistrationError, match="names"):
        skill("bad", tools=[42])(lambda: None)
    with pytest.raises(LookupError, match="no tool named"):
        registry.get("tools", "missing")


def test_persona():
    @persona("analyst", role="analyst", tone="terse")
    def analyst():
        return "You are a terse analyst."

    @persona
    def broken():
        return 42

    assert persona_prompt("analyst") == "You are a terse analyst."
    assert registry.get("personas", "analyst").meta == {"role": "analyst", "tone": "terse"}
    with pytest.raises(TypeError, match="string"):
        persona_prompt("broken")


def test_guardrails():
    @input_guardrail(description="no empty questions")
    def not_empty(state):
        return bool(state.get("q"))

    @input_guardrail("polite", action="warn")
    def polite(state):
        raise ValueError("rude")

    @output_guardrail
    def short(state):
        if len(state.get("answer", "")) > 5:
            raise ValueError("answer too long")
        return True

    assert components()["guardrails"] == ["not_empty", "polite", "short"]
    registry.run_guardrails("input", {"q": "hi"})  # "polite" only warns
    with pytest.raises(GuardrailViolation) as e:
        registry.run_guardrails("input", {"q": ""})
    assert (e.value.status, e.value.code, e.value.details) == (
        422,
        "input_blocked",
        {"guardrail": "not_empty"},
    )
    registry.run_guardrails("output", {"answer": "ok"})
    with pytest.raises(GuardrailViolation) as e:
        registry.run_guardrails("output", {"answer": "far too long"})
    assert (e.value.status, e.value.code) == (500, "output_blocked")
    assert "answer too long" in e.value.message
    with pytest.raises(RegistrationError, match="action"):
        input_guardrail("x", action="drop")


def test_guardrail_returning_none_passes():
    @input_guardrail
    def silent(state):
        return None

    registry.run_guardrails("input", {})


def test_policies_by_priority_first_deny_wins():
    calls = []

    @business_policy("low", priority=1)
    def low(ctx):
        calls.append("low")
        return "deny"

    @business_policy("high", priority=10)
    def high(ctx):
        calls.append("high")
        return Decision.allow()

    @business_policy("mid", priority=5)
    def mid(ctx):
        calls.append("mid")
        return Decision.deny("over budget") if ctx["amount"] > 100 else "allow"

    d = evaluate_policies({"amount": 500})
    assert d == Decision(False, "over budget", "mid") and calls == ["high", "mid"]
    calls.clear()
    assert evaluate_policies({"amount": 1}) == Decision(False, "", "low")
    assert calls == ["high", "mid", "low"]
    registry.clear()
    assert evaluate_policies({}).allowed


def test_policy_with_a_bad_answer():
    @business_policy
    def vague(ctx):
        return "maybe"

    with pytest.raises(TypeError, match="allow"):
        evaluate_policies({})


def test_configuration_sections(tmp_path):
    (tmp_path / "application.yaml").write_text(
        "db:\n  url: postgres://x\n  pool: {size: 3}\n  unknown_key: 1\nempty_section:\n"
    )

    @dataclass
    class Pool:
        size: int = 1

    @configuration("db")
    @dataclass
    class Db:
        url: str
        pool: Pool = field(default_factory=Pool)
        echo: bool = False

    @configuration("empty_section")
    @dataclass
    class Needs:
        token: str

    db = Db.load(tmp_path)
    assert db == Db("postgres://x", Pool(3), False)
    assert get_configuration("db", tmp_path) == db
    assert components()["configurations"] == ["db", "empty_section"]
    with pytest.raises(ConfigError, match="token"):
        Needs.load(tmp_path)
    with pytest.raises(RegistrationError, match="dataclass"):
        configuration("x")(type("Plain", (), {}))
    with pytest.raises(RegistrationError, match="section"):
        configuration("")
