"""What ranked above a found target, and why: the "why not first?" a target found below rank 1 raises.

Each final chunk above it is told with the scores that ordered the list, taken from the retrieval itself
(no second scoring): the last stage's score against the target's (the reranker's, or the fused score when
none ran), then where the lead began, either the reranker moving it up past the target or fusion already
putting it above, with the dense and sparse ranks fusion was given.
"""

from __future__ import annotations

from dataclasses import dataclass

from rag.inspect.standings import rank_text
from rag.retrieval.result import Candidate, RetrievalResult

_BIG = 10**9


@dataclass(frozen=True)
class RankedAbove:
    """One final chunk ranked above the target, and why."""

    rank: int  # its final rank
    candidate: Candidate
    why: str  # e.g. "higher rerank score (dense-cosine): 0.81 vs 0.64; the reranker moved it above: ..."

    @property
    def score(self) -> float | None:
        return self.candidate.final_score


def ranked_above(result: RetrievalResult, chunk_id: str) -> tuple[RankedAbove, ...]:
    """The final chunks ranked above the chunk `chunk_id`, best first, each with why it ranks there; () when it is
    not shown. A chunk carried with its section's chunk, or collapsed behind it, is shown at that chunk's rank,
    so the scores compared are that chunk's: they decided the rank."""
    standing = standing_candidate(result, chunk_id)
    if standing is None or standing.final_rank is None:
        return ()
    return tuple(
        RankedAbove(c.final_rank, c, _why(result, c, standing)) for c in result.final[: standing.final_rank - 1]
    )


def standing_candidate(result: RetrievalResult, chunk_id: str) -> Candidate | None:
    """The candidate whose scores rank the chunk: its section's chunk when it was collapsed behind one, else itself."""
    mine = result.get(chunk_id)
    return result.get(mine.collapsed_into) if mine is not None and mine.collapsed_into else mine


def outranking(result: RetrievalResult, chunk_id: str) -> tuple[RankedAbove, ...]:
    """Lost by a retrieval that still ranked it (reranked below the final k, cut by the minimum score): every final
    chunk, each with why it ranks above it, as `ranked_above` tells it for a chunk found; () when it is shown or
    no stage ranked it (then its standings say why)."""
    mine = result.get(chunk_id)
    if mine is None or mine.shown_rank is not None or mine.fused.rank is None:
        return ()
    return tuple(RankedAbove(c.final_rank, c, _why(result, c, mine)) for c in result.final)


def _why(result: RetrievalResult, above: Candidate, standing: Candidate) -> str:
    a, t = above, standing
    if result.reranker == "none":  # the fused order is the final one
        lead = f"higher fused score ({result.config.fusion}): {a.fused.score:.4f} vs {t.fused.score:.4f}"
    elif (a.rerank.score or 0.0) > (t.rerank.score or 0.0):
        lead = f"higher rerank score ({result.reranker}): {a.rerank.score:.4f} vs {t.rerank.score:.4f}"
    else:  # a tie keeps the fused order
        lead = f"the same rerank score ({result.reranker}): {a.rerank.score:.4f}, so the fused order decides"
    fused = f"fused rank {rank_text(a.fused.rank)} vs {rank_text(t.fused.rank)}"
    if result.reranker != "none" and (a.fused.rank or _BIG) > (t.fused.rank or _BIG):
        return f"{lead}; the reranker moved it above ({fused})"
    searches = (
        f"dense rank {rank_text(a.dense.rank)} vs {rank_text(t.dense.rank)}, "
        f"sparse rank {rank_text(a.sparse.rank)} vs {rank_text(t.sparse.rank)}"
    )
    where = "" if result.reranker == "none" else "fusion put it above already: "
    return f"{lead}; {where}{fused} ({searches})"
