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
chunk that stands for them, and those that outrank the next section are carried with it: shown, read
and counted at its rank; rag/retrieval/collapse.py), `dedupe` keeps one of the chunks whose text is the
same in several places (rag/retrieval/dedupe.py: the others are marked, and listed on it as "also
in"), and `context="section"` hands the answerer the section around each final chunk (small-to-big,
rag/retrieval/context.py); ranking and metrics still see the chunk itself.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from functools import cached_property
from typing import Sequence

import numpy as np

from rag.components import Components
from rag.retrieval.collapse import carried_siblings, fold_sections
from rag.retrieval.context import section_contexts
from rag.retrieval.dedupe import Repeats, find_repeats
from rag.retrieval.fusion import fused_search
from rag.retrieval.prf import expand_query, rocchio
from rag.retrieval.question import check_question
from rag.retrieval.rerank import RerankContext, Reranker, get_reranker
from rag.retrieval.result import Candidate, QueryVectors, RetrievalResult, StageScore
from rag.settings.config import RetrievalConfig
from rag.store.base import Store, stored_chunk
from rag.types import Chunk, ChunkFilter, Hit, SparseVector


def retrieve(
    components: Components, question: str, config: RetrievalConfig | None = None, flt: ChunkFilter | None = None,
    encoded: QueryVectors | None = None,
) -> RetrievalResult:  # fmt: skip
    """Run dense, sparse, fusion and reranking for `question`.

    The steps, in order: encode the question, search both indexes, expand the BM25 query (PRF), fuse,
    move the dense query toward the fused top (Rocchio) and fuse again, rerank, cut to the final top k
    (sections, repeats, min_score), and assemble every candidate's stage-by-stage record.

    Args:
        components: store and encoders.
        question: the user's question (refused when empty, as Ask refuses it).
        config: retrieval settings; None means the configured defaults.
        flt: source/tag restrictions, applied inside Qdrant for every stage.
        encoded: the question's vectors from an earlier retrieval of the same question (compare,
            the tracker's verified fixes); only their `dense` and `sparse` are used, the dense one only
            when it was encoded for the dense vector `config.dense_vector` names.

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
    components = components.in_space(config.dense_vector)
    space = components.store.dense_name()
    reranker = get_reranker(config.reranker)
    timings: dict[str, float] = {}
    if encoded is not None and encoded.space != space:  # encoded for another dense vector: its dense is of no use
        encoded = dataclasses.replace(encoded, dense=components.dense.encode_query(question))
    own_dense, own_sparse = _encode(components, question, encoded, timings)

    t0 = time.perf_counter()
    store = components.store
    lists = _search(store, config, own_dense, own_sparse, flt)
    lists = _expand_sparse(components, config, lists, flt)
    lists = _fuse(store, config, lists, flt)
    lists = _expand_dense(store, config, lists, flt)
    timings["search"] = _ms(t0)

    t0 = time.perf_counter()
    ranked, rerank = _rerank(components, reranker, question, lists, flt)
    timings["rerank"] = _ms(t0)

    cut = _cut(ranked, rerank, config)
    contexts = _section_contexts(components, config, lists, cut.final_ids)
    candidates = _assemble(lists, rerank, cut, contexts)
    query = QueryVectors(own_dense, own_sparse, lists.dense_vec, lists.sparse_vec, space)
    return RetrievalResult(
        question, config, reranker.name, candidates, flt, timings, lists.expansion, lists.dense_feedback, query
    )


@dataclass(frozen=True)
class _Lists:
    """The query vectors the stages ran and the lists they found, as each step leaves them.

    One value handed from step to step, so a step that re-runs a search (an expansion) replaces the
    vector and the list together and no later step reads a list found with another vector.
    """

    dense_vec: np.ndarray
    sparse_vec: SparseVector
    dense_hits: list[Hit]
    sparse_hits: list[Hit]
    fused_hits: list[Hit] = field(default_factory=list)
    expansion: tuple[str, ...] = ()  # the words BM25 PRF added
    dense_feedback: tuple[str, ...] = ()  # the ids of the chunks Rocchio moved the dense query toward

    @cached_property
    def hits(self) -> dict[str, Hit]:
        """Each chunk's hit from the first list that found it (dense, sparse, fused): the one payload every
        later step reads the chunk from, and the order candidates are listed in before sorting."""
        first: dict[str, Hit] = {}
        for hits in (self.dense_hits, self.sparse_hits, self.fused_hits):
            for h in hits:
                first.setdefault(h.id, h)
        return first


@dataclass(frozen=True)
class _Cut:
    """What the cut to the final top k decided, kept whole so each candidate can say why it was left out."""

    collapsed: dict[str, str]  # folded chunk id -> the id of its section's chunk standing for it
    repeats: Repeats
    carried: frozenset[str]  # folded chunks shown, read and counted with their section's chunk
    final_ids: list[str]  # the final top k, best first

    @cached_property
    def final_rank(self) -> dict[str, int]:
        """Each final chunk's 1-based rank."""
        return {cid: r for r, cid in enumerate(self.final_ids, 1)}


