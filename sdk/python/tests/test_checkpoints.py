"""Durable threads (svc.threads.checkpoints) on SQLite and on a real PostgreSQL server:
restarts, replicas sharing a database, concurrent resumes, expiry, runs that
never report back, and a database that goes away."""

import threading
import time

import pytest
from fastapi.testclient import TestClient
from graphs import Review

from svc.errors import ConfigError, Interrupted, SvcError
from svc.server import create_app
from svc.threads.checkpoints import DurableThreadStore, open_store

NO_AUTH = {"server": {"auth": {"type": "none"}}}
QUESTION = {"question": "Approve the answer to Ada?"}
DAY = 24 * 60 * 60


@pytest.fixture(params=["sqlite", "postgres"])
def kind(request, tmp_path, monkeypatch):
    """Each durable kind, its variable set to a new database."""
    if request.param == "sqlite":
        monkeypatch.setenv("SVC_CHECKPOINT_DB", str(tmp_path / "threads.db"))
    else:
        monkeypatch.setenv("SVC_CHECKPOINT_URL", request.getfixturevalue("postgres_url"))
    return request.param


def graph_of(kind):
    return type(f"Review_{kind}", (Review,), {"checkpointer": kind})()


class Clock:
    def __init__(self):
        self.now = 1_000_000.0

    def __call__(self):
        return self.now


def stores(kind, n=1, **kwargs):
    """`n` stores on the kind's database, as `n` processes would open them."""
    opened = [open_store(kind, run_seconds=2, cleanup_seconds=None) for _ in range(n)]
    for s in opened:
        for k, v in kwargs.items():
            setattr(s, k, v)
    return opened


def paused_run(store, thread_id="t1"):
    generation = store.start(thread_id)
    i = Interrupted("review", QUESTION, field="answer", state={"question": "Ada"})
    return store.pause(thread_id, generation, i)


class Service:
    """A service on the kind's database, as one process (or replica) would run it."""

    def __init__(self, kind):
        self.client = TestClient(create_app(graph_of(kind), config=NO_AUTH))
        self.client.__enter__()

    def post(self, body):
        return self.client.post("/invoke", json=body)

    def stop(self):
        self.client.__exit__(None, None, None)


def test_a_restart_between_interrupt_and_resume_loses_nothing(kind):
    first = Service(kind)
    r = first.post({"state": {"question": "Ada"}})
    assert r.status_code == 200 and r.json()["interrupt"] == {"node": "review", "value": QUESTION}
    thread = r.json()["threadId"]
    first.stop()

    second = Service(kind)  # a new process: nothing of the first one's memory
    r = second.post({"threadId": thread, "resume": "yes"})
    assert r.json()["interrupt"]["value"] == {"confirm": "yes", "log": ["draft"]}
    second.stop()

    third = Service(kind)
    r = third.post({"threadId": thread, "resume": True})
    assert r.status_code == 200, r.text
    assert r.json() == {
        "result": {
            "question": "Ada",
            "answer": "yes",
            "approved": True,
            "log": ["draft", "published true"],
        },
        "threadId": thread,
    }
    assert third.post({"threadId": thread, "resume": True}).status_code == 409
    third.stop()


def test_interrupt_on_one_replica_and_resume_on_another(kind):
    a, b = Service(kind), Service(kind)
    try:
        thread = a.post({"state": {"question": "Ada"}}).json()["threadId"]
        assert (
            b.post({"threadId": thread, "resume": "yes"}).json()["interrupt"]["node"] == "confirm"
        )
        r = a.post({"threadId": thread, "resume": False})
        assert r.json()["result"]["log"] == ["draft", "published false"]
        # both see the end: neither resumes it again
        for replica in (a, b):
            assert replica.post({"threadId": thread, "resume": True}).json()["error"]["code"] == (
                "not_interrupted"
            )
    finally:
        a.stop()
        b.stop()


def test_of_concurrent_claims_on_every_replica_exactly_one_wins(kind):
    replicas = stores(kind, 4)
    try:
        thread = paused_run(replicas[0])
        results, barrier = [], threading.Barrier(8)

        def claim(store):
            barrier.wait()
            try:
                results.append(store.claim("t1", thread.interrupt_id))
            except SvcError as e:
                results.append((e.status, e.code))

        workers = [threading.Thread(target=claim, args=(s,)) for s in replicas * 2]
        for w in workers:
            w.start()
        for w in workers:
            w.join(30)
        won = [r for r in results if isinstance(r, str)]
        assert (
            len(won) == 1
            and sorted(r for r in results if r not in won) == [(409, "not_interrupted")] * 7
        )
    finally:
        for s in replicas:
            s.close()


