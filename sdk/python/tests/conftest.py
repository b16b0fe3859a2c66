"""Shared fixtures: a clean registry and config cache per test, a loopback stub server."""

from __future__ import annotations

import json
import select
import socket
import sys
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from svc import config, model_calls, rag, registry, telemetry

REPO = Path(__file__).resolve().parents[3]
FIXTURES = REPO / "fixtures" / "config"


@pytest.fixture(autouse=True)
def clean_state(monkeypatch):
    """No test sees another's components, cached config or project package."""
    registry.clear()
    rag.clear()
    config.clear()
    monkeypatch.delenv("SVC_DEV_EVENTS", raising=False)
    monkeypatch.delenv("SVC_DEBUG_RUNTIME", raising=False)
    # Tests that turn tracing on export nowhere unless they say where.
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "none")
    monkeypatch.setenv("OTEL_METRICS_EXPORTER", "none")
    monkeypatch.delenv("SVC_HOST", raising=False)
    monkeypatch.delenv("SVC_PORT", raising=False)
    # LangGraph runs must never try to send traces anywhere.
    monkeypatch.setenv("LANGSMITH_TRACING", "false")
    monkeypatch.setenv("LANGSMITH_PROJECT", "svc-tests")
    yield
    telemetry.shutdown(0.5)
    registry.clear()
    rag.clear()
    config.clear()
    for name in [m for m in sys.modules if m == "app" or m.startswith("app.")]:
        del sys.modules[name]


class Request:
    def __init__(self, path: str, headers: dict[str, str], body: bytes):
        self.path = path
        self.headers = headers
        self.body = body

    def json(self):
        return json.loads(self.body)


def _left(conn: socket.socket, seconds: float) -> bool:
    """Waits `seconds`; True as soon as the client closes the connection."""
    ends = time.monotonic() + seconds
    while True:
        ready, _, _ = select.select([conn], [], [], max(0.0, min(0.01, ends - time.monotonic())))
        if ready:
            try:
                if conn.recv(1, socket.MSG_PEEK) == b"":
                    return True
            except OSError:
                return True
        if time.monotonic() >= ends:
            return False


class Stub:
    """An HTTP server on 127.0.0.1 answering with `respond(request)`.

    `respond` returns (status, body bytes[, headers dict]), "hangup" to
    close the connection without an answer, ("slow", seconds, body) to
    answer late, or ("stream", pieces, done[, seconds before the headers])
    to answer as a chat-completions stream: each piece is (seconds to wait,
    text) sent as a chunk's delta, or (seconds, bytes) sent as a raw `data:`
    line, then `data: [DONE]` when `done`. The times at which a client
    closed a stream before its end are in `cut`.
    """

    def __init__(self, respond: Callable[[Request], object]):
        self.received: list[Request] = []
        self.cut: list[float] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output clean
                pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                req = Request(
                    self.path,
                    {k.lower(): v for k, v in self.headers.items()},
                    self.rfile.read(length),
                )
                stub.received.append(req)
                answer = respond(req)
                if answer == "hangup":
                    self.close_connection = True
                    return
                if answer[0] == "stream":
                    self.stream(*answer[1:])
                    return
                if answer[0] == "slow":
                    time.sleep(answer[1])
                    answer = (200, answer[2])
                status, body, headers = answer if len(answer) == 3 else (*answer, {})
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def stream(self, pieces, done, head_wait=0):
                self.close_connection = True
                if _left(self.connection, head_wait):
                    stub.cut.append(time.monotonic())
                    return
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "text/event-stream")
                    self.end_headers()
                    self.wfile.flush()
                    for wait, piece in pieces:
                        if _left(self.connection, wait):
                            stub.cut.append(time.monotonic())
                            return
                        if isinstance(piece, str):
                            chunk = {"choices": [{"index": 0, "delta": {"content": piece}}]}
                            piece = json.dumps(chunk).encode()
                        self.wfile.write(b"data: " + piece + b"\n\n")
                        self.wfile.flush()
                    if done:
                        self.wfile.write(b"data: [DONE]\n\n")
                except (BrokenPipeError, ConnectionResetError):
                    stub.cut.append(time.monotonic())

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def stub():
    """Starts stubs on demand; stops them after the test."""
    started: list[Stub] = []

    def start(respond):
        s = Stub(respond)
        started.append(s)
        return s

    yield start
    for s in started:
        s.close()


@pytest.fixture
def waits(monkeypatch):
    """The waits between a model call's attempts, recorded (in seconds)
    instead of waited: svc.model_calls.retry_sleep."""
    asked: list[float] = []
    monkeypatch.setattr(model_calls, "retry_sleep", asked.append)
    return asked


@pytest.fixture(scope="session")
def postgres_server():
    """One real PostgreSQL server for the session (tests/postgres.py); a
    failure instead of a skip when CI is "true"."""
    import os

    from postgres import Postgres, binaries

    if binaries() is None:
        if os.environ.get("CI") == "true":
            pytest.fail("no PostgreSQL server: apt-get install postgresql")
        pytest.skip("no PostgreSQL server (apt-get install postgresql)")
    server = Postgres()
    yield server
    server.close()


@pytest.fixture
def postgres_url(postgres_server):
    """The URL of a new, empty database on the session's server."""
    import uuid

    import psycopg

    if postgres_server.process is None:  # a test stopped it
        postgres_server.start()
    name = "t_" + uuid.uuid4().hex[:12]
    with psycopg.connect(postgres_server.url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return postgres_server.url.rsplit("/", 1)[0] + "/" + name
