import operator
import textwrap
from typing import Annotated, TypedDict

import pytest

from svc import END, GraphBuilder, SvcApp, graph, graph_node, registry
from svc.errors import ConfigError, RegistrationError, SvcError


class State(TypedDict, total=False):
    n: int
    path: Annotated[list, operator.add]
    note: str


def bump(state):
    return {"n": state.get("n", 0) + 1, "path": ["bump"]}


def big(state):
    return {"note": "big", "path": ["big"]}


def small(state):
    return {"note": "small", "path": ["small"]}


def builder():
    b = GraphBuilder(State)
    b.add_node("bump", bump).add_node("big", big).add_node("small", small)
    b.set_entry_point("bump")
    b.add_conditional_edges("bump", lambda s: "big" if s["n"] > 5 else "small")
    b.add_edge("big", END).add_edge("small", END)
    return b


def test_end_is_langgraphs_end():
    from langgraph.graph import END as LG_END

    assert END == LG_END


def test_compile_and_run_with_langgraph():
    g = builder().compile()
    assert g.invoke({"n": 1}) == {"n": 2, "path": ["bump", "small"], "note": "small"}
    assert g.invoke({"n": 9})["note"] == "big"


def test_conditional_edges_with_a_mapping():
    b = GraphBuilder(State)
    b.add_node("bump", bump).add_node("small", small)
    b.set_entry_point("bump")
    b.add_conditional_edges("bump", lambda s: s["n"] > 1, {True: END, False: "small"})
    b.add_edge("small", END)
    g = b.compile()
    assert g.invoke({"n": 0})["path"] == ["bump", "small"]
    assert g.invoke({"n": 3})["path"] == ["bump"]


def test_node_exceptions_name_the_node():
    def broken(state):
        raise KeyError("nope")

    b = GraphBuilder(State).add_node("broken", broken).set_entry_point("broken")
    b.add_edge("broken", END)
    with pytest.raises(SvcError) as e:
        b.compile().invoke({})
    assert e.value.code == "execution_error" and e.value.details == {"node": "broken"}
    assert "KeyError" in e.value.message


def test_async_nodes_and_router_errors_are_attributed():
    import asyncio

    async def anode(state):
        raise ValueError("async failure")

    b = GraphBuilder(State).add_node("anode", anode).set_entry_point("anode")
    b.add_edge("anode", END)
    with pytest.raises(SvcError) as e:
        asyncio.run(b.compile().ainvoke({}))
    assert e.value.details == {"node": "anode"}

    b = GraphBuilder(State).add_node("bump", bump).set_entry_point("bump")
    b.add_conditional_edges("bump", lambda s: 1 / 0)
    with pytest.raises(SvcError) as e:
        b.compile().invoke({})
    assert e.value.details == {"node": "bump"} and "ZeroDivisionError" in e.value.message


def test_nodes_still_receive_config():
    seen = {}

    def with_config(state, config):
        seen["tag"] = config["configurable"]["tag"]
        return {"note": "ok"}

    b = GraphBuilder(State).add_node("c", with_config).set_entry_point("c")
    b.add_edge("c", END)
    b.compile().invoke({}, config={"configurable": {"tag": "t1"}})
    assert seen == {"tag": "t1"}


def test_builder_checks():
    with pytest.raises(ValueError, match="taken"):
        GraphBuilder(State).add_node("a", bump).add_node("a", bump)
    with pytest.raises(ValueError, match="set_entry_point"):
        GraphBuilder(State).add_node("a", bump).compile()


PROJECT = {
    "application.yaml": "app: {name: demo, version: 1.0.0}\ngraph: {max_steps: 5}\n",
    "app/__init__.py": "from . import flow  # noqa: F401\n",
    "app/flow.py": textwrap.dedent(
        """
        from typing import TypedDict

        from svc import END, GraphBuilder, graph, graph_node


        class S(TypedDict, total=False):
            name: str
            out: str


        @graph_node
        def hello(state):
            return {"out": "hi " + state["name"]}


        @graph(entrypoint=True)
        def main():
            b = GraphBuilder(S).add_node("hello", hello).set_entry_point("hello")
            return b.add_edge("hello", END)


        @graph("other")
        def other():
            b = GraphBuilder(S).add_node("hello", hello).set_entry_point("hello")
            return b.add_edge("hello", END)
        """
    ),
}


def write_project(root, files):
    for rel, content in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(content)


def test_svc_app(tmp_path):
    write_project(tmp_path, PROJECT)
    app = SvcApp(tmp_path).bootstrap()
    assert app.config["app"]["name"] == "demo"
    assert registry.components()["graphs"] == ["main", "other"]
    assert registry.components()["nodes"] == ["hello"]
    assert app.invoke({"name": "Ada"}) == {"name": "Ada", "out": "hi Ada"}
    assert app.graph_name == "main"
    assert hasattr(app.build_graph(), "invoke")


def test_svc_app_invoke_bootstraps_and_config_picks_the_entrypoint(tmp_path):
    write_project(tmp_path, PROJECT)
    app = SvcApp(tmp_path, config={"graph": {"entrypoint": "other"}})
    assert app.invoke({"name": "Bo"})["out"] == "hi Bo"
    assert app.graph_name == "other"


def test_svc_app_entrypoint_errors(tmp_path):
    write_project(tmp_path, {"app/__init__.py": ""})
    with pytest.raises(RegistrationError, match="entrypoint=True"):
        SvcApp(tmp_path).build_graph()
    with pytest.raises(ConfigError, match="nope"):
        SvcApp(tmp_path, config={"graph": {"entrypoint": "nope"}}).build_graph()


def test_svc_app_with_a_compiled_graph_and_guardrails(tmp_path):
    from graphs import ContractCore

    from svc import input_guardrail

    @graph(entrypoint=True)
    def core():
        return ContractCore()

    @input_guardrail
    def no_secrets(state):
        return "secret" not in state.get("text", "")

    write_project(tmp_path, {"app/__init__.py": ""})
    app = SvcApp(tmp_path)
    assert app.invoke({"text": "Ada"})["reply"] == "Hello, Ada! count=1"
    with pytest.raises(SvcError) as e:
        app.invoke({"text": "a secret"})
    assert e.value.code == "input_blocked" and e.value.details == {"guardrail": "no_secrets"}


def test_graph_node_registers(tmp_path):
    @graph_node("custom")
    def fn(state):
        return {}

    assert registry.components()["nodes"] == ["custom"]
