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
import copy
import hashlib
import hmac
import inspect
import json
import logging
import os
import re
import sys
import uuid
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from svc import registry
from svc.config import as_written, secret_variable
from svc.errors import ConfigError, RegistrationError, SvcError, require

log = logging.getLogger("svc.a2a")

SERVER_KIND = "a2a_servers"
AUTH_KIND = "a2a_authenticators"
RPC_PATH = "/a2a"
CARD_PATHS = ("/.well-known/agent-card.json", "/.well-known/agent.json")
SKILL_ID_KEY = "skillId"  # in the message's metadata
SCHEMES = ("bearer", "api_key")
# The message methods whose skill's roles are checked before dispatch (1.0 and 0.3 names).
SEND_METHODS = ("SendMessage", "SendStreamingMessage", "message/send", "message/stream")
TOKEN_KEYS = ("subject", "roles", "token", "env", "scheme")
SKILL_KEYS = ("id", "name", "description", "tags", "roles", "examples")
SECTION_KEYS = (
    "enabled",
    "title",
    "description",
    "url",
    "version",
    "input_field",
    "output_field",
    "skills",
    "server",
)

_MARK = "__svc_a2a_skill__"
_SKILL_ID = re.compile(r"[A-Za-z0-9_.:-]{1,128}")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Where the guard leaves the caller for the handler, in the request's ASGI scope.
_SCOPE_KEY = "svc.a2a.identity"
_STATE_KEY = "svc_a2a_identity"  # the same, in the SDK's ServerCallContext.state
# The base URL of the request being answered, for a card whose URL is not configured.
_base_url: contextvars.ContextVar[str] = contextvars.ContextVar("svc_a2a_base_url")


# --- decorators --------------------------------------------------------------------


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise RegistrationError(f"{what} must be text, not {value!r}")
    return value


def _check_skill_id(skill_id: Any, where: str, error: type[Exception]) -> str:
    if not isinstance(skill_id, str) or not _SKILL_ID.fullmatch(skill_id):
        raise error(
            f"{where}: the skill id {skill_id!r} is not 1 to 128 letters, digits, "
            "'_', '-', '.' or ':'"
        )
    return skill_id


def a2a_skill(
    skill_id: str | Callable | None = None,
    name: str = "",
    roles: Iterable[str] = (),
    tags: Iterable[str] = (),
    description: str = "",
    examples: Iterable[str] = (),
) -> Any:
    """A method of an `@svc_a2a_server` class answering the skill `skill_id`.

    It is called as `method(text, state)` (sync methods in a worker thread)
    and returns the reply's text (another value is sent as JSON text).
    `roles`: the caller must hold one of them (none: any caller); `name`
    defaults to the id, `description` to the docstring's first line, `tags`
    to `[skill_id]` (the card needs at least one). Works bare or called."""
    if isinstance(skill_id, str) or (skill_id is not None and not callable(skill_id)):
        _check_skill_id(skill_id, "@a2a_skill", RegistrationError)
    _text(name, "name")
    _text(description, "description")
    role_names = registry._names(roles, "roles")
    tag_names = registry._names(tags, "tags")
    example_list = tuple(_text(e, "an example") for e in examples)

    def mark(fn: Any) -> Any:
        if not callable(fn):
            raise RegistrationError(f"@a2a_skill must decorate a method, not {fn!r}")
        sid = skill_id if isinstance(skill_id, str) else fn.__name__
        _check_skill_id(sid, "@a2a_skill", RegistrationError)
        options = {
            "id": sid,
            "name": name or sid,
            "roles": role_names,
            "tags": tag_names or (sid,),
            "description": description or (inspect.getdoc(fn) or "").split("\n")[0] or sid,
            "examples": example_list,
        }
        setattr(fn, _MARK, options)
        return fn

    if callable(skill_id):
        return mark(skill_id)
    return mark


