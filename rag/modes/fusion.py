"""Combining several searches into one final list, and narrowing a final list, without a second retrieval path.

A mode's searches are each a full `retrieve()`; their scores are not on one scale (a reranker's
scores are min-max normalised per search, a dense-only HyDE search scores cosines), so they are
combined by rank:
- "rrf": reciprocal rank fusion of each search's reranked list, 1 / (k + rank), k = the config's
  rrf_k. It rewards agreement, which suits HyDE (passage and question should agree), but it lets
  chunks every search ranks fairly well crowd out one that only a later hop ranks first.
- "interleave": each search's final top-k in turn (first of each, then second of each, ...), so
  every hop keeps a share of the final list; for multi-hop, where hop 2 looks for what hop 1 lacked.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence

from rag.retrieval.fusion import rrf_scores
from rag.retrieval.result import Candidate, RetrievalResult, StageScore

HOP_FUSIONS = ("rrf", "interleave")


def merge(parts: Sequence[tuple[str, RetrievalResult]], method: str = "rrf") -> RetrievalResult:
    """One RetrievalResult whose rerank stage is the parts' lists combined by `method`.

    Args:
        parts: (label, result) pairs; the first is the question's own search (or the agent's first),
            whose dense, sparse and fused ranks the merged candidates keep: the answer gate's dense
            cosine stays the question's, and a chunk only later searches found shows "–" there (its
            ranks are in those searches).
        method: "rrf" or "interleave" (see the module docstring).

    Returns:
        The merged result; its rerank score is the RRF score, or 1 / position when interleaved.
        `final` is the best `final_k`; chunks a part dropped with `min_score` do not count for it.
    """
    base = parts[0][1]
    config = base.config
    if method == "rrf":
        scores = rrf_scores(([c.id for c in _pool(part)] for _, part in parts), config.rrf_k, first_rank=1)
        order = sorted(scores, key=lambda cid: -scores[cid])
    else:
        lists = [[c.id for c in part.final] for _, part in parts]
        order = list(dict.fromkeys(cid for row in _round_robin(lists) for cid in row))
        scores = {cid: 1.0 / position for position, cid in enumerate(order, 1)}
    chunks: dict[str, Candidate] = {}
    for _, part in parts:
        for c in part.candidates:
            chunks.setdefault(c.id, c)
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
    name = f"{method} over {len(parts)} searches ({', '.join(label for label, _ in parts)}; {_reranked_by(parts)})"
    return dataclasses.replace(base, reranker=name, candidates=tuple(candidates), timings_ms=timings)


def _reranked_by(parts: Sequence[tuple[str, RetrievalResult]]) -> str:
    """How each part was reranked, said per part when they differ (HyDE's passage search is dense only, not
    reranked)."""
    if len({part.reranker for _, part in parts}) == 1:
        return f"each reranked by {parts[0][1].reranker}"
    return ", ".join(
        f"{label} {'not reranked' if part.reranker == 'none' else 'reranked by ' + part.reranker}"
        for label, part in parts
    )


def keep_final(result: RetrievalResult, ids: Iterable[str]) -> RetrievalResult:
    """The same retrieval with only `ids` (in their present order) left in the final top-k."""
    keep = set(ids)
    kept = [c.id for c in result.final if c.id in keep]
    rank = {cid: r for r, cid in enumerate(kept, 1)}
    return dataclasses.replace(
        result, candidates=tuple(dataclasses.replace(c, final_rank=rank.get(c.id)) for c in result.candidates)
    )


def _pool(part: RetrievalResult) -> list[Candidate]:
    """A part's reranked list without the chunks its own min_score dropped."""
    cut = part.config.min_score
    return [c for c in part.ranked("rerank") if cut is None or (c.rerank.score or 0.0) >= cut]


def _round_robin(lists: Sequence[Sequence[str]]) -> Iterable[list[str]]:
    for i in range(max((len(row) for row in lists), default=0)):
        yield [row[i] for row in lists if i < len(row)]