def _encode(
    components: Components, question: str, encoded: QueryVectors | None, timings: dict[str, float]
) -> tuple[np.ndarray, SparseVector]:
    """The question's dense and sparse vectors: `encoded`'s when given (no second encoding of the same
    question), else encoded now.

    Models not loaded yet are loaded first and timed apart ("load models"), or a first query's "encode"
    would read seconds of loading.
    """
    # A LazyModel or CollectionDense says whether it has loaded; any other encoder is ready.
    cold = [m for m in (components.dense, components.sparse) if not getattr(m, "loaded", True)]
    if encoded is None and cold:
        t0 = time.perf_counter()
        for model in cold:
            model.load()
        timings["load models"] = _ms(t0)
    t0 = time.perf_counter()
    if encoded is None:
        vectors = components.dense.encode_query(question), components.sparse.encode_query(question)
    else:
        vectors = encoded.dense, encoded.sparse
    timings["encode"] = _ms(t0)
    return vectors


def _search(
    store: Store, config: RetrievalConfig, dense_vec: np.ndarray, sparse_vec: SparseVector, flt: ChunkFilter
) -> _Lists:
    """The dense and the sparse list, each `candidates` long, searched apart so both stages show what
    their own index found, whatever the fusion."""
    n = config.candidates
    return _Lists(dense_vec, sparse_vec, store.search_dense(dense_vec, n, flt), store.search_sparse(sparse_vec, n, flt))


def _expand_sparse(components: Components, config: RetrievalConfig, lists: _Lists, flt: ChunkFilter) -> _Lists:
    """With `prf`: the BM25 query expanded with terms of its own top hits, and the sparse list searched
    again with it.

    Before fusion, because the feedback is the sparse list's own top and fusion must see the list
    the expanded query found.
    """
    if not (config.prf and lists.sparse_hits):
        return lists
    top = lists.sparse_hits[: config.prf_docs]
    feedback = [(stored_chunk(h.id, h.payload).chunk.embed_text, h.score) for h in top]
    expanded = expand_query(components.sparse, lists.sparse_vec, feedback, config.prf_terms, config.prf_weight)
    hits = components.store.search_sparse(expanded.vector, config.candidates, flt)
    return dataclasses.replace(lists, sparse_vec=expanded.vector, sparse_hits=hits, expansion=expanded.terms)


def _fuse(store: Store, config: RetrievalConfig, lists: _Lists, flt: ChunkFilter) -> _Lists:
    """The fused list of the current vectors and lists (rag/retrieval/fusion.py: Qdrant's fusion query,
    or the lists themselves for union, dense and sparse)."""
    fused = fused_search(
        store, config, lists.dense_vec, lists.sparse_vec, flt, lists=(lists.dense_hits, lists.sparse_hits)
    )
    return dataclasses.replace(lists, fused_hits=fused)


def _expand_dense(store: Store, config: RetrievalConfig, lists: _Lists, flt: ChunkFilter) -> _Lists:
    """With `dense_prf`: the dense query moved toward the stored vectors of the top fused hits (Rocchio),
    the dense list searched again with it, and the lists fused again.

    After fusion, because its feedback is the fused top (what both lists put first), not the dense
    list's own; the first fused list is replaced, so the stages show only what the moved query found.
    """
    if not (config.dense_prf and lists.fused_hits):
        return lists
    feedback = tuple(h.id for h in lists.fused_hits[: config.dense_prf_docs])
    top = ChunkFilter(ids=feedback, include_quarantined=flt.include_quarantined, include_unranked=flt.include_unranked)
    vectors = [r.dense for r in store.records(top, with_vectors=True) if r.dense is not None]
    dense_vec = rocchio(lists.dense_vec, vectors, config.dense_prf_weight)
    hits = store.search_dense(dense_vec, config.candidates, flt)
    moved = dataclasses.replace(lists, dense_vec=dense_vec, dense_hits=hits, dense_feedback=feedback)
    return _fuse(store, config, moved, flt)


