#!/usr/bin/env python3
"""Start-up time of the generated services: from process start to the first
`GET /health` answered 200, median of 5 starts, on the example graph of
ir-v2.md (support_triage), for go, python-svc and java-svc in one run.

  python3 bench/startup.py [--runs 5] [--python-sdk DIR]

Each target is measured as its README starts it, next to a baseline run in
the same script:
  go          bin/service (no baseline: a static binary, nothing to trim)
  python-svc  `python -m svc run` (the Starlette app, lazy imports), against
              `uvicorn app.main:app` (the FastAPI app of app/main.py)
  java-svc    the extracted jar with Spring AOT and what the build's training
              run wrote (`java @target/app/java.args`: an AOT cache on JDK 25+,
              a CDS archive before), against `java -jar target/service.jar`
--container also measures java-svc's container image (built with podman on
the stand-in base images of tests/containers/stand-ins.sh, in the container
test's storage, ~/.cache/svc/containers): `podman run` of the image to its
first /health, the process-start time of a user who runs the image.
--python-sdk DIR measures `python -m svc run` with the SDK in DIR instead
(e.g. a `git worktree` of an older commit's sdk/python), for before/after.
Results go to bench/results/startup.json (--results NAME: NAME.json).
"""
import argparse
import http.client
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from common import ROOT, free_port, java_home, sh, svc_binary

EXAMPLE = os.path.join(ROOT, "fixtures", "valid", "support_triage.graph.json")
KEY = "bench-key"
TARGETS_MS = {"go": 7, "python-svc": 300, "java-svc": 1000}


def healthy(port):
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
        c.request("GET", "/health")
        ok = c.getresponse().status == 200
        c.close()
        return ok
    except OSError:
        return False


def start_time(cmd, cwd, env, limit=60):
    """Seconds from spawning `cmd` to its first 200 on /health."""
    port = free_port()
    e = dict(os.environ, **env, SVC_HOST="127.0.0.1", SVC_PORT=str(port), SVC_API_KEY=KEY)
    # Python compiles each module's bytecode once and caches it, as a deployed
    # service does (pip compiles at install): a machine-wide
    # PYTHONDONTWRITEBYTECODE would make every start recompile the SDK.
    e.pop("PYTHONDONTWRITEBYTECODE", None)
    cmd = [c.replace("{port}", str(port)) for c in cmd]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, env=e, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        while time.perf_counter() - t0 < limit:
            if healthy(port):
                return time.perf_counter() - t0
            if proc.poll() is not None:
                sys.exit(f"{' '.join(cmd)} exited: {proc.stderr.read().decode()[-2000:]}")
            time.sleep(0.001)
        sys.exit(f"{' '.join(cmd)}: no /health within {limit} s")
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stderr.close()


def podman_line():
    """podman with the container test's configuration and storage, where the
    stand-in base images are (tests/containers/stand-ins.sh)."""
    store = os.path.join(os.path.expanduser("~"), ".cache", "svc", "containers")
    if not os.path.isdir(os.path.join(store, "root")):
        sys.exit(f"no stand-in images in {store}: run tests/containers/stand-ins.sh "
                 f"with SVC_CONTAINER_STORE={store} first")
    conf = os.path.join(ROOT, "tests", "containers", "containers.conf")
    return f"env CONTAINERS_CONF={conf} podman --root {store}/root --runroot {store}/run"


def median_ms(cmd, cwd, env, runs):
    start_time(cmd, cwd, env)  # warms the page cache and Python's bytecode cache
    samples = [start_time(cmd, cwd, env) * 1000 for _ in range(runs)]
    return round(statistics.median(samples), 1), [round(s, 1) for s in samples]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--python-sdk", help="measure python -m svc run with the SDK in this directory")
    ap.add_argument("--results", default="startup", help="bench/results/<name>.json (default: startup)")
    ap.add_argument("--container", action="store_true",
                    help="also java-svc's container image, run with podman (needs the tests' stand-in images)")
    args = ap.parse_args()
    svc = svc_binary()
    work = tempfile.mkdtemp(prefix="svc-startup-")
    results = {"runs": args.runs, "graph": "fixtures/valid/support_triage.graph.json",
               "targets_ms": TARGETS_MS, "variants": {}}

    def record(platform, variant, cmd, cwd, env=None):
        med, samples = median_ms(cmd, cwd, env or {}, args.runs)
        results["variants"][f"{platform}: {variant}"] = {"median_ms": med, "samples_ms": samples}
        print(f"{platform:10} {variant:48} {med:8.1f} ms   {samples}", flush=True)

    try:
        projects = {}
        for platform in ("go", "python-svc", "java-svc"):
            out = os.path.join(work, platform)
            sh([svc, "compile", EXAMPLE, "--out", out, "--platform", platform])
            projects[platform] = out

        go = projects["go"]
        sh("go build -o bin/service .", cwd=go)
        record("go", "bin/service", [os.path.join(go, "bin", "service")], go)

        py = projects["python-svc"]
        python = sys.executable
        env = {"PYTHONPATH": args.python_sdk} if args.python_sdk else {}
        label = f"python -m svc run (SDK {args.python_sdk})" if args.python_sdk else "python -m svc run"
        record("python-svc", label, [python, "-m", "svc", "run"], py, env)
        record("python-svc", "baseline: uvicorn app.main:app (FastAPI)",
               [python, "-m", "uvicorn", "app.main:app", "--host", "127.0.0.1", "--port", "{port}"], py)

        jv = projects["java-svc"]
        home = java_home()
        jenv = dict(os.environ, JAVA_HOME=home, PATH=f"{home}/bin:{os.environ['PATH']}")
        r = subprocess.run(["./mvnw", "-q", "-B", "-DskipTests", "package"], cwd=jv, env=jenv,
                           capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"mvnw package failed:\n{r.stdout}\n{r.stderr}")
        java = os.path.join(home, "bin", "java")
        with open(os.path.join(jv, "target", "app", "java.args")) as f:
            trained = f.read().split()
        cds = [*trained, "-jar", "target/app/service.jar"]
        record("java-svc", "java " + " ".join(cds), [java, *cds], jv)
        record("java-svc", "baseline: java -jar target/service.jar",
               [java, "-jar", "target/service.jar"], jv)
        if args.container:
            image = f"localhost/svc-bench-startup-java:{os.getpid()}"
            podman = podman_line()
            sh(f"{podman} build -q --network host --pull=never --format docker "
               f"-v {os.path.expanduser('~/.m2')}:/root/.m2 -t {image} .", cwd=jv, env=jenv)
            try:
                # The service's variables pass from podman's environment.
                record("java-svc", "container image: podman run",
                       ["sh", "-c", f"exec {podman} run --rm --network host -e SVC_HOST -e SVC_PORT "
                        f"-e SVC_API_KEY {image}"], jv)
            finally:
                subprocess.run(f"{podman} rmi -f {image}", shell=True, capture_output=True)
        results["java"] = subprocess.run([java, "-version"], capture_output=True, text=True).stderr.splitlines()[0]
        results["python"] = sys.version.split()[0]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
    with open(os.path.join(ROOT, "bench", "results", f"{args.results}.json"), "w") as f:
        json.dump(results, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
