"""Project configuration: env.yaml, application.yaml/application.json, lookups.

The rules here are shared with the Rust `svc get` and tested against the same
vectors in `fixtures/config/` (see its README.md):

- YAML is read with the YAML 1.2 core schema (`true`/`false`, `null`/`~`,
  decimal, `0o` and `0x` integers, floats with an optional exponent; no
  `yes`/`no` booleans, no sexagesimal numbers, no timestamps), so that a YAML
  1.2 parser reads the same values.
- `env.yaml` is exported into `os.environ` first. Nested mappings flatten to
  UPPER_SNAKE names (`database: {url: x}` gives `DATABASE_URL=x`; every
  character other than a letter, digit or `_` in a key becomes `_`). Strings
  are exported as they are, booleans as `true`/`false`, numbers as written in
  the file, lists as compact JSON (`json.dumps(v, separators=(",", ":"),
  ensure_ascii=False)`). `null` and empty strings are skipped. A variable that
  is already in the environment (even empty) is never overwritten.
- The application config is `application.json` when present, else
  `application.yaml`, else `{}`. In every string value, `${NAME}` reads the
  environment (never the files): a value that is exactly `${NAME}` becomes
  null when NAME is unset ("secrets resolving to null are not set"), and
  inside a longer string an unset variable becomes "".
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from svc.errors import ConfigError

# --- YAML 1.2 core schema on top of PyYAML's safe loader ---------------------

_INT = re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$")
_FLOAT = re.compile(
    r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
)
_BOOL = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")
_NULL = re.compile(r"^(?:~|null|Null|NULL|)$")


def _parse_int(text: str) -> int:
    if text.startswith("0o"):
        return int(text[2:], 8)
    if text.startswith("0x"):
        return int(text[2:], 16)
    return int(text, 10)


def _parse_float(text: str) -> float:
    lowered = text.lower()
    if lowered.endswith(".inf"):
        return float("-inf") if lowered.startswith("-") else float("inf")
    if lowered == ".nan":
        return float("nan")
    return float(text)


class _CoreLoader(yaml.SafeLoader):
    """PyYAML's safe loader with the YAML 1.2 core schema's implicit types."""


_CoreLoader.yaml_implicit_resolvers = {}
for _tag, _pattern, _first in (
    ("bool", _BOOL, "tTfF"),
    ("null", _NULL, ["~", "n", "N", ""]),
    ("int", _INT, "-+0123456789"),
    ("float", _FLOAT, "-+0123456789."),
):
    _CoreLoader.add_implicit_resolver(f"tag:yaml.org,2002:{_tag}", _pattern, list(_first))
_CoreLoader.add_constructor(
    "tag:yaml.org,2002:bool", lambda loader, node: loader.construct_scalar(node).lower() == "true"
)
_CoreLoader.add_constructor(
    "tag:yaml.org,2002:int", lambda loader, node: _parse_int(loader.construct_scalar(node))
)
_CoreLoader.add_constructor(
    "tag:yaml.org,2002:float", lambda loader, node: _parse_float(loader.construct_scalar(node))
)


class _Written(str):
    """A number of env.yaml: exported as written, JSON-encoded as its value."""

    value: int | float


class _EnvLoader(_CoreLoader):
    """Keeps the text of numbers, because env.yaml exports them as written."""


def _written(parse):
    def construct(loader, node):
        text = loader.construct_scalar(node)
        number = _Written(text)
        number.value = parse(text)
        return number

    return construct


_EnvLoader.add_constructor("tag:yaml.org,2002:int", _written(_parse_int))
_EnvLoader.add_constructor("tag:yaml.org,2002:float", _written(_parse_float))


def _read_yaml(path: Path, loader: type[yaml.SafeLoader] = _CoreLoader) -> Any:
    try:
        with path.open(encoding="utf-8") as f:
            return yaml.load(f, Loader=loader)
    except yaml.YAMLError as e:
        raise ConfigError(f"{path} is not valid YAML: {e}") from e


def read_yaml(path: str | os.PathLike[str]) -> Any:
    """Reads a YAML file with the YAML 1.2 core schema used for every config file."""
    return _read_yaml(Path(path))


# --- env.yaml -----------------------------------------------------------------

_NOT_NAME_CHAR = re.compile(r"[^A-Za-z0-9_]")


def _plain(value: Any) -> Any:
    """The JSON value of a parsed env.yaml value (numbers back to numbers)."""
    if isinstance(value, _Written):
        return value.value
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return value


def flatten_env(data: dict, prefix: str = "") -> dict[str, str]:
    """The environment variables that an env.yaml mapping exports."""
    out: dict[str, str] = {}
    for key, value in data.items():
        name = prefix + _NOT_NAME_CHAR.sub("_", str(key)).upper()
        if isinstance(value, dict):
            out.update(flatten_env(value, name + "_"))
        elif value is None or value == "":
            continue
        elif isinstance(value, bool):
            out[name] = "true" if value else "false"
        elif isinstance(value, list):
            out[name] = json.dumps(_plain(value), separators=(",", ":"), ensure_ascii=False)
        else:
            out[name] = str(value)
    return out


def export_env(path: Path) -> dict[str, str]:
    """Exports env.yaml into os.environ; returns what it set."""
    if not path.is_file():
        return {}
    data = _read_yaml(path, _EnvLoader)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path} must be a mapping of names to values")
    exported = {}
    for name, value in flatten_env(data).items():
        if name not in os.environ:
            os.environ[name] = value
            exported[name] = value
    return exported


# --- application config ---------------------------------------------------------

_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def resolve_env_refs(value: Any) -> Any:
    """Replaces `${NAME}` in every string with the environment variable NAME."""
    if isinstance(value, str):
        if "${" not in value:
            return value
        whole = _ENV_REF.fullmatch(value)
        if whole:
            return os.environ.get(whole.group(1))
        return _ENV_REF.sub(lambda m: os.environ.get(m.group(1), ""), value)
    if isinstance(value, dict):
        return {k: resolve_env_refs(v) for k, v in value.items()}
    if isinstance(value, list):
        return [resolve_env_refs(v) for v in value]
    return value


def read_application(root: Path) -> dict:
    """The raw application config of `root` (no `${NAME}` resolution)."""
    json_path = root / "application.json"
    yaml_path = root / "application.yaml"
    if json_path.is_file():
        try:
            data = json.loads(json_path.read_text(encoding="utf-8"))
        except ValueError as e:
            raise ConfigError(f"{json_path} is not valid JSON: {e}") from e
        source = json_path
    elif yaml_path.is_file():
        data = _read_yaml(yaml_path)
        source = yaml_path
    else:
        return {}
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{source} must hold a mapping at the top level")
    return data


_cache: dict[str, Any] = {}


def project_root(root: str | os.PathLike[str] | None = None) -> Path:
    return Path(root if root is not None else os.getcwd()).resolve()


def load_config(root: str | os.PathLike[str] | None = None, *, reload: bool = False) -> dict:
    """Exports env.yaml, then loads the application config (once per process).

    The result is cached for the root it was read from; `reload=True` (or a
    different root) reads the files again.
    """
    path = project_root(root)
    if not reload and _cache.get("root") == path:
        return _cache["config"]
    export_env(path / "env.yaml")
    raw = read_application(path)
    config = resolve_env_refs(raw)
    _cache.update(root=path, config=config)
    # What the files say, `${NAME}` unresolved, for the sections whose secrets
    # must come from the environment (as_written); kept per loaded config.
    _cache.setdefault("written", {})[id(config)] = (config, raw)
    return config


def as_written(config: dict, path: str, default: Any = None) -> Any:
    """The value at `path` as the application file writes it (`${NAME}` not
    resolved) when `config` is one that load_config returned; for any other
    dict (a config built in code), the value `config` holds.

    Resolution hides whether a secret came from the environment or was
    written inline; this tells them apart."""
    kept = _cache.get("written", {}).get(id(config))
    if kept is not None and kept[0] is config:
        return lookup(kept[1], path, default)
    return lookup(config, path, default)


# --- secrets ----------------------------------------------------------------------

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def secret_variable(written: Any, where: str, error: type[Exception] = ConfigError) -> str:
    """The environment variable the secret at `where` comes from, written as
    `${NAME}` or `env:NAME` (read `written` with as_written: once resolved, an
    inline secret looks like one from the environment). Anything else is a
    secret written into the configuration: raises `error` naming `where`."""
    if isinstance(written, str):
        whole = _ENV_REF.fullmatch(written.strip())
        if whole:
            return whole.group(1)
        if written.startswith("env:") and _ENV_NAME.fullmatch(written[4:]):
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
        if name is not None and not (isinstance(name, str) and _ENV_NAME.fullmatch(name)):
            raise ConfigError(
                f"{path} must be the name of the environment variable that holds the key "
                "(like OPENAI_API_KEY), not the key: write the name there and set the "
                "variable in the environment or env.yaml"
            )


# --- lookups --------------------------------------------------------------------

_SEGMENT = re.compile(r"([^.\[\]]+)((?:\[\d+\])*)")
_INDEX = re.compile(r"\[(\d+)\]")
_MISSING = object()


def parse_path(path: str) -> list[str | int]:
    """Splits `a.b[0].c` into keys and indexes; raises ValueError when malformed."""
    steps: list[str | int] = []
    for part in path.split("."):
        m = _SEGMENT.fullmatch(part)
        if not m:
            raise ValueError(f"malformed config path {path!r}: use keys and [index], like a.b[0].c")
        steps.append(m.group(1))
        steps.extend(int(i) for i in _INDEX.findall(m.group(2)))
    return steps


def lookup(config: Any, path: str, default: Any = None) -> Any:
    """The value at `path` in `config`, or `default` when the path is missing."""
    value = config
    for step in parse_path(path):
        if isinstance(step, int):
            if not isinstance(value, list) or step >= len(value):
                return default
            value = value[step]
        else:
            if not isinstance(value, dict) or step not in value:
                return default
            value = value[step]
    return value


def to_json(value: Any) -> str:
    """Compact JSON, as `svc get` prints it."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def get_config(
    path: str,
    default: Any = None,
    as_json: bool = False,
    *,
    root: str | os.PathLike[str] | None = None,
) -> Any:
    """Looks up a dotted path with `[index]` parts; a present null stays None."""
    value = lookup(load_config(root), path, default)
    return to_json(value) if as_json else value


