"""Retrieval for `rag` nodes: the passages of a document list that best match a query.

Two retrievers answer `search(query, top_k)` with `[{"id", "text", "score"}]`,
best first (ties by id), only documents scoring above 0:

- `Bm25Retriever`: Okapi BM25 in process, no network. It is written here
  rather than taken from `rank-bm25` on PyPI, which needs numpy and has not
  been released since 2022; the SDK keeps PyYAML as its one dependency.
- `EmbeddingRetriever`: an OpenAI-compatible `/embeddings` API and cosine
  similarity. Its index (one embedding per document) is built once; servers
  built by `create_app` build every index made with `retriever()` before
  serving, so a broken endpoint fails start-up rather than the first request.
"""

from __future__ import annotations

import json
import math
import operator
import os
import re
import threading
from collections import Counter
from pathlib import Path
from typing import Any

from svc.errors import ConfigError, RegistrationError, SvcError, upstream_error
from svc.upstream import DEFAULT_BASE_URL, call_timeout, post_json, resolve_endpoint

K1 = 1.5
B = 0.75
DEFAULT_EMBEDDING_MODEL = "text-embedding-3-small"
# Documents per /embeddings request: providers cap the inputs (and tokens) of one.
EMBED_BATCH = 128
KINDS = ("bm25", "embedding")

_WORD = re.compile(r"\w+")

# The embedding retrievers made by retriever(), by node, built at start-up.
_embedding_retrievers: dict[str, EmbeddingRetriever] = {}


def tokens(text: str) -> list[str]:
    """Lower-cased words (`\\w+`, any script)."""
    return _WORD.findall(text.lower())


def _documents(documents: Any) -> list[dict[str, str]]:
    """The `{"id", "text"}` documents, checked; ids are unique."""
    if not isinstance(documents, (list, tuple)):
        raise ValueError(
            f"documents must be a list of {{id, text}} objects, not {type(documents).__name__}"
        )
    out, seen = [], set()
    for i, d in enumerate(documents):
        if not (isinstance(d, dict) and isinstance(d.get("id"), str)) or not isinstance(
            d.get("text"), str
        ):
            raise ValueError(f"document {i} must be an object with text fields id and text")
        if d["id"] in seen:
            raise ValueError(f"two documents have the id {json.dumps(d['id'])}")
        seen.add(d["id"])
        out.append({"id": d["id"], "text": d["text"]})
    return out


def _ranked(scored: list[tuple[float, dict[str, str]]], top_k: int) -> list[dict[str, Any]]:
    hits = [(s, d) for s, d in scored if s > 0]
    hits.sort(key=lambda h: (-h[0], h[1]["id"]))
    return [{"id": d["id"], "text": d["text"], "score": s} for s, d in hits[: max(top_k, 0)]]


class Bm25Retriever:
    """Okapi BM25 (k1 1.5, b 0.75, idf ln((N - df + 0.5) / (df + 0.5) + 1),
    which stays positive). Each query word counts as often as it occurs."""

    def __init__(self, documents: list[dict]):
        self.documents = _documents(documents)
        # term -> [(document index, term frequency)]: a query touches only its terms.
        self._postings: dict[str, list[tuple[int, int]]] = {}
        self._lengths = []
        for i, d in enumerate(self.documents):
            counts = Counter(tokens(d["text"]))
            self._lengths.append(sum(counts.values()))
            for term, tf in counts.items():
                self._postings.setdefault(term, []).append((i, tf))
        n = len(self.documents)
        self._avgdl = sum(self._lengths) / n if n else 0.0
        self._idf = {
            term: math.log((n - len(p) + 0.5) / (len(p) + 0.5) + 1)
            for term, p in self._postings.items()
        }

    def search(
        self, query: str, top_k: int, *, deadline: float | None = None
    ) -> list[dict[str, Any]]:
        """The best `top_k` documents for `query` (`deadline` is unused: no network)."""
        scores: dict[int, float] = {}
        for term in tokens(query):
            idf = self._idf.get(term)
            if idf is None:
                continue
            for i, tf in self._postings[term]:
                norm = tf + K1 * (1 - B + B * self._lengths[i] / self._avgdl)
                scores[i] = scores.get(i, 0.0) + idf * tf * (K1 + 1) / norm
        return _ranked([(s, self.documents[i]) for i, s in scores.items()], top_k)


def _unit(vector: list[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vector))
    return [x / norm for x in vector] if norm else vector


