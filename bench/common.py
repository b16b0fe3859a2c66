"""Helpers the benchmark scripts share: ports, commands, the svc binary, the JDK,
generated services."""
import os
import shutil
import socket
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def sh(cmd, cwd=None, env=None):
    """Runs a command (a list, or a string for the shell); exits with its output on failure."""
    r = subprocess.run(cmd, cwd=cwd, env=env, shell=isinstance(cmd, str), capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"failed: {cmd}\n{r.stdout}\n{r.stderr}")
    return r.stdout


def svc_binary():
    """The svc command: $SVC_BIN, else a debug build of this checkout."""
    if os.environ.get("SVC_BIN"):
        return os.environ["SVC_BIN"]
    # --workspace, as the tests build: one package alone unifies other
    # features and rebuilds wasmtime (minutes) each time the two alternate.
    sh(["cargo", "build", "-q", "--workspace", "--bins"], cwd=ROOT)
    return os.path.join(ROOT, "target", "debug", "svc")


def go_runtime_copy(work):
    """A copy of the go runtime module (backends/go/runtime) in work, where
    a benchmark of the runtime's own functions is dropped into graph/ and
    built with the tag svcstub, as the runtime's tests are."""
    copy = os.path.join(work, "go-runtime")
    shutil.copytree(os.path.join(ROOT, "backends", "go", "runtime"), copy)
    return copy


def java_runtime_copy(work):
    """A copy of the java-svc runtime's Maven build (backends/java-svc/runtime:
    pom.xml, the classes in java/, their tests and helpers in test/) in work,
    where a benchmark of the runtime's own classes is dropped into test/ and
    built with its wrapper, as the runtime's tests are."""
    copy = os.path.join(work, "java-runtime")
    shutil.copytree(os.path.join(ROOT, "backends", "java-svc", "runtime"), copy,
                    ignore=shutil.ignore_patterns("target"))
    return copy


def java_home():
    """JAVA_HOME, else the newest Temurin JDK under /usr/lib/jvm."""
    home = os.environ.get("JAVA_HOME", "")
    if not home:
        found = sorted(d for d in os.listdir("/usr/lib/jvm") if d.startswith("temurin-"))
        home = os.path.join("/usr/lib/jvm", found[-1]) if found else ""
    if not home:
        sys.exit("set JAVA_HOME to a JDK 21 or newer")
    return home


def generated_service(platform, graph, out):
    """Compiles the graph document `graph` for `platform` into `out` and builds
    it with the project's own toolchain; returns the command that runs the
    service, from `out`."""
    sh([svc_binary(), "compile", graph, "--out", out, "--platform", platform])
    if platform == "go":
        sh("go build -o bin/service .", cwd=out)
        return [os.path.join(out, "bin", "service")]
    if platform == "java-svc":
        home = java_home()
        sh("./mvnw -q -B -DskipTests package", cwd=out, env=dict(os.environ, JAVA_HOME=home))
        return [os.path.join(home, "bin", "java"), "-jar", "target/service.jar"]
    return [sys.executable, "-m", "svc", "run"]
