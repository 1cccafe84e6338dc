"""The one retrieval code path: what the inspector shows is exactly what Ask and Eval run.

`retrieve()` records, for every candidate chunk, its rank and score in each stage (dense, sparse,
fused, reranked) and whether it reached the final top-k, so a person can see where a chunk was lost.

Fusion (`RetrievalConfig.fusion`), each list holding `candidates` chunks:
- rrf, dbsf, weighted_rrf: one Qdrant query, a dense and a sparse prefetch fused by Qdrant. Its RRF
  scores 1 / (k + rank - 1); weighted RRF divides the rank by the weight, 1 / (k + rank / w - 1), so
  weights 0.5/0.5 are not plain RRF. DBSF normalises each list by its mean +- 3 standard deviations.
- union: every chunk either list found, in RRF order, all handed to the reranker ("let it decide").
- dense, sparse: that list alone (the baselines the inspector compares against).

Section-level results: `collapse` keeps each section's best chunk (the others are marked with the
chunk that stands for them), and `context="section"` hands the answerer the section around each final
chunk (small-to-big, rag/retrieval/context.py); ranking and metrics still see the chunk itself.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Sequence

import numpy as np

from rag.components import Components
from rag.settings.config import RetrievalConfig
from rag.errors import QuestionError
from rag.retrieval.context import section_contexts
from rag.retrieval.prf import expand_query, rocchio
from rag.retrieval.rerank import RerankContext, get_reranker
from rag.store.base import FusedQuery, Store, stored_chunk
from rag.types import Chunk, ChunkFilter, Hit, SparseVector, StoredChunk

STAGES = ("dense", "sparse", "fused", "rerank")
MAX_QUESTION_CHARS = 2000
# Fusions Qdrant runs itself (prefetch + fusion query); the others are assembled from the two lists.
QDRANT_FUSIONS = ("rrf", "dbsf", "weighted_rrf")


@dataclass(frozen=True)
class StageScore:
    rank: int | None = None  # 1-based; None when the chunk was not in that stage's list
    score: float | None = None


@dataclass(frozen=True)
class Candidate:
    """One chunk seen by any stage, with its rank and score in each."""

    chunk: StoredChunk
    dense: StageScore = StageScore()
    sparse: StageScore = StageScore()
    fused: StageScore = StageScore()
    rerank: StageScore = StageScore()
    final_rank: int | None = None
    # With config.collapse: the id of the better-ranked chunk of the same section, which stands for both.
    collapsed_into: str | None = None
    # With config.context == "section": the whole section around the chunk, which answers are built from.
    context: Chunk | None = None

    @property
    def id(self) -> str:
        return self.chunk.chunk.id

    def stage(self, name: str) -> StageScore:
        return getattr(self, name)

    @property
    def answer_chunk(self) -> Chunk:
        """What an answer is built from: the section around the chunk (small-to-big) or the chunk itself."""
        return self.context or self.chunk.chunk

    @property
    def final_score(self) -> float | None:
        """The last stage's score, for a chunk that reached the final top-k."""
        return self.rerank.score if self.final_rank is not None else None

    @property
    def movement(self) -> str:
        """Its path through the stages, e.g. "D4 S– → F2 → R1 ▲1" (the arrow: places gained by reranking)."""
        def r(stage: str) -> str:
            rank = self.stage(stage).rank
            return "–" if rank is None else str(rank)

        path = f"D{r('dense')} S{r('sparse')} → F{r('fused')} → R{r('rerank')}"
        if self.collapsed_into:
            path += f" (collapsed: its section ranks as {self.collapsed_into[:8]})"
        if self.fused.rank is None or self.rerank.rank is None:
            return path
        delta = self.fused.rank - self.rerank.rank
        return path + (f" ▲{delta}" if delta > 0 else f" ▼{-delta}" if delta < 0 else " =")

    def as_row(self) -> dict:
        """The flat record the CLI's --json and the inspector table use."""
        c = self.chunk.chunk
        row = {"chunk_id": c.id, "source": c.source, "heading": c.heading, "start": c.start, "end": c.end, "text": c.text}
        for stage in STAGES:
            s = self.stage(stage)
            row[f"{stage}_rank"] = s.rank
            row[f"{stage}_score"] = s.score
        row["final_rank"] = self.final_rank
        row["collapsed_into"] = self.collapsed_into
        return row


