"""The svc/slack-notify connector, written in Python.

A node posts a message, its {{field}} references filled from the state at run
time, to a Slack-style incoming webhook as {"text": ...}. svc builds this
module into a WebAssembly component with componentize-py; `render` checks the
node's config and returns, per platform, the node's body and the runtime
helper from templates/ (read once, while the component is built).
"""

import json
import sys
from pathlib import Path

from componentize_py_types import Err
from wit_world import exports
from wit_world.imports.types import (
    ConnectorInfo,
    Dependency,
    Diagnostic,
    File,
    Rendered,
    Severity,
)

ID = "svc/slack-notify"
VERSION = "0.1.0"
PLATFORMS = ["go", "java-svc", "python-svc"]
HTTPX = "httpx>=0.27,<1"

# The config, declared once: svc checks every node's config against this
# schema before render (svc's formats name URLs, templates and state
# fields), so render reads it as it is.
SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["url", "text"],
    "properties": {
        "url": {
            "type": "string",
            "format": "svc-url",
            "description": "The incoming webhook: env:SLACK_WEBHOOK_URL reads it "
            "from the environment (the usual choice, since the URL is a secret), "
            "or an http(s) URL",
        },
        "text": {
            "type": "string",
            "minLength": 1,
            "format": "svc-template",
            "description": "The message; {{field}} inserts a state field",
        },
        "timeoutMs": {
            "type": "integer",
            "minimum": 1,
            "maximum": 60000,
            "description": "The longest the call may take, in milliseconds "
            "(default 10000)",
        },
        "outputKey": {
            "type": "string",
            "format": "svc-field-name",
            "description": "A state field that receives the message sent; "
            "leave it out to keep nothing",
        },
    },
}


def template(relative: str) -> str:
    """A file of the project's templates/ folder, read while the component
    is built (svc pack puts the project root on the module path)."""
    for entry in sys.path:
        path = Path(entry) / "templates" / relative
        if path.is_file():
            return path.read_text(encoding="utf-8")
    raise FileNotFoundError(f"templates/{relative} is not beside any module path")


def files(*paths: str) -> list[tuple[str, str]]:
    return [(p.split("/", 1)[1], template(p)) for p in paths]


FILES = {
    "go": files(
        "go/internal/graph/connector_slack_notify.go",
        "go/internal/graph/connector_slack_notify_test.go",
    ),
    "python-svc": files(
        "python-svc/app/connectors/slack_notify.py",
        "python-svc/tests/test_connector_slack_notify.py",
    ),
    "java-svc": files(
        "java-svc/src/main/java/com/svc/connectors/slack_notify/SlackNotify.java",
        "java-svc/src/test/java/com/svc/connectors/slack_notify/SlackNotifyTest.java",
    ),
}


def go(node: str, url: str, text: str, timeout_ms: int, key: str | None) -> str:
    args = ", ".join(
        [json.dumps(node), json.dumps(url), json.dumps(text), str(timeout_ms)]
    )
    return f"return slackNotifyPost(ctx, {args}, {json.dumps(key or '')}, state)"


def python(node: str, url: str, text: str, timeout_ms: int, key: str | None) -> str:
    return "\n".join(
        [
            "from app.connectors.slack_notify import post",
            "",
            "return post(",
            f"    {json.dumps(node)},",
            "    state,",
            f"    url={json.dumps(url)},",
            f"    text={json.dumps(text)},",
            f"    timeout_ms={timeout_ms},",
            f"    output_key={json.dumps(key) if key else 'None'},",
            ")",
        ]
    )


def java(node: str, url: str, text: str, timeout_ms: int, key: str | None) -> str:
    args = ", ".join(
        [json.dumps(node), json.dumps(url), json.dumps(text), str(timeout_ms)]
        + [json.dumps(key) if key else "null"]
    )
    return f"return com.svc.connectors.slack_notify.SlackNotify.post(state, {args});"


SNIPPETS = {"go": go, "python-svc": python, "java-svc": java}


# The backend's upstream HTTP client, which the code calls on every platform
# (Go's upstream.go, the SDK's svc.upstream, the Java runtime's Upstream): a
# dependency with this prefix names a runtime helper of the backend, not a
# package (marketplace/README.md).
UPSTREAM = "svc-runtime:upstream"


def dependencies(platform: str) -> list[Dependency]:
    if platform == "python-svc":
        return [Dependency(platform, HTTPX), Dependency(platform, UPSTREAM)]
    return [Dependency(platform, UPSTREAM)]


class Connector(exports.Connector):
    def info(self) -> ConnectorInfo:
        return ConnectorInfo(
            id=ID,
            version=VERSION,
            platforms=PLATFORMS,
            config_schema=json.dumps(SCHEMA),
            dependencies=[d for p in PLATFORMS for d in dependencies(p)],
        )

    def render(self, node_id: str, platform: str, node_config: str) -> Rendered:
        if platform not in SNIPPETS:
            raise Err(
                [
                    Diagnostic(
                        Severity.ERROR,
                        "platform-unsupported",
                        f"{ID} has no code for the platform `{platform}`",
                        None,
                        f"{ID} supports {', '.join(PLATFORMS)}",
                    )
                ]
            )
        config = json.loads(node_config)
        snippet = SNIPPETS[platform](
            node_id,
            config["url"],
            config["text"],
            config.get("timeoutMs", 10000),
            config.get("outputKey"),
        )
        return Rendered(
            files=[File(path, text.encode(), False) for path, text in FILES[platform]],
            snippet=snippet,
            dependencies=dependencies(platform),
        )
