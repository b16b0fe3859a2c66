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

The package's modules: `files` (YAML, env.yaml, the application file and
its precompiled JSON), `loading` (load_config and lookups), `secrets`,
`settings` (the `server`, `graph` and `app` sections) and `services` (the
`external_services` and the `model`: `get_http_client`, `get_llm_provider`;
imported on first use).
"""

from __future__ import annotations

from svc.config.files import (
    compile_config,
    compiled_config_text,
    export_env,
    flatten_env,
    project_root,
    read_application,
    read_yaml,
)
from svc.config.loading import (
    as_written,
    clear,
    get_config,
    load_config,
    lookup,
    parse_path,
    resolve_env_refs,
    to_json,
)
from svc.config.secrets import check_secrets, secret_variable
from svc.config.settings import (
    AUTH_TYPES,
    GraphSettings,
    ServerSettings,
    app_identity,
    graph_settings,
    server_settings,
)

__all__ = [
    "AUTH_TYPES",
    "GraphSettings",
    "ServerSettings",
    "app_identity",
    "as_written",
    "check_secrets",
    "clear",
    "compile_config",
    "compiled_config_text",
    "export_env",
    "flatten_env",
    "get_config",
    "graph_settings",
    "load_config",
    "lookup",
    "parse_path",
    "project_root",
    "read_application",
    "read_yaml",
    "resolve_env_refs",
    "secret_variable",
    "server_settings",
    "to_json",
]
