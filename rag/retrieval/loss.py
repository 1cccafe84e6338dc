"""Where a retrieval lost a target: one classifier for the inspector's tracking, Eval's verdicts and the CLI.

A target is a chunk or a whole section (all its chunks); a section stands, in each stage, as its best
chunk. The stages are tested in the order the data flows, and each cause is reached only by its own
test: nothing falls through to a cause that is not there. Collapsing ("one hit per section") is a
stage of its own: a chunk folded behind a sibling of its section is not "cut", and when the sibling is
in the final top k the section was found; a sibling that outranks the next section is carried with it
(rag/retrieval/collapse.py), so it is found at its section's rank, and only a sibling ranked below
another section (and deeper than the collapse rule carries) is "collapsed"; a repeat (repeated passages
once) stands behind the same text elsewhere. Each cause has one title, used by every page and the CLI.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from rag.retrieval.collapse import carry_depth, carry_limit
from rag.retrieval.result import Candidate, RetrievalResult

# Code -> title, in pipeline order; the codes are the `lost_at` vocabulary of `ragscope track --json`
# and the retrieval verdicts of Eval.
LOSS_TITLES: dict[str, str] = {
    "filter": "Excluded by the filter (or quarantined)",
    "missed_by_retrievers": "Missed by dense and sparse",
    "fused_out": "Recalled by a stage but fused below the candidate cut",
    "reranker_dropped": "Dropped by the reranker",
    "collapsed": "Collapsed behind another chunk of its section",
    "repeat": "Stood for by the same text in another place",
    "min_score": "Cut by the minimum score",
    "final_k": "Ranked below the final k",
}
_BIG = 10**9


@dataclass(frozen=True)
class Loss:
    """Where the target went: `code` None when it is in the final top k; `best` is the target chunk that
    went furthest (the one that stands for a section), None when no stage found any of them."""

    code: str | None
    best: Candidate | None

    @property
    def found(self) -> bool:
        return self.code is None

    @property
    def title(self) -> str:
        return LOSS_TITLES[self.code] if self.code else "Found"


def where_lost(result: RetrievalResult, chunk_ids: Collection[str], hidden: bool = False) -> Loss:
    """The first stage of `result` that lost every chunk of `chunk_ids`.

    Args:
        hidden: the target is excluded by the retrieval's filter (or quarantined), so no stage could return it.
    """
    ids = set(chunk_ids)
    final = [c for c in result.shown if c.id in ids]  # a carried chunk is found at its section's rank
    if final:
        return Loss(None, min(final, key=lambda c: (c.shown_rank, c.final_rank is None)))
    if hidden:
        return Loss("filter", None)
    recalled = [c for c in result.candidates if c.id in ids and (c.dense.rank or c.sparse.rank)]
    if not recalled:
        return Loss("missed_by_retrievers", None)
    fused = [c for c in recalled if c.fused.rank]
    if not fused:
        return Loss("fused_out", min(recalled, key=lambda c: min(c.dense.rank or _BIG, c.sparse.rank or _BIG)))
    best = min(fused, key=lambda c: c.rerank.rank or _BIG)
    if best.carried:  # carried by a section below the final k: cut with it
        return Loss("final_k", best)
    if best.collapsed_into and not _section_full(result, best):
        return Loss("collapsed", best)
    if best.repeat_of:
        return Loss("repeat", best)
    config = result.config
    kept = result.final
    # The reranked rank the final list reached before it was full: a chunk ranked above it was skipped, not cut.
    reached = (kept[-1].rerank.rank or _BIG) if len(kept) == config.final_k else _BIG
    below_min = config.min_score is not None and best.rerank.score is not None and best.rerank.score < config.min_score
    if below_min and (best.rerank.rank or _BIG) < reached:
        return Loss("min_score", best)
    if best.fused.rank <= config.final_k and not best.collapsed_into:
        return Loss("reranker_dropped", best)
    return Loss("final_k", best)


def outranked_by(result: RetrievalResult, folded: Candidate) -> Candidate | None:
    """The other section's chunk ranked right above a collapsed chunk: why its section does not carry it."""
    above = [
        c for c in result.ranked("rerank")
        if c.id != folded.collapsed_into and (c.rerank.rank or _BIG) < (folded.rerank.rank or _BIG)
    ]  # fmt: skip
    return above[-1] if above else None


def _section_full(result: RetrievalResult, folded: Candidate) -> bool:
    """A folded chunk the collapse rule would carry, left out only because its section already carries as many
    chunks as it may: the list's size cut it, not collapsing (rag/retrieval/collapse.py)."""
    depth = carry_depth(result.config.final_k)
    holder = result.get(folded.collapsed_into)
    if holder is None or len(result.carried_by(holder.id)) < carry_limit(result.config.final_k):
        return False
    rank = folded.rerank.rank or _BIG
    after = [c for c in result.ranked("rerank") if (c.rerank.rank or _BIG) > (holder.rerank.rank or _BIG)]
    return rank <= depth or not after or rank < (after[0].rerank.rank or _BIG)