@dataclass(frozen=True)
class QueryVectors:
    """The question's own vectors, and those the stages ran: the expanded ones under PRF / dense PRF (else the same).

    Kept on the result so that tracking, explaining and comparing reuse them instead of encoding the
    question again, and query exactly what the stage table shows.
    """

    dense: np.ndarray
    sparse: SparseVector
    dense_run: np.ndarray
    sparse_run: SparseVector


@dataclass(frozen=True)
class RetrievalResult:
    """Everything one retrieval saw. `final` is what answers are built from."""

    question: str
    config: RetrievalConfig
    reranker: str
    candidates: tuple[Candidate, ...]
    filter: ChunkFilter = ChunkFilter()
    timings_ms: dict[str, float] = field(default_factory=dict, compare=False)
    # Words pseudo-relevance feedback added to the BM25 query (config.prf); the sparse stage used them.
    expansion: tuple[str, ...] = ()
    # Chunk ids dense feedback (config.dense_prf) moved the question vector toward; the dense stage was re-run from there.
    dense_feedback: tuple[str, ...] = ()
    query: QueryVectors | None = field(default=None, compare=False, repr=False)

    @property
    def final(self) -> list[Candidate]:
        return sorted((c for c in self.candidates if c.final_rank is not None), key=lambda c: c.final_rank)

    def ranked(self, stage: str) -> list[Candidate]:
        """Candidates in one stage's order (only those the stage returned); with collapsing on, the last
        stage lists each section once (its best chunk), as the final top k does, so metrics count that."""
        kept = (c for c in self.candidates if c.stage(stage).rank is not None and not (stage == "rerank" and c.collapsed_into))
        return sorted(kept, key=lambda c: c.stage(stage).rank)

    def get(self, chunk_id: str) -> Candidate | None:
        return next((c for c in self.candidates if c.id == chunk_id), None)


def check_question(question: str) -> str:
    """The question with its whitespace collapsed, when it can be searched.

    Raises:
        QuestionError: it is empty (or only whitespace), or longer than MAX_QUESTION_CHARS.
    """
    question = " ".join(question.split())
    if not question:
        raise QuestionError("type a question first")
    if len(question) > MAX_QUESTION_CHARS:
        raise QuestionError(f"the question is {len(question):,} characters long; keep it under {MAX_QUESTION_CHARS:,}")
    return question


