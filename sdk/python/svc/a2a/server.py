"""The service as an A2A agent (Agent2Agent protocol; the "a2a" extra, a2a-sdk 1.x).

A class decorated `@svc_a2a_server(title, url=..., description=..., version=...)`
is the agent; its methods marked `@a2a_skill(skill_id, ...)` are its skills,
each `(self, text: str, state: dict) -> str` (or async): `text` is the text of
the caller's message, `state` holds `a2a_identity` (`{"subject", "roles"}`, who
called), `skill_id`, `context_id`, `message_id` and `metadata` (the message's).
One instance serves every request. With `a2a: {enabled: true, skills: [...]}`
in the config, the entrypoint graph answers the configured skills instead (or
as well): see `graph_skills`.

`create_app()` then serves, next to /invoke:

- `GET /.well-known/agent-card.json` and the legacy `GET /.well-known/agent.json`:
  the agent card, without a credential. It lists the JSON-RPC endpoint twice
  (protocol 1.0 and 0.3, same URL), the skills (a skill's `roles` are its
  security requirements' scopes), and the security schemes a caller may use;
- `POST /a2a`: A2A JSON-RPC 2.0, with the 1.0 method names (`SendMessage`,
  which need the header `A2A-Version: 1.0`) and the 0.3 ones (`message/send`).

The caller names the skill in the message's metadata: `{"skillId": "<id>"}`
(optional when the agent has one skill). Every request to /a2a needs a
credential (see `Credentials`): a missing or wrong one is `401` with the HTTP
contract's envelope (and `WWW-Authenticate: Bearer` when bearer tokens are
accepted), a skill whose `roles` the caller lacks is `403` (code `forbidden`),
as the A2A specification asks of servers (HTTP 401/403, not JSON-RPC errors).
Everything else is answered in JSON-RPC: an unknown skill is `-32602`, a
message without text `-32005`, a failed skill or run `-32603` (`-32602` for a
state the graph refuses) whose `data` carries the contract's error code.

The agent is stateless: every message gets one reply message and no task is
kept (`GetTask` answers task not found), so any replica can answer anything.
The decorators only record; the a2a SDK is imported when the app is built.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import json
import logging
import sys
import uuid
from collections.abc import AsyncIterator, Callable, Iterable
from typing import Any

from svc import registry
from svc.a2a.agent import (
    AUTH_KIND,
    RPC_PATH,
    a2a_section,
    endpoint_url,
    graph_enabled,
    registered_server,
)
from svc.a2a.credentials import Credentials, Identity, calling, config_tokens
from svc.a2a.skills import Skill, graph_skills, method_skills, reply_text
from svc.contract import (
    DRAIN_BYTES,
    MAX_REQUEST_BYTES,
    MAX_RESPONSE_BYTES,
    JsonResponses,
    discard,
    too_large,
)
from svc.errors import ConfigError, SvcError, require

log = logging.getLogger("svc.a2a")

CARD_PATHS = ("/.well-known/agent-card.json", "/.well-known/agent.json")
SKILL_ID_KEY = "skillId"  # in the message's metadata
# The message methods whose skill's roles are checked before dispatch (1.0 and 0.3 names).
SEND_METHODS = ("SendMessage", "SendStreamingMessage", "message/send", "message/stream")
# Where the guard leaves the caller for the handler, in the request's ASGI scope.
_SCOPE_KEY = "svc.a2a.identity"
_STATE_KEY = "svc_a2a_identity"  # the same, in the SDK's ServerCallContext.state
# The base URL of the request being answered, for a card whose URL is not configured.
_base_url: contextvars.ContextVar[str] = contextvars.ContextVar("svc_a2a_base_url")


# --- the agent card -----------------------------------------------------------------------


def _card(
    *,
    title: str,
    description: str,
    version: str,
    endpoint: str,
    skills: list[Skill],
    credentials: Credentials,
) -> Any:
    from a2a.types.a2a_pb2 import (
        AgentCapabilities,
        AgentCard,
        AgentInterface,
        AgentSkill,
        APIKeySecurityScheme,
        HTTPAuthSecurityScheme,
        SecurityRequirement,
        SecurityScheme,
        StringList,
    )

    schemes = {}
    for scheme in credentials.schemes:
        if scheme == "bearer":
            schemes[scheme] = SecurityScheme(
                http_auth_security_scheme=HTTPAuthSecurityScheme(
                    scheme="Bearer", description="Authorization: Bearer <token>"
                )
            )
        else:
            schemes[scheme] = SecurityScheme(
                api_key_security_scheme=APIKeySecurityScheme(
                    location="header", name="X-API-Key", description="X-API-Key: <key>"
                )
            )

    def requirements(roles: tuple[str, ...]) -> list[Any]:
        # Alternatives: any one scheme suffices; a skill's roles are its scopes.
        return [SecurityRequirement(schemes={s: StringList(list=list(roles))}) for s in schemes]

    return AgentCard(
        name=title,
        description=description or title,
        version=version,
        supported_interfaces=[
            AgentInterface(url=endpoint, protocol_binding="JSONRPC", protocol_version="1.0"),
            AgentInterface(url=endpoint, protocol_binding="JSONRPC", protocol_version="0.3"),
        ],
        capabilities=AgentCapabilities(streaming=True, push_notifications=False),
        security_schemes=schemes,
        security_requirements=requirements(()),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[
            AgentSkill(
                id=s.id,
                name=s.name,
                description=s.description,
                tags=list(s.tags),
                examples=list(s.examples),
                security_requirements=requirements(s.roles) if s.roles and schemes else [],
            )
            for s in skills
        ],
    )


def _with_endpoint(card: Any, endpoint: str) -> Any:
    served = type(card)()
    served.CopyFrom(card)
    for interface in served.supported_interfaces:
        interface.url = endpoint
    return served


# --- the request handler --------------------------------------------------------------------


def _skill_id_of(metadata: Any) -> Any:
    return metadata.get(SKILL_ID_KEY) if isinstance(metadata, dict) else None


def _error_for(e: SvcError) -> Any:
    """The JSON-RPC error of a failed run: `data` holds the contract's code and details."""
    from a2a.utils.errors import InternalError, InvalidParamsError

    data = {"code": e.code}
    for key, value in (e.details or {}).items():
        data[key] = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    kind = InvalidParamsError if e.status in (400, 422) else InternalError
    return kind(message=f"{e.code}: {e.message}", data=data)


