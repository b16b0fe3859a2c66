"""Hand-written reference (a) for the Python throughput benchmark: one FastAPI
handler doing the work of the service generated from support_triage
(API-key check, media type and size checks, state validation with the
default, the classify function, the router and the templates)."""

import hmac
import json
import os

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response

KEY = os.environ.get("SVC_API_KEY", "").encode()
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
    question = state["question"]
    category = "billing" if "invoice" in question.lower() else "general"
    if category == "billing":
        answer = "Billing team will answer: " + question
    else:
        answer = "General answer to: " + question
    result = {"question": question, "category": category, "answer": answer}
    return Response(json.dumps({"result": result}), media_type="application/json")