# --- precompiled config ---------------------------------------------------------


def compiled_config_text(data: dict) -> str:
    """The exact bytes of application.json: `json.dumps(data, indent=2,
    ensure_ascii=False)` plus a newline, keys in the order of the YAML file,
    separators ", " inside lines and ": " after keys, floats as Python's
    repr. `${NAME}` references are kept, never resolved (no secret is ever
    baked into the file)."""
    return json.dumps(data, indent=2, ensure_ascii=False, sort_keys=False) + "\n"


def compile_config(
    root: str | os.PathLike[str] | None = None,
    out_dir: str | os.PathLike[str] | None = None,
    *,
    force: bool = False,
) -> Path:
    """Precompiles application.yaml into application.json; returns its path.

    An existing application.json with other content is kept unless `force`.
    """
    src = project_root(root) / "application.yaml"
    if not src.is_file():
        raise ConfigError(f"{src} does not exist")
    data = _read_yaml(src)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{src} must hold a mapping at the top level")
    text = compiled_config_text(data)
    out = Path(out_dir if out_dir is not None else src.parent) / "application.json"
    if out.exists() and not force and out.read_text(encoding="utf-8") != text:
        raise ConfigError(f"{out} exists and differs: pass --force to replace it")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    return out


# --- known sections -------------------------------------------------------------

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


def graph_settings(config: dict) -> GraphSettings:
    section = config.get("graph") or {}
    if not isinstance(section, dict):
        raise ConfigError("graph must be a mapping")
    settings = GraphSettings(
        entrypoint=section.get("entrypoint"),
        max_steps=section.get("max_steps", GraphSettings.max_steps),
        request_timeout_ms=section.get("request_timeout_ms", GraphSettings.request_timeout_ms),
    )
    for name in ("max_steps", "request_timeout_ms"):
        value = getattr(settings, name)
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ConfigError(f"graph.{name} must be a positive integer, not {value!r}")
    return settings


def app_identity(config: dict) -> tuple[str, str]:
    """The `app` section's name and version (defaults "svc-app", "0.1.0")."""
    section = config.get("app") or {}
    return str(section.get("name") or "svc-app"), str(section.get("version") or "0.1.0")
