"""Secrets come from the environment only: a credential written inline in
application.yaml stops the service at start-up, naming the key and the fix."""

import json
import re

import pytest
import yaml
from conftest import REPO
from graphs import ContractCore

from svc import SvcApp, get_http_client
from svc.config import check_secrets, load_config
from svc.errors import ConfigError
from svc.server import create_app

FIX = "write ${NAME} or env:NAME there and set NAME in the environment or env.yaml"

BILLING = """
external_services:
  billing:
    serverUrl: {url}
    auth: {{type: bearer, token: {token}}}
"""


def project(tmp_path, text: str):
    (tmp_path / "application.yaml").write_text(text)
    (tmp_path / "app").mkdir(exist_ok=True)
    # Never imported when start-up fails first.
    (tmp_path / "app" / "__init__.py").write_text("raise RuntimeError('imported')\n")
    return tmp_path


def test_an_inline_service_token_stops_the_start_up(tmp_path, monkeypatch):
    monkeypatch.setenv("SVC_API_KEY", "k")
    root = project(tmp_path, BILLING.format(url="http://127.0.0.1:9", token="inline-secret"))
    message = (
        "external_services.billing.auth.token is written inline, but secrets come from the "
        f"environment only: {FIX}"
    )
    with pytest.raises(ConfigError) as e:
        create_app(ContractCore(), config=load_config(root))
    assert str(e.value) == message
    assert "inline-secret" not in str(e.value)
    with pytest.raises(ConfigError) as e:
        create_app(root=root)
    assert str(e.value) == message
    with pytest.raises(ConfigError) as e:
        SvcApp(root).bootstrap()
    assert str(e.value) == message
    # Outside a service, the first use refuses it too.
    with pytest.raises(ConfigError) as e:
        get_http_client("billing", root=root)
    assert str(e.value) == message


def test_a_service_token_may_be_written_env_name(stub, tmp_path, monkeypatch):
    # (`${NAME}` is the other form: test_clients.py)
    s = stub(lambda req: (200, b"{}"))
    root = project(tmp_path, BILLING.format(url=s.url, token='"env:BILLING_TOKEN"'))
    monkeypatch.setenv("BILLING_TOKEN", "from-env")
    check_secrets(load_config(root))
    with get_http_client("billing", root=root) as client:
        client.post("/", json={})
    assert s.received[0].headers["authorization"] == "Bearer from-env"


def test_an_unset_token_variable_is_named(tmp_path, monkeypatch):
    root = project(tmp_path, BILLING.format(url="http://127.0.0.1:9", token="env:BILLING_TOKEN"))
    monkeypatch.delenv("BILLING_TOKEN", raising=False)
    with pytest.raises(ConfigError) as e:
        get_http_client("billing", root=root)
    assert str(e.value) == (
        "external_services.billing.auth.token is not set: it reads the environment variable "
        "BILLING_TOKEN; set it in the environment or env.yaml"
    )


@pytest.mark.parametrize(
    ("text", "path"),
    [
        ("model: {name: m, api_key_env: sk-proj-123}\n", "model.api_key_env"),
        ("server: {auth: {type: api_key, key_env: 'my secret key'}}\n", "server.auth.key_env"),
    ],
)
def test_a_key_written_where_its_variable_is_named_stops_the_start_up(text, path, tmp_path):
    root = project(tmp_path, text)
    with pytest.raises(ConfigError) as e:
        SvcApp(root).bootstrap()
    assert str(e.value) == (
        f"{path} must be the name of the environment variable that holds the key "
        "(like OPENAI_API_KEY), not the key: write the name there and set the variable in "
        "the environment or env.yaml"
    )


def emitted_files(snapshot: str) -> dict[str, str]:
    """The files of an emitted project in a snapshot (`=== path` then its text)."""
    files: dict[str, list[str]] = {}
    current = None
    for line in snapshot.split("\n"):
        head = re.fullmatch(r"=== (\S+)(: shared)?", line)
        if head:
            current = None if head.group(2) else head.group(1)
            if current is not None:
                files[current] = []
        elif current is not None:
            files[current].append(line)
    return {path: "\n".join(lines) for path, lines in files.items()}


# Every emitted python-svc project (python-svc__shared.snap holds shared files only).
PYTHON_SNAPSHOTS = sorted(
    p
    for p in (REPO / "tests" / "snapshots").glob("python-svc__*.snap")
    if "\n=== application.yaml\n" in p.read_text()
)


@pytest.mark.parametrize("snapshot", PYTHON_SNAPSHOTS, ids=lambda p: p.stem)
def test_generated_projects_write_no_secret(snapshot, tmp_path, monkeypatch):
    from svc.a2a.credentials import _digest, _token_variable, config_tokens
    from svc.config import as_written
    from svc.mcp_client import servers_from_config

    files = emitted_files(snapshot.read_text())
    (tmp_path / "application.yaml").write_text(files["application.yaml"])
    config = load_config(tmp_path)
    check_secrets(config)
    servers_from_config(config)
    # The A2A callers' tokens (a2a.server.tokens) come from the environment
    # only: without their variables the service refuses to start; with
    # them, each token is its variable's value.
    callers = (as_written(config, "a2a.server") or {}).get("tokens") or []
    variables = [_token_variable(entry, "") for entry in callers]
    if variables:
        with pytest.raises(ConfigError, match="is not set"):
            config_tokens(config)
    for variable in variables:
        monkeypatch.setenv(variable, f"token of {variable}")
    assert [t.digest for t in config_tokens(config)] == [
        _digest(f"token of {v}") for v in variables
    ]
    # env.yaml lists the variables, every value left for the operator to fill in.
    env = yaml.safe_load(files.get("env.yaml", "")) or {}
    assert all(value == "" for value in env.values()), json.dumps(env)
