"""Where a tracked chunk stands in each stage of one retrieval, and the stage that lost it.

The chunk is scored directly in each stage, even when it is in no candidate list: a dense or sparse
query restricted to its id gives its exact score, and a query with a longer list gives the rank it would
have had (`ChunkProbe`). The stage that lost it is the classifier Eval's verdicts use too
(`rag.retrieval.loss`), told in this chunk's numbers (`where_dropped`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from rag.components import Components
from rag.ingest.fixes import disabled_words
from rag.inspect.target import TrackTarget
from rag.retrieval.fusion import uncut_fused_rank
from rag.retrieval.loss import outranked_by, where_lost
from rag.retrieval.rerank import RerankContext, get_reranker
from rag.retrieval.result import Candidate, RetrievalResult
from rag.types import ChunkFilter, Hit

FINAL = "final"
SECTION_FOUND = "the section is found"


@dataclass(frozen=True)
class StageStanding:
    """Where the tracked chunk stands in one stage."""

    stage: str  # dense | sparse | fused | rerank | final
    rank: int | None  # its rank in the list this stage really produced; None when it was not in it
    would_be_rank: int | None  # its rank in an uncut list; None when the stage cannot rank it at all
    score: float | None  # its score in this stage, computed directly when it was not in the list
    list_size: int  # how many chunks this stage kept
    note: str = ""

    @property
    def in_list(self) -> bool:
        return self.rank is not None


class ChunkProbe:
    """Direct scores and would-be ranks of one chunk for one retrieval."""

    def __init__(self, components: Components, question: str, result: RetrievalResult, target: TrackTarget) -> None:
        self.components = components.in_space(result.config.dense_vector)  # the dense vector it ran in
        self.question = question
        self.result = result
        self.target = target
        # The vectors the stages ran (expanded under PRF / dense PRF): the standings match the stage table.
        self.dense_vec = result.query.dense_run
        self.sparse_vec = result.query.sparse_run
        self.visible = result.filter.matches(target.chunk.payload, target.chunk.chunk.id)

    def standings(self) -> tuple[StageStanding, ...]:
        r = self.result
        cfg = r.config
        mine = r.get(self.target.id)
        store = self.components.store
        only = ChunkFilter(ids=(self.target.id,), include_quarantined=True)
        dense_hits = store.search_dense(self.dense_vec, 1, only)
        sparse_hits = store.search_sparse(self.sparse_vec, 1, only)
        dense_score = dense_hits[0].score if dense_hits else None
        sparse_score = sparse_hits[0].score if sparse_hits else None
        self.would_dense = self._would_rank("dense", mine, lambda n: store.search_dense(self.dense_vec, n, r.filter))
        self.would_sparse = (
            self._would_rank("sparse", mine, lambda n: store.search_sparse(self.sparse_vec, n, r.filter))
            if sparse_score is not None
            else None
        )
        fused_rank, fused_score, fused_note = self._fused(mine)
        rerank_rank, rerank_score, rerank_note = self._rerank(mine, fused_score)

        def rank(stage: str) -> int | None:
            return mine.stage(stage).rank if mine else None

        final_size = len(r.final)
        hidden = "" if self.visible else "excluded by the filter (or quarantined): no stage can return it"
        return (
            StageStanding("dense", rank("dense"), self.would_dense, dense_score, len(r.ranked("dense")), hidden),
            StageStanding(
                "sparse",
                rank("sparse"),
                self.would_sparse,
                sparse_score or 0.0,
                len(r.ranked("sparse")),
                hidden or ("" if sparse_score is not None else "shares no term with the question (BM25 score 0)"),
            ),
            StageStanding(
                "fused", rank("fused"), fused_rank, fused_score, len(r.ranked("fused")), hidden or fused_note
            ),
            StageStanding(
                "rerank", rank("rerank"), rerank_rank, rerank_score, len(r.ranked("rerank")), hidden or rerank_note
            ),
            StageStanding(
                FINAL,
                mine.shown_rank if mine else None,  # a carried chunk stands at its section's rank
                rerank_rank,
                rerank_score,
                final_size,
                f"final k = {cfg.final_k}" + (", carried with its section's chunk" if mine and mine.carried else ""),
            ),
        )

    def _would_rank(self, stage: str, mine: Candidate | None, search: Callable[[int], list[Hit]]) -> int | None:
        """Its rank in an uncut list: the rank it had, or a longer query until it shows up."""
        if mine is not None and mine.stage(stage).rank is not None:
            return mine.stage(stage).rank
        if not self.visible:
            return None
        total = self.components.store.count(self.result.filter)
        limit = self.result.config.candidates
        while limit < total:
            limit = min(limit * 4, total)
            ids = [h.id for h in search(limit)]
            if self.target.id in ids:
                return ids.index(self.target.id) + 1
        return None

    def _fused(self, mine: Candidate | None) -> tuple[int | None, float | None, str]:
        cfg = self.result.config
        if mine is not None and mine.fused.rank is not None:
            return mine.fused.rank, mine.fused.score, ""
        if not self.visible:
            return None, None, ""
        if cfg.fusion == "dense" or cfg.fusion == "sparse":
            would = self.would_dense if cfg.fusion == "dense" else self.would_sparse
            return would, None, f"fusion {cfg.fusion!r} keeps the {cfg.fusion} list as it is"
        if (uncut := uncut_fused_rank(self.components.store, self.result, self.target.id)) is not None:
            return *uncut, f"cut: the fused list keeps {cfg.candidates}"
        return None, None, f"in neither prefetch list (each keeps {cfg.candidates}), so fusion never saw it"

    def _rerank(self, mine: Candidate | None, fused_score: float | None) -> tuple[int | None, float | None, str]:
        """Its rerank score and the rank it would take among the real reranked pool."""
        if mine is not None and mine.rerank.rank is not None:
            return mine.rerank.rank, mine.rerank.score, ""
        if not self.visible:
            return None, None, ""
        r = self.result
        pool = r.ranked("rerank")
        chunks = [c.chunk for c in pool] + [self.target.chunk]
        # A chunk fusion never saw has no fused score: 0, below every fused chunk.
        prior = tuple(c.fused.score or 0.0 for c in pool) + (fused_score or 0.0,)
        ctx = RerankContext(
            self.question,
            self.dense_vec,
            self.sparse_vec,
            self.components.store,
            self.components.dense,
            r.filter,
            prior,
        )
        scores = get_reranker(r.config.reranker).score(self.question, chunks, ctx)
        mine_score = scores[-1]
        rank = 1 + sum(1 for s in scores[:-1] if s >= mine_score)  # ties go to the chunks already there
        return rank, mine_score, f"not reranked; scored directly it would rank {rank} among the {len(pool)} reranked"


def where_dropped(
    target: TrackTarget, result: RetrievalResult, stages: Sequence[StageStanding], flt: ChunkFilter
) -> tuple[str | None, str]:
    """The stage that lost the target (`rag.retrieval.loss`, the classifier Eval's verdicts use too) and
    why, in the numbers of this target's standings."""
    s = {st.stage: st for st in stages}
    cfg = result.config
    hidden = not flt.matches(target.chunk.payload, target.chunk.chunk.id)
    loss = where_lost(result, target.section or (target.id,), hidden)
    rerank = s["rerank"]
    match loss.code:
        case None:
            if loss.best is not None and loss.best.final_rank is None:
                holder = result.get(loss.best.collapsed_into)
                return None, (
                    f"found: final rank {s[FINAL].rank}, carried with {_where(holder)}, the chunk of its section "
                    "that ranks there (it outranks the next section)"
                )
            return None, f"found: final rank {s[FINAL].rank}"
        case "filter":
            if target.chunk.quarantined and not flt.include_quarantined:
                return "filter", f"the chunk is {disabled_words(target.chunk)}: retrieval never returns it"
            return "filter", "the filter (source, tag or flagged-only) excludes the chunk"
        case "missed_by_retrievers":
            d, sp = s["dense"].would_be_rank, s["sparse"].would_be_rank
            return loss.code, (
                f"outside both candidate lists (candidates = {cfg.candidates}): dense rank {rank_text(d)}, "
                f"sparse rank {rank_text(sp)}"
            )
        case "fused_out":
            return loss.code, (
                f"found by a prefetch list but cut by {cfg.fusion} fusion "
                f"(fused rank {rank_text(s['fused'].would_be_rank)})"
            )
        case "collapsed":
            return loss.code, _collapsed_reason(result, loss.best)
        case "repeat":
            standing = result.get(loss.best.repeat_of)
            where = standing.chunk.chunk.location if standing else loss.best.repeat_of[:8]
            return loss.code, f"its text is the same as {where}'s, which ranks for both (repeated passages once)"
        case "min_score":
            return loss.code, f"final-stage score {rerank.score:.4f} is below min score {cfg.min_score:g}"
        case "reranker_dropped":
            return loss.code, (
                f"fused rank {rank_text(s['fused'].rank)} (inside k = {cfg.final_k}) but the {result.reranker} "
                f"reranker moved it to {rank_text(rerank.rank)}"
            )
        case "final_k":
            per_section = " (one hit per section: each section counts once)" if cfg.collapse else ""
            return loss.code, f"reranked to {rank_text(rerank.rank)}, below final k = {cfg.final_k}{per_section}"
    raise AssertionError(f"unknown loss {loss.code!r}")


def _collapsed_reason(result: RetrievalResult, folded: Candidate) -> str:
    """Where the chunk that stands for a collapsed chunk's section ranks (the section, not the chunk, is the hit),
    and which section outranks the chunk, so that its section does not carry it."""
    standing = result.get(folded.collapsed_into)
    where = _where(standing) if standing else folded.collapsed_into[:8]
    above = outranked_by(result, folded)
    outranked = f"; {_where(above)} outranks it (rerank {above.rerank.rank})" if above else ""
    if standing is not None and standing.final_rank is not None:
        return (
            f"collapsed behind another chunk of the same section ({where}){outranked}; the section ranks "
            f"{standing.final_rank}: {SECTION_FOUND}"
        )
    return f"collapsed behind another chunk of the same section ({where}), which is itself below the final k"


def _where(c: Candidate | None) -> str:
    return f"{c.chunk.chunk.source} › {c.chunk.chunk.heading}" if c is not None else "(not retrieved)"


def rank_text(rank: int | None) -> str:
    return "—" if rank is None else str(rank)
