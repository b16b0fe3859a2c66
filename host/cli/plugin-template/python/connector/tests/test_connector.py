import json
from pathlib import Path

import app
import pytest
from componentize_py_types import Err

PROJECT = Path(__file__).resolve().parent.parent.parent


def manifest() -> dict:
    return json.loads((PROJECT / "svc.project.json").read_text())


def example_config() -> str:
    doc = json.loads((PROJECT / manifest()["document"]).read_text())
    node = next(n for n in doc["logical"]["nodes"] if n["kind"] == "connector")
    return json.dumps(node["config"])


def test_info_matches_the_project_manifest():
    project, info = manifest(), app.Connector().info()
    assert info.id == project["connector"]
    assert info.version == project["version"]
    assert info.platforms == project["platforms"]
    # svc checks a state field's name and a text's {{field}} by these formats.
    properties = json.loads(info.config_schema)["properties"]
    assert properties["outputKey"]["format"] == "svc-field-name"
    assert properties["text"]["format"] == "svc-template"


@pytest.mark.parametrize("platform", app.PLATFORMS)
def test_every_platform_renders_the_example(platform):
    rendered = app.Connector().render("node", platform, example_config())
    assert '"greeting"' in rendered.snippet
    [file] = rendered.files
    assert file.contents


def test_an_unknown_platform_is_refused():
    good = json.dumps({"outputKey": "a", "text": ""})
    with pytest.raises(Err) as raised:
        app.Connector().render("node", "rust", good)
    assert raised.value.value[0].code == "platform-unsupported"
