"""The svc/webhook connector against a local server on 127.0.0.1."""

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from svc.errors import SvcError

from app.connectors.webhook import node_id, send

MAX_REPLY = 4 << 20


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        data = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.server.seen.append(
            {"path": self.path, "headers": self.headers, "body": json.loads(data)}
        )
        status, reply, delay = self.server.reply
        if delay:
            time.sleep(delay)
        try:
            self.send_response(status)
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)
        except OSError:  # the client gave up first
            pass

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    srv.daemon_threads = True
    srv.seen = []
    srv.reply = (200, b"{}", 0)
    srv.url = f"http://127.0.0.1:{srv.server_address[1]}"
    thread = threading.Thread(
        target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()


def _reason(excinfo) -> str:
    err = excinfo.value
    assert err.code == "upstream_error"
    assert err.details["node"] == "notify"
    return err.details["reason"]


def test_sends_the_chosen_fields_and_keeps_the_reply(server, monkeypatch):
    monkeypatch.setenv("SVC_TEST_WEBHOOK_URL", server.url + "/hook")
    monkeypatch.setenv("SVC_TEST_WEBHOOK_TOKEN", "secret")
    server.reply = (200, b'{"ok": true, "id": 7}', 0)
    patch = send(
        "notify",
        {"question": "hi", "other": "not sent"},
        url="env:SVC_TEST_WEBHOOK_URL",
        fields=["question"],
        headers={
            "Authorization": "env:SVC_TEST_WEBHOOK_TOKEN",
            "X-Question": "q={{ question }}",
            "X-Literal": "${SVC_TEST_WEBHOOK_TOKEN}",
        },
        timeout_ms=5000,
        output_key="receipt",
    )
    assert patch == {"receipt": {"ok": True, "id": 7}}
    seen = server.seen[-1]
    assert seen["path"] == "/hook"
    assert seen["body"] == {"question": "hi"}
    assert seen["headers"]["Authorization"] == "secret"
    assert seen["headers"]["X-Question"] == "q=hi"
    assert seen["headers"]["X-Literal"] == "${SVC_TEST_WEBHOOK_TOKEN}"
    assert seen["headers"]["Content-Type"] == "application/json"


def test_sends_the_whole_state_and_fills_the_url(server):
    state = {"question": "hi", "id": 42, "missing": None}
    patch = send("notify", state, url=server.url + "/hooks/{{id}}", timeout_ms=5000)
    assert patch == {}
    assert server.seen[-1]["path"] == "/hooks/42"
    assert server.seen[-1]["body"] == state


@pytest.mark.parametrize(
    "reply", [(202, b"accepted, not JSON", 0), (204, b"", 0)], ids=["text", "empty"]
)
def test_ignores_the_reply_without_an_output_key(server, reply):
    server.reply = reply
    assert send("notify", {}, url=server.url, timeout_ms=5000) == {}


@pytest.mark.parametrize(
    ("reply", "output_key", "reason"),
    [
        ((503, b'{"error": "busy"}', 0), "receipt", "status"),
        ((200, b'{"ok": ', 0), "receipt", "invalid_json"),
        ((200, b"{} {}", 0), "receipt", "invalid_json"),
        ((200, b"x" * (MAX_REPLY + 1), 0), None, "too_large"),
        ((500, b"x" * (MAX_REPLY + 1), 0), "receipt", "too_large"),
        ((200, b"{}", 1.0), None, "timeout"),
    ],
    ids=[
        "status",
        "invalid-json",
        "trailing-data",
        "too-large",
        "large-500",
        "timeout",
    ],
)
def test_failures_have_their_reasons(server, reply, output_key, reason):
    server.reply = reply
    with pytest.raises(SvcError) as excinfo:
        send(
            "notify",
            {"question": "hi"},
            url=server.url,
            timeout_ms=200,
            output_key=output_key,
        )
    assert _reason(excinfo) == reason
    if reason == "status":
        assert excinfo.value.details["status"] == 503


def test_connect_failures(monkeypatch):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{s.getsockname()[1]}/hook"
    monkeypatch.delenv("SVC_TEST_WEBHOOK_UNSET", raising=False)
    monkeypatch.setenv("SVC_TEST_WEBHOOK_FTP", "ftp://example.com/secret-token")
    for url in [
        closed,
        "env:SVC_TEST_WEBHOOK_UNSET",
        "env:SVC_TEST_WEBHOOK_FTP",
        "http://",
    ]:
        with pytest.raises(SvcError) as excinfo:
            send("notify", {}, url=url, timeout_ms=2000)
        assert _reason(excinfo) == "connect", url
        assert "secret-token" not in excinfo.value.message


def test_node_id():
    def node(state: dict) -> dict:
        return {}

    assert node_id("notify") == "notify"
    assert node_id(node) == "webhook"
    node.__svc_name__ = "notify"
    assert node_id(node) == "notify"
