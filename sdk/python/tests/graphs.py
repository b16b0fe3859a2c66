"""Hand-written CompiledGraphs in the shape the python-svc backend generates."""

import time

from svc import graph_node, human_interrupt
from svc.runtime import CompiledGraph, Field, Item, StateSchema, cond_eq, text


def prepare(state):
    if state["text"] == "panic":
        raise RuntimeError("deliberate failure")
    if state["text"] == "sleep":
        time.sleep(3)
    if state["text"] == "huge":
        return {"reply": "x" * (4 * 1024 * 1024)}
    if state["text"] == "mutate":
        state["count"] = 99  # a native body's own copy: no effect on the state
        return None
    return {"count": state["count"] + 1}


def tag(state):
    return {"tags": "seen"}


def greet(state):
    return {"reply": "Hello, " + text(state["text"]) + "! count=" + text(state["count"])}


class ContractCore(CompiledGraph):
    """contract_core of fixtures/valid: prepare -> tag -> route -> greet."""

    name = "contract_core"
    schema = StateSchema(
        [
            Field("text", "string", required=True),
            Field("mode", "string", default="normal"),
            Field("count", "integer", default=0),
            Field("tags", "array", items=Item("string"), append=True, default=[]),
            Field("reply", "string"),
        ]
    )
    max_steps = 10
    request_timeout_ms = 1000
    node_names = ("prepare", "tag", "route", "greet")
    node_kinds = {  # noqa: RUF012 (as the backend writes it)
        "prepare": "function",
        "tag": "function",
        "route": "router",
        "greet": "response_template",
    }

    def run(self, state):
        current, steps = "prepare", 0
        while current != "end":
            self.check(steps)
            if current == "prepare":
                self.step(state, "prepare", prepare)
                current = "tag"
            elif current == "tag":
                self.step(state, "tag", tag)
                current = "route"
            elif current == "route":
                self.routed("route")
                current = "prepare" if cond_eq(state["mode"], "loop") else "greet"
            elif current == "greet":
                if state["reply"] is None:
                    self.step(state, "greet", greet, native=False)
                current = "end"
            steps += 1
        return state


class Chat(CompiledGraph):
    """A graph with a messages field, for the messages request form."""

    name = "chat"
    schema = StateSchema(
        [Field("messages", "messages", append=True, default=[]), Field("reply", "string")]
    )

    def run(self, state):
        self.check(0)
        self.step(state, "echo", lambda s: {"reply": s["messages"][-1]["content"]})
        return state


# --- human in the loop ------------------------------------------------------------------
# The shape the python-svc backend generates for hitl nodes (app/nodes/<id>.py) and
# for a graph with checkpointer "memory" (a run loop that can start at any node).


@graph_node("review")
def review_node(state: dict) -> dict:
    payload = {"question": "Approve the answer to " + text(state["question"]) + "?"}
    value = human_interrupt(payload, field="answer")
    return {"answer": value}


@graph_node("confirm")
def confirm_node(state: dict) -> dict:
    payload = {"confirm": text(state["answer"]), "log": list(state["log"])}
    try:  # node code that catches Exception cannot swallow the pause
        value = human_interrupt(payload, field="approved")
    except Exception as e:  # pragma: no cover - must not happen
        raise AssertionError("human_interrupt was swallowed") from e
    return {"approved": value}


def draft(state):
    return {"log": "draft"}


def publish(state):
    if state["question"] == "slow":
        time.sleep(0.4)
    return {"log": "published " + text(state["approved"])}


class Review(CompiledGraph):
    """draft -> review (hitl: answer) -> confirm (hitl: approved) -> publish."""

    name = "review_flow"
    schema = StateSchema(
        [
            Field("question", "string", required=True),
            Field("answer", "string"),
            Field("approved", "boolean"),
            Field("log", "array", items=Item("string"), append=True, default=[]),
        ]
    )
    max_steps = 10
    checkpointer = "memory"
    request_timeout_ms = 2000
    node_names = ("draft", "review", "confirm", "publish")

    def run(self, state: dict, current: str = "draft") -> dict:
        steps = 0
        while current != "end":
            self.check(steps)
            steps += 1
            if current == "draft":
                self.step(state, "draft", draft)
                current = "review"
            elif current == "review":
                self.step(state, "review", review_node, native=False)
                current = "confirm"
            elif current == "confirm":
                self.step(state, "confirm", confirm_node, native=False)
                current = "publish"
            elif current == "publish":
                self.step(state, "publish", publish)
                current = "end"
            else:
                raise RuntimeError(f"unknown node {current!r}")
        return state


class Unpaused(Review):
    """The same graph without a checkpointer: its hitl node cannot pause."""

    name = "unpaused"
    checkpointer = None