def _members(cls: type) -> list[tuple[str, dict[str, Any]]]:
    """The @a2a_skill methods of a class (a subclass's definition wins)."""
    found: dict[str, dict[str, Any]] = {}
    for klass in reversed(cls.__mro__):
        for attr, value in vars(klass).items():
            options = getattr(value, _MARK, None)
            if options is not None:
                found[attr] = options
            else:
                found.pop(attr, None)
    seen: dict[str, str] = {}
    for attr, options in found.items():
        if options["id"] in seen:
            raise RegistrationError(
                f"{cls.__qualname__} defines the skill {options['id']!r} twice "
                f"({seen[options['id']]} and {attr})"
            )
        seen[options["id"]] = attr
    return list(found.items())


def svc_a2a_server(
    title: str, url: str | None = None, description: str = "", version: str | None = None
) -> Callable[[type], type]:
    """Publishes the service as the A2A agent `title`; decorates the class
    whose `@a2a_skill` methods are its skills (one instance serves every request).

    `url`: where callers reach the service, its base URL (the card lists
    `<url>/a2a`) or the full `.../a2a` URL; `env:NAME` reads it from the
    environment. Without it, the card names the host the card was asked from
    (behind a proxy, set it). `version` defaults to the app's version. One
    A2A server per service."""
    if not isinstance(title, str) or not title.strip():
        raise RegistrationError(
            '@svc_a2a_server needs the agent\'s title, like @svc_a2a_server("Support desk")'
        )
    if url is not None:
        _check_url(url, "@svc_a2a_server url", RegistrationError)
    _text(description, "description")
    if version is not None:
        _text(version, "version")

    def register(cls: type) -> type:
        if not isinstance(cls, type):
            raise RegistrationError(f"@svc_a2a_server({title!r}) must decorate a class")
        members = _members(cls)
        if not members:
            raise RegistrationError(f"{cls.__qualname__} has no @a2a_skill method")
        servers = registry._registry[SERVER_KIND]
        origin = registry._origin(cls)
        for key, other in list(servers.items()):
            if registry._origin(other.obj) == origin:
                del servers[key]  # a reload of the same class
            else:
                raise RegistrationError(
                    f"two A2A servers: {registry._origin(other.obj)} and {origin}; "
                    "a service is one A2A agent"
                )
        meta = {
            "title": title,
            "url": url,
            "description": description,
            "version": version,
            "members": members,
        }
        return registry._register(SERVER_KIND, title, cls, meta)

    return register


def a2a_authenticator(
    fn: Callable | None = None, *, scheme: str = "bearer", name: str | None = None
) -> Any:
    """A custom check of the credential of A2A callers: `fn(headers)` (sync
    or async; `headers` is case-insensitive, `headers.get("authorization")`)
    returns the caller's identity, `{"subject": str, "roles": [...]}`, or None
    to refuse. `scheme` ("bearer" or "api_key", the `X-API-Key` header) is
    what the agent card declares. Several are asked in registration order,
    after the `a2a.server.tokens` of the config; the first identity wins."""
    if scheme not in SCHEMES:
        raise RegistrationError(f"scheme {scheme!r} is not one of {', '.join(SCHEMES)}")

    def register(f: Callable) -> Callable:
        if not callable(f):
            raise RegistrationError(f"@a2a_authenticator must decorate a function, not {f!r}")
        return registry._register(AUTH_KIND, registry._named(f, name), f, {"scheme": scheme})

    if fn is not None:
        return register(fn)
    return register


def registered_server() -> registry.Component | None:
    servers = list(registry._registry[SERVER_KIND].values())
    return servers[0] if servers else None


# --- configuration -------------------------------------------------------------------


def a2a_section(config: dict) -> dict:
    section = config.get("a2a")
    if section is None:
        return {}
    if not isinstance(section, dict):
        raise ConfigError(f"a2a must be a mapping, not {section!r}")
    unknown = sorted(set(section) - set(SECTION_KEYS))
    if unknown:
        raise ConfigError(
            f"a2a: unknown key(s) {', '.join(unknown)}; the keys are {', '.join(SECTION_KEYS)}"
        )
    return section


def graph_enabled(config: dict) -> bool:
    enabled = a2a_section(config).get("enabled", False)
    if not isinstance(enabled, bool):
        raise ConfigError(f"a2a.enabled must be true or false, not {enabled!r}")
    return enabled


