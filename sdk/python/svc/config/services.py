"""Clients built from the config: the `external_services` (their base URL and
credential, `get_http_client`) and the LLM provider of the `model` section."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from svc.config.loading import as_written, get_config, load_config
from svc.config.secrets import secret_variable
from svc.errors import ConfigError, require

DEFAULT_SERVICE_TIMEOUT = 30.0  # seconds


def service_config(service: str, *, root: str | Path | None = None) -> tuple[dict, str]:
    """`external_services.<service>` and its base URL (`serverUrl` + `basePath`)."""
    where = f"external_services.{service}"
    cfg = get_config(where, root=root)
    if not isinstance(cfg, dict):
        raise ConfigError(f"{where} is not configured")
    server_url = cfg.get("serverUrl")
    if not server_url:
        raise ConfigError(f"{where}.serverUrl is not set")
    base_path = cfg.get("basePath") or ""
    base_url = server_url.rstrip("/") + ("/" + base_path.strip("/") if base_path.strip("/") else "")
    return cfg, base_url


def service_auth(
    service: str, cfg: Mapping[str, Any], *, root: str | Path | None = None
) -> dict[str, str]:
    """The credential headers of a service's `auth`: its token is read from
    the environment variable that `${NAME}` or `env:NAME` names (a token
    written inline is a ConfigError)."""
    where = f"external_services.{service}"
    auth = cfg.get("auth") or {}
    kind = auth.get("type", "none")
    if kind == "none":
        return {}
    written = as_written(load_config(root), f"{where}.auth.token")
    if written is None:
        raise ConfigError(
            f"{where}.auth.token is not set: write token: ${{NAME}} and set NAME in the "
            "environment or env.yaml"
        )
    variable = secret_variable(written, f"{where}.auth.token")
    token = os.environ.get(variable)
    if not token:
        raise ConfigError(
            f"{where}.auth.token is not set: it reads the environment variable {variable}; "
            "set it in the environment or env.yaml"
        )
    if kind == "bearer":
        return {"Authorization": f"Bearer {token}"}
    if kind == "api_key":
        return {"X-API-Key": token}
    raise ConfigError(f"{where}.auth.type {kind!r} is not one of none, bearer, api_key")


def get_http_client(
    service: str, *, headers: Mapping[str, str] | None = None, root: str | Path | None = None
) -> Any:
    """An httpx.Client for `external_services.<service>` (the "http" extra).

    Its base URL is `serverUrl` + `basePath`, its timeout `timeout` seconds,
    its credential `auth` (`bearer` or `api_key`, token from the environment
    through `${NAME}`). The headers named in `propagate_headers` are copied
    from `headers` (the inbound request's). Close it, or use it in `with`.
    """
    httpx = require("httpx", "http", "get_http_client()")
    cfg, base_url = service_config(service, root=root)
    sent: dict[str, str] = {}
    inbound = {k.lower(): v for k, v in (headers or {}).items()}
    for name in cfg.get("propagate_headers") or ():
        if name.lower() in inbound:
            sent[name] = inbound[name.lower()]
    sent.update(service_auth(service, cfg, root=root))
    timeout = cfg.get("timeout", DEFAULT_SERVICE_TIMEOUT)
    return httpx.Client(base_url=base_url, timeout=timeout, headers=sent)


def get_llm_provider(*, root: str | Path | None = None, **options: Any) -> Any:
    """A LangChain chat model for the `model` section (the "llm" extra).

    `provider` must be `openai` (any OpenAI-compatible API); the base URL and
    key come from the variables named by `base_url_env` and `api_key_env`.
    `options` go to the model (temperature=..., for one); the section's
    `temperature` and `max_tokens` are used unless `options` gives them.
    """
    openai = require("langchain_openai", "llm", "get_llm_provider()")
    cfg = get_config("model", {}, root=root) or {}
    provider = cfg.get("provider", "openai")
    if provider != "openai":
        raise ConfigError(f"model.provider {provider!r} is not supported: use openai")
    name = cfg.get("name")
    if not name:
        raise ConfigError("model.name is not set")
    key_env = cfg.get("api_key_env", "OPENAI_API_KEY")
    key = os.environ.get(key_env)
    if not key:
        raise ConfigError(f"{key_env} is not set: set it to the provider's API key")
    base_url = os.environ.get(cfg.get("base_url_env", "OPENAI_BASE_URL")) or None
    # The section's temperature and max_tokens, unless the caller says otherwise.
    for setting in ("temperature", "max_tokens"):
        if cfg.get(setting) is not None:
            options.setdefault(setting, cfg[setting])
    return openai.ChatOpenAI(model=name, api_key=key, base_url=base_url, **options)