def retrieve(
    components: Components,
    question: str,
    config: RetrievalConfig | None = None,
    flt: ChunkFilter | None = None,
    encoded: QueryVectors | None = None,
) -> RetrievalResult:
    """Run dense, sparse, fusion and reranking for `question`.

    Args:
        components: store and encoders.
        question: the user's question (refused when empty, as Ask refuses it).
        config: retrieval settings; None means the configured defaults.
        flt: source/tag restrictions, applied inside Qdrant for every stage.
        encoded: the question's vectors from an earlier retrieval of the same question (compare,
            the tracker's verified fixes); only their `dense` and `sparse` are used.

    Returns:
        A RetrievalResult holding every candidate's per-stage rank and score. With reranker "none" the
        rerank stage repeats the fused ranks and scores, so `min_score` always cuts on the last stage.

    Raises:
        QuestionError: the question is empty or too long.
        RagError: a setting names an unknown reranker, a model cannot load, or the store fails.
    """
    check_question(question)
    config = config or components.settings.retrieval
    flt = flt or ChunkFilter()
    components.check_models()
    reranker = get_reranker(config.reranker)
    timings: dict[str, float] = {}
    cold = [m for m in (components.dense, components.sparse) if not getattr(m, "loaded", True)]  # LazyModel or CollectionDense
    if encoded is None and cold:  # a first query loads the models: timed apart, or "encode" would read 20 s
        t0 = time.perf_counter()
        for model in cold:
            model.load()
        timings["load models"] = _ms(t0)
    t0 = time.perf_counter()
    if encoded is None:
        own_dense, own_sparse = components.dense.encode_query(question), components.sparse.encode_query(question)
    else:
        own_dense, own_sparse = encoded.dense, encoded.sparse
    dense_vec, sparse_vec = own_dense, own_sparse
    timings["encode"] = _ms(t0)

    t0 = time.perf_counter()
    store = components.store
    n = config.candidates
    dense_hits = store.search_dense(dense_vec, n, flt)
    sparse_hits = store.search_sparse(sparse_vec, n, flt)
    expansion: tuple[str, ...] = ()
    dense_feedback: tuple[str, ...] = ()
    if config.prf and sparse_hits:
        feedback = [(stored_chunk(h.id, h.payload).chunk.embed_text, h.score) for h in sparse_hits[: config.prf_docs]]
        expanded = expand_query(components.sparse, sparse_vec, feedback, config.prf_terms, config.prf_weight)
        sparse_vec, expansion = expanded.vector, expanded.terms
        sparse_hits = store.search_sparse(sparse_vec, n, flt)
    fused_hits = fused_search(store, config, dense_vec, sparse_vec, flt, lists=(dense_hits, sparse_hits))
    if config.dense_prf and fused_hits:
        dense_feedback = tuple(h.id for h in fused_hits[: config.dense_prf_docs])
        top = ChunkFilter(ids=dense_feedback, include_quarantined=flt.include_quarantined)
        vectors = [r.dense for r in store.records(top, with_vectors=True) if r.dense is not None]
        dense_vec = rocchio(dense_vec, vectors, config.dense_prf_weight)
        dense_hits = store.search_dense(dense_vec, n, flt)
        fused_hits = fused_search(store, config, dense_vec, sparse_vec, flt, lists=(dense_hits, sparse_hits))
    timings["search"] = _ms(t0)

    payloads: dict[str, Hit] = {}
    for hits in (dense_hits, sparse_hits, fused_hits):
        for h in hits:
            payloads.setdefault(h.id, h)
    stages: dict[str, dict[str, StageScore]] = {
        "dense": _ranks(dense_hits),
        "sparse": _ranks(sparse_hits),
        "fused": _ranks(fused_hits),
    }

    t0 = time.perf_counter()
    pool = [stored_chunk(h.id, payloads[h.id].payload) for h in fused_hits]
    context = RerankContext(question, dense_vec, sparse_vec, store, components.dense, flt, tuple(h.score for h in fused_hits))
    scores = reranker.score(question, pool, context) if pool else []
    order = sorted(range(len(pool)), key=lambda i: -scores[i])
    stages["rerank"] = {pool[i].chunk.id: StageScore(r, scores[i]) for r, i in enumerate(order, 1)}
    timings["rerank"] = _ms(t0)

    collapsed = _collapse([pool[i].chunk for i in order]) if config.collapse else {}
    final_ids: list[str] = []
    for i in order:
        if pool[i].chunk.id in collapsed or (config.min_score is not None and scores[i] < config.min_score):
            continue
        final_ids.append(pool[i].chunk.id)
        if len(final_ids) == config.final_k:
            break
    final_rank = {cid: r for r, cid in enumerate(final_ids, 1)}
    contexts: dict[str, Chunk] = {}
    if config.context == "section" and final_ids:
        contexts = section_contexts(components, [stored_chunk(cid, payloads[cid].payload).chunk for cid in final_ids])

    candidates = tuple(
        Candidate(
            chunk=stored_chunk(cid, hit.payload),
            dense=stages["dense"].get(cid, StageScore()),
            sparse=stages["sparse"].get(cid, StageScore()),
            fused=stages["fused"].get(cid, StageScore()),
            rerank=stages["rerank"].get(cid, StageScore()),
            final_rank=final_rank.get(cid),
            collapsed_into=collapsed.get(cid),
            context=contexts.get(cid),
        )
        for cid, hit in payloads.items()
    )
    candidates = tuple(sorted(candidates, key=_display_order))
    query = QueryVectors(own_dense, own_sparse, dense_vec, sparse_vec)
    return RetrievalResult(question, config, reranker.name, candidates, flt, timings, expansion, dense_feedback, query)