def wanted(config: dict) -> bool:
    """Whether the app publishes an A2A agent (without importing the SDK)."""
    return registered_server() is not None or graph_enabled(config)


def _check_url(url: Any, where: str, error: type[Exception]) -> str:
    if isinstance(url, str) and url.startswith("env:"):
        if not _ENV_NAME.fullmatch(url[4:]):
            raise error(f"{where}: {url!r} does not name an environment variable")
        return url
    parts = urlsplit(url) if isinstance(url, str) else None
    if parts is None or parts.scheme not in ("http", "https") or not parts.netloc:
        raise error(f"{where}: {url!r} is not an http(s) URL or env:NAME")
    return url


def _endpoint_url(url: str | None, where: str) -> str | None:
    """The JSON-RPC endpoint's public URL from a configured base or endpoint URL."""
    if url is None:
        return None
    _check_url(url, where, ConfigError)
    if url.startswith("env:"):
        value = os.environ.get(url[4:], "")
        if not value:
            raise ConfigError(f"{where} reads the environment variable {url[4:]}, which is not set")
        url = _check_url(value, f"{where} ({url})", ConfigError)
    base = url.rstrip("/")
    return base if base.endswith(RPC_PATH) else base + RPC_PATH


def _names_of(value: Any, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ConfigError(f"{where} must be a list of names, not {value!r}")
    return tuple(value)


# --- credentials ----------------------------------------------------------------------


@dataclass(frozen=True)
class Identity:
    """Who called. `unrestricted` is the service's own key, which, as on
    /invoke, is not limited by skill roles."""

    subject: str
    roles: tuple[str, ...] = ()
    unrestricted: bool = False

    def may_call(self, skill: Skill) -> bool:
        return self.unrestricted or not skill.roles or bool(set(self.roles) & set(skill.roles))

    def as_state(self) -> dict[str, Any]:
        return {"subject": self.subject, "roles": list(self.roles)}


@dataclass(frozen=True)
class _Token:
    subject: str
    roles: tuple[str, ...]
    scheme: str
    digest: bytes


def _digest(value: str) -> bytes:
    # Starlette decodes headers as latin-1: that gives back the bytes sent.
    return hashlib.sha256(value.encode("latin-1", "replace")).digest()


def _token_variable(entry: dict, where: str) -> str:
    """The environment variable an entry's token comes from; an inline token
    is refused (the raw file is read: `${NAME}` is what must be written)."""
    has_env, has_token = "env" in entry, "token" in entry
    if has_env and has_token:
        raise ConfigError(f"{where} has both token and env: give one")
    if has_env:
        name = entry["env"]
        if isinstance(name, str) and name.startswith("env:"):
            name = name[4:]
        if not isinstance(name, str) or not _ENV_NAME.fullmatch(name):
            raise ConfigError(f"{where}.env must name an environment variable, not {name!r}")
        return name
    if not has_token:
        raise ConfigError(
            f"{where} needs its token from the environment: token: ${{NAME}} or env: NAME"
        )
    return secret_variable(entry["token"], f"{where}.token")


def config_tokens(config: dict) -> list[_Token]:
    """The `a2a.server.tokens` table, each token read from the environment
    (an unset variable is a ConfigError: the service refuses to start)."""
    server = as_written(config, "a2a.server")
    if server is None:
        return []
    if not isinstance(server, dict):
        raise ConfigError(f"a2a.server must be a mapping, not {server!r}")
    written = server.get("tokens")
    if written is None:
        return []
    if not isinstance(written, list):
        raise ConfigError("a2a.server.tokens must be a list of {subject, roles, token, scheme}")
    tokens: list[_Token] = []
    seen: dict[bytes, str] = {}
    for i, entry in enumerate(written):
        where = f"a2a.server.tokens[{i}]"
        if not isinstance(entry, dict):
            raise ConfigError(f"{where} must be a mapping of subject, roles, token, scheme")
        unknown = sorted(set(entry) - set(TOKEN_KEYS))
        if unknown:
            raise ConfigError(f"{where}: unknown key(s) {', '.join(unknown)}")
        subject = entry.get("subject")
        if not isinstance(subject, str) or not subject:
            raise ConfigError(f"{where}.subject must be a non-empty name")
        roles = _names_of(entry.get("roles"), f"{where}.roles")
        scheme = entry.get("scheme", "bearer")
        if scheme not in SCHEMES:
            raise ConfigError(f"{where}.scheme {scheme!r} is not one of {', '.join(SCHEMES)}")
        variable = _token_variable(entry, where)
        value = os.environ.get(variable)
        if not value:
            raise ConfigError(
                f"{where} ({subject}) reads its token from {variable}, which is not set"
            )
        digest = _digest(value)
        if digest in seen:
            raise ConfigError(f"{where} has the same token as {seen[digest]}")
        seen[digest] = where
        tokens.append(_Token(subject, roles, scheme, digest))
    return tokens


def _bearer(headers: Any) -> str | None:
    h = headers.get("authorization") or ""
    if h[:7].lower() != "bearer ":
        return None
    return h[7:].strip() or None


def _identity_of(value: Any, who: str) -> Identity | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise TypeError(f"{who} returned {value!r}: return {{'subject', 'roles'}} or None")
    subject = value.get("subject")
    roles = value.get("roles") or ()
    if not isinstance(subject, str) or not subject:
        raise TypeError(f"{who} returned no subject: {{'subject': '...', 'roles': [...]}}")
    if isinstance(roles, str) or not all(isinstance(r, str) for r in roles):
        raise TypeError(f"{who} returned roles that are not a list of names: {roles!r}")
    return Identity(subject, tuple(roles))


class Credentials:
    """Who may call /a2a, and what the agent card declares.

    The `a2a.server.tokens` of the config and the `@a2a_authenticator`s when
    there are any; otherwise the service's own credential (server.auth, the
    one /invoke takes), whose holder is the subject "service" and passes
    every role check; with server.auth none and neither, no credential
    (subject "anonymous", no roles)."""

    def __init__(self, tokens: list[_Token], authenticators: list[Any], app_auth: Any):
        self.tokens = tokens
        self.authenticators = authenticators
        self.app_auth = None if tokens or authenticators else app_auth
        self.open = not tokens and not authenticators and app_auth is None
        schemes = {t.scheme for t in tokens} | {a.meta["scheme"] for a in authenticators}
        if self.app_auth is not None:
            schemes.add(self.app_auth.scheme)
        self.schemes = tuple(s for s in SCHEMES if s in schemes)
        self.challenge = {"WWW-Authenticate": "Bearer"} if "bearer" in self.schemes else None

    async def identify(self, headers: Any) -> Identity | None:
        if self.open:
            return Identity("anonymous")
        if self.app_auth is not None:
            return Identity("service", (), True) if self.app_auth.allows(headers) else None
        found = None
        if self.tokens:
            presented = {"bearer": _bearer(headers), "api_key": headers.get("x-api-key") or None}
            digests = {k: _digest(v) for k, v in presented.items() if v}
            for t in self.tokens:  # every entry is compared: no early exit
                got = digests.get(t.scheme)
                if got is not None and hmac.compare_digest(got, t.digest) and found is None:
                    found = Identity(t.subject, t.roles)
        if found is not None:
            return found
        for a in self.authenticators:
            value = a.obj(headers)
            if inspect.isawaitable(value):
                value = await value
            identity = _identity_of(value, f'@a2a_authenticator "{a.name}"')
            if identity is not None:
                return identity
        return None


# --- skills ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Skill:
    """One skill as served: `call(text, state)` gives the reply text."""

    id: str
    name: str
    description: str
    tags: tuple[str, ...]
    roles: tuple[str, ...]
    examples: tuple[str, ...]
    call: Callable[[str, dict], Any]


def _method_skills(component: registry.Component) -> list[Skill]:
    try:
        instance = component.obj()
    except Exception as e:
        raise RegistrationError(
            f'cannot create the A2A server "{component.name}" ({component.obj.__qualname__}()): '
            f"{type(e).__name__}: {e}"
        ) from e
    skills = []
    for attr, options in component.meta["members"]:
        method = getattr(instance, attr)

        async def call(text: str, state: dict, method: Callable = method) -> Any:
            if inspect.iscoroutinefunction(method):
                return await method(text, state)
            return await asyncio.to_thread(method, text, state)

        skills.append(
            Skill(
                options["id"],
                options["name"],
                options["description"],
                tuple(options["tags"]),
                tuple(options["roles"]),
                tuple(options["examples"]),
                call,
            )
        )
    return skills


def _input_of(schema: Any, input_field: Any) -> Callable[[str], dict]:
    """How a message's text becomes the graph's input state: `a2a.input_field`
    when configured, else the first required string field, else a user
    message appended to the `messages` field."""

    def into(field: Any, name: str) -> Callable[[str], dict]:
        if field is not None and field.type == "messages":
            return lambda text: {name: [{"role": "user", "content": text}]}
        return lambda text: {name: text}

    if input_field is not None:
        if not isinstance(input_field, str) or not input_field:
            raise ConfigError(f"a2a.input_field must be a field name, not {input_field!r}")
        field = schema.field(input_field) if schema is not None else None
        if schema is not None and field is None:
            raise ConfigError(f"a2a.input_field: the graph has no state field {input_field!r}")
        if field is not None and field.type not in ("string", "messages", "any"):
            raise ConfigError(
                f"a2a.input_field: the field {input_field!r} is {field.type}, "
                "not string or messages"
            )
        chosen, build = field, into(field, input_field)
    elif schema is None:
        raise ConfigError(
            "a2a: the graph declares no state schema: set a2a.input_field to the field "
            "that takes the message's text"
        )
    else:
        chosen = next((f for f in schema.fields if f.required and f.type == "string"), None)
        if chosen is None:
            chosen = schema.field("messages")
            if chosen is None or chosen.type != "messages":
                raise ConfigError(
                    "a2a: the graph has no required string field and no messages field for "
                    "the message's text: set a2a.input_field"
                )
        build = into(chosen, chosen.name)
    if schema is not None:
        others = [f.name for f in schema.fields if f.required and f is not chosen]
        if others:
            raise ConfigError(
                f"a2a: the graph requires the state field(s) {', '.join(others)}, which an "
                "A2A message does not give"
            )
    return build


def reply_text(value: Any) -> str:
    """A state value as reply text: text as it is, a messages list as its last
    message's content, anything else as JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and value and isinstance(value[-1], dict):
        content = value[-1].get("content")
        if isinstance(content, str) and "role" in value[-1]:
            return content
    return json.dumps(value, ensure_ascii=False)


def last_written(result: dict, before: dict, written: list[str]) -> str | None:
    """The field the run wrote last that differs from its input: from the
    nodes' patches in order (`written`), else the last changed field of the
    final state (a graph that reports no node events)."""
    for name in reversed(written):
        if name in result and result[name] != before.get(name):
            return name
    changed = [k for k, v in result.items() if v != before.get(k)]
    return changed[-1] if changed else None


def graph_call(config: dict, runner: Any) -> Callable[[str, dict], Any]:
    """The `call(text, state)` of a skill running the graph of `runner`.

    The message's text goes into the input field (`_input_of`); the reply is
    `a2a.output_field` of the final state when configured, else the field
    the run wrote last (`last_written`), as text (`reply_text`). A run goes
    as on /invoke: validation, input guardrails, business policies (the
    context also holds `a2a: {skill, subject, roles}`), the run under the
    graph's deadline, output guardrails."""
    section = a2a_section(config)
    schema = runner.schema
    build = _input_of(schema, section.get("input_field"))
    output_field = section.get("output_field")
    if output_field is not None:
        if not isinstance(output_field, str) or not output_field:
            raise ConfigError(f"a2a.output_field must be a field name, not {output_field!r}")
        if schema is not None and schema.field(output_field) is None:
            raise ConfigError(f"a2a.output_field: the graph has no state field {output_field!r}")
    names = set(schema.field_names) if schema is not None else None

    async def call(text: str, state: dict) -> str:
        written: list[str] = []

        def emit(kind: str, node: Any, data: Any) -> None:
            patch = data.get("patch") if isinstance(data, dict) else None
            if kind != "node_finished" or not isinstance(patch, dict):
                return
            for key in patch:
                if names is None or key in names:
                    if key in written:
                        written.remove(key)
                    written.append(key)

        validated = runner.validate(build(text))
        before = copy.deepcopy(validated)
        guarded = registry.has_guardrails()
        if guarded:
            registry.run_guardrails("input", validated)
        caller = state["a2a_identity"]
        registry.enforce_policies(
            {
                "action": "run",
                "state": validated,
                "a2a": {"skill": state["skill_id"], **caller},
            }
        )
        result = await runner.arun(validated, emit=emit)
        if guarded:
            registry.run_guardrails("output", result)
        field = output_field or last_written(result, before, written)
        if field is None:
            raise SvcError(
                500,
                "execution_error",
                "the run changed no state field to answer with: set a2a.output_field",
            )
        value = result.get(field)
        if value is None:
            raise SvcError(500, "execution_error", f'the run left the reply field "{field}" empty')
        return reply_text(value)

    return call


def graph_skills(config: dict, runner: Any) -> list[Skill]:
    """The skills of `a2a.skills`, each running the graph of `runner`
    (`graph_call`). Without `a2a.skills`, one skill named after the graph."""
    section = a2a_section(config)
    call = graph_call(config, runner)
    written = section.get("skills")
    if written is None:
        written = [{"id": _graph_skill_id(runner.name), "name": runner.name}]
    if not isinstance(written, list) or not written:
        raise ConfigError("a2a.skills must be a non-empty list of {id, name, description?, ...}")
    skills = []
    for i, entry in enumerate(written):
        where = f"a2a.skills[{i}]"
        if not isinstance(entry, dict):
            raise ConfigError(f"{where} must be a mapping of id, name, description, tags, roles")
        unknown = sorted(set(entry) - set(SKILL_KEYS))
        if unknown:
            raise ConfigError(f"{where}: unknown key(s) {', '.join(unknown)}")
        sid = _check_skill_id(entry.get("id"), where, ConfigError)
        name = entry.get("name") or sid
        description = entry.get("description") or name
        if not isinstance(name, str) or not isinstance(description, str):
            raise ConfigError(f"{where}: name and description must be text")
        tags = _names_of(entry.get("tags"), f"{where}.tags") or (sid,)
        roles = _names_of(entry.get("roles"), f"{where}.roles")
        examples = _names_of(entry.get("examples"), f"{where}.examples")
        skills.append(Skill(sid, name, description, tags, roles, examples, call))
    return skills


def _graph_skill_id(name: str) -> str:
    sid = re.sub(r"[^A-Za-z0-9_.:-]", "_", name)[:128]
    return sid or "graph"


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

    from svc.server import MAX_RESPONSE_BYTES

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

        from svc.server import _Responses

        self.inner = inner
        self.credentials = credentials
        self.resolve = resolve
        self.Request = request_type
        self.reply = _Responses(Response)

    async def _refuse(self, request: Any, error: SvcError, headers: Any = None) -> Any:
        from svc.server import _discard

        await _discard(request)
        return self.reply.error(error, headers)

    async def _body(self, request: Any) -> bytes | None:
        """The whole body, or None when it is over the limit."""
        from svc.server import DRAIN_BYTES, MAX_REQUEST_BYTES

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
        from svc.server import _too_large

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
            await (await self._refuse(request, _too_large()))(scope, receive, send)
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
        skills += _method_skills(component)
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

    authenticators = list(registry._registry[AUTH_KIND].values())
    credentials = Credentials(config_tokens(config), authenticators, app_auth)
    # A decorated agent's own values win; the config fills what it leaves out.
    meta = component.meta if component is not None else {}
    title = meta.get("title") or section.get("title") or name
    description = meta.get("description") or section.get("description") or ""
    card_version = str(meta.get("version") or section.get("version") or version)
    if meta.get("url"):
        endpoint = _endpoint_url(meta["url"], "@svc_a2a_server url")
    else:
        endpoint = _endpoint_url(section.get("url"), "a2a.url")
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
    svc.a2a_peers (their event loop and connections) if the project used them."""
    try:
        yield
    finally:
        module = sys.modules.get("svc.a2a_peers")
        if module is not None:
            await asyncio.to_thread(module.close_clients)
