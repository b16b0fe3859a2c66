import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from svc.cli import main
from svc.scaffold import template_files


def svc_py(*args, cwd=None, env=None):
    return subprocess.run(
        [sys.executable, "-m", "svc", *args], capture_output=True, text=True, cwd=cwd, env=env
    )


def test_version():
    r = svc_py("version")
    assert (r.returncode, r.stdout, r.stderr) == (0, "svc-sdk 0.3.2\n", "")


def test_usage_errors_exit_2():
    assert svc_py().returncode == 2
    assert svc_py("frobnicate").returncode == 2
    assert svc_py("get").returncode == 2
    r = svc_py("get", "a..b")
    assert r.returncode == 2 and "malformed" in r.stderr


def test_get(tmp_path):
    (tmp_path / "application.yaml").write_text("a: {b: [1, {c: x}]}\n")
    r = svc_py("get", "a.b[1]", "--root", str(tmp_path))
    assert (r.returncode, r.stdout) == (0, '{"c":"x"}\n')
    r = svc_py("get", "a.zzz", "--root", str(tmp_path))
    assert (r.returncode, r.stdout) == (0, "null\n")
    (tmp_path / "application.yaml").write_text("a: [\n")
    r = svc_py("get", "a", "--root", str(tmp_path))
    assert r.returncode == 1 and r.stderr.startswith("error: ") and "not valid YAML" in r.stderr


def test_compile_without_document(tmp_path):
    (tmp_path / "application.yaml").write_text("k: é\n")
    r = svc_py("compile", "--root", str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "application.json").read_bytes() == '{\n  "k": "é"\n}\n'.encode()
    (tmp_path / "application.json").write_text("{}")
    r = svc_py("compile", "--root", str(tmp_path))
    assert r.returncode == 1 and "--force" in r.stderr
    assert svc_py("compile", "--root", str(tmp_path), "--force").returncode == 0
    out = tmp_path / "out"
    assert svc_py("compile", "--root", str(tmp_path), "--out", str(out)).returncode == 0
    assert (out / "application.json").is_file()
    r = svc_py("compile", "--root", str(tmp_path / "none"))
    assert r.returncode == 1 and "does not exist" in r.stderr


SCRIPTS = Path(sysconfig.get_path("scripts"))


def fake_compiler(tmp_path) -> dict:
    """An environment whose SVC_BIN prints its arguments, one a line, and exits 3."""
    fake = tmp_path / "fake-compiler"
    fake.write_text("#!/bin/sh\nprintf '%s\\n' \"$@\"\nexit 3\n")
    fake.chmod(0o755)
    return {**os.environ, "SVC_BIN": str(fake)}


@pytest.mark.parametrize(
    ("args", "handed"),
    [
        # The compiler takes the platform from the document's target.platform.
        (["compile", "g.graph.json", "--out", "o", "--force"], None),
        (
            ["compile", "g.graph.json", "--out", "my out", "--platform", "go", "--format", "json"],
            None,
        ),
        (["compile", "--platform=java-svc", "g.graph.json", "--out", "o"], None),
        (["compile", "--format", "json"], None),  # no document, a flag of the compiler
        (["capabilities", "--platform", "go", "--format", "json"], None),
        (["test-plugin", "backend.wasm", "--fixtures", "f"], None),
        (["plugin", "new", "demo", "--lang", "python", "--dir", "/tmp"], None),
        (["pack", "--root", ".", "--allow-partial"], None),
        (["validate-pack", "--help"], None),
        (["design", "g.graph.json", "--no-open", "--port", "0"], None),
    ],
)
def test_the_compilers_commands_are_handed_to_it(args, handed, tmp_path):
    r = svc_py(*args, env=fake_compiler(tmp_path))
    assert (r.returncode, r.stderr) == (3, "")  # its exit status: it replaced this process
    assert r.stdout.splitlines() == (handed or args)


