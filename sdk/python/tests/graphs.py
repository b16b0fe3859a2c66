"""Hand-written CompiledGraphs in the shape the python-svc backend generates."""

import time

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
