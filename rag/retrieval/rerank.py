"""The reranking stage, pluggable by name.

No trained cross-encoder ships inside a PyPI package we know of, so besides `cross-encoder:<name or
path>` (a user with internet names `cross-encoder/ms-marco-MiniLM-L-6-v2`; offline, a local folder)
this module offers rescoring stages that load offline from the models we already have:

- `none`: keep the fused order; the stage's scores are the fused scores (nothing is invented).
- `dense-cosine`: exact cosine between the question and each candidate's stored dense vector.
- `score-fusion[:w]`: exact dense cosine and BM25 score for every candidate (including those only one
  list found), min-max normalised over the candidates and mixed with dense weight w (default 0.5).
- `sentence-maxsim[:a]`: the best single sentence of each chunk (its heading path counting as one)
  against the question, blended with the whole chunk's cosine: a * max sentence cosine + (1 - a) *
  chunk cosine (default a = 0.5). Sentence vectors stored at ingest are read by a Qdrant MaxSim query;
  a collection without them has the candidates' sentences encoded per question (seconds, not ms).
- `maxsim-fusion[:w]`: score-fusion with the sentence-maxsim score as its dense side.

Exact scores come from the store itself (a query restricted to the candidates' ids), so they are the
numbers Qdrant computes, with its IDF. `retrieve()` records which reranker ran.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Protocol, Sequence

import numpy as np

from rag.encoders.base import TORCH_EXTRA, DenseEncoder
from rag.errors import ConfigError, EncoderError
from rag.ingest.sentences import sentence_texts
from rag.lazy import LazyModel
from rag.settings.extensions import check_dispatch
from rag.settings.rerankers import CROSS_ENCODER_PREFIX, DEFAULT_WEIGHT, RERANKER_TABLE, RerankerName, parse_reranker
from rag.store.base import Store
from rag.types import ChunkFilter, SparseVector, StoredChunk


@dataclass(frozen=True)
class RerankContext:
    """What a rescoring stage may use besides the text: query vectors, the store, the previous stage.

    `prior` holds the fused score of each chunk handed to `score()`, in the same order.
    """

    question: str
    dense_query: np.ndarray
    sparse_query: SparseVector
    store: Store
    dense: DenseEncoder
    flt: ChunkFilter
    prior: tuple[float, ...]


class Reranker(Protocol):
    name: str

    def score(
        self, question: str, chunks: Sequence[StoredChunk], context: RerankContext | None = None
    ) -> list[float]: ...


@dataclass(frozen=True)
class ScorePart:
    """One part of a built-in reranker's score, which is the sum of its parts' `term`s.

    The rerankers compute their scores from these parts, so the inspector's arithmetic (rag/inspect/arithmetic.py)
    reads the very numbers that ranked the chunk, not a second computation of them.
    """

    name: str  # "fused score", "chunk cosine", "best sentence cosine", "BM25", "sentence-maxsim"
    raw: float  # the measured score
    value: float  # what is mixed: the raw score, or it min-max normalised over the candidates
    weight: float
    low: float | None = None  # the candidates' lowest and highest raw score, when normalised
    high: float | None = None
    parts: tuple[ScorePart, ...] = ()  # how `raw` itself was made (maxsim-fusion's sentence-maxsim side)

    @property
    def term(self) -> float:
        return self.weight * self.value


Parts = tuple[ScorePart, ...]  # one chunk's score, part by part


def total(parts: Sequence[ScorePart]) -> float:
    """A score from its parts (every built-in reranker's `score` is this)."""
    return sum(p.term for p in parts)


class NoReranker:
    """Keeps the fused order: the stage's scores are the fused scores, so a min score cuts on them."""

    name = "none"

    def score(self, question: str, chunks: Sequence[StoredChunk], context: RerankContext | None = None) -> list[float]:
        return [total(p) for p in self.parts(question, chunks, _need(context, self.name))]

    def parts(self, question: str, chunks: Sequence[StoredChunk], context: RerankContext) -> list[Parts]:
        return [(ScorePart("fused score", s, s, 1.0),) for s in context.prior]


class DenseCosineReranker:
    """Exact cosine of the question with each candidate's stored dense vector (union candidates included)."""

    name = "dense-cosine"

    def score(self, question: str, chunks: Sequence[StoredChunk], context: RerankContext | None = None) -> list[float]:
        return [total(p) for p in self.parts(question, chunks, _need(context, self.name))]

    def parts(self, question: str, chunks: Sequence[StoredChunk], context: RerankContext) -> list[Parts]:
        return [(ScorePart("chunk cosine", c, c, 1.0),) for c in exact_dense_scores(context, chunks)]


class _WeightedReranker:
    """A reranker with one mixing weight in [0, 1], named `<base>` at 0.5 and `<base>:<w>` otherwise."""

    base_name = ""

    def __init__(self, weight: float = DEFAULT_WEIGHT) -> None:
        if not 0.0 <= weight <= 1.0:
            raise ConfigError(f"{self.base_name} weight must be between 0 and 1; got {weight}")
        self.weight = weight
        self.name = self.base_name if weight == DEFAULT_WEIGHT else f"{self.base_name}:{weight:g}"

    def score(self, question: str, chunks: Sequence[StoredChunk], context: RerankContext | None = None) -> list[float]:
        return [total(p) for p in self.parts(question, chunks, _need(context, self.name))]

    def parts(self, question: str, chunks: Sequence[StoredChunk], context: RerankContext) -> list[Parts]:
        raise NotImplementedError


class ScoreFusionReranker(_WeightedReranker):
    """Weighted sum (weight = dense share) of min-max normalised exact dense and BM25 scores over the candidates.

    Rank fusion (RRF) throws the score gaps away; a normalised score mix keeps them, which is why it
    can beat RRF on the same two lists.
    """

    base_name = "score-fusion"
    dense_name = "chunk cosine"  # what its dense side measures

    def parts(self, question: str, chunks: Sequence[StoredChunk], context: RerankContext) -> list[Parts]:
        dense = _normalised(self.dense_name, self.dense_side(question, chunks, context), self.weight)
        sparse = _normalised("BM25", [(s, ()) for s in exact_sparse_scores(context, chunks)], 1.0 - self.weight)
        return list(zip(dense, sparse, strict=True))

    def dense_side(self, question: str, chunks: Sequence[StoredChunk], ctx: RerankContext) -> list[tuple[float, Parts]]:
        """Each chunk's dense score, and the parts it was made of (none: a cosine is measured)."""
        return [(c, ()) for c in exact_dense_scores(ctx, chunks)]


class MaxSimFusionReranker(ScoreFusionReranker):
    """score-fusion whose dense side is sentence-maxsim's (best sentence and whole chunk, half each)."""

    base_name = "maxsim-fusion"
    dense_name = "sentence-maxsim"

    def dense_side(self, question: str, chunks: Sequence[StoredChunk], ctx: RerankContext) -> list[tuple[float, Parts]]:
        return [(total(p), p) for p in SentenceMaxSimReranker().parts(question, chunks, ctx)]


class SentenceMaxSimReranker(_WeightedReranker):
    """Best-matching sentence of each chunk (weight = its share), blended with the chunk's own cosine.

    A long chunk's single vector averages its topics away (and the dense model reads only its first
    256 tokens); the one sentence that answers the question keeps its full similarity. The chunk's
    "sentences" are `rag.ingest.sentences.sentence_texts` (heading path included); see `best_sentence_scores`
    for where their vectors come from.
    """

    base_name = "sentence-maxsim"

    def parts(self, question: str, chunks: Sequence[StoredChunk], context: RerankContext) -> list[Parts]:
        a = self.weight
        best = best_sentence_scores(context, chunks)
        if a == 1.0:  # the chunk's own cosine has no share: not measured
            return [(ScorePart("best sentence cosine", b, b, a),) for b in best]
        chunk_cos = exact_dense_scores(context, chunks)
        return [
            (ScorePart("best sentence cosine", b, b, a), ScorePart("chunk cosine", c, c, 1.0 - a))
            for b, c in zip(best, chunk_cos, strict=True)
        ]


class CrossEncoderReranker(LazyModel):
    """A sentence-transformers CrossEncoder by hub name or local folder.

    Example:
        rr = CrossEncoderReranker("path/to/ms-marco-MiniLM-L-6-v2")
        rr.score("refund time", chunks)
    """

    def __init__(self, model: str) -> None:
        super().__init__()
        self.model_name = model
        self.name = f"{CROSS_ENCODER_PREFIX}{model}"

    def _build(self):  # noqa: ANN202
        try:
            from sentence_transformers import CrossEncoder
        except ImportError:
            raise EncoderError(
                f"a cross-encoder reranker needs torch and sentence-transformers: {TORCH_EXTRA}"
            ) from None
        try:
            return CrossEncoder(self.model_name, device="cpu")
        except Exception as e:  # noqa: BLE001 - sentence-transformers and the hub raise many types for a missing or bad model
            raise EncoderError(f"could not load cross-encoder {self.model_name!r} ({type(e).__name__}: {e})") from None

    def score(self, question: str, chunks: Sequence[StoredChunk], context: RerankContext | None = None) -> list[float]:
        if not chunks:
            return []
        pairs = [(question, c.chunk.embed_text) for c in chunks]
        return [float(s) for s in self._load().predict(pairs, batch_size=32, show_progress_bar=False)]


@lru_cache(maxsize=16)
def get_reranker(name: str) -> Reranker:
    """The reranker for a setting value (`name` or `name:param`, rag.settings.rerankers); models are loaded
    once per process.

    Raises:
        ConfigError: the name or its parameter is not one we know.
    """
    parsed = parse_reranker(name)
    if parsed.is_cross_encoder:
        return CrossEncoderReranker(parsed.model)
    return _BUILT_IN[parsed.base](parsed)


# Built-in name -> the reranker for its parsed setting; the names, what each does and which take a weight are
# registered in rag/settings/rerankers.py, and one registered there without a class here fails at import.
_BUILT_IN: dict[str, Callable[[RerankerName], Reranker]] = {
    "none": lambda _parsed: NoReranker(),
    "dense-cosine": lambda _parsed: DenseCosineReranker(),
    "score-fusion": lambda parsed: ScoreFusionReranker(parsed.weight),
    "sentence-maxsim": lambda parsed: SentenceMaxSimReranker(parsed.weight),
    "maxsim-fusion": lambda parsed: MaxSimFusionReranker(parsed.weight),
}
check_dispatch("rerankers", RERANKER_TABLE, _BUILT_IN)


def exact_dense_scores(ctx: RerankContext, chunks: Sequence[StoredChunk]) -> list[float]:
    """Qdrant's cosine for each chunk (`stored_dense_scores`); 0 for one not found."""
    by_id = stored_dense_scores(ctx.store, ctx.dense_query, _ids_filter(ctx.flt, chunks)) if chunks else {}
    return [by_id.get(c.chunk.id, 0.0) for c in chunks]


def stored_dense_scores(store: Store, query: np.ndarray, flt: ChunkFilter) -> dict[str, float]:
    """Qdrant's cosine of `query` with the stored vector of each chunk `flt.ids` names, by a dense query
    restricted to those ids (exact for few ids): what the dense stage scores, never a re-encoding."""
    return {h.id: h.score for h in store.search_dense(query, len(flt.ids), flt)}


def exact_sparse_scores(ctx: RerankContext, chunks: Sequence[StoredChunk]) -> list[float]:
    """Qdrant's BM25 (with its IDF) for each chunk; 0 for a chunk sharing no term with the question."""
    hits = ctx.store.search_sparse(ctx.sparse_query, len(chunks), _ids_filter(ctx.flt, chunks)) if chunks else []
    by_id = {h.id: h.score for h in hits}
    return [by_id.get(c.chunk.id, 0.0) for c in chunks]


def best_sentence_scores(ctx: RerankContext, chunks: Sequence[StoredChunk]) -> list[float]:
    """Each chunk's best `sentence_texts` cosine with the question.

    Read from the sentence vectors stored at ingest (a MaxSim query restricted to the candidates'
    ids: milliseconds) when the collection has them; a chunk without them (older collections) has
    its sentences encoded now, with the same texts and encoder, so both paths give the same score for
    a collection of float sentence vectors ("separate"). Int8 ones (the default, "separate-int8") come
    within a few hundredths of it; a collection holds one kind or the other, never both.
    """
    hits = ctx.store.search_sentences(ctx.dense_query, len(chunks), _ids_filter(ctx.flt, chunks)) if chunks else []
    by_id = {h.id: h.score for h in hits}
    missing = [c for c in chunks if c.chunk.id not in by_id]
    if missing:
        encoded = _cosines(ctx.dense, ctx.dense_query, [sentence_texts(c.chunk) for c in missing])
        by_id.update((c.chunk.id, max(cosines)) for c, cosines in zip(missing, encoded, strict=True))
    return [by_id[c.chunk.id] for c in chunks]


def sentence_cosines(
    store: Store, dense: DenseEncoder, query: np.ndarray, chunk: StoredChunk
) -> tuple[list[float], bool]:
    """The question's cosine with each of the chunk's `sentence_texts`, from the vectors the reranker reads.

    Returns the cosines and whether they came from the stored sentence vectors (what MaxSim scored);
    otherwise they are encoded now, as `best_sentence_scores` does for a chunk stored without them.
    """
    texts = sentence_texts(chunk.chunk)
    stored = store.sentence_vectors(chunk.chunk.id)
    if stored is not None and len(stored) == len(texts):
        return (np.asarray(stored, dtype=np.float32) @ np.asarray(query, dtype=np.float32)).tolist(), True
    return _cosines(dense, query, [texts])[0], False


def _cosines(dense: DenseEncoder, query: np.ndarray, groups: Sequence[Sequence[str]]) -> list[list[float]]:
    """The question's cosine with every text of each group, with one encoder call for all uncached
    texts (batching is several times faster than a call per chunk)."""
    flat = [s for sentences in groups for s in sentences]
    if not flat:
        return [[] for _ in groups]
    cosines = (_SENTENCE_CACHE.vectors(dense, flat) @ np.asarray(query, dtype=np.float32)).tolist()
    out, i = [], 0
    for sentences in groups:
        out.append(cosines[i : i + len(sentences)])
        i += len(sentences)
    return out


class _VectorCache:
    """A bounded, thread-safe LRU of sentence vectors keyed by (model, text hash)."""

    def __init__(self, max_entries: int) -> None:
        self.max_entries = max_entries
        self._items: OrderedDict[tuple[str, bytes], np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def vectors(self, dense: DenseEncoder, texts: Sequence[str]) -> np.ndarray:
        keys = [(dense.name, hashlib.blake2b(t.encode("utf-8"), digest_size=16).digest()) for t in texts]
        with self._lock:
            found = {k: self._items[k] for k in keys if k in self._items}
            for k in found:
                self._items.move_to_end(k)
        missing: dict[tuple[str, bytes], str] = {}
        for k, text in zip(keys, texts, strict=True):
            if k not in found:
                missing.setdefault(k, text)
        if missing:
            fresh = dense.encode_documents(list(missing.values()))
            with self._lock:
                for k, vec in zip(missing, fresh, strict=True):
                    found[k] = vec
                    self._items[k] = vec
                while len(self._items) > self.max_entries:
                    self._items.popitem(last=False)
        return np.stack([found[k] for k in keys])


# 64k MiniLM sentence vectors are ~100 MB; enough for every candidate of a few thousand questions.
_SENTENCE_CACHE = _VectorCache(65536)


def clear_sentence_cache() -> None:
    """Forget cached sentence vectors (benchmarks measure a cold question with it)."""
    _SENTENCE_CACHE.clear()


def _ids_filter(flt: ChunkFilter, chunks: Sequence[StoredChunk]) -> ChunkFilter:
    return ChunkFilter(
        ids=tuple(c.chunk.id for c in chunks),
        include_quarantined=flt.include_quarantined,
        include_unranked=flt.include_unranked,
    )


def _normalised(name: str, scores: Sequence[tuple[float, Parts]], weight: float) -> list[ScorePart]:
    """Each raw score min-max normalised over the candidates (0 for all when they are equal), as a part."""
    raw = [r for r, _ in scores]
    lo, hi = min(raw, default=0.0), max(raw, default=0.0)
    return [ScorePart(name, r, (r - lo) / (hi - lo) if hi > lo else 0.0, weight, lo, hi, parts) for r, parts in scores]


def _need(context: RerankContext | None, name: str) -> RerankContext:
    if context is None:
        raise ConfigError(
            f"reranker {name!r} rescores with the query vectors and the store: call it through retrieve()"
        )
    return context
