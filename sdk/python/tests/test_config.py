import json
import os
import shutil
import subprocess
import sys

import pytest
from conftest import FIXTURES

from svc import config
from svc.config import (
    compile_config,
    flatten_env,
    get_config,
    graph_settings,
    load_config,
    lookup,
    parse_path,
    read_yaml,
    server_settings,
)
from svc.errors import ConfigError

CASES = sorted(p.name for p in FIXTURES.iterdir() if (p / "expect.json").is_file())


def prepare_env(monkeypatch, expect):
    for name in [*expect["exports"], *expect.get("unset", [])]:
        if name not in expect["env"]:
            monkeypatch.delenv(name, raising=False)
    for name, value in expect["env"].items():
        monkeypatch.setenv(name, value)


def test_there_are_enough_cases():
    assert len(CASES) >= 6


@pytest.mark.parametrize("case", CASES)
def test_fixture_queries_and_exports(case, monkeypatch):
    root = FIXTURES / case
    expect = json.loads((root / "expect.json").read_text())
    prepare_env(monkeypatch, expect)
    load_config(root, reload=True)
    for name, value in expect["exports"].items():
        assert os.environ.get(name) == value, name
    for name in expect.get("unset", []):
        assert name not in os.environ, name
    for q in expect["queries"]:
        assert config.to_json(get_config(q["path"], root=root)) + "\n" == q["output"], q["path"]
        if "default" in q or "as_json" in q:
            got = get_config(q["path"], q.get("default"), q.get("as_json", False), root=root)
            assert got == q["result"], q["path"]


