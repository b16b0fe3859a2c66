"""Calls from a run to other agents over A2A (the "a2a" extra: the official a2a-sdk client).

An A2A agent is declared with `@a2a_agent(name, agent_card_url=..., service=...,
roles=...)` or `@agent(transport="a2a", ...)` (the same registration, in
svc.agents); the
decorated function's docstring is its description. It is called with
`invoke_a2a_agent(name, text, skill_id=None)`, `a2a_client(name).send_message(
text, skill_id=None)` (both direct calls: no caller roles, no policies) or
`run_agent(task, name, caller_roles)` (the agent's `roles` and the business
policies first, as for every agent).

A call fetches the agent card (`agent_card_url`; a URL without a path, or
the service's `serverUrl` when there is no card URL, gets
`/.well-known/agent-card.json`, then the legacy `/.well-known/agent.json` if
that is 404), keeps it for the next calls, and sends one message (the text,
and `{"skillId": ...}` in its metadata when a skill is named) with the
official client's JSON-RPC transport, protocol 1.0 or 0.3 as the card offers.
The card is fetched without a credential; the message carries
`external_services.<service>.auth` (bearer or api_key, token from the
environment), and only to an endpoint on the card's own origin or on the
service's `serverUrl`, never to another host a card names. The reply is the
text of the answer message (data parts as JSON), or of a finished task's
artifacts (a task still working is polled until the call's time is up).

Every failure is a 502 `upstream_error` whose details name the agent (`node`)
and the `reason`: `connect`, `timeout` (`timeout_ms`, default 20 s, and the
run's deadline), `status` (with `status`: the card or the endpoint answered
outside 2xx, including 401/403), `invalid_json` (a card or reply that cannot
be read, or a reply without text), `too_large` (a reply declared over 4 MiB)
or `a2a_error` (the agent answered a JSON-RPC error, or its task failed,
was rejected or asks for input).

The official client is async: the calls run on one event loop in a daemon
thread, shared by every caller thread, with one connection pool;
`close_clients()` stops it (create_app does at shutdown).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import logging
import uuid
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from svc import telemetry
from svc.background import BackgroundLoop
from svc.errors import ConfigError, SvcError, require
from svc.registry import get

log = logging.getLogger("svc.a2a")

A2A_REASONS = ("timeout", "status", "invalid_json", "too_large", "connect", "a2a_error")
CARD_PATH = "/.well-known/agent-card.json"
LEGACY_CARD_PATH = "/.well-known/agent.json"
MAX_REPLY_BYTES = 4 << 20
POLL_INTERVAL = 0.25  # seconds between two looks at an unfinished task
RESULT_MARGIN = 1.0  # the caller's wait beyond the call's own bound
CLOSE_TIMEOUT = 10.0

_loop = BackgroundLoop("svc-a2a")
# Touched on the loop only: the shared HTTP client and the cards, by card URL.
_http: Any = None
_cards: dict[str, Any] = {}


def a2a_upstream_error(
    agent: str, reason: str, message: str, status: int | None = None
) -> SvcError:
    """The `upstream_error` of an A2A call."""
    if reason not in A2A_REASONS:
        raise ValueError(f"unknown A2A failure reason {reason!r}")
    details: dict[str, Any] = {"node": agent, "reason": reason}
    if reason == "status" and status is not None:
        details["status"] = status
    return SvcError(502, "upstream_error", message, details)


# --- declared agents ------------------------------------------------------------------


@dataclass(frozen=True)
class A2AClient:
    """A registered A2A agent as a handle: `send_message(text, skill_id=None)`."""

    name: str

    def send_message(self, text: str, skill_id: str | None = None) -> str:
        return invoke_a2a_agent(self.name, text, skill_id)


def _a2a_meta(name: str) -> dict[str, Any]:
    meta = get("agents", name).meta
    if meta["kind"] != "a2a":
        raise LookupError(f'agent "{name}" is a {meta["kind"]} agent, not an A2A one')
    return meta


def a2a_client(name: str) -> A2AClient:
    """The registered A2A agent `name`, to call as `a2a_client(n).send_message(text)`."""
    _a2a_meta(name)
    return A2AClient(name)


# --- where to send, with what -------------------------------------------------------------


def _origin(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return parts.scheme.lower(), f"{(parts.hostname or '').lower()}:{port}"


def _target(agent: str, meta: dict[str, Any]) -> tuple[list[str], dict[str, str], set]:
    """The card URLs to try, the credential headers and the origins the
    credential may go to."""
    from svc.config import get_config
    from svc.config.services import service_auth, service_config
    from svc.upstream import resolve_endpoint

    service = meta["service"]
    headers: dict[str, str] = {}
    base = None
    if service:
        where = f"external_services.{service}"
        cfg = get_config(where)
        if not isinstance(cfg, dict):
            raise ConfigError(f"{where} is not configured")
        headers = service_auth(service, cfg)
        if cfg.get("serverUrl"):
            base = resolve_endpoint(agent, service_config(service)[1])
    url = meta["agent_card_url"]
    if url is None:
        if base is None:
            raise ConfigError(
                f'A2A agent "{agent}": no agent_card_url and external_services.{service} has '
                "no serverUrl"
            )
        url = base
    else:
        url = resolve_endpoint(agent, url)
    if url is base or urlsplit(url).path in ("", "/"):
        root = url.rstrip("/")
        cards = [root + CARD_PATH, root + LEGACY_CARD_PATH]
    else:
        cards = [url]
    origins = {_origin(url)}
    if base is not None:
        origins.add(_origin(base))
    return cards, headers, origins


# --- the loop -------------------------------------------------------------------------------


async def _close() -> None:
    global _http
    client, _http = _http, None
    _cards.clear()
    if client is not None:
        await client.aclose()


def close_clients() -> None:
    """Closes the connections and stops the loop; the next call starts afresh."""
    _loop.stop(
        _close,
        CLOSE_TIMEOUT,
        lambda e: log.warning("closing the A2A clients failed: %s", e),
    )


class _TooLarge(Exception):
    pass


async def _refuse_large(response: Any) -> None:
    length = response.headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > MAX_REPLY_BYTES:
        raise _TooLarge()


def _client_http() -> Any:
    global _http
    if _http is None:
        import httpx

        # No redirects: a credential never follows one to another address.
        _http = httpx.AsyncClient(follow_redirects=False, event_hooks={"response": [_refuse_large]})
    return _http


# --- a call ------------------------------------------------------------------------------------


def _failure(agent: str, e: BaseException) -> SvcError:
    """The upstream_error of anything a call raised."""
    import httpx
    from a2a.client.errors import A2AClientError, A2AClientTimeoutError, AgentCardResolutionError
    from a2a.utils.errors import A2AError
    from google.protobuf.json_format import ParseError

    if isinstance(e, SvcError):
        return e
    name = json.dumps(agent)
    if isinstance(e, (A2AClientTimeoutError, asyncio.TimeoutError, httpx.TimeoutException)):
        return a2a_upstream_error(agent, "timeout", f"A2A agent {name}: the call timed out")
    if isinstance(e, _TooLarge):
        return a2a_upstream_error(
            agent,
            "too_large",
            f"A2A agent {name}: the reply is larger than {MAX_REPLY_BYTES} bytes",
        )
    cause = e.__cause__
    if isinstance(cause, httpx.HTTPStatusError):
        status = cause.response.status_code
        return a2a_upstream_error(
            agent, "status", f"A2A agent {name}: answered HTTP {status}", status=status
        )
    if isinstance(e, AgentCardResolutionError) and e.status_code:
        return a2a_upstream_error(
            agent,
            "status",
            f"A2A agent {name}: the agent card answered HTTP {e.status_code}",
            status=e.status_code,
        )
    if isinstance(cause, httpx.TimeoutException):
        return a2a_upstream_error(agent, "timeout", f"A2A agent {name}: the call timed out")
    if isinstance(cause, httpx.RequestError) or isinstance(e, httpx.RequestError):
        return a2a_upstream_error(agent, "connect", f"A2A agent {name}: cannot reach it: {e}")
    if isinstance(e, AgentCardResolutionError):
        return a2a_upstream_error(
            agent, "invalid_json", f"A2A agent {name}: the agent card cannot be read: {e}"
        )
    if isinstance(cause, (json.JSONDecodeError, ParseError)) or isinstance(
        e, (json.JSONDecodeError, ParseError)
    ):
        return a2a_upstream_error(agent, "invalid_json", f"A2A agent {name}: not valid JSON: {e}")
    if isinstance(e, A2AClientError):
        if "Invalid JSON-RPC response" in str(e):
            return a2a_upstream_error(agent, "invalid_json", f"A2A agent {name}: {e}")
        return a2a_upstream_error(agent, "a2a_error", f"A2A agent {name}: {e}")
    if isinstance(e, A2AError):
        return a2a_upstream_error(
            agent, "a2a_error", f"A2A agent {name} answered an error: {type(e).__name__}: {e}"
        )
    if isinstance(e, ValueError):  # the SDK's "neither task nor message" and the like
        return a2a_upstream_error(agent, "invalid_json", f"A2A agent {name}: {e}")
    log.error("the call to the A2A agent %s failed", agent, exc_info=e)
    return a2a_upstream_error(agent, "a2a_error", f"A2A agent {name}: {type(e).__name__}: {e}")


async def _card(agent: str, cards: list[str], timeout: float) -> tuple[str, Any]:
    """The (cached) card of the first card URL that answers."""
    from a2a.client import A2ACardResolver
    from a2a.client.errors import AgentCardResolutionError

    for i, url in enumerate(cards):
        if url in _cards:
            return url, _cards[url]
        resolver = A2ACardResolver(_client_http(), url, agent_card_path="")
        try:
            card = await resolver.get_agent_card(http_kwargs={"timeout": timeout})
        except AgentCardResolutionError as e:
            if e.status_code == 404 and i + 1 < len(cards):
                continue
            raise
        _cards[url] = card
        return url, card
    raise AssertionError("unreachable")


def _parts_text(parts: Any) -> str:
    from google.protobuf.json_format import MessageToDict

    texts = []
    for p in parts:
        if p.HasField("text"):
            texts.append(p.text)
        elif p.HasField("data"):
            texts.append(json.dumps(MessageToDict(p.data), ensure_ascii=False))
    return "\n".join(texts)


async def _task_text(agent: str, client: Any, task: Any, context: Any) -> str:
    from a2a.types.a2a_pb2 import GetTaskRequest, Role, TaskState

    name = json.dumps(agent)
    while task.status.state in (TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING):
        await asyncio.sleep(POLL_INTERVAL)  # the call's own bound ends this loop
        task = await client.get_task(GetTaskRequest(id=task.id), context=context)
    state = task.status.state
    said = _parts_text(task.status.message.parts) if task.status.HasField("message") else ""
    if state != TaskState.TASK_STATE_COMPLETED:
        what = TaskState.Name(state).removeprefix("TASK_STATE_").lower()
        raise a2a_upstream_error(
            agent,
            "a2a_error",
            f"A2A agent {name}: its task ended {what}" + (f": {said}" if said else ""),
        )
    texts = [_parts_text(a.parts) for a in task.artifacts]
    text = "\n".join(t for t in texts if t) or said
    if not text:
        replies = [m for m in task.history if m.role == Role.ROLE_AGENT]
        text = _parts_text(replies[-1].parts) if replies else ""
    return text


async def _send(
    agent: str,
    cards: list[str],
    headers: dict[str, str],
    origins: set,
    text: str,
    skill_id: str | None,
    timeout: float,
) -> str:
    from a2a.client import ClientCallContext, ClientConfig, ClientFactory
    from a2a.types.a2a_pb2 import Message, Part, Role, SendMessageRequest

    name = json.dumps(agent)
    card_url = None
    try:
        card_url, card = await _card(agent, cards, timeout)
        # The credential goes only where the configuration points.
        allowed = type(card)()
        allowed.CopyFrom(card)
        del allowed.supported_interfaces[:]
        allowed.supported_interfaces.extend(
            i for i in card.supported_interfaces if _origin(i.url) in origins
        )
        if not allowed.supported_interfaces:
            raise a2a_upstream_error(
                agent,
                "connect",
                f"A2A agent {name}: the card's endpoints are on none of the configured "
                "origins (the card's, the service's serverUrl); nothing is sent to them",
            )
        factory = ClientFactory(ClientConfig(httpx_client=_client_http(), streaming=False))
        try:
            client = factory.create(allowed)
        except ValueError as e:
            raise a2a_upstream_error(
                agent, "a2a_error", f"A2A agent {name}: no JSON-RPC endpoint on its card ({e})"
            ) from None
        message = Message(message_id=uuid.uuid4().hex, role=Role.ROLE_USER, parts=[Part(text=text)])
        if skill_id:
            message.metadata.update({"skillId": skill_id})
        context = ClientCallContext(service_parameters=dict(headers), timeout=timeout)
        last = None
        async for response in client.send_message(
            SendMessageRequest(message=message), context=context
        ):
            last = response
        if last is not None and last.HasField("message"):
            reply = _parts_text(last.message.parts)
        elif last is not None and last.HasField("task"):
            reply = await _task_text(agent, client, last.task, context)
        else:
            raise a2a_upstream_error(agent, "invalid_json", f"A2A agent {name}: no reply")
        if not reply:
            raise a2a_upstream_error(
                agent, "invalid_json", f"A2A agent {name}: the reply holds no text"
            )
        return reply
    except BaseException as e:
        error = _failure(agent, e) if isinstance(e, Exception) else None
        # A card that led to a failure is fetched again next time.
        if card_url is not None and (error is None or error.details.get("reason") != "a2a_error"):
            _cards.pop(card_url, None)
        if error is None or error is e:
            raise
        raise error from None


def invoke_a2a_agent(
    name: str, text: str, skill_id: str | None = None, *, deadline: float | None = None
) -> str:
    """Sends `text` to the registered A2A agent `name` (to `skill_id`, else
    its declared skill) and returns the reply's text. `deadline` is the
    seconds left in the run, as for `run_agent`. See the module docstring."""
    require("a2a.client", "a2a", "invoke_a2a_agent()")
    from svc.upstream import call_timeout

    if not isinstance(text, str):
        raise TypeError(f"an A2A message is text, not {type(text).__name__}")
    meta = _a2a_meta(name)
    skill = skill_id if skill_id is not None else meta["skill_id"]
    if skill is not None and (not isinstance(skill, str) or not skill):
        raise ValueError(f"skill_id must be a skill's id, not {skill!r}")
    cards, headers, origins = _target(name, meta)
    headers = dict(headers)
    telemetry.inject(headers)  # read here: the call runs on the A2A loop's thread
    timeout = call_timeout(meta["timeout_ms"] / 1000, deadline)
    if timeout is None or timeout <= 0:
        raise a2a_upstream_error(name, "timeout", f"A2A agent {json.dumps(name)}: no time left")

    async def bounded() -> str:
        return await asyncio.wait_for(
            _send(name, cards, headers, origins, text, skill, timeout), timeout
        )

    future = asyncio.run_coroutine_threadsafe(bounded(), _loop.get())
    try:
        return future.result(timeout + RESULT_MARGIN)
    except (concurrent.futures.TimeoutError, asyncio.TimeoutError):
        future.cancel()
        raise a2a_upstream_error(
            name, "timeout", f"A2A agent {json.dumps(name)}: the call timed out"
        ) from None
