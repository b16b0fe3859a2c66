"""LangGraph served over HTTP by FastAPI, as a new user would serve it: the
baseline of bench/parallel.py. POST /invoke takes {"state": {...}} and
answers {"result": ...}, as an svc service does. BENCH_GRAPH names the
graph: `chain10` (ten nodes one after another) or `fan5` (five branches
from START that meet at one node), every node a no-op that writes one
constant field, as the svc graphs of the benchmark do.

Run: BENCH_GRAPH=fan5 python -m uvicorn langgraph_app:app --port 8000
"""

import os
from typing import TypedDict

from fastapi import FastAPI, Request
from langgraph.graph import END, START, StateGraph


def constant(field):
    def node(state):
        return {field: "x"}

    return node


def chain10():
    State = TypedDict("State", {"question": str, **{f"f{i}": str for i in range(1, 11)}})
    g = StateGraph(State)
    previous = START
    for i in range(1, 11):
        g.add_node(f"n{i}", constant(f"f{i}"))
        g.add_edge(previous, f"n{i}")
        previous = f"n{i}"
    g.add_edge(previous, END)
    return g.compile()


def fan5():
    State = TypedDict("State", {"question": str, "merged": str, **{f"f{i}": str for i in range(1, 6)}})
    g = StateGraph(State)
    for i in range(1, 6):
        g.add_node(f"b{i}", constant(f"f{i}"))
        g.add_edge(START, f"b{i}")
        g.add_edge(f"b{i}", "merge")
    g.add_node("merge", constant("merged"))
    g.add_edge("merge", END)
    return g.compile()


GRAPH = {"chain10": chain10, "fan5": fan5}[os.environ.get("BENCH_GRAPH", "chain10")]()
app = FastAPI()


@app.post("/invoke")
async def invoke(request: Request):
    body = await request.json()
    return {"result": await GRAPH.ainvoke(body["state"])}
