"""Loading the configuration (once per process) and looking values up in it."""

from __future__ import annotations

import json
import os
import re
from typing import Any

from svc.config.files import export_env, project_root, read_application

ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def resolve_env_refs(value: Any) -> Any:
    """Replaces `${NAME}` in every string with the environment variable NAME."""
    if isinstance(value, str):
        if "${" not in value:
            return value
        whole = ENV_REF.fullmatch(value)
        if whole:
            return os.environ.get(whole.group(1))
        return ENV_REF.sub(lambda m: os.environ.get(m.group(1), ""), value)
    if isinstance(value, dict):
        return {k: resolve_env_refs(v) for k, v in value.items()}
    if isinstance(value, list):
        return [resolve_env_refs(v) for v in value]
    return value


_cache: dict[str, Any] = {}


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


def clear() -> None:
    """Forgets the loaded configuration (for tests): the next load reads the files."""
    _cache.clear()


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
