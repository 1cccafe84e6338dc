"""Track an expected chunk through every retrieval stage, and find the smallest setting change that surfaces it.

A person who knows which chunk should have answered picks it (rag/inspect/target.py). We then score that
chunk directly in each stage, even when it is in no candidate list, and name the first stage that lost it
(rag/inspect/standings.py); single setting changes are tried by re-running `retrieve()`, and only small
ones that really put the chunk in the final top-k are suggested (rag/inspect/suggest.py). When no small
change works the report says why, in terms of the two search spaces. A chunk found below rank 1 is told
with the chunks ranked above it and why (rag/inspect/above.py).

Under a retrieval mode the stages above are those of the question's own search, and the report also
carries the mode's trail (rag/inspect/mode_trail.py): the hop / attempt / call where the chunk
appeared, and where it was lost.
"""

from __future__ import annotations

from dataclasses import dataclass

from rag.components import Components
from rag.inspect.above import RankedAbove, ranked_above
from rag.inspect.mode_trail import ModeTrail, mode_trail
from rag.inspect.standings import SECTION_FOUND, ChunkProbe, StageStanding, where_dropped
from rag.inspect.suggest import Suggestion, fixes_for
from rag.inspect.target import TrackTarget, standing_for
from rag.modes.result import ModeResult
from rag.retrieval.result import RetrievalResult
from rag.retrieval.retrieve import retrieve
from rag.settings.config import RetrievalConfig
from rag.types import ChunkFilter


@dataclass(frozen=True)
class TrackReport:
    """What following one target through one retrieval found: its standing in every stage, the stage that lost
    it and why, and the verified changes that surface it."""

    target: TrackTarget
    result: RetrievalResult
    stages: tuple[StageStanding, ...]
    dropped_at: str | None  # None when the chunk is in the final top-k
    reason: str
    suggestions: tuple[Suggestion, ...]  # small verified changes, smallest first
    too_large: tuple[Suggestion, ...] = ()  # verified, but they change the settings too much to advise
    no_fix: str = ""  # why no small change surfaces the chunk, when none does
    mode: ModeTrail | None = None  # under a retrieval mode: the searches where it appeared or was lost
    above: tuple[RankedAbove, ...] = ()  # found below rank 1: the final chunks ranked above it, and why

    @property
    def found(self) -> bool:
        return self.dropped_at is None

    @property
    def section_found(self) -> bool:
        """The chunk was collapsed behind a chunk of its own section that is in the final top k."""
        return self.dropped_at == "collapsed" and self.reason.endswith(SECTION_FOUND)

    @property
    def smallest(self) -> Suggestion | None:
        return self.suggestions[0] if self.suggestions else None

    def stage(self, name: str) -> StageStanding:
        return next(s for s in self.stages if s.stage == name)


def track(
    components: Components, question: str, target: TrackTarget, config: RetrievalConfig | None = None,
    flt: ChunkFilter | None = None, max_candidates: int = 300, mode: ModeResult | None = None,
) -> TrackReport:  # fmt: skip
    """Follow `target` through every stage of `retrieve(question, config, flt)`.

    Args:
        max_candidates: the largest candidates setting tried when looking for a fix (each try is a
            full retrieval, reranker included).
        mode: the retrieval mode's run of this question (not plain): the report adds where in its
            searches the chunk appeared or was lost.

    Returns:
        Its rank and score in every stage, where it dropped out, and verified setting changes.
    """
    config = config or components.settings.retrieval
    flt = flt or ChunkFilter()
    result = retrieve(components, question, config, flt)
    target = standing_for(components, target, result)
    probe = ChunkProbe(components, question, result, target)
    stages = probe.standings()
    dropped, reason = where_dropped(target, result, stages, flt)
    trail = mode_trail(mode, target.id) if mode is not None and mode.mode != "plain" else None
    if dropped is None or (dropped == "collapsed" and reason.endswith(SECTION_FOUND)):
        above = ranked_above(result, target.id)
        return TrackReport(target, result, stages, dropped, reason, (), mode=trail, above=above)  # nothing to fix
    small, large, no_fix = fixes_for(components, probe, stages, dropped, config, max_candidates)
    return TrackReport(target, result, stages, dropped, reason, small, large, no_fix, trail)


def section_fates(report: TrackReport) -> list[dict[str, object]]:
    """Where each chunk of a section target went: its id, final rank (a carried chunk's is its section's),
    rerank rank, whom it was collapsed behind, and whether it is carried with that chunk."""
    out = []
    for cid in report.target.section or (report.target.id,):
        c = report.result.get(cid)
        out.append(
            {
                "chunk_id": cid,
                "final_rank": c.shown_rank if c else None,  # a carried chunk at its section's rank
                "rerank_rank": c.rerank.rank if c else None,
                "collapsed_into": c.collapsed_into if c else None,
                "carried": bool(c and c.carried),
                "standing": cid == report.target.id,
            }
        )
    return out
