import json
from pathlib import Path

import app
import pytest
from componentize_py_types import Err

PROJECT = Path(__file__).resolve().parent.parent.parent


def manifest() -> dict:
    return json.loads((PROJECT / "svc.project.json").read_text())


def example_config() -> dict:
    doc = json.loads((PROJECT / manifest()["document"]).read_text())
    node = next(n for n in doc["logical"]["nodes"] if n["kind"] == "connector")
    return node["config"]


def render(platform: str, **changes):
    config = {**example_config(), **changes}
    return app.Connector().render("post", platform, json.dumps(config))


def test_info_matches_the_project_manifest():
    project, info = manifest(), app.Connector().info()
    assert (info.id, info.version) == (project["connector"], project["version"])
    assert info.platforms == project["platforms"]
    schema = json.loads(info.config_schema)
    assert schema["required"] == ["url", "text"]
    assert [(d.platform, d.spec) for d in info.dependencies] == [
        ("go", app.UPSTREAM),
        ("java-svc", app.UPSTREAM),
        ("python-svc", app.HTTPX),
        ("python-svc", app.UPSTREAM),
    ]


def test_each_platform_gets_its_call_helper_and_tests():
    go = render("go")
    assert go.snippet == (
        'return slackNotifyPost(ctx, "post", "env:SLACK_WEBHOOK_URL", '
        '"New ticket: {{ticket}}", 5000, "posted", state)'
    )
    assert [f.path for f in go.files] == [
        "internal/graph/connector_slack_notify.go",
        "internal/graph/connector_slack_notify_test.go",
    ]
    python = render("python-svc", outputKey=None)
    assert "output_key=None," in python.snippet
    assert [(d.platform, d.spec) for d in python.dependencies] == [
        ("python-svc", app.HTTPX),
        ("python-svc", app.UPSTREAM),
    ]
    assert [(d.platform, d.spec) for d in go.dependencies] == [("go", app.UPSTREAM)]
    java = render("java-svc")
    assert java.snippet == (
        "return com.svc.connectors.slack_notify.SlackNotify.post(state, "
        '"post", "env:SLACK_WEBHOOK_URL", "New ticket: {{ticket}}", 5000, "posted");'
    )
    assert [(d.platform, d.spec) for d in java.dependencies] == [
        ("java-svc", app.UPSTREAM)
    ]
    assert all(f.contents for p in app.PLATFORMS for f in render(p).files)


def test_the_schema_names_what_svc_checks():
    """svc checks a config against the schema before render, svc's formats
    included, so the schema is where a bad URL, placeholder or field name is
    caught (svc's own tests check the formats)."""
    properties = json.loads(app.Connector().info().config_schema)["properties"]
    formats = {key: p.get("format") for key, p in properties.items()}
    assert formats == {
        "url": "svc-url",
        "text": "svc-template",
        "timeoutMs": None,
        "outputKey": "svc-field-name",
    }
    assert all(p["description"] for p in properties.values())
    assert render("go", url="https://hooks.example.com/T0/B0/x").snippet
    with pytest.raises(Err) as raised:
        render("rust")
    assert raised.value.value[0].code == "platform-unsupported"
