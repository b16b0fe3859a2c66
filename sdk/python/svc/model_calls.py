"""One model call, whatever asks it (an `llm` node, a classifier, an agent's
worker or supervisor): `Model` says where it goes and how it is retried,
`call` makes the attempts (svc.llm's chat functions make each one) and
counts them into the run's meter (svc.usage).

The rules are the same in every runtime (the repository's spec, "Model
calls"): an attempt lasts at most the model's `timeout_ms` and what is left
of the run; an attempt that fails in a way another may not (`Retryable`) is
retried after a wait with full jitter or the reply's Retry-After; once a
model's attempts are spent its `fallbacks` are asked in turn. Any other
failure ends the call at once.
"""

from __future__ import annotations

import email.utils
import json
import math
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timezone
from typing import TypeVar

from svc import streaming, usage
from svc.errors import SvcError, upstream_error

# The statuses another attempt may not meet (529: Anthropic's "overloaded").
RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504, 529})

# The APIs a model may speak (svc.wire), with the variables of their base
# URL and key when the model names none.
PROVIDERS = {
    "openai": ("OPENAI_BASE_URL", "OPENAI_API_KEY"),
    "anthropic": ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY"),
}


@dataclass(frozen=True)
class Retry:
    """How often a call asks one model: up to `max_attempts` times (1 to 10;
    1 is no retry) while it fails with a Retryable error. The wait before
    attempt n+1 is drawn from [0, min(max_delay_ms, initial_delay_ms *
    2^(n-1))] (full jitter), or is the reply's longer Retry-After, up to
    max_delay_ms. Zero means the default, as in the other runtimes' model
    structs."""

    max_attempts: int = 3
    initial_delay_ms: int = 500
    max_delay_ms: int = 8000

    def __post_init__(self) -> None:
        for name in ("max_attempts", "initial_delay_ms", "max_delay_ms"):
            if not getattr(self, name):
                object.__setattr__(self, name, getattr(Retry, name))
        if not 1 <= self.max_attempts <= 10 or self.initial_delay_ms < 0 or self.max_delay_ms < 0:
            raise ValueError(f"{self}: max_attempts is 1 to 10, the delays are not negative")


@dataclass(frozen=True)
class Model:
    """Where an LLM node's requests go: the API of `provider` ("openai": any
    OpenAI-compatible chat-completions API; "anthropic": Anthropic's
    Messages API), whose base URL and key are read at call time from the
    variables `base_url_env` and `api_key_env` (None: the provider's, as
    PROVIDERS says).

    One attempt lasts at most `timeout_ms` (0: the default), `retry` says how
    often the model is asked, and once its attempts are spent the call asks
    the `fallbacks` in order (which have none of their own, and may speak
    another provider)."""

    name: str
    temperature: float | None = None
    max_tokens: int | None = None
    base_url_env: str | None = None
    api_key_env: str | None = None
    timeout_ms: int = 60000
    retry: Retry = Retry()
    fallbacks: tuple[Model, ...] = ()
    provider: str = "openai"

    def __post_init__(self) -> None:
        if self.provider not in PROVIDERS:
            raise ValueError(
                f"model {self.name!r}: the provider {self.provider!r} is not one of "
                f"{', '.join(PROVIDERS)}"
            )
        base_url_env, api_key_env = PROVIDERS[self.provider]
        object.__setattr__(self, "base_url_env", self.base_url_env or base_url_env)
        object.__setattr__(self, "api_key_env", self.api_key_env or api_key_env)
        if not self.timeout_ms:
            object.__setattr__(self, "timeout_ms", Model.timeout_ms)
        object.__setattr__(self, "fallbacks", tuple(self.fallbacks))  # a list stays hashable
        if self.timeout_ms < 0 or any(f.fallbacks for f in self.fallbacks):
            raise ValueError(f"model {self.name!r}: a negative timeout_ms, or nested fallbacks")


class Retryable(SvcError):
    """An upstream_error that another attempt may not meet: no connection, a
    cut one, a timeout, or a status of RETRY_STATUSES (svc.upstream raises
    it). Model calls retry it; to anyone else it is the upstream_error it
    holds. `retry_after` is the seconds the reply's Retry-After header
    (`header`) asked for: None without one or when unreadable."""

    def __init__(self, error: SvcError, header: str | None = None):
        super().__init__(error.status, error.code, error.message, error.details)
        self.retry_after = None if header is None else _seconds_after(header)


