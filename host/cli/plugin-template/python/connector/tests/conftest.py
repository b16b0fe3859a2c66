"""Runs the connector in CPython: componentize-py writes the bindings of the
connector-plugin world into a temporary folder, and the project root goes on
the module path as it does when svc pack builds the component."""

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

CONNECTOR = Path(__file__).resolve().parent.parent
PROJECT = CONNECTOR.parent
BINDINGS = Path(tempfile.mkdtemp(prefix="wit-bindings-"))


def pytest_configure(config: pytest.Config) -> None:
    tool = shutil.which("componentize-py")
    if tool is None:
        raise pytest.UsageError(
            "componentize-py is not installed: pip install componentize-py"
        )
    world = [tool, "-d", str(CONNECTOR / "wit"), "-w", "connector-plugin"]
    subprocess.run([*world, "bindings", str(BINDINGS)], check=True)
    sys.path[:0] = [str(BINDINGS), str(CONNECTOR), str(PROJECT)]


def pytest_unconfigure(config: pytest.Config) -> None:
    shutil.rmtree(BINDINGS, ignore_errors=True)
