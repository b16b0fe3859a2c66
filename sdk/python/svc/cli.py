"""The SDK's command line: `svc ...` (or its alias `svc-py ...`, or
`python -m svc ...`).

The commands of the Rust compiler (`compile` with a document,
`capabilities`, `test-plugin`, `plugin`, `pack`, `validate-pack`, `design`)
are handed to its binary, `svc-compiler` (the `compiler` extra), with the
same arguments.

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

from svc.config import ServerSettings
from svc.errors import ConfigError, MissingExtraError, RegistrationError, require
from svc.version import __version__


class UsageError(Exception):
    """Arguments argparse accepted but the command cannot use."""


# The compiler's own commands, handed to it whole: what each does, for --help.
COMPILER_COMMANDS = {
    "capabilities": "print what each backend supports",
    "test-plugin": "run a backend or connector component against the shared fixtures",
    "plugin": "connector pack projects (plugin new NAME)",
    "pack": "build, check and write a connector pack",
    "validate-pack": "run every check of pack without writing a pack",
    "design": "edit a graph document in the visual designer",
}


def _prog() -> str:
    """The name the command was invoked as: svc, svc-py, or python -m svc."""
    name = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    if name in ("", "__main__.py", "-c"):
        return "python -m svc"
    return name[:-4] if name.lower().endswith(".exe") else name


def _parser(prog: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=prog,
        description="The svc command line of the Python SDK; the compiler's commands are "
        "handed to svc-compiler (the compiler extra).",
    )
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
        help="without a document: application.yaml -> application.json; with one (and any "
        "other compiler flag): the compiler, for --platform python-svc unless given",
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

    sub.add_parser("version", help="print the SDK version (and the compiler's, when installed)")
    for name, what in COMPILER_COMMANDS.items():
        # Listed for --help only: main() hands these over before parsing.
        sub.add_parser(name, help=f"{what} (the compiler extra)", add_help=False)
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
    from svc import registry
    from svc.agents import agents_info
    from svc.config import app_identity
    from svc.project import SvcApp
    from svc.server import graph_server

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
    from svc.server import graph_server

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
    from svc.mcp.server import serve_stdio
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


COMPILER = "svc-compiler"


def compiler() -> str | None:
    """The Rust compiler's binary: SVC_BIN, else the `svc-compiler` of the
    `compiler` extra beside this Python's scripts (found even when that
    directory is not on the PATH), else `svc-compiler` on the PATH."""
    import sysconfig

    named = os.environ.get("SVC_BIN")
    if named:
        return named
    name = COMPILER + ".exe" if os.name == "nt" else COMPILER
    beside = os.path.join(sysconfig.get_path("scripts"), name)
    if os.path.isfile(beside) and os.access(beside, os.X_OK):
        return beside
    return shutil.which(COMPILER)


def hand_over(prog: str, argv: list[str], name: str | None = None) -> int:
    """Runs the compiler with `argv` in place of this process (POSIX: signals
    and the exit status are its own); on Windows, as a child. `name` is the
    argv[0] it gets: under `svc-java` it is the compiler fixed to java-svc."""
    binary = compiler()
    if binary is None:
        what = f"{prog} {argv[0]}" if argv else prog
        raise MissingExtraError(what, "compiler", f"or set SVC_BIN to a {COMPILER} binary")
    sys.stdout.flush()
    sys.stderr.flush()
    args = [name or binary, *argv]
    try:
        if os.name == "nt":
            return subprocess.run(args, executable=binary, check=False).returncode
        os.execv(binary, args)
    except OSError as e:
        raise ConfigError(f"cannot run {binary}: {e}") from None


def _compile(args: argparse.Namespace) -> int:
    """application.yaml -> application.json (main() hands a document over)."""
    from svc.config import compile_config

    out = compile_config(args.root, args.out, force=args.force)
    print(f"wrote {out}")
    return 0


def _version(args: argparse.Namespace) -> int:
    print(f"svc-sdk {__version__}", flush=True)
    binary = compiler()
    if binary is None:
        return 0
    try:  # its own line(s) after ours
        return subprocess.run([binary, "version"], check=False).returncode
    except OSError as e:
        raise ConfigError(f"cannot run {binary}: {e}") from None


def _register(args: argparse.Namespace) -> int:
    if not args.describe_only:
        require("langsmith", "tracing", "svc register")
    from svc import registry
    from svc.config import load_config
    from svc.graph import GraphBuilder
    from svc.project import SvcApp, describe_project
    from svc.tracing import register_graph, require_api_key, tracing_project

    config = load_config(args.root)  # env.yaml first: it may hold LANGSMITH_API_KEY
    if not args.describe_only:
        require_api_key()
    SvcApp(args.root, config=config).bootstrap()  # imports the app: its graphs register
    entry = registry.entrypoint_graph((config.get("graph") or {}).get("entrypoint"))
    graph = entry.obj()
    description = describe_project(config, entry.name, graph)
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
    "version": _version,
}


def java_main(argv: Sequence[str] | None = None) -> int:
    """`svc-java ...`: the compiler fixed to java-svc, whole."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        return hand_over("svc-java", argv, name="svc-java")
    except (ConfigError, MissingExtraError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    prog = _prog()
    parser = _parser(prog)
    try:
        if argv and argv[0] in COMPILER_COMMANDS:
            return hand_over(prog, argv)
        args, unknown = parser.parse_known_args(argv)
        # A document, or a flag only the compiler knows: the compiler's command line.
        if args.command == "compile" and (args.document is not None or unknown):
            # The compiler picks the platform from the document's target.platform.
            return hand_over(prog, argv)
        if unknown:
            parser.error(f"unrecognized arguments: {' '.join(unknown)}")
        return COMMANDS[args.command](args)
    except UsageError as e:
        parser.print_usage(sys.stderr)
        print(f"{prog} {args.command}: error: {e}", file=sys.stderr)
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