class EmbeddingRetriever:
    """Cosine similarity over embeddings from an OpenAI-compatible API whose
    base URL and key are read from the environment at call time, as for
    models. Failures are `upstream_error`s naming `node`."""

    def __init__(
        self,
        node: str,
        documents: list[dict],
        model: str | None = None,
        base_url_env: str = "OPENAI_BASE_URL",
        api_key_env: str = "OPENAI_API_KEY",
        timeout_ms: int = 30000,
    ):
        self.node = node
        self.documents = _documents(documents)
        self.model = model or DEFAULT_EMBEDDING_MODEL
        self.base_url_env = base_url_env
        self.api_key_env = api_key_env
        self.timeout_ms = timeout_ms
        self._index: list[tuple[dict[str, str], list[float]]] | None = None
        self._lock = threading.Lock()

    def _bad(self, what: str) -> SvcError:
        return upstream_error(
            self.node, "invalid_json", f"node {json.dumps(self.node)}: the embeddings reply {what}"
        )

    def _embed(self, texts: list[str], deadline: float | None) -> list[list[float]]:
        """One /embeddings call; the vectors in the order of `texts`."""
        base = os.environ.get(self.base_url_env) or DEFAULT_BASE_URL
        endpoint = resolve_endpoint(self.node, base.rstrip("/") + "/embeddings")
        key = os.environ.get(self.api_key_env)
        headers = {"Authorization": "Bearer " + key} if key else {}
        timeout = self.timeout_ms / 1000 if self.timeout_ms and self.timeout_ms > 0 else None
        reply = post_json(
            self.node,
            endpoint,
            headers,
            {"model": self.model, "input": texts},
            timeout=call_timeout(timeout, deadline),
            feature="EmbeddingRetriever",
        )
        data = reply.get("data") if isinstance(reply, dict) else None
        if not isinstance(data, list):
            raise self._bad("has no data list")
        if len(data) != len(texts):
            raise self._bad(f"holds {len(data)} embeddings for {len(texts)} inputs")
        vectors: list[list[float] | None] = [None] * len(texts)
        for item in data:
            index = item.get("index") if isinstance(item, dict) else None
            vector = item.get("embedding") if isinstance(item, dict) else None
            if (
                not isinstance(index, int)
                or isinstance(index, bool)
                or not 0 <= index < len(texts)
                or vectors[index] is not None
            ):
                raise self._bad(f"has a missing, repeated or out-of-range index: {index!r}")
            if (
                not isinstance(vector, list)
                or not vector
                or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in vector)
            ):
                raise self._bad(f"has an embedding that is not a list of numbers at index {index}")
            vectors[index] = [float(x) for x in vector]
        if len({len(v) for v in vectors if v is not None}) > 1:
            raise self._bad("has embeddings of different lengths")
        return vectors  # type: ignore[return-value]

    def build(self, *, deadline: float | None = None) -> EmbeddingRetriever:
        """Embeds every document, once (later calls reuse the index). Empty
        documents are left out: they match nothing and the APIs refuse them."""
        if self._index is not None:
            return self
        with self._lock:
            if self._index is None:
                kept = [d for d in self.documents if d["text"].strip()]
                index = []
                for start in range(0, len(kept), EMBED_BATCH):
                    batch = kept[start : start + EMBED_BATCH]
                    vectors = self._embed([d["text"] for d in batch], deadline)
                    index += [(d, _unit(v)) for d, v in zip(batch, vectors, strict=True)]
                if len({len(v) for _, v in index}) > 1:
                    raise self._bad("has embeddings of different lengths")
                self._index = index
        return self

    def search(
        self, query: str, top_k: int, *, deadline: float | None = None
    ) -> list[dict[str, Any]]:
        """The best `top_k` documents for `query`: one /embeddings call (and
        the index's, the first time). `deadline` is the seconds left in the run."""
        self.build(deadline=deadline)
        if not self._index or not query.strip() or top_k <= 0:
            return []
        q = _unit(self._embed([query], deadline)[0])
        if len(q) != len(self._index[0][1]):
            raise self._bad(
                f"has a query embedding of length {len(q)}, the documents' have "
                f"{len(self._index[0][1])}"
            )
        scored = [(sum(map(operator.mul, q, v)), d) for d, v in self._index]
        return _ranked(scored, top_k)


def retriever(
    node: str, documents: list[dict], kind: str = "bm25", **embedding_options: Any
) -> Bm25Retriever | EmbeddingRetriever:
    """The retriever of the rag node `node`. Embedding retrievers made here
    are remembered, so the server can build their indexes at start-up."""
    if kind not in KINDS:
        raise RegistrationError(f"retriever kind {kind!r} is not one of {', '.join(KINDS)}")
    if kind == "bm25":
        if embedding_options:
            raise RegistrationError(
                f"a bm25 retriever takes no options, not {', '.join(sorted(embedding_options))}"
            )
        return Bm25Retriever(documents)
    made = EmbeddingRetriever(node, documents, **embedding_options)
    _embedding_retrievers[node] = made
    return made


def build_indexes() -> None:
    """Builds the index of every embedding retriever made with retriever();
    a failure is a ConfigError naming the node and the reason."""
    for node, made in sorted(_embedding_retrievers.items()):
        try:
            made.build()
        except SvcError as e:
            reason = (e.details or {}).get("reason", e.code)
            raise ConfigError(
                f'the embedding index of rag node "{node}" cannot be built ({reason}): {e.message}'
            ) from None


def clear() -> None:
    """Forgets the embedding retrievers made with retriever() (for tests)."""
    _embedding_retrievers.clear()


def reset_indexes() -> None:
    """Drops the index of every embedding retriever made with retriever():
    the next build or search embeds the documents again (for tests that
    start apps against other embedding APIs in one process)."""
    for made in _embedding_retrievers.values():
        with made._lock:
            made._index = None


def load_documents(path: str | Path) -> list[dict[str, str]]:
    """The `[{"id", "text"}]` list of a JSON file (what the compiler writes
    into a project)."""
    try:
        raw = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise ConfigError(f"cannot read the documents file {path}: {e.strerror or e}") from None
    try:
        return _documents(json.loads(raw))
    except ValueError as e:  # JSONDecodeError is a ValueError too
        raise ConfigError(f"the documents file {path} is not a list of {{id, text}}: {e}") from None


def passages_text(passages: list[dict]) -> str:
    """The passages' texts, separated by a blank line."""
    return "\n\n".join(p["text"] for p in passages)
