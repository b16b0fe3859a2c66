"""Every error the SDK raises on purpose.

`SvcError` and its helpers carry a place in the HTTP contract (status, stable
code, details) so the server can answer without guessing; the other classes
are for configuration, registration and missing optional dependencies.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any


class MissingExtraError(ImportError):
    """An optional dependency of the SDK is not installed; `hint` is another
    way to get it, said after the install command."""

    def __init__(self, feature: str, extra: str, hint: str = ""):
        self.feature = feature
        self.extra = extra
        message = f'{feature} needs the "{extra}" extra: pip install "svc-sdk[{extra}]"'
        super().__init__(f"{message} ({hint})" if hint else message)


def require(module: str, extra: str, feature: str) -> ModuleType:
    """Imports `module`, or names the extra that provides it."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise MissingExtraError(feature, extra) from e


class ConfigError(Exception):
    """The project's configuration cannot be used as it is."""


class RegistrationError(Exception):
    """A decorator was used in a way the registry cannot accept."""


class SvcError(Exception):
    """A failure with its answer in the HTTP contract."""

    def __init__(self, status: int, code: str, message: str, details: dict | None = None):
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.details = details

    def to_body(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.details:
            error["details"] = self.details
        return {"error": error}


class GuardrailViolation(SvcError):
    """A guardrail with action "block" rejected a state.

    An input guardrail answers 422 `input_blocked` (the caller sent it); an
    output guardrail answers 500 `output_blocked` (the graph produced it).
    """

    def __init__(self, guardrail: str, kind: str, message: str):
        status, code = (422, "input_blocked") if kind == "input" else (500, "output_blocked")
        super().__init__(status, code, message, {"guardrail": guardrail})
        self.guardrail = guardrail
        self.kind = kind


# Upstream failure reasons of the contract (invalid_output: a structured
# reply that did not match its schema twice, svc.structured).
UPSTREAM_REASONS = ("timeout", "status", "invalid_json", "too_large", "connect", "invalid_output")


def invalid_state(field: str, message: str) -> SvcError:
    return SvcError(422, "invalid_state", message, {"field": field})


def execution_error(node: str, message: str) -> SvcError:
    return SvcError(500, "execution_error", message, {"node": node})


def upstream_error(node: str, reason: str, message: str, status: int | None = None) -> SvcError:
    if reason not in UPSTREAM_REASONS:
        raise ValueError(f"unknown upstream failure reason {reason!r}")
    details: dict[str, Any] = {"node": node, "reason": reason}
    if reason == "status" and status is not None:
        details["status"] = status
    return SvcError(502, "upstream_error", message, details)


def step_limit_error(max_steps: int) -> SvcError:
    return SvcError(
        500,
        "step_limit_exceeded",
        f"the run took more than {max_steps} steps",
        {"maxSteps": max_steps},
    )


def deadline_error(timeout_ms: int) -> SvcError:
    return SvcError(
        504, "deadline_exceeded", f"the run passed the request deadline of {timeout_ms}ms"
    )


def policy_denied(policy: str | None, message: str) -> SvcError:
    """A business policy said no: 403, naming the policy."""
    return SvcError(403, "policy_denied", message, {"policy": policy} if policy else None)


def bad_request(message: str) -> SvcError:
    return SvcError(400, "bad_request", message)


def thread_not_found(thread_id: str) -> SvcError:
    return SvcError(404, "thread_not_found", f'no thread "{thread_id}" (unknown, or expired)')


def not_interrupted(thread_id: str, why: str = "is not paused") -> SvcError:
    return SvcError(409, "not_interrupted", f'the thread "{thread_id}" {why}')


class Interrupted(SvcError):
    """A run paused at `human_interrupt` (or LangGraph's `interrupt`).

    The server keeps the paused thread and answers `{"interrupt": ...}`; a
    caller that cannot resume runs (SvcApp.invoke, the MCP graph tool, a
    subgraph) gets it as an ordinary `500 execution_error` naming the node.
    """

    def __init__(
        self,
        node: str,
        value: Any,
        *,
        field: str | None = None,
        state: dict | None = None,
        resumes: list | None = None,
        interrupt_id: str | None = None,
    ):
        super().__init__(
            500,
            "execution_error",
            f'node "{node}" paused the run for a human (human_interrupt); only POST /invoke '
            "of a service whose graph has a checkpointer resumes it",
            {"node": node},
        )
        self.node = node
        self.value = value
        self.field = field
        self.state = state
        self.resumes = resumes or []
        self.interrupt_id = interrupt_id