@pytest.mark.parametrize("case", CASES)
def test_fixture_cli_output(case, monkeypatch, tmp_path):
    """`svc get` prints exactly `output` (run as a separate process)."""
    root = FIXTURES / case
    expect = json.loads((root / "expect.json").read_text())
    prepare_env(monkeypatch, expect)
    paths = [q["path"] for q in expect["queries"]]
    script = (
        "import sys\nfrom svc.cli import main\n"
        f"for p in {paths!r}:\n    main(['get', p, '--root', {str(root)!r}])\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, check=True)
    assert out.stdout.decode() == "".join(q["output"] for q in expect["queries"])


@pytest.mark.parametrize("case", [c for c in CASES if (FIXTURES / c / "compiled.json").exists()])
def test_fixture_compiled_bytes(case, tmp_path):
    root = FIXTURES / case
    out = compile_config(root, tmp_path)
    assert out.read_bytes() == (root / "compiled.json").read_bytes()


def test_env_yaml_never_overwrites_and_skips_empty(tmp_path, monkeypatch):
    (tmp_path / "env.yaml").write_text("a: {b: 1}\nkeep: new\nblank: ''\nnone: null\n")
    monkeypatch.setenv("KEEP", "")
    for name in ("A_B", "BLANK", "NONE"):
        monkeypatch.delenv(name, raising=False)
    load_config(tmp_path)
    assert os.environ["A_B"] == "1"
    assert os.environ["KEEP"] == ""  # present, even empty: not overwritten
    assert "BLANK" not in os.environ and "NONE" not in os.environ
    monkeypatch.delenv("A_B")


def test_flatten_numbers_as_written_and_lists_as_json(tmp_path):
    (tmp_path / "env.yaml").write_text("n: {f: 1.50, i: 0x1F}\nl: [1.50, {k: 2}, yes]\n")
    data = read_yaml_env(tmp_path / "env.yaml")
    assert flatten_env(data) == {"N_F": "1.50", "N_I": "0x1F", "L": '[1.5,{"k":2},"yes"]'}


def read_yaml_env(path):
    import yaml

    from svc.config import files

    return yaml.load(path.read_text(), Loader=files._EnvLoader)


def test_yaml_core_schema(tmp_path):
    p = tmp_path / "x.yaml"
    p.write_text(
        "b: [true, True, FALSE, yes, no, on]\nn: [~, null, NULL]\n"
        "i: [010, 0o17, 0x1F, +3, 1_000]\nf: [1e3, .5, -.inf, 1:20]\nd: 2001-12-14\n"
    )
    data = read_yaml(p)
    assert data["b"] == [True, True, False, "yes", "no", "on"]
    assert data["n"] == [None, None, None]
    assert data["i"] == [10, 15, 31, 3, "1_000"]
    assert data["f"][:3] == [1000.0, 0.5, float("-inf")] and data["f"][3] == "1:20"
    assert data["d"] == "2001-12-14"


def test_application_json_wins_and_missing_files_give_empty(tmp_path):
    assert load_config(tmp_path) == {}
    (tmp_path / "application.yaml").write_text("a: yaml\n")
    assert load_config(tmp_path, reload=True) == {"a": "yaml"}
    (tmp_path / "application.json").write_text('{"a": "json"}')
    assert load_config(tmp_path) == {"a": "yaml"}  # cached
    assert load_config(tmp_path, reload=True) == {"a": "json"}


def test_load_config_reads_once(tmp_path, monkeypatch):
    (tmp_path / "application.yaml").write_text("a: 1\n")
    monkeypatch.chdir(tmp_path)
    first = load_config()
    (tmp_path / "application.yaml").write_text("a: 2\n")
    assert load_config() is first
    assert get_config("a") == 1
    assert load_config(reload=True)["a"] == 2


def test_bad_files_raise_config_errors(tmp_path):
    (tmp_path / "application.yaml").write_text("a: [unclosed\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(tmp_path)
    (tmp_path / "application.yaml").write_text("- a list\n")
    with pytest.raises(ConfigError, match="mapping"):
        load_config(tmp_path, reload=True)
    (tmp_path / "application.json").write_text("{nope")
    with pytest.raises(ConfigError, match="not valid JSON"):
        load_config(tmp_path, reload=True)


def test_paths():
    assert parse_path("a.b[0][12].c") == ["a", "b", 0, 12, "c"]
    for bad in ("", "a..b", "a[x]", "a[-1]", "[0]", "a.", "a[0"):
        with pytest.raises(ValueError):
            parse_path(bad)
    data = {"a": [{"b": None}], "s": "text"}
    assert lookup(data, "a[0].b", "d") is None
    assert lookup(data, "a[1]", "d") == "d"
    assert lookup(data, "s[0]", "d") == "d"


def test_compile_refuses_to_replace_a_different_file(tmp_path):
    (tmp_path / "application.yaml").write_text("k: ${SECRET}\nv: [1, 2]\n")
    out = compile_config(tmp_path)
    assert out.read_text() == '{\n  "k": "${SECRET}",\n  "v": [\n    1,\n    2\n  ]\n}\n'
    compile_config(tmp_path)  # same content: fine
    out.write_text("{}\n")
    with pytest.raises(ConfigError, match="--force"):
        compile_config(tmp_path)
    compile_config(tmp_path, force=True)
    assert json.loads(out.read_text()) == {"k": "${SECRET}", "v": [1, 2]}
    shutil.rmtree(tmp_path)
    with pytest.raises(ConfigError, match="does not exist"):
        compile_config(tmp_path)


def test_server_settings(monkeypatch):
    s = server_settings({})
    assert (s.host, s.port, s.auth, s.key_env) == ("0.0.0.0", 8000, "api_key", "SVC_API_KEY")
    cfg = {
        "server": {"host": "127.0.0.1", "port": 9000, "auth": {"type": "bearer", "key_env": "T"}}
    }
    s = server_settings(cfg)
    assert (s.host, s.port, s.auth, s.key_env) == ("127.0.0.1", 9000, "bearer", "T")
    monkeypatch.setenv("SVC_HOST", "::1")
    monkeypatch.setenv("SVC_PORT", "9100")
    s = server_settings(cfg)
    assert (s.host, s.port) == ("::1", 9100)
    monkeypatch.setenv("SVC_PORT", "http")
    with pytest.raises(ConfigError, match="port"):
        server_settings(cfg)
    with pytest.raises(ConfigError, match=r"auth\.type"):
        server_settings({"server": {"auth": {"type": "basic"}}})
    with pytest.raises(ConfigError, match="mappings"):
        server_settings({"server": "x"})


def test_graph_settings():
    assert graph_settings({}) == config.GraphSettings(None, 25, 30000)
    g = graph_settings({"graph": {"entrypoint": "main", "max_steps": 3, "request_timeout_ms": 50}})
    assert (g.entrypoint, g.max_steps, g.request_timeout_ms) == ("main", 3, 50)
    for bad in (0, -1, True, "5", 1.5):
        with pytest.raises(ConfigError, match="positive integer"):
            graph_settings({"graph": {"max_steps": bad}})
    assert graph_settings({}).streaming is False
    assert graph_settings({"graph": {"streaming": True}}).streaming is True
    for bad in ("true", 1, None):
        with pytest.raises(ConfigError, match="must be true or false"):
            graph_settings({"graph": {"streaming": bad}})