def test_svc_java_is_the_compiler_started_as_svc_java(monkeypatch):
    from svc import cli

    calls = []
    monkeypatch.setenv("SVC_BIN", "/opt/svc/svc-compiler")
    monkeypatch.setattr(os, "execv", lambda path, args: calls.append((path, args)) or 0)
    cli.java_main(["compile", "g.graph.json", "--out", "o"])
    # argv[0] is svc-java: the name under which the compiler is fixed to java-svc.
    assert calls == [
        ("/opt/svc/svc-compiler", ["svc-java", "compile", "g.graph.json", "--out", "o"])
    ]


def test_version_adds_the_compilers(tmp_path):
    r = svc_py("version", env=fake_compiler(tmp_path))
    assert (r.returncode, r.stdout) == (3, "svc-sdk 0.3.2\nversion\n")


def test_the_compilers_commands_without_it_name_the_extra(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "SVC_BIN"}
    env["PATH"] = str(tmp_path)  # no svc-compiler there, nor beside this Python
    for args in (["compile", "g.graph.json", "--out", "o"], ["design"]):
        r = subprocess.run([SCRIPTS / "svc", *args], capture_output=True, text=True, env=env)
        assert (r.returncode, r.stdout) == (1, "")
        assert r.stderr == (
            f'error: svc {args[0]} needs the "compiler" extra: pip install "svc-sdk[compiler]" '
            "(or set SVC_BIN to a svc-compiler binary)\n"
        )


def test_svc_and_its_alias_svc_py_are_installed_and_named_as_invoked():
    for name in ("svc", "svc-py"):
        r = subprocess.run([SCRIPTS / name, "get"], capture_output=True, text=True)
        assert r.returncode == 2
        assert r.stderr.startswith(f"usage: {name} get ")


def test_new_scaffolds_a_project_whose_tests_pass(tmp_path):
    r = svc_py("new", "my-app", "--dir", str(tmp_path))
    assert r.returncode == 0, r.stderr
    project = tmp_path / "my-app"
    files = sorted(str(p.relative_to(project)) for p in project.rglob("*") if p.is_file())
    assert files == sorted(template_files())
    for rel in files:
        text = (project / rel).read_text()
        assert "{{" not in text, rel
    assert 'name = "my-app"' in (project / "pyproject.toml").read_text()
    assert 'project: "my_app"' in (project / "application.yaml").read_text()
    assert "svc-sdk[server,graph]>=0.3.2,<0.4" in (project / "pyproject.toml").read_text()
    for sub in (
        "graphs",
        "nodes",
        "skills",
        "guardrails",
        "policies",
        "personas",
        "tools",
        "agents",
        "mcp",
    ):
        assert (project / "app" / sub / "__init__.py").is_file()
    env = {k: v for k, v in os.environ.items() if k not in ("SVC_API_KEY", "SVC_DEV_EVENTS")}
    tests = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=project,
        capture_output=True,
        text=True,
        env=env,
    )
    assert tests.returncode == 0, tests.stdout + tests.stderr
    assert "6 passed" in tests.stdout

    info = svc_py("info", "--root", str(project))
    assert info.returncode == 0, info.stderr
    body = json.loads(info.stdout)
    assert body["name"] == "my-app" and body["components"]["graphs"] == ["main"]
    assert body["components"]["tools"] == ["word_count"]
    assert body["components"]["configurations"] == ["app"]


def test_new_refuses_a_non_empty_target(tmp_path):
    target = tmp_path / "proj"
    target.mkdir()
    (target / "keep.txt").write_text("mine")
    (tmp_path / "sibling.txt").write_text("untouched")
    r = svc_py("new", "proj", "--dir", str(tmp_path))
    assert r.returncode == 1 and "--force" in r.stderr
    assert (target / "keep.txt").exists()
    assert svc_py("new", "proj", "--dir", str(tmp_path), "--force").returncode == 0
    assert not (target / "keep.txt").exists() and (target / "app" / "main.py").exists()
    assert (tmp_path / "sibling.txt").read_text() == "untouched"
    (tmp_path / "empty").mkdir()
    assert svc_py("new", "empty", "--dir", str(tmp_path)).returncode == 0


