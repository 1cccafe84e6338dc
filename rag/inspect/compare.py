"""Two retrieval configs side by side on one question (final rankings, overlap, rank changes).

`feedback_notes` says what a config's query expansion did, for the inspector and the CLI alike.
"""

from __future__ import annotations

from dataclasses import dataclass

from rag.components import Components
from rag.retrieval.result import RetrievalResult
from rag.retrieval.retrieve import retrieve
from rag.settings.config import RetrievalConfig
from rag.types import ChunkFilter, StoredChunk


@dataclass(frozen=True)
class RankChange:
    """One chunk in either final list, with its rank under each config."""

    chunk: StoredChunk
    rank_a: int | None
    rank_b: int | None

    @property
    def delta(self) -> int | None:
        """Places gained under B (positive: higher under B); None when it is in only one list."""
        return None if self.rank_a is None or self.rank_b is None else self.rank_a - self.rank_b

    @property
    def status(self) -> str:
        if self.rank_a is not None and self.rank_b is not None:
            return "both"
        return "only A" if self.rank_a is not None else "only B"


@dataclass(frozen=True)
class Comparison:
    a: RetrievalResult
    b: RetrievalResult
    changes: tuple[RankChange, ...]  # ordered by the better of the two ranks

    @property
    def overlap(self) -> int:
        return sum(1 for c in self.changes if c.status == "both")

    @property
    def jaccard(self) -> float:
        return self.overlap / len(self.changes) if self.changes else 1.0


def compare(
    components: Components,
    question: str,
    config_a: RetrievalConfig,
    config_b: RetrievalConfig,
    flt: ChunkFilter | None = None,
) -> Comparison:
    """Run `question` under both configs (same filter) and line up their final rankings.

    Args:
        components: store and encoders.
        question: the question.
        config_a, config_b: the two settings to compare (e.g. dense only vs hybrid + rerank, or plain vs
            multi_hop: a mode's side is its final, fused list).
        flt: source/tag filter applied to both.

    Returns:
        Both results and, for every chunk in either final list, its rank under each.
    """
    a = _search(components, question, config_a, flt)
    b = _search(components, question, config_b, flt, a)
    chunks = {c.id: c.chunk for c in (*a.final, *b.final)}
    ranks_a = {c.id: c.final_rank for c in a.final}
    ranks_b = {c.id: c.final_rank for c in b.final}
    big = 10**9
    changes = sorted(
        (RankChange(chunk, ranks_a.get(cid), ranks_b.get(cid)) for cid, chunk in chunks.items()),
        key=lambda c: (min(c.rank_a or big, c.rank_b or big), c.rank_a or big),
    )
    return Comparison(a, b, tuple(changes))


def _search(
    components: Components,
    question: str,
    config: RetrievalConfig,
    flt: ChunkFilter | None,
    other: RetrievalResult | None = None,
) -> RetrievalResult:
    """One side's final list: plain retrieval (reusing `other`'s encoded question), or its mode's final list."""
    if config.mode == "plain":
        return retrieve(components, question, config, flt, encoded=other.query if other else None)
    from rag.modes.run import run_mode  # rag.modes builds on rag.answer, which plain comparisons never load

    return run_mode(components, question, config=config, flt=flt).result


def feedback_notes(result: RetrievalResult) -> dict[str, str]:
    """What query expansion changed in this retrieval, as plain text keyed by the stage it changed.

    "sparse": the words PRF added to the BM25 query (or why it added none); "dense": which fused hits
    dense feedback moved the question vector toward before the dense stage was re-run. Empty when
    neither was on. The words come from document text: show them escaped, never as HTML.
    """
    config, notes = result.config, {}
    if config.prf:
        notes["sparse"] = (
            f"BM25 query expanded with: {', '.join(result.expansion)}"
            if result.expansion
            else "PRF was on but added no words (no sparse hit to learn from, or no new term in the top hits)"
        )
    if config.dense_prf:
        notes["dense"] = (
            f"Dense stage re-ran with the question vector moved toward the top {len(result.dense_feedback)} fused hits "
            f"(Rocchio, w={config.dense_prf_weight:g}): {', '.join(i[:8] for i in result.dense_feedback)}"
            if result.dense_feedback
            else "Dense PRF was on but the fused list was empty, so the dense stage was not re-run"
        )
    return notes