def _seconds_after(header: str) -> float | None:
    """A Retry-After's seconds, or its HTTP date from now (a past one is 0)."""
    try:
        seconds = float(header)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(header)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:  # "-0000": UTC, said without a zone
            when = when.replace(tzinfo=timezone.utc)
        seconds = when.timestamp() - time.time()
    return max(0.0, seconds) if math.isfinite(seconds) else None


def _wait(seconds: float) -> None:
    """Waits before a call's next attempt; the run's cancel (streamed runs)
    ends the wait at once, and the next attempt then stops the run."""
    stream = streaming.active()
    if stream is None:
        time.sleep(seconds)  # an inline run's deadline (SIGALRM) interrupts it
        return
    woken = threading.Event()
    forget = stream.on_cancel(woken.set)
    try:
        woken.wait(seconds)
    finally:
        forget()


# The jitter's random source ([0, 1)) and the wait between attempts: tests
# replace them (monkeypatch) to see the delays asked for without waiting.
retry_random: Callable[[], float] = random.random
retry_sleep: Callable[[float], None] = _wait


def _delay(retry: Retry, n: int, retry_after: float | None) -> float:
    """The seconds to wait after the n-th failed attempt (see Retry)."""
    cap = min(retry.max_delay_ms, retry.initial_delay_ms * 2 ** (n - 1)) / 1000
    delay = cap * retry_random()
    if retry_after is not None and retry_after > delay:
        delay = min(retry_after, retry.max_delay_ms / 1000)
    return delay


T = TypeVar("T")

# The input and output tokens a reply reports (0 for what it leaves out).
Tokens = tuple[int, int]


def call(
    node: str,
    model: Model,
    deadline: float | None,
    attempt: Callable[[Model, float], tuple[T, Tokens]],
) -> T:
    """One model call: `attempt(m, timeout)` asks the model `m` once, within
    `timeout` seconds, and returns what the call returns with the tokens its
    reply reports. `model` is asked up to its retry.max_attempts times
    while the attempts fail with a Retryable error, waiting between them,
    then each of its fallbacks in turn, at once. Any other failure ends the
    call at once, without a fallback: another model would not fix a request
    it refuses or a reply it cannot read. `deadline` is the seconds left in
    the run (None: no limit): no attempt starts, and no wait ends, past it.

    The error that ends the call is the last attempt's upstream_error with
    details.model (the model it asked) and details.attempts (all attempts of
    the call); any other error (the run cancelled) is raised as it is.

    The run's meter (svc.usage.current) counts the call, each attempt and
    the tokens of the reply used, and fails the call (500 execution_error,
    budget_exceeded) before its first attempt once the run's budget is
    spent, or when the reply's tokens pass it."""
    meter = usage.current()
    if meter is not None:
        meter.start(node)
    ends = None if deadline is None else time.monotonic() + deadline
    # What fails a call whose deadline passed before its first attempt.
    last: SvcError = upstream_error(
        node, "timeout", f"node {json.dumps(node)}: the upstream call timed out"
    )
    name, total = model.name, 0
    try:
        for m in (model, *model.fallbacks):
            for n in range(1, m.retry.max_attempts + 1):
                timeout = m.timeout_ms / 1000
                if ends is not None:
                    timeout = min(timeout, ends - time.monotonic())
                    if timeout <= 0:
                        raise last
                name, total = m.name, total + 1
                if meter is not None:
                    meter.attempt()
                try:
                    value, (input_tokens, output_tokens) = attempt(m, timeout)
                except Retryable as e:
                    last = e
                    if n == m.retry.max_attempts:
                        break  # this model is spent: the next one, at once
                    delay = _delay(m.retry, n, e.retry_after)
                    if ends is not None and time.monotonic() + delay > ends:
                        raise
                    retry_sleep(delay)
                else:
                    if meter is not None:
                        meter.replied(node, input_tokens, output_tokens)
                    return value
        raise last
    except SvcError as e:
        if e.code == "upstream_error":
            e.details = {**(e.details or {}), "model": name, "attempts": total}
        raise