def _handler(skills: dict[str, Skill]) -> Any:
    """A stateless `RequestHandler`: a message in, one reply message out."""
    from a2a.server.request_handlers import RequestHandler, validate_request_params
    from a2a.types.a2a_pb2 import ListTasksResponse, Message, Part, Role
    from a2a.utils.errors import (
        A2AError,
        ContentTypeNotSupportedError,
        ExtendedAgentCardNotConfiguredError,
        InternalError,
        InvalidParamsError,
        InvalidRequestError,
        PushNotificationNotSupportedError,
        TaskNotFoundError,
    )
    from google.protobuf.json_format import MessageToDict

    def find(skill_id: Any) -> Skill:
        known = ", ".join(sorted(skills))
        if skill_id is None or skill_id == "":
            if len(skills) == 1:
                return next(iter(skills.values()))
            raise InvalidParamsError(
                message=f'name the skill in the message metadata, {{"{SKILL_ID_KEY}": "<id>"}}: '
                f"this agent has {known}"
            )
        if not isinstance(skill_id, str) or skill_id not in skills:
            raise InvalidParamsError(message=f"no skill {skill_id!r}: this agent has {known}")
        return skills[skill_id]

    class StatelessHandler(RequestHandler):
        resolve = staticmethod(find)

        async def _answer(self, params: Any, context: Any) -> Any:
            identity = context.state.get(_STATE_KEY)
            if not isinstance(identity, Identity):
                raise InternalError(message="the request reached the agent without a caller")
            message = params.message
            if message.task_id:
                raise TaskNotFoundError(
                    message=f"no task {message.task_id!r}: this agent keeps no tasks"
                )
            metadata = MessageToDict(message.metadata) if message.HasField("metadata") else {}
            skill = find(_skill_id_of(metadata))
            if not identity.may_call(skill):  # the guard answered 403 already
                raise InvalidRequestError(message=f'the skill "{skill.id}" is not for this caller')
            texts = [p.text for p in message.parts if p.HasField("text")]
            if not texts:
                raise ContentTypeNotSupportedError(message="send the message as text parts")
            state = {
                "a2a_identity": identity.as_state(),
                "skill_id": skill.id,
                "context_id": message.context_id,
                "message_id": message.message_id,
                "metadata": metadata,
            }
            try:
                with calling(identity):
                    value = await skill.call("\n".join(texts), state)
            except A2AError:
                raise
            except SvcError as e:
                raise _error_for(e) from None
            except Exception as e:
                log.error('the A2A skill "%s" failed', skill.id, exc_info=e)
                raise _error_for(
                    SvcError(
                        500,
                        "execution_error",
                        f'the skill "{skill.id}" failed: {type(e).__name__}: {e}',
                        {"skill": skill.id},
                    )
                ) from None
            try:
                text = reply_text(value)
            except (TypeError, ValueError):
                raise _error_for(
                    SvcError(500, "execution_error", "the reply cannot be encoded as JSON")
                ) from None
            if len(text.encode()) > MAX_RESPONSE_BYTES:
                raise _error_for(
                    SvcError(
                        500,
                        "execution_error",
                        "the response is larger than 4 MiB",
                        {"reason": "response_too_large"},
                    )
                )
            return Message(
                message_id=uuid.uuid4().hex,
                context_id=message.context_id or uuid.uuid4().hex,
                role=Role.ROLE_AGENT,
                parts=[Part(text=text)],
            )

        @validate_request_params
        async def on_message_send(self, params: Any, context: Any) -> Any:
            return await self._answer(params, context)

        @validate_request_params
        async def on_message_send_stream(self, params: Any, context: Any) -> Any:
            yield await self._answer(params, context)

        async def on_get_task(self, params: Any, context: Any) -> Any:
            return None  # answered as task not found

        async def on_list_tasks(self, params: Any, context: Any) -> Any:
            return ListTasksResponse(next_page_token="", page_size=0, total_size=0)

        async def on_cancel_task(self, params: Any, context: Any) -> Any:
            return None

        async def on_subscribe_to_task(self, params: Any, context: Any) -> Any:
            raise TaskNotFoundError(message="this agent keeps no tasks")
            yield  # an async generator, as the interface wants

        async def on_create_task_push_notification_config(self, params: Any, context: Any) -> Any:
            raise PushNotificationNotSupportedError

        async def on_get_task_push_notification_config(self, params: Any, context: Any) -> Any:
            raise PushNotificationNotSupportedError

        async def on_list_task_push_notification_configs(self, params: Any, context: Any) -> Any:
            raise PushNotificationNotSupportedError

        async def on_delete_task_push_notification_config(self, params: Any, context: Any) -> Any:
            raise PushNotificationNotSupportedError

        async def on_get_extended_agent_card(self, params: Any, context: Any) -> Any:
            raise ExtendedAgentCardNotConfiguredError

    return StatelessHandler()


