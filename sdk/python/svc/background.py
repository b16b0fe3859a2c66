"""An asyncio loop in a daemon thread, for the SDK's async clients (the MCP
sessions of svc.mcp.sessions, the A2A clients of svc.a2a.peers): started on
first use, shared by every caller thread, stopped by `stop`, after which the
next use starts afresh."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine
from typing import Any


class BackgroundLoop:
    def __init__(self, name: str):
        self._name = name
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    def get(self) -> asyncio.AbstractEventLoop:
        """The running loop, started on first use."""
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name=self._name, daemon=True)
                thread.start()
                self._loop, self._thread = loop, thread
            return self._loop

    def stop(
        self,
        closing: Callable[[], Coroutine[Any, Any, Any]],
        timeout: float,
        failed: Callable[[Exception], None],
    ) -> bool:
        """Runs `closing()` on the loop (best effort: `failed` hears what it
        raised), then stops the loop; False when none was running."""
        with self._lock:
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is None or thread is None:
            return False
        try:
            asyncio.run_coroutine_threadsafe(closing(), loop).result(timeout)
        except Exception as e:
            failed(e)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout)
        if not thread.is_alive():
            loop.close()
        return True
