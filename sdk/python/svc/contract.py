"""What every HTTP face of a service shares (the repository's docs/http-contract.md):
the size limits, JSON answers with the error envelope `{"error": {code,
message, details?}}`, and reading (or draining) a request's body.

`/invoke` (svc.server), `/mcp` (svc.mcp.server) and `/a2a` (svc.a2a.server)
use it; it imports no web framework (the answers' class is given).
"""

from __future__ import annotations

import json
from typing import Any

from svc import request_json
from svc.errors import SvcError, bad_request

# Limits of the contract.
MAX_REQUEST_BYTES = 1 << 20
MAX_RESPONSE_BYTES = 4 << 20
# How much of a refused body is read and discarded before the answer: a
# client that sends its whole body before reading would otherwise see the
# connection reset instead of the error. Longer bodies are cut off.
DRAIN_BYTES = 8 << 20


def encode(body: Any) -> bytes:
    """Compact JSON, as every answer is sent (NaN and Infinity refused)."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


class JsonResponses:
    """JSON responses with the contract's 4 MiB cap, of the given (Starlette)
    response class."""

    def __init__(self, starlette_response: type):
        self.Response = starlette_response

    def json(self, status: int, body: Any, headers: dict[str, str] | None = None) -> Any:
        try:
            data = encode(body)
        except (TypeError, ValueError):
            status, headers = 500, None
            data = encode(
                {
                    "error": {
                        "code": "execution_error",
                        "message": "the result cannot be encoded as JSON",
                    }
                }
            )
        if len(data) > MAX_RESPONSE_BYTES:
            status, headers = 500, None
            data = encode(
                {
                    "error": {
                        "code": "execution_error",
                        "message": "the response is larger than 4 MiB",
                        "details": {"reason": "response_too_large"},
                    }
                }
            )
        return self.Response(data, status, headers, media_type="application/json")

    def error(self, e: SvcError, headers: dict[str, str] | None = None) -> Any:
        return self.json(e.status, e.to_body(), headers)


def too_large() -> SvcError:
    """`413 payload_too_large`: a body over MAX_REQUEST_BYTES."""
    return SvcError(413, "payload_too_large", "the request body is larger than 1 MiB")


def is_json(content_type: str | None) -> bool:
    """application/json, with or without parameters."""
    if not content_type:
        return False
    return content_type.split(";", 1)[0].strip().lower() == "application/json"


def parse_body(body: bytes) -> Any:
    """A request body as JSON, by the contract's strict rules (svc.request_json);
    `400 bad_request` naming the field otherwise."""
    try:
        return request_json.loads(body)
    except request_json.RequestJSONError as e:
        details = {"field": e.field} if e.field else None
        raise SvcError(400, "bad_request", str(e), details) from None


async def discard(request: Any) -> None:
    """Reads what is left of the request body, up to DRAIN_BYTES, before an
    error is answered."""
    length = request.headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > DRAIN_BYTES:
        return
    size = 0
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > DRAIN_BYTES:
                return
    except Exception:  # already consumed, or the client went away
        return


async def read_json(request: Any) -> Any:
    """The request's JSON, after the media type (415) and size (413) checks."""
    if not is_json(request.headers.get("content-type")):
        raise SvcError(
            415,
            "unsupported_media_type",
            "send the request with Content-Type: application/json",
        )
    length = request.headers.get("content-length")
    if length is not None:
        try:
            if int(length) > MAX_REQUEST_BYTES:
                raise too_large()
        except ValueError:
            raise bad_request("the Content-Length header is not a number") from None
        body = await request.body()
    else:  # chunked: count while reading, then discard past the limit
        chunks, size = [], 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > DRAIN_BYTES:
                break
            if size <= MAX_REQUEST_BYTES:
                chunks.append(chunk)
        if size > MAX_REQUEST_BYTES:
            raise too_large()
        body = b"".join(chunks)
    return parse_body(body)