def test_expired_threads_are_gone_and_cleaned_up(kind):
    clock = Clock()
    (store,) = stores(kind, clock=clock)
    try:
        paused_run(store, "old")
        clock.now += DAY - 1
        paused_run(store, "young")
        assert store.paused("old").node == "review"  # reading is no use: it ages on
        clock.now += 2
        with pytest.raises(SvcError) as e:
            store.paused("old")
        assert (e.value.status, e.value.code) == (404, "thread_not_found")
        assert store.get("old") is None and store.get("young") is not None
        dropped = []
        store.on_evict = dropped.append
        assert store.cleanup() == 1 and dropped == ["old"]
        assert store.cleanup() == 0
        assert store.paused("young").value == QUESTION
    finally:
        store.close()


def test_a_run_that_never_reports_back_is_settled_after_its_deadline(kind):
    clock = Clock()
    (store,) = stores(kind, clock=clock)
    try:
        thread = paused_run(store)
        lost = store.claim("t1", thread.interrupt_id)  # its replica dies during the run
        with pytest.raises(SvcError, match="has a run under way"):
            store.paused("t1")
        with pytest.raises(SvcError, match="has a run under way"):
            store.start("t1")
        clock.now += store.run_seconds + 1
        again = store.paused("t1")  # paused again at the same interrupt
        assert (again.interrupt_id, again.value) == (thread.interrupt_id, QUESTION)
        store.finish("t1", lost)  # too late: no longer its thread
        assert store.get("t1").status == "interrupted"
        winner = store.claim("t1", thread.interrupt_id)
        store.finish("t1", winner)
        assert store.get("t1").status == "done"

        store.start("t2")  # a new run that never ends fails
        clock.now += store.run_seconds + 1
        with pytest.raises(SvcError, match="failed"):
            store.paused("t2")
        store.start("t2")  # and the thread can run again
    finally:
        store.close()


def test_values_come_back_as_json_values_and_are_copies(kind):
    (store,) = stores(kind)
    try:
        state = {"question": "Ada", "log": ["draft"], "n": 1.5, "deep": {"a": [None, True]}}
        g = store.start("t1")
        kept = store.pause("t1", g, Interrupted("review", [1, "two"], state=state, resumes=["x"]))
        state["log"].append("changed")
        t = store.paused("t1")
        assert t.state == {
            "question": "Ada",
            "log": ["draft"],
            "n": 1.5,
            "deep": {"a": [None, True]},
        }
        assert (t.value, t.resumes, kept.state) == ([1, "two"], ["x"], t.state)
    finally:
        store.close()


def test_open_store_names_the_variable(tmp_path, monkeypatch):
    monkeypatch.delenv("SVC_CHECKPOINT_DB", raising=False)
    with pytest.raises(ConfigError, match=r"SVC_CHECKPOINT_DB is not set.*pathEnv"):
        open_store("sqlite", run_seconds=1)
    with pytest.raises(ConfigError, match=r"MY_URL is not set.*PostgreSQL.*urlEnv"):
        open_store("postgres", "MY_URL", run_seconds=1)
    monkeypatch.setenv("SVC_CHECKPOINT_DB", str(tmp_path / "missing" / "threads.db"))
    with pytest.raises(ConfigError, match=r"SVC_CHECKPOINT_DB: the SQLite database .* cannot be"):
        open_store("sqlite", run_seconds=1)
    with pytest.raises(ValueError, match="not durable"):
        open_store("memory", run_seconds=1)


def test_a_service_without_its_database_does_not_start(tmp_path, monkeypatch):
    monkeypatch.delenv("SVC_CHECKPOINT_URL", raising=False)
    with pytest.raises(ConfigError, match="SVC_CHECKPOINT_URL is not set"):
        create_app(graph_of("postgres"), config=NO_AUTH)
    monkeypatch.setenv("SVC_CHECKPOINT_URL", "postgresql://svc@127.0.0.1:1/none")
    with pytest.raises(ConfigError, match="SVC_CHECKPOINT_URL: the PostgreSQL database cannot"):
        create_app(graph_of("postgres"), config=NO_AUTH)


