"""Combining several searches into one final list, and narrowing a final list, without a second retrieval path.

A mode's searches are each a full `retrieve()`. Their reranked lists are fused by reciprocal rank
(RRF, 1 / (k + rank), k = the config's rrf_k), because their scores are not on one scale: a
reranker's scores are min-max normalised per search, and a dense-only HyDE search scores cosines.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence

from rag.retrieve import Candidate, RetrievalResult, StageScore


def rrf_merge(parts: Sequence[tuple[str, RetrievalResult]]) -> RetrievalResult:
    """One RetrievalResult whose rerank stage is the RRF of each part's rerank list.

    Args:
        parts: (label, result) pairs; the first is the question's own search, whose dense, sparse and
            fused ranks the merged candidates keep (so the answer gate's dense cosine is still the
            question's, and a chunk only later searches found shows "–" there: its per-search ranks
            are in those searches).

    Returns:
        The merged result: `final` is the best `final_k` by RRF; chunks a part dropped with its
        `min_score` do not count for that part. `reranker` names the fusion and the parts.
    """
    base = parts[0][1]
    config = base.config
    scores: dict[str, float] = {}
    chunks: dict[str, Candidate] = {}
    for _, part in parts:
        pool = [c for c in part.ranked("rerank") if config.min_score is None or (c.rerank.score or 0.0) >= config.min_score]
        for rank, c in enumerate(pool, 1):
            scores[c.id] = scores.get(c.id, 0.0) + 1.0 / (config.rrf_k + rank)
            chunks.setdefault(c.id, c)
    order = sorted(scores, key=lambda cid: -scores[cid])
    own = {c.id: c for c in base.candidates}
    candidates = []
    for rank, cid in enumerate(order, 1):
        mine = own.get(cid)
        candidates.append(
            Candidate(
                chunk=chunks[cid].chunk,
                dense=mine.dense if mine else StageScore(),
                sparse=mine.sparse if mine else StageScore(),
                fused=mine.fused if mine else StageScore(),
                rerank=StageScore(rank, scores[cid]),
                final_rank=rank if rank <= config.final_k else None,
            )
        )
    timings: dict[str, float] = {}
    for _, part in parts:
        for key, ms in part.timings_ms.items():
            timings[key] = round(timings.get(key, 0.0) + ms, 2)
    name = f"rrf over {len(parts)} searches ({', '.join(label for label, _ in parts)}; each reranked by {base.reranker})"
    return dataclasses.replace(base, reranker=name, candidates=tuple(candidates), timings_ms=timings)


def keep_final(result: RetrievalResult, ids: Iterable[str]) -> RetrievalResult:
    """The same retrieval with only `ids` (in their present order) left in the final top-k."""
    keep = set(ids)
    kept = [c.id for c in result.final if c.id in keep]
    rank = {cid: r for r, cid in enumerate(kept, 1)}
    return dataclasses.replace(result, candidates=tuple(dataclasses.replace(c, final_rank=rank.get(c.id)) for c in result.candidates))
