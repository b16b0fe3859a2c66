import json
import logging
import os

import pytest

from svc import configure_tracing, get_http_client, get_llm_provider, telemetry
from svc.errors import ConfigError
from svc.tracing import configure_logging

SERVICES = """
external_services:
  crm:
    serverUrl: {url}/
    basePath: /api/v1/
    timeout: 2
    propagate_headers: [X-Request-Id]
    auth: {{type: bearer, token: "${{CRM_TOKEN}}"}}
  keyed:
    serverUrl: {url}
    auth: {{type: api_key, token: "${{KEYED_TOKEN}}"}}
  open:
    serverUrl: {url}
"""


def test_get_http_client(stub, tmp_path, monkeypatch):
    s = stub(lambda req: (200, json.dumps({"path": req.path}).encode()))
    (tmp_path / "application.yaml").write_text(SERVICES.format(url=s.url))
    monkeypatch.setenv("CRM_TOKEN", "crm-secret")
    monkeypatch.delenv("KEYED_TOKEN", raising=False)
    with get_http_client(
        "crm", headers={"x-request-id": "r-1", "X-Other": "no"}, root=tmp_path
    ) as c:
        assert c.post("/items", json={}).json() == {"path": "/api/v1/items"}
    sent = s.received[0].headers
    assert sent["authorization"] == "Bearer crm-secret" and sent["x-request-id"] == "r-1"
    assert "x-other" not in sent
    with get_http_client("open", root=tmp_path) as c:
        c.post("/x", json={})
    assert "authorization" not in s.received[1].headers
    with pytest.raises(ConfigError, match=r"keyed.auth.token is not set"):
        get_http_client("keyed", root=tmp_path)
    monkeypatch.setenv("KEYED_TOKEN", "k")
    from svc import config

    config.clear()
    with get_http_client("keyed", root=tmp_path) as c:
        c.post("/", json={})
    assert s.received[2].headers["x-api-key"] == "k"
    with pytest.raises(ConfigError, match="not configured"):
        get_http_client("nope", root=tmp_path)


def test_get_llm_provider(tmp_path, monkeypatch):
    (tmp_path / "application.yaml").write_text(
        "model: {provider: openai, name: stub-model,"
        " api_key_env: STUB_KEY, base_url_env: STUB_BASE}\n"
    )
    monkeypatch.delenv("STUB_KEY", raising=False)
    with pytest.raises(ConfigError, match="STUB_KEY is not set"):
        get_llm_provider(root=tmp_path)
    monkeypatch.setenv("STUB_KEY", "sk-test")
    monkeypatch.setenv("STUB_BASE", "http://127.0.0.1:9/v1")
    llm = get_llm_provider(root=tmp_path, temperature=0)
    assert llm.model_name == "stub-model" and llm.temperature == 0
    assert llm.openai_api_base == "http://127.0.0.1:9/v1"
    from svc import config

    # The section's temperature and max_tokens reach the model; a caller's win.
    (tmp_path / "application.yaml").write_text(
        "model: {provider: openai, name: stub-model, api_key_env: STUB_KEY,"
        " base_url_env: STUB_BASE, temperature: 0.25, max_tokens: 64}\n"
    )
    config.clear()
    llm = get_llm_provider(root=tmp_path)
    assert llm.temperature == 0.25 and llm.max_tokens == 64
    assert get_llm_provider(root=tmp_path, temperature=1).temperature == 1
    (tmp_path / "application.yaml").write_text("model: {provider: acme, name: x}\n")
    config.clear()
    with pytest.raises(ConfigError, match="acme"):
        get_llm_provider(root=tmp_path)


def test_configure_tracing(monkeypatch):
    monkeypatch.delenv("LANGSMITH_TRACING")  # set by conftest: restored afterwards
    monkeypatch.delenv("LANGSMITH_PROJECT")
    assert configure_tracing({"tracing": {"enabled": False}}) is False
    assert "LANGSMITH_TRACING" not in os.environ
    monkeypatch.delenv("LANGSMITH_API_KEY", raising=False)
    monkeypatch.delenv("LANGCHAIN_API_KEY", raising=False)
    # OpenTelemetry only: LangSmith is for those who set its key.
    assert configure_tracing({"tracing": {"enabled": True, "project": "p1"}}) is True
    assert telemetry.enabled() and "LANGSMITH_TRACING" not in os.environ
    monkeypatch.setenv("LANGSMITH_API_KEY", "key")
    assert configure_tracing({"tracing": {"enabled": True, "project": "p1"}}) is True
    assert os.environ["LANGSMITH_TRACING"] == "true" and os.environ["LANGSMITH_PROJECT"] == "p1"


def test_configure_logging(capsys):
    root = logging.getLogger()
    saved = (root.handlers[:], root.level)
    try:
        configure_logging({"tracing": {"log_format": "json"}})
        logging.getLogger("svc.test").info("hello %s", "there")
        line = json.loads(capsys.readouterr().err.strip().splitlines()[-1])
        assert (
            line["message"] == "hello there"
            and line["level"] == "info"
            and line["logger"] == "svc.test"
        )
        configure_logging({})
        logging.getLogger("svc.test").warning("plain")
        assert capsys.readouterr().err.strip().endswith("WARNING svc.test: plain")
        with pytest.raises(ConfigError, match="log_format"):
            configure_logging({"tracing": {"log_format": "xml"}})
        # logging.level and logging.format, which python-svc writes from the graph.
        configure_logging({"logging": {"level": "warning", "format": "json"}})
        logging.getLogger("svc.test").info("dropped")
        logging.getLogger("svc.test").warning("kept")
        lines = capsys.readouterr().err.strip().splitlines()
        assert [json.loads(line)["message"] for line in lines] == ["kept"]
        configure_logging({"logging": {"level": "debug"}})
        logging.getLogger("svc.test").debug("shown")
        assert capsys.readouterr().err.strip().endswith("DEBUG svc.test: shown")
        with pytest.raises(ConfigError, match=r"logging\.level 'loud'"):
            configure_logging({"logging": {"level": "loud"}})
        with pytest.raises(ConfigError, match=r"logging\.format 'xml'"):
            configure_logging({"logging": {"format": "xml"}})
    finally:
        root.handlers[:], root.level = saved[0], saved[1]
        root.setLevel(saved[1])
