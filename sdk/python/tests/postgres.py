"""A real PostgreSQL server for the tests: Debian's postgresql package,
initialised in a temporary data directory, serving a free loopback port
(trust authentication; no fsync unless asked, as for a benchmark), stopped
by the test.

As root (CI), the server runs as the package's `postgres` user, since
PostgreSQL refuses to run as root.
"""

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time


def binaries() -> str | None:
    """The newest installed server's bin directory, or None."""
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/postgres"), key=lambda p: int(p.split("/")[4])
    )
    return os.path.dirname(found[-1]) if found else None


class Postgres:
    def __init__(self, fsync: bool = False):
        self.fsync = fsync
        self.bin = binaries()
        if self.bin is None:
            raise RuntimeError("no PostgreSQL server: apt-get install postgresql")
        self.dir = tempfile.mkdtemp(prefix="svc-pg-")
        self.data = os.path.join(self.dir, "data")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.url = f"postgresql://svc@127.0.0.1:{self.port}/postgres"
        self.user = None
        if os.geteuid() == 0:
            self.user = pwd.getpwnam("postgres")
            os.chown(self.dir, self.user.pw_uid, self.user.pw_gid)
        self._run(
            [f"{self.bin}/initdb", "-D", self.data, "-U", "svc", "--auth=trust", "--no-sync"],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        self.process = None
        self.start()

    def _argv(self, argv: list[str]) -> list[str]:
        return ["runuser", "-u", "postgres", "--", *argv] if self.user is not None else argv

    def _run(self, argv, **kwargs):
        return subprocess.run(self._argv(argv), timeout=60, **kwargs)

    def start(self):
        self.process = subprocess.Popen(
            self._argv(
                [
                    f"{self.bin}/postgres",
                    "-D",
                    self.data,
                    "-h",
                    "127.0.0.1",
                    "-p",
                    str(self.port),
                    "-k",
                    self.dir,
                    "-c",
                    f"fsync={'on' if self.fsync else 'off'}",
                ]
            ),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 30
        while True:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    pass
                ready = self._run(
                    [f"{self.bin}/pg_isready", "-h", "127.0.0.1", "-p", str(self.port)],
                    stdout=subprocess.DEVNULL,
                )
                if ready.returncode == 0:
                    return
            except OSError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("PostgreSQL did not start")
            time.sleep(0.1)

    def stop(self):
        """A fast shutdown: clients are disconnected at once."""
        if self.process is not None and self.process.poll() is None:
            self._run(
                [f"{self.bin}/pg_ctl", "-D", self.data, "-m", "fast", "stop"],
                stdout=subprocess.DEVNULL,
            )
            self.process.wait(30)
        self.process = None

    def close(self):
        try:
            self.stop()
        finally:
            if self.process is not None:
                self.process.kill()
            shutil.rmtree(self.dir, ignore_errors=True)
