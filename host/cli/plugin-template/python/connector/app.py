"""A connector written in Python: writes a text, with {{field}} references
filled from the state at run time, into a state field.

svc runs this module as a WebAssembly component (built by componentize-py
against wit/, world connector-plugin): `render` returns, per platform, the
body of the node's function (it returns a state patch) and a helper file
from templates/. The component sees no files, environment, network or
clock: the templates are read once, while the component is built.
"""

import json
import re
import sys
from pathlib import Path

from componentize_py_types import Err
from wit_world import exports
from wit_world.imports.types import (
    ConnectorInfo,
    Diagnostic,
    File,
    Rendered,
    Severity,
)

ID = "__SVC_ID__"
VERSION = "0.1.0"
PLATFORMS = ["go", "java-svc", "python-svc"]

# What each platform's snippet calls (the helpers in templates/).
GO_RENDER = "connector__SVC_CAMEL__Render"
PYTHON_MODULE = "app.connectors.__SVC_SNAKE__"
JAVA_CLASS = "com.svc.connectors.__SVC_SNAKE__.__SVC_CAMEL__"

# The JSON Schema of the node's `config`; the host checks it before render.
SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["outputKey", "text"],
    "properties": {
        "outputKey": {"type": "string", "minLength": 1},
        "text": {"type": "string"},
    },
}

FIELD_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def template(relative: str) -> str:
    """A file of the project's templates/ folder. svc pack puts the project
    root on the module path while it builds the component (the tests do the
    same), and this runs then: the text is part of the component."""
    for entry in sys.path:
        path = Path(entry) / "templates" / relative
        if path.is_file():
            return path.read_text(encoding="utf-8")
    raise FileNotFoundError(f"templates/{relative} is not beside any module path")


FILES = {
    "go": (
        "internal/graph/connector___SVC_SNAKE__.go",
        template("go/connector___SVC_SNAKE__.go"),
    ),
    "python-svc": (
        "app/connectors/__SVC_SNAKE__.py",
        template("python-svc/__SVC_SNAKE__.py"),
    ),
    "java-svc": (
        "src/main/java/com/svc/connectors/__SVC_SNAKE__/__SVC_CAMEL__.java",
        template("java-svc/__SVC_CAMEL__.java"),
    ),
}


def error(code: str, message: str, pointer: str, hint: str | None = None) -> Diagnostic:
    return Diagnostic(Severity.ERROR, code, message, pointer, hint)


def literal(value: str) -> str:
    """A string as a literal of Go, Java and Python alike."""
    return json.dumps(value)


def read_config(config: dict) -> tuple[str, str]:
    """`outputKey` and `text`, or every problem with a pointer into the config."""
    errors = []
    for key in ("outputKey", "text"):
        if not isinstance(config.get(key), str):
            errors.append(
                error("connector-config", f"`{key}` must be a string", f"/{key}")
            )
    output_key = config.get("outputKey")
    if isinstance(output_key, str) and not FIELD_NAME.fullmatch(output_key):
        errors.append(
            error(
                "connector-config",
                f"`{output_key}` is not a state field name",
                "/outputKey",
                "name a field of logical.state",
            )
        )
    if errors:
        raise Err(errors)
    return output_key, config["text"]


class Connector(exports.Connector):
    def info(self) -> ConnectorInfo:
        return ConnectorInfo(
            id=ID,
            version=VERSION,
            platforms=PLATFORMS,
            config_schema=json.dumps(SCHEMA),
            dependencies=[],
        )

    def render(self, node_id: str, platform: str, node_config: str) -> Rendered:
        output_key, text = read_config(json.loads(node_config))
        key, text = literal(output_key), literal(text)
        if platform == "go":
            snippet = f"return State{{{key}: {GO_RENDER}({text}, state)}}, nil"
        elif platform == "python-svc":
            snippet = (
                f"from {PYTHON_MODULE} import render\n\n"
                f"text = {text}\nreturn {{{key}: render(text, state)}}"
            )
        elif platform == "java-svc":
            snippet = f"return Map.of({key}, {JAVA_CLASS}.render({text}, state));"
        else:
            raise Err(
                [
                    error(
                        "platform-unsupported",
                        f"{ID} has no template for `{platform}`",
                        "",
                        f"it supports {', '.join(PLATFORMS)}",
                    )
                ]
            )
        path, contents = FILES[platform]
        return Rendered(
            files=[File(path, contents.encode(), False)],
            snippet=snippet,
            dependencies=[],
        )
