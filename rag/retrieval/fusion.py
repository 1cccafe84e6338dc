"""Fusion: the dense and sparse lists become one, in Qdrant (rrf, dbsf, weighted_rrf) or here (union, or one list).

`uncut_fused_rank` is where fusion put a chunk the fused list cut: the inspector's tracking and Eval's
verdicts both ask it, so both name the same rank.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Iterable, Sequence

from rag.retrieval.result import RetrievalResult
from rag.settings.config import RetrievalConfig
from rag.store.base import FusedQuery, Store
from rag.types import ChunkFilter, Hit, SparseVector

# Fusions Qdrant runs itself (prefetch + fusion query); the others are assembled from the two lists.
QDRANT_FUSIONS = ("rrf", "dbsf", "weighted_rrf")


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
        hits = store.search_fused(
            FusedQuery(dense_vec, sparse_vec, n, max(want, 2 * n), config.fusion, config.rrf_k, weights), flt
        )
        return sorted(hits, key=lambda h: (-h.score, h.id))[:want]
    dense_hits, sparse_hits = lists or (store.search_dense(dense_vec, n, flt), store.search_sparse(sparse_vec, n, flt))
    if config.fusion == "dense":
        return dense_hits
    if config.fusion == "sparse":
        return sparse_hits
    return _union(dense_hits, sparse_hits, config.rrf_k)


def uncut_fused_rank(store: Store, result: RetrievalResult, chunk_id: str) -> tuple[int, float] | None:
    """Where fusion put a chunk it cut: its (rank, score) in the whole fused list (both prefetch lists, at
    most 2 x candidates); None when fusion never saw it or runs outside Qdrant.

    Queries with the vectors the stages ran (expanded ones under PRF), kept on the result, so the rank
    is the one that fusion really gave, and the question is not encoded again.
    """
    config = result.config
    if config.fusion not in QDRANT_FUSIONS or result.query is None:
        return None
    q = result.query
    longer = fused_search(store, config, q.dense_run, q.sparse_run, result.filter, limit=2 * config.candidates)
    ids = [h.id for h in longer]
    if chunk_id not in ids:
        return None
    i = ids.index(chunk_id)
    return i + 1, longer[i].score


def rrf_scores(lists: Iterable[Sequence[str]], k: int, first_rank: int = 0) -> dict[str, float]:
    """Reciprocal rank fusion, the one implementation: each id's sum of 1 / (k + rank) over the lists.

    `first_rank` 0 is Qdrant's convention (its RRF counts ranks from 0, so union and the Qdrant fusions
    agree); the modes count from 1, the textbook form (rag/modes/fusion.py).
    """
    scores: dict[str, float] = {}
    for ids in lists:
        for rank, cid in enumerate(ids, first_rank):
            scores[cid] = scores.get(cid, 0.0) + rrf_term(rank, k)
    return scores


def rrf_term(rank: int, k: int, weight: float = 1.0) -> float:
    """What one list adds for a chunk at `rank` (counted as `rrf_scores` counts): 1 / ((rank + 1) / weight + k - 1),
    Qdrant's weighted form, which is 1 / (k + rank) at weight 1; a list of weight 0 or less adds nothing."""
    return 1.0 / ((rank + 1) / weight + k - 1) if weight > 0 else 0.0


def _union(dense: Sequence[Hit], sparse: Sequence[Hit], k: int) -> list[Hit]:
    """Every chunk either list found, ordered by RRF as Qdrant computes it (1 / (k + 0-based rank)).

    The reranker then sees all of them: nothing is cut before it.
    """
    hits: dict[str, Hit] = {}
    for h in (*dense, *sparse):
        hits.setdefault(h.id, h)
    scores = rrf_scores(([h.id for h in lst] for lst in (dense, sparse)), k)
    return [replace(hits[i], score=s) for i, s in sorted(scores.items(), key=lambda kv: -kv[1])]
