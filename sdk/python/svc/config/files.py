"""The configuration files: YAML read with the YAML 1.2 core schema, env.yaml
exported into the environment, the application config as written
(application.json, else application.yaml), and its precompiled JSON (see
svc.config for the rules)."""

from __future__ import annotations

import json
import os
import re
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


def project_root(root: str | os.PathLike[str] | None = None) -> Path:
    return Path(root if root is not None else os.getcwd()).resolve()


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
