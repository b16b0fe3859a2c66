"""Retrieval: BM25 in process, and embeddings against a loopback `/embeddings`
stub whose vectors count keywords, so the expected ranking is known."""

from __future__ import annotations

import json
import math
import re
import threading
import time

import pytest
from graphs import ContractCore

from svc import rag
from svc.errors import ConfigError, RegistrationError, SvcError
from svc.rag import (
    Bm25Retriever,
    EmbeddingRetriever,
    load_documents,
    passages_text,
    retriever,
)

DOCS = [
    {"id": "refunds", "text": "To get a refund, reply to your invoice email. Refunds take 5 days."},
    {"id": "invoices", "text": "Every invoice is emailed on the first day of the month."},
    {"id": "passwords", "text": "Reset your password from the login page."},
    {"id": "shipping", "text": "Parcels ship within two business days."},
]


def test_bm25_ranks_the_relevant_document_first():
    hits = Bm25Retriever(DOCS).search("How do I get a refund for my invoice?", 4)
    assert [h["id"] for h in hits] == ["refunds", "invoices"]
    assert hits[0]["text"] == DOCS[0]["text"]
    assert all(h["score"] > 0 for h in hits)
    assert hits[0]["score"] > hits[1]["score"]
    assert [h["id"] for h in Bm25Retriever(DOCS).search("password reset", 4)] == ["passwords"]


def test_bm25_scores_are_okapi_bm25():
    docs = [
        {"id": "a", "text": "apple banana"},
        {"id": "b", "text": "apple"},
        {"id": "c", "text": "cherry"},
    ]
    (hit,) = Bm25Retriever(docs).search("BANANA", 3)
    idf = math.log((3 - 1 + 0.5) / (1 + 0.5) + 1)
    avgdl = 4 / 3
    assert hit["id"] == "a"
    assert hit["score"] == pytest.approx(idf * 2.5 / (1 + 1.5 * (0.25 + 0.75 * 2 / avgdl)))
    # "apple" is in two documents of three; ties are ordered by id.
    same = Bm25Retriever([{"id": "z", "text": "pear"}, {"id": "y", "text": "pear"}])
    assert [h["id"] for h in same.search("pear", 5)] == ["y", "z"]


def test_bm25_top_k_no_match_and_empty_corpus():
    r = Bm25Retriever(DOCS)
    assert [h["id"] for h in r.search("invoice refund", 1)] == ["refunds"]
    assert r.search("invoice", 0) == []
    assert r.search("quantum chromodynamics", 3) == []
    assert r.search("", 3) == []
    assert Bm25Retriever([]).search("anything", 3) == []
    assert Bm25Retriever([{"id": "e", "text": ""}]).search("anything", 3) == []


def test_bm25_tokens_are_unicode_words():
    r = Bm25Retriever([{"id": "fr", "text": "Le CAFÉ est fermé."}, {"id": "en", "text": "cafe"}])
    assert [h["id"] for h in r.search("café", 2)] == ["fr"]
    assert rag.tokens("Grüße, WORLD_2!") == ["grüße", "world_2"]


@pytest.mark.parametrize(
    ("documents", "message"),
    [
        ("not a list", "must be a list"),
        ([{"id": "a"}], "document 0"),
        ([{"id": 1, "text": "x"}], "document 0"),
        ([{"id": "a", "text": "x"}, {"id": "a", "text": "y"}], 'two documents have the id "a"'),
    ],
)
def test_documents_are_checked(documents, message):
    with pytest.raises(ValueError, match=message):
        Bm25Retriever(documents)
    with pytest.raises(ValueError, match=message):
        EmbeddingRetriever("docs", documents)


# --- embeddings ------------------------------------------------------------------------

VOCAB = ("refund", "invoice", "password", "ship")


def keyword_vector(text: str) -> list[float]:
    """How often each VOCAB word starts a word of `text`."""
    words = rag.tokens(text)
    return [float(sum(w.startswith(k) for w in words)) for k in VOCAB]


def embeddings(req, *, delay: float = 0.0):
    body = req.json()
    time.sleep(delay)
    data = [{"index": i, "embedding": keyword_vector(t)} for i, t in enumerate(body["input"])]
    data.reverse()  # the order of `data` is not the order of the inputs: `index` is
    return (200, json.dumps({"object": "list", "data": data}).encode())


