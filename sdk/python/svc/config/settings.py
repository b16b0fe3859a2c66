"""The sections every service reads: `server`, `graph` and `app`."""

from __future__ import annotations

import os
from dataclasses import dataclass

from svc.errors import ConfigError

AUTH_TYPES = ("none", "api_key", "bearer")


@dataclass(frozen=True)
class ServerSettings:
    host: str = "0.0.0.0"
    port: int = 8000
    auth: str = "api_key"
    key_env: str = "SVC_API_KEY"


def server_settings(config: dict) -> ServerSettings:
    """The `server` section with its defaults; SVC_HOST/SVC_PORT override it."""
    section = config.get("server") or {}
    auth = section.get("auth") or {} if isinstance(section, dict) else None
    if not isinstance(auth, dict):
        raise ConfigError("server and server.auth must be mappings")
    settings = ServerSettings(
        host=os.environ.get("SVC_HOST") or section.get("host") or ServerSettings.host,
        port=os.environ.get("SVC_PORT") or section.get("port") or ServerSettings.port,
        auth=auth.get("type") or ServerSettings.auth,
        key_env=auth.get("key_env") or ServerSettings.key_env,
    )
    if settings.auth not in AUTH_TYPES:
        raise ConfigError(
            f"server.auth.type {settings.auth!r} is not one of {', '.join(AUTH_TYPES)}"
        )
    try:
        port = int(settings.port)
    except (TypeError, ValueError):
        port = -1
    if not 0 <= port <= 65535 or isinstance(settings.port, bool):
        raise ConfigError(f"the port {settings.port!r} is not a port number")
    return ServerSettings(settings.host, port, settings.auth, settings.key_env)


@dataclass(frozen=True)
class GraphSettings:
    entrypoint: str | None = None
    max_steps: int = 25
    request_timeout_ms: int = 30000
    # POST /invoke may answer text/event-stream (svc.server.app).
    streaming: bool = False


def graph_settings(config: dict) -> GraphSettings:
    section = config.get("graph") or {}
    if not isinstance(section, dict):
        raise ConfigError("graph must be a mapping")
    settings = GraphSettings(
        entrypoint=section.get("entrypoint"),
        max_steps=section.get("max_steps", GraphSettings.max_steps),
        request_timeout_ms=section.get("request_timeout_ms", GraphSettings.request_timeout_ms),
        streaming=section.get("streaming", GraphSettings.streaming),
    )
    for name in ("max_steps", "request_timeout_ms"):
        value = getattr(settings, name)
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ConfigError(f"graph.{name} must be a positive integer, not {value!r}")
    if not isinstance(settings.streaming, bool):
        raise ConfigError(f"graph.streaming must be true or false, not {settings.streaming!r}")
    return settings


def app_identity(config: dict) -> tuple[str, str]:
    """The `app` section's name and version (defaults "svc-app", "0.1.0")."""
    section = config.get("app") or {}
    return str(section.get("name") or "svc-app"), str(section.get("version") or "0.1.0")
