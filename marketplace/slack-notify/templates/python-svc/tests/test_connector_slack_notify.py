"""The svc/slack-notify connector against a local server on 127.0.0.1."""

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from svc.errors import SvcError

from app.connectors.slack_notify import post


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        data = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.server.seen.append(json.loads(data))
        status, delay = self.server.reply
        time.sleep(delay)
        try:
            self.send_response(status)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")
        except OSError:  # the client gave up first
            pass

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    srv.seen, srv.reply = [], (200, 0)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()


def url(srv) -> str:
    return f"http://127.0.0.1:{srv.server_address[1]}/hook"


def reason(raised) -> str:
    error = raised.value
    assert error.code == "upstream_error"
    assert error.details["node"] == "post"
    return error.details["reason"]


def test_posts_the_filled_message(server, monkeypatch):
    monkeypatch.setenv("SLACK_NOTIFY_TEST_URL", url(server))
    state = {"ticket": "disk full", "n": 3}
    message = "New ticket: {{ticket}} ({{ n }}, {{missing}}) {{open"
    patch = post(
        "post", state, url="env:SLACK_NOTIFY_TEST_URL", text=message, output_key="p"
    )
    want = "New ticket: disk full (3, ) {{open"
    assert server.seen == [{"text": want}]
    assert patch == {"p": want}
    assert post("post", state, url=url(server), text="x") == {}


def test_failures_are_upstream_errors(server, monkeypatch):
    server.reply = (500, 0)
    with pytest.raises(SvcError) as raised:
        post("post", {}, url=url(server), text="x")
    assert reason(raised) == "status"
    server.reply = (200, 0.5)
    with pytest.raises(SvcError) as raised:
        post("post", {}, url=url(server), text="x", timeout_ms=50)
    assert reason(raised) == "timeout"
    monkeypatch.delenv("SLACK_NOTIFY_UNSET", raising=False)
    with pytest.raises(SvcError) as raised:
        post("post", {}, url="env:SLACK_NOTIFY_UNSET", text="x")
    assert reason(raised) == "connect"
    assert "SLACK_NOTIFY_UNSET" in str(raised.value)
    monkeypatch.setenv("SLACK_NOTIFY_FTP", "ftp://example.com/secret-token")
    with pytest.raises(SvcError) as raised:
        post("post", {}, url="env:SLACK_NOTIFY_FTP", text="x")
    assert reason(raised) == "connect"
    assert "secret-token" not in str(raised.value)
    with pytest.raises(SvcError) as raised:
        post("post", {}, url="http://127.0.0.1:1/", text="x")
    assert reason(raised) == "connect"
