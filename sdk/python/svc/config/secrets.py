"""Secrets come from the environment only: the one rule (`secret_variable`)
and the start-up check of a configuration (`check_secrets`)."""

from __future__ import annotations

import re
from typing import Any

from svc.config.loading import ENV_REF, as_written, lookup
from svc.errors import ConfigError

ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def secret_variable(written: Any, where: str, error: type[Exception] = ConfigError) -> str:
    """The environment variable the secret at `where` comes from, written as
    `${NAME}` or `env:NAME` (read `written` with as_written: once resolved, an
    inline secret looks like one from the environment). Anything else is a
    secret written into the configuration: raises `error` naming `where`."""
    if isinstance(written, str):
        whole = ENV_REF.fullmatch(written.strip())
        if whole:
            return whole.group(1)
        if written.startswith("env:") and ENV_NAME.fullmatch(written[4:]):
            return written[4:]
    # The value itself is never repeated: it may be the secret.
    raise error(
        f"{where} is written inline, but secrets come from the environment only: "
        "write ${NAME} or env:NAME there and set NAME in the environment or env.yaml"
    )


# Settings that name the variable holding a key (the key never goes in the file).
_KEY_VARIABLE_SETTINGS = ("server.auth.key_env", "model.api_key_env")


def check_secrets(config: dict) -> None:
    """Refuses at start-up a configuration that holds a secret: a token of
    `external_services` not written `${NAME}` or `env:NAME`, or a
    `server.auth.key_env` or `model.api_key_env` that is not a variable name.
    (The `env` of `mcp.servers` and `a2a.server.tokens` are checked where
    they are read, also at start-up.)"""
    services = as_written(config, "external_services")
    if isinstance(services, dict):
        for name, service in services.items():
            auth = service.get("auth") if isinstance(service, dict) else None
            if isinstance(auth, dict) and auth.get("token") is not None:
                secret_variable(auth["token"], f"external_services.{name}.auth.token")
    for path in _KEY_VARIABLE_SETTINGS:
        name = lookup(config, path)
        if name is not None and not (isinstance(name, str) and ENV_NAME.fullmatch(name)):
            raise ConfigError(
                f"{path} must be the name of the environment variable that holds the key "
                "(like OPENAI_API_KEY), not the key: write the name there and set the "
                "variable in the environment or env.yaml"
            )
