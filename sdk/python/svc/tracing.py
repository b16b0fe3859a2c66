"""Tracing (the "tracing" extra) and the log format of the `tracing` section."""

from __future__ import annotations

import json
import logging
import os
import time
from typing import Any

from svc.errors import ConfigError, require

LOG_FORMATS = ("text", "json")


def configure_tracing(config: dict) -> bool:
    """Turns LangSmith tracing on when `tracing.enabled`; returns whether it is on.

    The project comes from `tracing.project`; variables already set win.
    """
    section = config.get("tracing") or {}
    if not section.get("enabled"):
        return False
    require("langsmith", "tracing", "configure_tracing()")
    os.environ.setdefault("LANGSMITH_TRACING", "true")
    if section.get("project"):
        os.environ.setdefault("LANGSMITH_PROJECT", str(section["project"]))
    return True


def register_graph(description: dict, project: str) -> str:
    """Records a graph's description as a LangSmith project's metadata; returns
    the project's name. Needs LANGSMITH_API_KEY."""
    langsmith = require("langsmith", "tracing", "register_graph()")
    if not (os.environ.get("LANGSMITH_API_KEY") or os.environ.get("LANGCHAIN_API_KEY")):
        raise ConfigError("LANGSMITH_API_KEY is not set: set it to register the graph")
    client = langsmith.Client()
    client.create_project(
        project,
        description=f"graph {description.get('entrypoint')} of {description.get('name')}",
        metadata={"svc_graph": description},
        upsert=True,
    )
    return project


class _JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False)


def configure_logging(config: dict, level: int = logging.INFO) -> None:
    """Logs to stderr as `tracing.log_format` says: text (default) or json."""
    fmt = (config.get("tracing") or {}).get("log_format", "text")
    if fmt not in LOG_FORMATS:
        raise ConfigError(f"tracing.log_format {fmt!r} is not one of text, json")
    handler = logging.StreamHandler()
    handler.setFormatter(
        _JsonFormatter()
        if fmt == "json"
        else logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