@pytest.mark.parametrize("name", ["My-App", "1app", "_app", "app.x", "app/x", "app x", ""])
def test_new_validates_the_name(tmp_path, name):
    r = svc_py("new", name, "--dir", str(tmp_path))
    assert r.returncode == 2 and "invalid project name" in r.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.fixture
def project(tmp_path):
    assert main(["new", "demo", "--dir", str(tmp_path)]) == 0
    return tmp_path / "demo"


def test_run_host_and_port_precedence(project, monkeypatch, capsys):
    import uvicorn

    calls = []
    monkeypatch.setattr(uvicorn, "run", lambda app, host, port, **kw: calls.append((host, port)))
    monkeypatch.setenv("SVC_API_KEY", "k")
    root = str(project)
    assert main(["run", "--root", root]) == 0
    (project / "application.yaml").write_text(
        (project / "application.yaml").read_text().replace("port: 8000", "port: 8100")
    )
    assert main(["run", "--root", root]) == 0
    monkeypatch.setenv("SVC_HOST", "127.0.0.2")
    monkeypatch.setenv("SVC_PORT", "8200")
    assert main(["run", "--root", root]) == 0
    assert main(["run", "--root", root, "--host", "127.0.0.3", "--port", "8300"]) == 0
    assert calls[0] == ("0.0.0.0", 8000)
    assert calls[2:] == [("127.0.0.2", 8200), ("127.0.0.3", 8300)]


def test_run_refuses_without_the_key(project, monkeypatch, capsys):
    import uvicorn

    monkeypatch.setattr(uvicorn, "run", lambda *a, **k: pytest.fail("must not start"))
    monkeypatch.delenv("SVC_API_KEY", raising=False)
    assert main(["run", "--root", str(project)]) == 1
    assert "SVC_API_KEY is not set" in capsys.readouterr().err


def test_register(project, monkeypatch, capsys):
    import langsmith

    created = []

    class FakeClient:
        def __init__(self, **kwargs):
            pass

        def create_project(self, name, **kwargs):
            created.append((name, kwargs))

    monkeypatch.setattr(langsmith, "Client", FakeClient)
    monkeypatch.delenv("LANGSMITH_API_KEY", raising=False)
    monkeypatch.delenv("LANGCHAIN_API_KEY", raising=False)
    monkeypatch.delenv("LANGSMITH_PROJECT", raising=False)  # else it names the project
    assert main(["register", "--root", str(project)]) == 1
    assert "LANGSMITH_API_KEY is not set" in capsys.readouterr().err
    assert main(["register", "--root", str(project), "--describe-only"]) == 0  # no key
    described = json.loads(capsys.readouterr().out)
    assert (described["entrypoint"], described["nodes"]) == ("main", ["greet"])
    assert created == []
    monkeypatch.setenv("LANGSMITH_API_KEY", "ls-test")
    assert main(["register", "--root", str(project)]) == 0
    ((name, kwargs),) = created
    assert name == "demo" and kwargs["upsert"] is True
    assert kwargs["metadata"]["svc_graph"] == described
    assert "registered graph main in project demo" in capsys.readouterr().out


def test_info_shows_the_agents(tmp_path, capsys):
    (tmp_path / "application.yaml").write_text("app: {name: desk, version: 1.2.0}\n")
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "__init__.py").write_text(
        "from svc import agent, worker_agent\n\n"
        "@worker_agent(model='m', max_turns=2)\ndef helper():\n    return 'Help.'\n\n"
        "@agent\ndef shout(task):\n    return task.upper()\n"
    )
    assert main(["info", "--root", str(tmp_path)]) == 0
    body = json.loads(capsys.readouterr().out)
    assert (body["name"], body["version"]) == ("desk", "1.2.0")
    assert body["components"]["agents"] == ["helper", "shout"]
    assert body["agents"] == {
        "helper": {"kind": "worker", "roles": [], "maxTurns": 2, "tools": []},
        "shout": {"kind": "local", "roles": []},
    }
