"""The SDK's command line: `svc-py ...` or `python -m svc ...`.

Exit codes: 0 success, 1 an error (explained on stderr), 2 a usage error.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence

from svc import __version__
from svc.config import ServerSettings
from svc.errors import ConfigError, MissingExtraError, RegistrationError, require


class UsageError(Exception):
    """Arguments argparse accepted but the command cannot use."""


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="svc-py", description="The svc Python SDK command line.")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    new = sub.add_parser("new", help="scaffold a project")
    new.add_argument("name")
    new.add_argument("--dir", default=".", help="where to create <name>/ (default: .)")
    new.add_argument("--force", action="store_true", help="replace a non-empty <dir>/<name>")

    info = sub.add_parser(
        "info", help="load the config and list the registered components and agents' limits"
    )
    info.add_argument("--root", default=".")

    run = sub.add_parser("run", help="start the API server (server extra)")
    run.add_argument("--root", default=".")
    run.add_argument("--host", help="default: SVC_HOST, then server.host, then 0.0.0.0")
    run.add_argument(
        "--port",
        type=int,
        help="default: the @svc_graph_server's port, then SVC_PORT, then server.port, then 8000",
    )

    mcp = sub.add_parser(
        "mcp",
        help="serve the project's MCP servers and its exposed graph over stdio (mcp extra)",
    )
    mcp.add_argument("--root", default=".")

    get = sub.add_parser("get", help="print a config value as JSON")
    get.add_argument("path", help="dotted keys and [index], like server.auth.type")
    get.add_argument("--root", default=".")

    comp = sub.add_parser(
        "compile",
        help="without a document: application.yaml -> application.json; "
        "with one: the Rust svc compiler (python-svc)",
    )
    comp.add_argument("document", nargs="?")
    comp.add_argument("--out")
    comp.add_argument("--force", action="store_true")
    comp.add_argument("--root", default=".")

    reg = sub.add_parser(
        "register",
        help="record the entrypoint graph's description in its LangSmith project "
        "(tracing extra, LANGSMITH_API_KEY; LANGSMITH_ENDPOINT says where)",
    )
    reg.add_argument("--root", default=".")
    reg.add_argument(
        "--describe-only",
        action="store_true",
        help="print the description as JSON instead: no key, no request, no tracing extra",
    )

    sub.add_parser("version", help="print the SDK version")
    return p


def _new(args: argparse.Namespace) -> int:
    from svc.scaffold import new_project

    try:
        target = new_project(args.name, args.dir, force=args.force)
    except ValueError as e:
        raise UsageError(str(e)) from None
    print(f"created {target}")
    return 0


def _info(args: argparse.Namespace) -> int:
    from svc import graph_server, registry
    from svc.agents import agents_info
    from svc.config import app_identity
    from svc.graph import SvcApp

    app = SvcApp(args.root).bootstrap()
    name, version = app_identity(app.config)
    out = {
        "name": name,
        "version": version,
        "components": registry.components(),
        "agents": agents_info(),
    }
    served = graph_server.info()
    if served is not None:
        out["graph_server"] = served  # name, protocol, port, graphs
    print(json.dumps(out, indent=2, ensure_ascii=False))
    return 0


def run_port(flag: int | None, settings: ServerSettings) -> int:
    """The port `svc run` listens on: `--port`, then the port of the
    `@svc_graph_server` (registered once the project is imported), then
    `settings.port` (SVC_PORT, then server.port, then 8000)."""
    from svc import graph_server

    if flag is not None:
        return flag
    served = graph_server.registered()
    if served is not None and served.meta["port"] is not None:
        return served.meta["port"]
    return settings.port


def _run(args: argparse.Namespace) -> int:
    uvicorn = require("uvicorn", "server", "svc run")
    from svc.config import load_config, server_settings
    from svc.server import create_app
    from svc.tracing import configure_logging, configure_tracing

    config = load_config(args.root)
    configure_logging(config)
    configure_tracing(config)
    settings = server_settings(config)  # host: flag > SVC_HOST > config > default
    host = args.host or settings.host
    # Starlette: the contract's routes without FastAPI's import time (the
    # app of `uvicorn app.main:app` stays a FastAPI one).
    app = create_app(config=config, root=args.root, framework="starlette")
    port = run_port(args.port, settings)  # after create_app: it imports the project
    # Per-request access lines cost throughput; they are kept for debugging.
    access_log = logging.getLogger().isEnabledFor(logging.DEBUG)
    uvicorn.run(app, host=host, port=port, log_config=None, access_log=access_log)
    return 0


def _mcp(args: argparse.Namespace) -> int:
    require("mcp", "mcp", "svc mcp")
    from svc.config import load_config
    from svc.mcp_server import serve_stdio
    from svc.tracing import configure_logging, configure_tracing

    config = load_config(args.root)
    configure_logging(config, logging.WARNING)  # stderr: stdout carries the protocol
    configure_tracing(config)
    return serve_stdio(args.root, config)


def _get(args: argparse.Namespace) -> int:
    from svc.config import get_config, parse_path

    try:
        parse_path(args.path)
    except ValueError as e:
        raise UsageError(str(e)) from None
    print(get_config(args.path, as_json=True, root=args.root))
    return 0


def _installed_compiler() -> str | None:
    """The `svc` of the `compiler` extra, installed beside this Python's
    scripts (found even when that directory is not on the PATH)."""
    import sysconfig

    path = os.path.join(sysconfig.get_path("scripts"), "svc")
    return path if os.path.isfile(path) and os.access(path, os.X_OK) else None


def _compile(args: argparse.Namespace) -> int:
    if args.document is None:
        from svc.config import compile_config

        out = compile_config(args.root, args.out, force=args.force)
        print(f"wrote {out}")
        return 0
    if not args.out:
        raise UsageError("compile <document> needs --out DIR")
    binary = os.environ.get("SVC_BIN") or _installed_compiler() or shutil.which("svc")
    if not binary:
        raise ConfigError(
            "compiling a graph document needs the Rust `svc` binary: "
            'pip install "svc-sdk[compiler]" (or build it from the svc repository and '
            "put it on PATH, or set SVC_BIN to its path)"
        )
    cmd = [binary, "compile", args.document, "--out", args.out, "--platform", "python-svc"]
    if args.force:
        cmd.append("--force")
    try:
        return subprocess.run(cmd, check=False).returncode
    except OSError as e:
        raise ConfigError(f"cannot run {binary}: {e}") from None


def _register(args: argparse.Namespace) -> int:
    if not args.describe_only:
        require("langsmith", "tracing", "svc register")
    from svc import registry
    from svc.config import app_identity, load_config
    from svc.graph import GraphBuilder, SvcApp
    from svc.tracing import describe_graph, register_graph, require_api_key, tracing_project

    config = load_config(args.root)  # env.yaml first: it may hold LANGSMITH_API_KEY
    if not args.describe_only:
        require_api_key()
    SvcApp(args.root, config=config).bootstrap()  # imports the app: its graphs register
    name, version = app_identity(config)
    entry = registry.entrypoint_graph((config.get("graph") or {}).get("entrypoint"))
    graph = entry.obj()
    description = describe_graph(graph, name=name, version=version, entrypoint=entry.name)
    description["components"] = registry.components()
    if args.describe_only:
        print(json.dumps(description, indent=2, ensure_ascii=False))
        return 0
    if isinstance(graph, GraphBuilder):
        graph.compile()  # a graph LangGraph refuses is not registered
    project = register_graph(description, tracing_project(config))
    print(f"registered graph {entry.name} in project {project}")
    return 0


COMMANDS = {
    "new": _new,
    "info": _info,
    "run": _run,
    "mcp": _mcp,
    "get": _get,
    "compile": _compile,
    "register": _register,
    "version": lambda args: print(f"svc-sdk {__version__}") or 0,
}


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except UsageError as e:
        parser.print_usage(sys.stderr)
        print(f"svc-py {args.command}: error: {e}", file=sys.stderr)
        return 2
    except (
        ConfigError,
        RegistrationError,
        MissingExtraError,
        ImportError,
        OSError,
        LookupError,
        ValueError,
    ) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
