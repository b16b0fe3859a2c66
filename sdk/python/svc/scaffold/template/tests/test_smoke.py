"""Smoke tests: the project imports, registers its components and serves."""

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from svc import SvcApp, components
from svc.server import create_app

ROOT = Path(__file__).resolve().parents[1]
KEY = "smoke-test-key"


@pytest.fixture
def client(monkeypatch):
    monkeypatch.setenv("SVC_API_KEY", KEY)
    return TestClient(create_app(root=ROOT))


def test_health(client):
    r = client.get("/health")
    assert r.status_code == 200
    assert r.json() == {"status": "ok"}


def test_invoke(client):
    r = client.post("/invoke", json={"state": {"name": "Ada"}}, headers={"X-API-Key": KEY})
    assert r.status_code == 200, r.text
    result = r.json()["result"]
    assert result["greeting"] == "Hello, Ada!"
    assert result["words"] == 2
    assert result["messages"] == [{"role": "assistant", "content": "Hello, Ada!"}]


def test_messages_form(client):
    body = {"messages": [{"role": "user", "content": "Bo"}]}
    r = client.post("/invoke", json=body, headers={"X-API-Key": KEY})
    assert r.status_code == 200, r.text
    assert r.json()["result"]["greeting"] == "Hello, Bo!"


def test_requires_the_key(client):
    r = client.post("/invoke", json={"state": {"name": "Ada"}})
    assert r.status_code == 401
    assert r.json()["error"]["code"] == "unauthorized"


def test_components_are_registered(client):
    r = client.get("/info", headers={"X-API-Key": KEY})
    assert r.status_code == 200
    assert "main" in r.json()["components"]["graphs"]
    assert "greet" in components()["nodes"]
    assert "word_count" in components()["tools"]


def test_svc_app_invoke():
    assert SvcApp(ROOT).invoke({"name": "Cy"})["greeting"] == "Hello, Cy!"
