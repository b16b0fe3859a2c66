"""Who may call the A2A agent: the `a2a.server.tokens` of the config (each
token from the environment), the `@a2a_authenticator`s, or else the
service's own credential (`Credentials`); the caller found is an `Identity`,
which the run of a skill reads with `caller()`.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import hmac
import inspect
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from svc.a2a.agent import SCHEMES, names_of
from svc.config import as_written, secret_variable
from svc.config.secrets import ENV_NAME
from svc.errors import ConfigError

if TYPE_CHECKING:
    from svc.a2a.skills import Skill

TOKEN_KEYS = ("subject", "roles", "token", "env", "scheme")


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


# The caller of the skill being answered: set around its call, so the
# graph's nodes (in the worker thread asyncio.to_thread copies it to, or in
# LangGraph's executor) and a skill method see it.
_caller: contextvars.ContextVar[Identity | None] = contextvars.ContextVar(
    "svc_a2a_caller", default=None
)


def caller() -> dict[str, Any] | None:
    """Who called the A2A agent, for the code the call runs (a node, a tool,
    a skill method): `{"subject": ..., "roles": [...]}`, a fresh copy each
    time. The service's own credential is the subject "service", and with no
    credential asked, "anonymous", both with no roles. None outside an A2A
    call (an /invoke request, an MCP call)."""
    identity = _caller.get()
    return None if identity is None else identity.as_state()


@contextlib.contextmanager
def calling(identity: Identity) -> Iterator[None]:
    """`identity` is the caller of what runs inside."""
    token = _caller.set(identity)
    try:
        yield
    finally:
        _caller.reset(token)


@dataclass(frozen=True)
class Token:
    """One entry of `a2a.server.tokens`, its token kept as a digest only."""

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
        if not isinstance(name, str) or not ENV_NAME.fullmatch(name):
            raise ConfigError(f"{where}.env must name an environment variable, not {name!r}")
        return name
    if not has_token:
        raise ConfigError(
            f"{where} needs its token from the environment: token: ${{NAME}} or env: NAME"
        )
    return secret_variable(entry["token"], f"{where}.token")


def config_tokens(config: dict) -> list[Token]:
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
    tokens: list[Token] = []
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
        roles = names_of(entry.get("roles"), f"{where}.roles")
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
        tokens.append(Token(subject, roles, scheme, digest))
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

    def __init__(self, tokens: list[Token], authenticators: list[Any], app_auth: Any):
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