def fused_search(
    store: Store,
    config: RetrievalConfig,
    dense_vec: Sequence[float],
    sparse_vec: SparseVector,
    flt: ChunkFilter,
    limit: int | None = None,
    lists: tuple[list[Hit], list[Hit]] | None = None,
) -> list[Hit]:
    """The fused list: one Qdrant prefetch + fusion query, or for "union"/"dense"/"sparse" the lists themselves.

    Args:
        limit: how long the fused list may be (default: the configured candidates); the tracker asks
            for more to find a would-be rank. Union lists hold up to twice the candidates anyway.
        lists: the dense and sparse hits already fetched with the configured candidates, if any.
    """
    n = config.candidates
    if config.fusion in QDRANT_FUSIONS:
        weights = (config.dense_weight, 1.0 - config.dense_weight)
        want = limit or n
        # RRF gives a chunk at rank r of one list only the score of another at rank r of the other list
        # only, and the engine orders such ties differently in each process (53 of 55 FastAPI questions
        # changed their fused order between two runs), so an eval run could not be repeated. The whole
        # union (at most 2n hits) is fetched and ties ordered by id: the same question ranks the same in every run.
        hits = store.search_fused(FusedQuery(dense_vec, sparse_vec, n, max(want, 2 * n), config.fusion, config.rrf_k, weights), flt)
        return sorted(hits, key=lambda h: (-h.score, h.id))[:want]
    dense_hits, sparse_hits = lists or (store.search_dense(dense_vec, n, flt), store.search_sparse(sparse_vec, n, flt))
    if config.fusion == "dense":
        return dense_hits
    if config.fusion == "sparse":
        return sparse_hits
    return _union(dense_hits, sparse_hits, config.rrf_k)


def _collapse(ranked: Sequence[Chunk]) -> dict[str, str]:
    """{chunk id: the id of the better-ranked chunk of the same section} for every chunk but each section's best.

    A section is a document's heading path: in documentation several chunks of one long section often
    outrank every other section, and an answer needs the other sections more than a second look at one.
    """
    best: dict[tuple[str, tuple[str, ...]], str] = {}
    folded: dict[str, str] = {}
    for chunk in ranked:
        first = best.setdefault((chunk.source, chunk.heading_path), chunk.id)
        if first != chunk.id:
            folded[chunk.id] = first
    return folded


def _display_order(c: Candidate) -> tuple:
    big = 10**9
    return (c.final_rank or big, c.rerank.rank or big, c.fused.rank or big, min(c.dense.rank or big, c.sparse.rank or big))


def _ranks(hits: Sequence[Hit]) -> dict[str, StageScore]:
    return {h.id: StageScore(r, h.score) for r, h in enumerate(hits, 1)}


def _union(dense: Sequence[Hit], sparse: Sequence[Hit], k: int) -> list[Hit]:
    """Every chunk either list found, ordered by RRF as Qdrant computes it (1 / (k + 0-based rank)).

    The reranker then sees all of them: nothing is cut before it.
    """
    scores: dict[str, float] = {}
    hits: dict[str, Hit] = {}
    for lst in (dense, sparse):
        for rank, h in enumerate(lst):
            scores[h.id] = scores.get(h.id, 0.0) + 1.0 / (k + rank)
            hits.setdefault(h.id, h)
    return [replace(hits[i], score=s) for i, s in sorted(scores.items(), key=lambda kv: -kv[1])]


def _ms(t0: float) -> float:
    return round((time.perf_counter() - t0) * 1000, 2)
