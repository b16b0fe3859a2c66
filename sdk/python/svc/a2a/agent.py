"""The service's A2A agent as declared: a class decorated `@svc_a2a_server`
whose `@a2a_skill` methods are its skills, `@a2a_authenticator` checks of
the callers' credential, and the `a2a` section of the config. Nothing here
imports the a2a SDK; svc.a2a.server serves the agent.
"""

from __future__ import annotations

import inspect
import os
import re
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import urlsplit

from svc import registry
from svc.config.secrets import ENV_NAME
from svc.errors import ConfigError, RegistrationError

SERVER_KIND = "a2a_servers"
AUTH_KIND = "a2a_authenticators"
RPC_PATH = "/a2a"
SCHEMES = ("bearer", "api_key")
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
SKILL_ID = re.compile(r"[A-Za-z0-9_.:-]{1,128}")


# --- decorators --------------------------------------------------------------------


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise RegistrationError(f"{what} must be text, not {value!r}")
    return value


def check_skill_id(skill_id: Any, where: str, error: type[Exception]) -> str:
    """`skill_id` when it is 1 to 128 letters, digits, `_`, `-`, `.` or `:`;
    else raises `error` naming `where`."""
    if not isinstance(skill_id, str) or not SKILL_ID.fullmatch(skill_id):
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
        check_skill_id(skill_id, "@a2a_skill", RegistrationError)
    _text(name, "name")
    _text(description, "description")
    role_names = registry.names(roles, "roles")
    tag_names = registry.names(tags, "tags")
    example_list = tuple(_text(e, "an example") for e in examples)

    def mark(fn: Any) -> Any:
        if not callable(fn):
            raise RegistrationError(f"@a2a_skill must decorate a method, not {fn!r}")
        sid = skill_id if isinstance(skill_id, str) else fn.__name__
        check_skill_id(sid, "@a2a_skill", RegistrationError)
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
        meta = {
            "title": title,
            "url": url,
            "description": description,
            "version": version,
            "members": members,
        }
        return registry.register_only(
            SERVER_KIND,
            title,
            cls,
            meta,
            lambda other: (
                f"two A2A servers: {registry.origin(other.obj)} and {registry.origin(cls)}; "
                "a service is one A2A agent"
            ),
        )

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
        return registry.register(AUTH_KIND, registry.named(f, name), f, {"scheme": scheme})

    if fn is not None:
        return register(fn)
    return register


def registered_server() -> registry.Component | None:
    servers = registry.registered(SERVER_KIND)
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
        if not ENV_NAME.fullmatch(url[4:]):
            raise error(f"{where}: {url!r} does not name an environment variable")
        return url
    parts = urlsplit(url) if isinstance(url, str) else None
    if parts is None or parts.scheme not in ("http", "https") or not parts.netloc:
        raise error(f"{where}: {url!r} is not an http(s) URL or env:NAME")
    return url


def endpoint_url(url: str | None, where: str) -> str | None:
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


def names_of(value: Any, where: str) -> tuple[str, ...]:
    """A configured list of names (None: none); a ConfigError naming `where` otherwise."""
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ConfigError(f"{where} must be a list of names, not {value!r}")
    return tuple(value)
