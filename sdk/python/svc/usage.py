"""What a run spends on model calls (`usage` in its answers) and the budget
that bounds it (settings.budget; docs/http-contract.md, "Usage").

Every model call (svc.model_calls.call) counts into the `Meter` of the run
it belongs to: the call when it starts (its retries and fallbacks are the
same call), each attempt, and the tokens the reply it used reports (a
failed attempt reports none). The meter is the context's (`metered`): the
server makes one per request, so that it can answer with the usage however
the run ends; a CompiledGraph run started elsewhere makes its own. Child
graphs, agents and classifiers run in their parent's context, so they
count into the parent's run. A resumed thread's meter starts from what the
run had used at its pause.

Stdlib only.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from svc.errors import SvcError


@dataclass(frozen=True)
class Budget:
    """settings.budget: what one run may spend. A call that would start once
    `max_model_calls` calls were made or `max_tokens` tokens (input and
    output) used, or whose reply takes the tokens past `max_tokens`, fails
    the run. None is no limit."""

    max_tokens: int | None = None
    max_model_calls: int | None = None

    def __post_init__(self) -> None:
        for name in ("max_tokens", "max_model_calls"):
            limit = getattr(self, name)
            if limit is not None and (isinstance(limit, bool) or limit < 1):
                raise ValueError(f"{self}: {name} is 1 or more, or None")


@dataclass(frozen=True)
class Usage:
    """The counts of a run's model calls, as answers carry them (to_json)."""

    input_tokens: int = 0
    output_tokens: int = 0
    model_calls: int = 0
    attempts: int = 0

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def to_json(self) -> dict[str, int]:
        return {
            "inputTokens": self.input_tokens,
            "outputTokens": self.output_tokens,
            "modelCalls": self.model_calls,
            "attempts": self.attempts,
        }

    @classmethod
    def from_json(cls, value: Any) -> Usage | None:
        """A kept usage (to_json's); None for none (a thread paused before
        usage was kept). A count that is not a whole number reads as 0."""
        if not isinstance(value, dict):
            return None
        keys = ("inputTokens", "outputTokens", "modelCalls", "attempts")
        return cls(*(count(value.get(k)) for k in keys))


def count(value: Any) -> int:
    """A token count a reply reports: a positive whole number, else 0."""
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    return 0


def budget_exceeded(node: str, budget: str, limit: int, used: int) -> SvcError:
    return SvcError(
        500,
        "execution_error",
        f'node "{node}": the run\'s budget is spent ({budget} {limit}, used {used})',
        {"node": node, "reason": "budget_exceeded", "budget": budget, "limit": limit, "used": used},
    )


class Meter:
    """Counts one run's usage against its budget. Locked: a native body may
    call models from threads of its own."""

    def __init__(self, budget: Budget | None = None, spent: Usage | None = None):
        self.budget = budget or Budget()
        self._used = spent or Usage()
        self._lock = threading.Lock()

    @property
    def usage(self) -> Usage:
        with self._lock:
            return self._used

    def reported(self) -> dict[str, int] | None:
        """The usage as answers carry it: None when the run sent no request,
        so that the answers of model-free runs have none."""
        used = self.usage
        return used.to_json() if used.attempts else None

    def start(self, node: str) -> None:
        """Counts a call of `node` about to start, unless the budget is spent."""
        with self._lock:
            used, limits = self._used, self.budget
            if limits.max_model_calls is not None and used.model_calls >= limits.max_model_calls:
                raise budget_exceeded(
                    node, "maxModelCalls", limits.max_model_calls, used.model_calls
                )
            if limits.max_tokens is not None and used.tokens >= limits.max_tokens:
                raise budget_exceeded(node, "maxTokens", limits.max_tokens, used.tokens)
            self._used = replace(used, model_calls=used.model_calls + 1)

    def attempt(self) -> None:
        with self._lock:
            self._used = replace(self._used, attempts=self._used.attempts + 1)

    def replied(self, node: str, input_tokens: int, output_tokens: int) -> None:
        """Counts the tokens of the reply a call used: past max_tokens the
        run fails, and the reply is not used."""
        with self._lock:
            used = self._used
            self._used = used = replace(
                used,
                input_tokens=used.input_tokens + input_tokens,
                output_tokens=used.output_tokens + output_tokens,
            )
            limit = self.budget.max_tokens
            if limit is not None and used.tokens > limit:
                raise budget_exceeded(node, "maxTokens", limit, used.tokens)


_current: contextvars.ContextVar[Meter | None] = contextvars.ContextVar(
    "svc_run_meter", default=None
)


def current() -> Meter | None:
    """The meter of the run under way; None outside a run (nothing is counted)."""
    return _current.get()


@contextlib.contextmanager
def metered(meter: Meter) -> Iterator[Meter]:
    """Makes `meter` the context's: the runs started inside count into it."""
    token = _current.set(meter)
    try:
        yield meter
    finally:
        _current.reset(token)