@pytest.fixture
def embedder(stub, monkeypatch):
    def start(respond=embeddings):
        s = stub(respond)
        monkeypatch.setenv("EMB_BASE", s.url + "/v1/")
        monkeypatch.setenv("EMB_KEY", "emb-key")
        return s

    return start


def embedding_retriever(**options):
    return EmbeddingRetriever(
        "docs", DOCS, base_url_env="EMB_BASE", api_key_env="EMB_KEY", **options
    )


def test_embedding_retriever_ranks_by_cosine_similarity(embedder):
    s = embedder()
    r = embedding_retriever(model="embed-small")
    hits = r.search("refund my invoice", 3)
    assert [h["id"] for h in hits] == ["refunds", "invoices"]
    assert hits[0]["score"] == pytest.approx(3 / math.sqrt(10))
    assert hits[1]["score"] == pytest.approx(1 / math.sqrt(2))
    assert hits[0]["score"] > hits[1]["score"] > 0
    assert hits[0]["text"] == DOCS[0]["text"]
    index, query = (req.json() for req in s.received)
    assert s.received[0].path == "/v1/embeddings"
    assert s.received[0].headers["authorization"] == "Bearer emb-key"
    assert index == {"model": "embed-small", "input": [d["text"] for d in DOCS]}
    assert query == {"model": "embed-small", "input": ["refund my invoice"]}
    # The index is built once; each search embeds its query only.
    assert [h["id"] for h in r.search("password", 1)] == ["passwords"]
    assert len(s.received) == 3
    assert r.search("nothing matches", 3) == []


def test_embedding_defaults_and_edges(embedder, monkeypatch):
    s = embedder()
    r = embedding_retriever()
    assert r.model == "text-embedding-3-small"
    r.build()
    assert s.received[0].json()["model"] == "text-embedding-3-small"
    assert r.search("   ", 3) == [] and r.search("refund", 0) == []
    assert len(s.received) == 1  # neither an empty query nor top_k 0 calls the API
    empty = EmbeddingRetriever("docs", [{"id": "blank", "text": "  "}], base_url_env="EMB_BASE")
    assert empty.search("refund", 3) == []
    assert len(s.received) == 1  # blank documents are not embedded
    monkeypatch.delenv("EMB_KEY")
    embedding_retriever().build()
    assert "authorization" not in s.received[-1].headers


def test_embedding_batches(embedder, monkeypatch):
    monkeypatch.setattr(rag, "EMBED_BATCH", 3)
    s = embedder()
    assert [h["id"] for h in embedding_retriever().search("ship it", 4)] == ["shipping"]
    assert [len(req.json()["input"]) for req in s.received] == [3, 1, 1]


