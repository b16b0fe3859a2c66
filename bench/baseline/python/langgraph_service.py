"""Hand-written reference (b) for the Python throughput benchmark: the
support_triage graph built with LangGraph and served by FastAPI, the way a
team would write it by hand."""

import hmac
import json
import os
from typing import TypedDict

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from langgraph.graph import END, START, StateGraph

KEY = os.environ.get("SVC_API_KEY", "").encode()


class State(TypedDict, total=False):
    question: str
    category: str
    answer: str


def classify(state: State) -> dict:
    q = state["question"].lower()
    return {"category": "billing" if "invoice" in q else "general"}


def billing(state: State) -> dict:
    return {"answer": "Billing team will answer: " + state["question"]}


def general(state: State) -> dict:
    return {"answer": "General answer to: " + state["question"]}


builder = StateGraph(State)
builder.add_node("classify", classify)
builder.add_node("billing", billing)
builder.add_node("general", general)
builder.add_edge(START, "classify")
builder.add_conditional_edges(
    "classify", lambda s: "billing" if s["category"] == "billing" else "general"
)
builder.add_edge("billing", END)
builder.add_edge("general", END)
graph = builder.compile()

app = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)


def error(status: int, code: str) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": code}}, status)


@app.post("/invoke")
async def invoke(request: Request):
    if not hmac.compare_digest(request.headers.get("x-api-key", "").encode(), KEY):
        return error(401, "unauthorized")
    if request.headers.get("content-type", "").split(";")[0] != "application/json":
        return error(415, "unsupported_media_type")
    body = await request.body()
    if len(body) > 1 << 20:
        return error(413, "payload_too_large")
    try:
        data = json.loads(body)
    except ValueError:
        return error(400, "bad_request")
    state = data.get("state") if isinstance(data, dict) else None
    if not isinstance(state, dict) or not isinstance(state.get("question"), str):
        return error(422, "invalid_state")
    result = await graph.ainvoke(
        {"question": state["question"], "category": state.get("category", "general")},
        {"recursion_limit": 25},
    )
    result.setdefault("answer", None)
    return Response(json.dumps({"result": result}), media_type="application/json")