def _context_builder() -> Any:
    from a2a.auth.user import User
    from a2a.server.routes import DefaultServerCallContextBuilder

    class Caller(User):
        def __init__(self, identity: Identity):
            self.identity = identity

        @property
        def is_authenticated(self) -> bool:
            return True

        @property
        def user_name(self) -> str:
            return self.identity.subject

    class Builder(DefaultServerCallContextBuilder):
        """The SDK's context, with the caller the guard identified."""

        def build(self, request: Any) -> Any:
            context = super().build(request)
            identity = request.scope.get(_SCOPE_KEY)
            if isinstance(identity, Identity):
                context.state[_STATE_KEY] = identity
                context.user = Caller(identity)
            return context

    return Builder()


# --- HTTP ------------------------------------------------------------------------------------


class _Endpoint:
    """The ASGI app of POST /a2a: the credential (401), the body's size (413)
    and the skill's roles (403) are checked here, before the SDK's JSON-RPC
    dispatcher gets the request (and its body, read once)."""

    def __init__(self, inner: Any, credentials: Credentials, resolve: Callable, request_type: type):
        from starlette.responses import Response

        self.inner = inner
        self.credentials = credentials
        self.resolve = resolve
        self.Request = request_type
        self.reply = JsonResponses(Response)

    async def _refuse(self, request: Any, error: SvcError, headers: Any = None) -> Any:
        await discard(request)
        return self.reply.error(error, headers)

    async def _body(self, request: Any) -> bytes | None:
        """The whole body, or None when it is over the limit."""
        length = request.headers.get("content-length")
        if length is not None and length.isdigit() and int(length) > MAX_REQUEST_BYTES:
            return None
        chunks, size = [], 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > DRAIN_BYTES:
                break
            if size <= MAX_REQUEST_BYTES:
                chunks.append(chunk)
        return None if size > MAX_REQUEST_BYTES else b"".join(chunks)

    def _forbidden(self, identity: Identity, body: bytes) -> SvcError | None:
        try:
            rpc = json.loads(body)
        except ValueError:
            return None  # the dispatcher answers the parse error
        if not isinstance(rpc, dict) or rpc.get("method") not in SEND_METHODS:
            return None
        params = rpc.get("params")
        message = params.get("message") if isinstance(params, dict) else None
        metadata = message.get("metadata") if isinstance(message, dict) else None
        try:
            skill = self.resolve(_skill_id_of(metadata))
        except Exception:
            return None  # the handler answers an unknown skill
        if identity.may_call(skill):
            return None
        held = ", ".join(identity.roles) or "none"
        return SvcError(
            403,
            "forbidden",
            f'the skill "{skill.id}" is for the roles {", ".join(skill.roles)}; '
            f'"{identity.subject}" holds {held}',
            {"skill": skill.id},
        )

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        request = self.Request(scope, receive)
        try:
            identity = await self.credentials.identify(request.headers)
        except Exception as e:
            log.error("the A2A authenticator failed", exc_info=e)
            error = SvcError(
                500, "execution_error", f"the A2A authenticator failed: {type(e).__name__}: {e}"
            )
            await (await self._refuse(request, error))(scope, receive, send)
            return
        if identity is None:
            unauthorized = SvcError(401, "unauthorized", "missing or wrong credential")
            answer = await self._refuse(request, unauthorized, self.credentials.challenge)
            await answer(scope, receive, send)
            return
        body = await self._body(request)
        if body is None:
            await (await self._refuse(request, too_large()))(scope, receive, send)
            return
        refused = self._forbidden(identity, body)
        if refused is not None:
            await self.reply.error(refused)(scope, receive, send)
            return
        replayed = False

        async def replay() -> Any:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()  # then only the disconnect, which SSE listens for

        await self.inner({**scope, _SCOPE_KEY: identity}, replay, send)