def _rerank(
    components: Components, reranker: Reranker, question: str, lists: _Lists, flt: ChunkFilter
) -> tuple[list[Chunk], dict[str, StageScore]]:
    """The fused chunks in the reranker's order, and each one's rerank rank and score.

    The reranker gets the vectors the stages ran (expanded ones included) and the fused scores, so a
    rescoring stage that blends in the previous one sees exactly what the table shows.
    """
    pool = [stored_chunk(h.id, lists.hits[h.id].payload) for h in lists.fused_hits]
    prior = tuple(h.score for h in lists.fused_hits)
    context = RerankContext(question, lists.dense_vec, lists.sparse_vec, components.store, components.dense, flt, prior)
    scores = reranker.score(question, pool, context) if pool else []
    order = sorted(range(len(pool)), key=lambda i: -scores[i])
    stage = {pool[i].chunk.id: StageScore(r, scores[i]) for r, i in enumerate(order, 1)}
    return [pool[i].chunk for i in order], stage


def _cut(ranked: list[Chunk], rerank: dict[str, StageScore], config: RetrievalConfig) -> _Cut:
    """The final top k: one chunk a section (`collapse`), one of each repeated passage (`dedupe`), none
    under `min_score`, at most `final_k`.

    Every chunk stays a candidate; the cut only records what it left out and why, so the inspector can
    show where a chunk was lost.
    """
    collapsed = fold_sections(ranked) if config.collapse else {}
    # Among the chunks collapsing left standing: a chunk folded behind its section never stands for a repeat.
    standing = [c for c in ranked if c.id not in collapsed]
    repeats = find_repeats(standing) if config.dedupe else Repeats()

    def shown(cid: str) -> bool:
        score = rerank[cid].score
        return cid not in repeats.repeat_of and (config.min_score is None or score >= config.min_score)

    carried = carried_siblings(ranked, collapsed, config.final_k, shown) if collapsed else frozenset()
    final_ids: list[str] = []
    for chunk in ranked:
        if chunk.id in collapsed or not shown(chunk.id):
            continue
        final_ids.append(chunk.id)
        if len(final_ids) == config.final_k:
            break
    return _Cut(collapsed, repeats, carried, final_ids)


def _section_contexts(
    components: Components, config: RetrievalConfig, lists: _Lists, final_ids: list[str]
) -> dict[str, Chunk]:
    """With `context="section"`: the section around each final chunk, which the answerer is handed
    (small-to-big); ranking and metrics still see the chunk itself. Read for the final chunks only."""
    if config.context != "section" or not final_ids:
        return {}
    return section_contexts(components, [stored_chunk(cid, lists.hits[cid].payload).chunk for cid in final_ids])


def _assemble(
    lists: _Lists, rerank: dict[str, StageScore], cut: _Cut, contexts: dict[str, Chunk]
) -> tuple[Candidate, ...]:
    """Every chunk any stage found, with its rank and score in each stage and what the cut decided, in
    the order the inspector lists them (`_display_order`).

    Chunks outside the final top k are kept on purpose: they are how a person sees where a chunk was lost.
    """
    stages = {"dense": _ranks(lists.dense_hits), "sparse": _ranks(lists.sparse_hits), "fused": _ranks(lists.fused_hits)}
    candidates = (
        Candidate(
            chunk=stored_chunk(cid, hit.payload),
            dense=stages["dense"].get(cid, StageScore()),
            sparse=stages["sparse"].get(cid, StageScore()),
            fused=stages["fused"].get(cid, StageScore()),
            rerank=rerank.get(cid, StageScore()),
            final_rank=cut.final_rank.get(cid),
            collapsed_into=cut.collapsed.get(cid),
            carried_at=cut.final_rank.get(cut.collapsed.get(cid, "")) if cid in cut.carried else None,
            carried=cid in cut.carried,
            repeat_of=cut.repeats.repeat_of.get(cid),
            also_in=cut.repeats.also_in.get(cid, ()),
            context=contexts.get(cid),
        )
        for cid, hit in lists.hits.items()
    )
    return tuple(sorted(candidates, key=_display_order))


def _display_order(c: Candidate) -> tuple:
    """The final list first (each section's chunk, then what it carries), then the rest by their last stage."""
    big = 10**9
    return (
        c.shown_rank or big,
        c.final_rank is None,  # a section's chunk first, then the siblings it carries
        c.rerank.rank or big,
        c.fused.rank or big,
        min(c.dense.rank or big, c.sparse.rank or big),
    )


def _ranks(hits: Sequence[Hit]) -> dict[str, StageScore]:
    return {h.id: StageScore(r, h.score) for r, h in enumerate(hits, 1)}


def _ms(t0: float) -> float:
    return round((time.perf_counter() - t0) * 1000, 2)