def test_the_tables_are_made_on_first_start(postgres_url, monkeypatch):
    import psycopg

    monkeypatch.setenv("SVC_CHECKPOINT_URL", postgres_url)
    with psycopg.connect(postgres_url) as conn:
        assert conn.execute("SELECT to_regclass('checkpoints')").fetchone() == (None,)
    store = open_store("postgres", run_seconds=1, cleanup_seconds=None)
    store.close()
    with psycopg.connect(postgres_url) as conn:
        assert conn.execute("SELECT to_regclass('checkpoints')").fetchone() == ("checkpoints",)


def test_a_database_that_goes_away_is_503_and_the_thread_waits_for_it(
    postgres_server, postgres_url, monkeypatch
):
    monkeypatch.setenv("SVC_CHECKPOINT_URL", postgres_url)
    service = Service("postgres")
    try:
        thread = service.post({"state": {"question": "Ada"}}).json()["threadId"]
        postgres_server.stop()
        for body in (
            {"threadId": thread, "resume": "yes"},
            {"state": {"question": "Bo"}},
        ):
            r = service.post(body)
            assert r.status_code == 503, r.text
            error = r.json()["error"]
            assert error["code"] == "checkpointer_unavailable" and "postgres" in error["message"]
        # An outage long enough that psycopg_pool's default retry delays (1, 2,
        # 4, 8, 16 s) would put its next try past the next request's wait.
        time.sleep(7)
        postgres_server.start()
        r = service.post({"threadId": thread, "resume": "yes"})
        assert r.status_code == 200, r.text
        assert r.json()["interrupt"]["value"] == {"confirm": "yes", "log": ["draft"]}
    finally:
        service.stop()
        if postgres_server.process is None:
            postgres_server.start()


def test_closing_waits_for_a_cleanup_round_under_way(kind):
    """A cleanup round reading the database when the store closes ends
    first: closing a SQLite connection another thread reads crashed the
    process (a segfault in a generated project's tests)."""
    (store,) = stores(kind)
    paused_run(store)
    reading = threading.Event()
    rounds = []
    real = store.cleanup

    def slow_cleanup():
        reading.set()
        time.sleep(0.3)
        rounds.append(real())
        return rounds[-1]

    store.cleanup = slow_cleanup
    store.start_cleanup(3600)
    assert reading.wait(5)
    store.close()
    assert rounds == [0], "the round under way ended before the connection closed"


def test_a_store_needs_sane_limits():
    with pytest.raises(ValueError, match="ttl_seconds"):
        DurableThreadStore(object(), run_seconds=0)


def test_a_database_lost_mid_run_leaves_the_thread_at_its_interrupt(
    postgres_server, postgres_url, monkeypatch
):
    import graphs

    monkeypatch.setenv("SVC_CHECKPOINT_URL", postgres_url)
    store = open_store("postgres", run_seconds=0.5, cleanup_seconds=None)
    store.run_seconds = 1.0  # the run's deadline, margin included
    unblock = threading.Event()
    publish = graphs.publish

    def held(state):  # the last node waits until the database is gone
        unblock.wait(30)
        return publish(state)

    monkeypatch.setattr(graphs, "publish", held)
    client = TestClient(create_app(graph_of("postgres"), config=NO_AUTH, threads=store))
    client.__enter__()
    try:
        unblock.set()
        thread = client.post("/invoke", json={"state": {"question": "Ada"}}).json()["threadId"]
        client.post("/invoke", json={"threadId": thread, "resume": "yes"})
        unblock.clear()
        answer = []
        run = threading.Thread(
            target=lambda: answer.append(
                client.post("/invoke", json={"threadId": thread, "resume": True})
            )
        )
        run.start()
        postgres_server.stop()
        unblock.set()
        run.join(60)
        assert answer[0].status_code == 503, answer[0].text
        assert answer[0].json()["error"]["code"] == "checkpointer_unavailable"

        postgres_server.start()
        time.sleep(1.1)  # past the lost run's deadline (the 503 took longer anyway)
        r = client.post("/invoke", json={"threadId": thread, "resume": True})
        assert r.status_code == 200, r.text
        assert r.json()["result"]["log"] == ["draft", "published true"]
    finally:
        unblock.set()
        client.__exit__(None, None, None)
        if postgres_server.process is None:
            postgres_server.start()
