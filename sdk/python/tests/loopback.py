"""Serving an app for real in the SDK's tests: uvicorn in a thread, on a free
loopback port, stopped by the test."""

import socket
import threading
import time

import uvicorn


class Loopback:
    """An ASGI app served by uvicorn, in a thread, on a free loopback port
    (bound first: `base` is known before the app is built)."""

    def __init__(self):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.base = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.server = self.thread = None

    def start(self, app):
        self.server = uvicorn.Server(uvicorn.Config(app, log_config=None, access_log=False))
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True
        )
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            assert self.thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.01)
        return self.base

    def stop(self):
        if self.server is not None:
            self.server.should_exit = True
            self.thread.join(10)
            assert not self.thread.is_alive(), "uvicorn did not stop"
        self.sock.close()