def http_routes(
    config: dict,
    runner: Any,
    *,
    name: str,
    version: str,
    app_auth: Any,
    more_skills: Iterable[Skill] = (),
) -> list[tuple[str, Any, list[str]]]:
    """(path, endpoint, methods) of the agent card and of /a2a, for
    create_app(); `app_auth` is the app's own credential check (or None);
    `more_skills` are published next to the decorated and configured ones
    (the graphs of an `@svc_graph_server`)."""
    require("a2a.server.routes", "a2a", "the A2A server")
    from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
    from starlette.requests import Request

    component = registered_server()
    section = a2a_section(config)
    skills: list[Skill] = []
    if component is not None:
        skills += method_skills(component)
    if graph_enabled(config):
        if runner is None:
            raise ConfigError("a2a.enabled is true but there is no graph to publish")
        skills += graph_skills(config, runner)
    skills += more_skills
    by_id: dict[str, Skill] = {}
    for s in skills:
        if s.id in by_id:
            raise ConfigError(f'two A2A skills have the id "{s.id}"')
        by_id[s.id] = s

    authenticators = registry.registered(AUTH_KIND)
    credentials = Credentials(config_tokens(config), authenticators, app_auth)
    # A decorated agent's own values win; the config fills what it leaves out.
    meta = component.meta if component is not None else {}
    title = meta.get("title") or section.get("title") or name
    description = meta.get("description") or section.get("description") or ""
    card_version = str(meta.get("version") or section.get("version") or version)
    if meta.get("url"):
        endpoint = endpoint_url(meta["url"], "@svc_a2a_server url")
    else:
        endpoint = endpoint_url(section.get("url"), "a2a.url")
    if not isinstance(title, str) or not isinstance(description, str):
        raise ConfigError("a2a.title and a2a.description must be text")
    card = _card(
        title=title,
        description=description,
        version=card_version,
        endpoint=endpoint or "http://localhost" + RPC_PATH,
        skills=list(by_id.values()),
        credentials=credentials,
    )

    async def dynamic(served: Any) -> Any:
        # No configured URL: the card names the address it was asked at.
        return _with_endpoint(served, _base_url.get().rstrip("/") + RPC_PATH)

    routes: list[tuple[str, Any, list[str]]] = []
    for path in CARD_PATHS:
        inner = create_agent_card_routes(
            card, card_modifier=None if endpoint else dynamic, card_url=path
        )[0].endpoint
        if endpoint:
            routes.append((path, inner, ["GET"]))
            continue

        async def card_endpoint(request: Any, inner: Callable = inner) -> Any:
            token = _base_url.set(str(request.base_url))
            try:
                return await inner(request)
            finally:
                _base_url.reset(token)

        routes.append((path, card_endpoint, ["GET"]))

    handler = _handler(by_id)
    rpc = create_jsonrpc_routes(
        handler, RPC_PATH, context_builder=_context_builder(), enable_v0_3_compat=True
    )[0]
    routes.append((RPC_PATH, _Endpoint(rpc.app, credentials, handler.resolve, Request), ["POST"]))
    return routes


@contextlib.asynccontextmanager
async def clients_closed() -> AsyncIterator[None]:
    """For the app's lifespan: at its end, closes the A2A clients of
    svc.a2a.peers (their event loop and connections) if the project used them."""
    try:
        yield
    finally:
        module = sys.modules.get("svc.a2a.peers")
        if module is not None:
            await asyncio.to_thread(module.close_clients)