def test_the_index_is_built_once_across_threads(embedder):
    s = embedder(lambda req: embeddings(req, delay=0.05))
    r = embedding_retriever()
    results = []
    threads = [
        threading.Thread(target=lambda: results.append(r.search("invoice", 1))) for _ in range(6)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [[h["id"] for h in found] for found in results] == [["invoices"]] * 6
    assert sorted(len(req.json()["input"]) for req in s.received) == [1] * 6 + [4]


def reply(data):
    return lambda _req: (200, json.dumps({"data": data}).encode())


@pytest.mark.parametrize(
    ("respond", "reason", "mentions"),
    [
        (lambda _req: (503, b"{}"), "status", "upstream answered 503"),
        (lambda _req: (200, b"<html>"), "invalid_json", "not valid JSON"),
        (lambda _req: (200, b'{"embeddings": []}'), "invalid_json", "no data list"),
        (reply([{"index": 0, "embedding": [1.0]}]), "invalid_json", "1 embeddings for 4"),
        (
            reply([{"index": 0, "embedding": [1.0]}] * 4),
            "invalid_json",
            "repeated or out-of-range index",
        ),
        (
            reply([{"index": i, "embedding": "1,2"} for i in range(4)]),
            "invalid_json",
            "not a list of numbers",
        ),
        (
            reply([{"index": i, "embedding": [1.0] * (i + 1)} for i in range(4)]),
            "invalid_json",
            "different lengths",
        ),
        (lambda _req: ("slow", 1.0, b"{}"), "timeout", "timed out"),
        ("hangup", "connect", "cannot reach"),
    ],
)
def test_embedding_failures_are_upstream_errors(embedder, respond, reason, mentions):
    embedder((lambda _req: "hangup") if respond == "hangup" else respond)
    with pytest.raises(SvcError) as e:
        embedding_retriever(timeout_ms=300).search("refund", 2)
    assert (e.value.status, e.value.code) == (502, "upstream_error")
    assert e.value.details["node"] == "docs" and e.value.details["reason"] == reason
    assert mentions in e.value.message


def test_a_query_embedding_of_another_length_is_an_upstream_error(embedder):
    def respond(req):
        texts = req.json()["input"]
        size = 4 if len(texts) > 1 else 3
        return reply([{"index": i, "embedding": [1.0] * size} for i in range(len(texts))])(req)

    embedder(respond)
    with pytest.raises(SvcError) as e:
        embedding_retriever().search("refund", 2)
    assert e.value.details == {"node": "docs", "reason": "invalid_json"}
    assert "query embedding of length 3" in e.value.message


def test_an_unreachable_embeddings_api_is_a_connect_error(stub, monkeypatch):
    s = stub(embeddings)
    monkeypatch.setenv("EMB_BASE", s.url)
    s.close()
    with pytest.raises(SvcError) as e:
        embedding_retriever().build()
    assert e.value.details == {"node": "docs", "reason": "connect"}


# --- retriever(), start-up, documents files ---------------------------------------------


def test_retriever_kinds():
    assert isinstance(retriever("docs", DOCS), Bm25Retriever)
    made = retriever("kb", DOCS, kind="embedding", model="m", base_url_env="EMB_BASE")
    assert isinstance(made, EmbeddingRetriever)
    assert (made.node, made.model, made.base_url_env) == ("kb", "m", "EMB_BASE")
    with pytest.raises(RegistrationError, match="bm25, embedding"):
        retriever("docs", DOCS, kind="vector")
    with pytest.raises(RegistrationError, match="model"):
        retriever("docs", DOCS, model="m")


def test_the_server_builds_embedding_indexes_at_start_up(embedder, monkeypatch):
    from fastapi.testclient import TestClient

    from svc.server import create_app

    s = embedder()
    made = retriever("kb", DOCS, kind="embedding", base_url_env="EMB_BASE")
    app = create_app(ContractCore(), config={"server": {"auth": {"type": "none"}}})
    assert [len(req.json()["input"]) for req in s.received] == [4]
    assert [h["id"] for h in made.search("refund", 1)] == ["refunds"]
    assert len(s.received) == 2  # the query only
    assert TestClient(app).get("/health").status_code == 200


def test_reset_indexes_embeds_the_documents_again(embedder):
    s = embedder()
    made = retriever("kb", DOCS, kind="embedding", base_url_env="EMB_BASE")
    made.build()
    made.build()
    assert len(s.received) == 1
    rag.reset_indexes()
    assert [h["id"] for h in made.search("refund", 1)] == ["refunds"]
    assert [len(req.json()["input"]) for req in s.received] == [4, 4, 1]


def test_a_broken_embeddings_api_fails_start_up_naming_the_node(embedder):
    from svc.server import create_app

    embedder(lambda _req: (401, b'{"error": "bad key"}'))
    retriever("kb", DOCS, kind="embedding", base_url_env="EMB_BASE")
    with pytest.raises(ConfigError, match=r'rag node "kb" cannot be built \(status\)'):
        create_app(ContractCore(), config={"server": {"auth": {"type": "none"}}})


def test_load_documents(tmp_path):
    good = tmp_path / "documents.json"
    good.write_text(json.dumps(DOCS), encoding="utf-8")
    assert load_documents(good) == DOCS
    assert load_documents(str(good)) == DOCS
    for name, content in [("broken.json", "[{"), ("shape.json", '{"id": "a", "text": "b"}')]:
        bad = tmp_path / name
        bad.write_text(content)
        with pytest.raises(ConfigError, match=re.escape(name)):
            load_documents(bad)
    with pytest.raises(ConfigError, match=re.escape("missing.json")):
        load_documents(tmp_path / "missing.json")


def test_passages_text():
    hits = Bm25Retriever(DOCS).search("invoice refund", 2)
    assert passages_text(hits) == DOCS[0]["text"] + "\n\n" + DOCS[1]["text"]
    assert passages_text([]) == ""
