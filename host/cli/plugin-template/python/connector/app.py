"""A connector written in Python: writes a text, with {{field}} references
filled from the state at run time, into a state field.

svc runs this module as a WebAssembly component (built by componentize-py
against wit/, world connector-plugin): `render` returns, per platform, the
body of the node's function (it returns a state patch) and a helper file
from templates/. The component sees no files, environment, network or
clock: the templates are read once, while the component is built.
"""

import json
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

# The node's `config`, declared once: svc checks every node's config
# against this JSON Schema before render, its own formats included
# (svc-field-name: a state field's name; svc-template: text whose {{field}}
# name state fields), and gives each description as the hint of a value
# that breaks it. render reads the config as it is.
SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["outputKey", "text"],
    "properties": {
        "outputKey": {
            "type": "string",
            "format": "svc-field-name",
            "description": "The state field that receives the text",
        },
        "text": {
            "type": "string",
            "format": "svc-template",
            "description": "The text; {{field}} inserts a state field when the node runs",
        },
    },
}


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
        config = json.loads(node_config)
        key, text = literal(config["outputKey"]), literal(config["text"])
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
