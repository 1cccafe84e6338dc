"""Track an expected chunk through every retrieval stage, and find the smallest setting change that surfaces it.

A person who knows which chunk should have answered picks it (by id, by source + heading, or by
pasting text it contains). We then score that chunk directly in each stage, even when it is in no
candidate list: a dense or sparse query restricted to its id gives its exact score, and a query with
a longer list gives the rank it would have had. The first stage that lost it is named, and single
setting changes (final k, candidates, dense weight, fusion, reranker, min score, filter) are tried by
re-running `retrieve()`; only changes that really put the chunk in the final top-k are suggested,
and only small ones (see `is_small`): a fix that makes every answer read ten times more chunks is no
fix. When no small change works the report says why, in terms of the two search spaces.

Under a retrieval mode the stages above are those of the question's own search, and the report also
carries the mode's trail (rag/inspect/mode_trail.py): the hop / attempt / call where the chunk
appeared, and where it was lost.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Callable, Sequence

from rag.components import Components
from rag.errors import RagError
from rag.inspect.explain import get_chunk
from rag.inspect.mode_trail import ModeTrail, mode_trail
from rag.modes.result import ModeResult
from rag.retrieval.fusion import uncut_fused_rank
from rag.retrieval.loss import outranked_by, where_lost
from rag.retrieval.rerank import RerankContext, get_reranker
from rag.retrieval.result import Candidate, RetrievalResult
from rag.retrieval.retrieve import retrieve
from rag.settings.config import FUSION_METHODS, RetrievalConfig
from rag.settings.rerankers import RERANKERS
from rag.text.fold import reader_form
from rag.text.headings import heading_names
from rag.types import ChunkFilter, Hit, StoredChunk, stored_name

FINAL = "final"
_WORDS = re.compile(r"\w+")
# A change is small when final k at most doubles (or grows by at most K_SLACK) and candidates grow at
# most CANDIDATES_FACTOR-fold (or by CANDIDATES_SLACK). Final k is how many chunks every answer reads;
# candidates are paid for in search and rerank time on every question.
K_FACTOR, K_SLACK = 2, 5
CANDIDATES_FACTOR, CANDIDATES_SLACK = 5, 50
SECTION_FOUND = "the section is found"


@dataclass(frozen=True)
class TrackTarget:
    """The chunk being tracked and how it was picked.

    Picked by source + heading, the target is the whole section: `section` holds every chunk id under
    the heading (subsections included, as gold counts them), and `track` follows the one that stands for
    the section in this retrieval (its best-ranked chunk), so the report agrees with Eval's hit.
    """

    chunk: StoredChunk
    how: str  # "id" | "heading" | "text"
    note: str = ""
    section: tuple[str, ...] = ()
    source: str = ""
    heading: str = ""

    @property
    def id(self) -> str:
        return self.chunk.chunk.id


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


@dataclass(frozen=True)
class Suggestion:
    """A setting change verified by re-running retrieve(): with it, the chunk reaches the final top-k."""

    text: str  # e.g. "candidates >= 42"
    config: RetrievalConfig
    flt: ChunkFilter
    final_rank: int
    cost: float  # relative size of the change; the smallest is listed first


@dataclass(frozen=True)
class TrackReport:
    target: TrackTarget
    result: RetrievalResult
    stages: tuple[StageStanding, ...]
    dropped_at: str | None  # None when the chunk is in the final top-k
    reason: str
    suggestions: tuple[Suggestion, ...]  # small verified changes, smallest first
    too_large: tuple[Suggestion, ...] = ()  # verified, but they change the settings too much to advise
    no_fix: str = ""  # why no small change surfaces the chunk, when none does
    mode: ModeTrail | None = None  # under a retrieval mode: the searches where it appeared or was lost

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


def find_target(
    components: Components,
    *,
    chunk_id: str | None = None,
    source: str | None = None,
    heading: str | None = None,
    text: str | None = None,
    question: str = "",
) -> TrackTarget:
    """Pick the chunk to track: by id, by source + heading, or by text it should contain.

    Args:
        chunk_id: an exact chunk id.
        source, heading: a document and a heading path ("Billing > Refunds") or its last title;
            when several chunks sit under it, the one closest to `question` is taken.
        text: pasted text; the stored chunk containing it is taken.
        question: used to choose among several chunks under one heading.

    Raises:
        RagError: nothing matches (no chunk holds the text), the heading names several sections, or no way
            of picking was given.
    """
    if chunk_id:
        return TrackTarget(get_chunk(components, chunk_id), "id")
    if source:
        return _by_heading(components, stored_name(source), heading or "", question)
    if text and text.strip():
        return _by_text(components, text)
    raise RagError("say which chunk to track: a chunk id, a source and heading, or text it contains")


def refreshed(components: Components, target: TrackTarget) -> TrackTarget:
    """The same chunk read afresh from the store, to follow it again after the question, settings or documents changed.

    Raises:
        RagError: it is no longer stored (its document was re-ingested with other text or deleted).
    """
    try:
        return dataclasses.replace(target, chunk=get_chunk(components, target.id))
    except RagError as e:
        raise RagError(
            "the tracked chunk is no longer stored (its document was re-ingested or deleted, or the collection "
            f"changed): {e}"
        ) from None


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
    probe = _Probe(components, question, result, target)
    stages = probe.standings()
    dropped, reason = _dropped(target, result, stages, flt)
    trail = mode_trail(mode, target.id) if mode is not None and mode.mode != "plain" else None
    if dropped is None or (dropped == "collapsed" and reason.endswith(SECTION_FOUND)):
        return TrackReport(target, result, stages, dropped, reason, (), mode=trail)  # no fix for what is not lost
    verified = sorted(_suggest(components, probe, stages, dropped, max_candidates), key=lambda s: s.cost)
    small = tuple(s for s in verified if is_small(s.config, config))
    large = tuple(s for s in verified if not is_small(s.config, config))
    no_fix = "" if small else _why_no_small_fix(result, stages, large)
    return TrackReport(target, result, stages, dropped, reason, small, large, no_fix, trail)


def standing_for(components: Components, target: TrackTarget, result: RetrievalResult) -> TrackTarget:
    """For a section target, the chunk that stands for the section in `result`: the one with the best final
    rank, else the best reranked (collapsing aside), fused, then dense or sparse rank; a section none of
    whose chunks any stage found keeps the chunk it was picked by. A chunk target is returned as it is."""
    if len(target.section) < 2:
        return target
    big = 10**9

    def standing(cid: str) -> tuple:
        c = result.get(cid)
        if c is None:
            return (big,) * 4
        return (
            c.shown_rank or big,
            c.rerank.rank or big,
            c.fused.rank or big,
            min(c.dense.rank or big, c.sparse.rank or big),
        )

    best = min(target.section, key=standing)
    if standing(best) == (big,) * 4 or best == target.id:
        return target
    note = f"{len(target.section)} chunks under this heading; tracking the best-ranked, which stands for it"
    return dataclasses.replace(target, chunk=get_chunk(components, best), note=note)


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


def is_small(changed: RetrievalConfig, config: RetrievalConfig) -> bool:
    """True when `changed` keeps final k within K_FACTOR x (or + K_SLACK) and candidates within
    CANDIDATES_FACTOR x (or + CANDIDATES_SLACK)."""
    k_ok = changed.final_k <= max(K_FACTOR * config.final_k, config.final_k + K_SLACK)
    n_ok = changed.candidates <= max(CANDIDATES_FACTOR * config.candidates, config.candidates + CANDIDATES_SLACK)
    return k_ok and n_ok


def _why_no_small_fix(result: RetrievalResult, stages: Sequence[StageStanding], large: Sequence[Suggestion]) -> str:
    """Why no small change surfaces the chunk: when neither search space ranks it in the pool, say so with
    the numbers."""
    s = {st.stage: st for st in stages}
    n = result.config.candidates
    dense, sparse = s["dense"], s["sparse"]
    parts = []
    if not sparse.in_list:
        parts.append(
            "it shares no word with the question (BM25 score 0)"
            if not sparse.score
            else f"BM25 ranks it {_fmt(sparse.would_be_rank)}, outside the {n} candidates"
        )
    if not dense.in_list:
        pool = result.ranked("dense")
        lowest = pool[-1].dense.score if pool else None
        below = f"; the {n} candidates reach down to {lowest:.3f}" if lowest is not None else ""
        similarity = (
            f"its dense similarity {dense.score:.3f} ranks {_fmt(dense.would_be_rank)}"
            if dense.score is not None
            else "dense search cannot rank it"
        )
        parts.append(similarity + below)
    if len(parts) == 2:
        why = (
            "the chunk does not match the question in either search space: "
            + "; ".join(parts)
            + ". Reword the question, or give the chunk the words people ask with"
        )
    else:
        why = (
            "no setting change of the kinds tried here (k, candidates, fusion, dense weight, reranker) surfaces it "
            "within small limits"
        )
    if large:
        why += f". The fixes found are too large to advise (the smallest: {large[0].text})"
    return why


class _Probe:
    """Direct scores and would-be ranks of one chunk for one retrieval."""

    def __init__(self, components: Components, question: str, result: RetrievalResult, target: TrackTarget) -> None:
        self.components = components
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


def _dropped(
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
                return "filter", "the chunk is quarantined: retrieval never returns it"
            return "filter", "the filter (source, tag or flagged-only) excludes the chunk"
        case "missed_by_retrievers":
            d, sp = s["dense"].would_be_rank, s["sparse"].would_be_rank
            return loss.code, (
                f"outside both candidate lists (candidates = {cfg.candidates}): dense rank {_fmt(d)}, "
                f"sparse rank {_fmt(sp)}"
            )
        case "fused_out":
            return loss.code, (
                f"found by a prefetch list but cut by {cfg.fusion} fusion (fused rank {_fmt(s['fused'].would_be_rank)})"
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
                f"fused rank {_fmt(s['fused'].rank)} (inside k = {cfg.final_k}) but the {result.reranker} reranker "
                f"moved it to {_fmt(rerank.rank)}"
            )
        case "final_k":
            per_section = " (one hit per section: each section counts once)" if cfg.collapse else ""
            return loss.code, f"reranked to {_fmt(rerank.rank)}, below final k = {cfg.final_k}{per_section}"
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


def _fmt(rank: int | None) -> str:
    return "—" if rank is None else str(rank)


def _suggest(
    components: Components, probe: _Probe, stages: Sequence[StageStanding], dropped: str, max_candidates: int
) -> list[Suggestion]:
    r = probe.result
    cfg, flt = r.config, r.filter
    target = probe.target.id
    tried: dict[tuple[RetrievalConfig, ChunkFilter], Candidate | None] = {}

    def run(config: RetrievalConfig, f: ChunkFilter = flt) -> Candidate | None:
        if (config, f) not in tried:
            tried[(config, f)] = retrieve(components, r.question, config, f, encoded=r.query).get(target)
        return tried[(config, f)]

    out: list[Suggestion] = []

    def offer(text: str, config: RetrievalConfig, cost: float, f: ChunkFilter = flt) -> bool:
        found = run(config, f)
        if found is not None and found.shown_rank is not None:
            out.append(Suggestion(text, config, f, found.shown_rank, cost))
            return True
        return False

    if dropped == "filter":
        chunk = probe.target.chunk
        relaxed = ChunkFilter(include_quarantined=flt.include_quarantined)
        if not (chunk.quarantined and not flt.include_quarantined):
            offer("remove the filter", cfg, 1.0, relaxed)
        return out
    rerank = {st.stage: st for st in stages}["rerank"]
    if dropped == "min_score" and rerank.score is not None:
        offer(
            f"min score <= {rerank.score:.4g}",
            dataclasses.replace(cfg, min_score=rerank.score),
            abs((cfg.min_score or 0) - rerank.score),
        )
    cut_by_k = dropped in ("final_k", "reranker_dropped")
    if rerank.would_be_rank is not None and rerank.would_be_rank > cfg.final_k and cut_by_k:
        k = rerank.would_be_rank
        offer(f"final k >= {k}", dataclasses.replace(cfg, final_k=k), (k - cfg.final_k) / cfg.final_k)
    if dropped in ("missed_by_retrievers", "fused_out"):
        _suggest_candidates(cfg, stages, max_candidates, run, offer)
    if cfg.fusion in ("rrf", "weighted_rrf"):
        _suggest_weight(cfg, stages, offer)
    for fusion in FUSION_METHODS:
        if fusion != cfg.fusion:
            offer(f"fusion {fusion}", dataclasses.replace(cfg, fusion=fusion), 1.0)
    for name in RERANKERS:
        if name != get_reranker(cfg.reranker).name:
            offer(f"reranker {name}", dataclasses.replace(cfg, reranker=name), 1.0)
    return out


def _suggest_candidates(
    cfg: RetrievalConfig, stages: Sequence[StageStanding], cap: int, run: Callable, offer: Callable
) -> None:
    """Smallest candidates value that puts the chunk in the final top-k, or failing that, into the
    reranked pool together with the final k its rank there needs (found by growing, then bisecting)."""
    s = {st.stage: st for st in stages}
    needed = [x for x in (s["dense"].would_be_rank, s["sparse"].would_be_rank) if x is not None]
    if not needed:
        return
    # Below its best prefetch rank the chunk cannot even enter fusion, so start there.
    start = max(cfg.candidates + 1, min(needed))
    if start > cap:
        return

    def at(n: int) -> Candidate | None:
        return run(dataclasses.replace(cfg, candidates=n))

    n = _smallest(start, cap, lambda n: (c := at(n)) is not None and c.final_rank is not None)
    if n is not None:
        offer(f"candidates >= {n}", dataclasses.replace(cfg, candidates=n), (n - cfg.candidates) / cfg.candidates)
        return
    n = _smallest(start, cap, lambda n: (c := at(n)) is not None and c.rerank.rank is not None)
    if n is not None:
        k = at(n).rerank.rank
        text = f"candidates >= {n} and final k >= {k}"
        offer(
            text,
            dataclasses.replace(cfg, candidates=n, final_k=k),
            (n - cfg.candidates) / cfg.candidates + (k - cfg.final_k) / cfg.final_k,
        )


def _smallest(start: int, cap: int, ok: Callable[[int], bool]) -> int | None:
    """The smallest n in [start, cap] with ok(n), growing by half each step and then bisecting."""
    bad, n = start - 1, start
    while not ok(n):
        if n >= cap:
            return None
        bad, n = n, min(cap, max(n + 1, int(n * 1.5)))
    while n - bad > 1:
        mid = (n + bad) // 2
        if ok(mid):
            n = mid
        else:
            bad = mid
    return n


def _suggest_weight(cfg: RetrievalConfig, stages: Sequence[StageStanding], offer: Callable) -> None:
    """Move the dense weight toward the list that ranks the chunk better, a tenth at a time."""
    s = {st.stage: st for st in stages}
    d, sp = s["dense"].would_be_rank, s["sparse"].would_be_rank
    if d is None and sp is None:
        return
    up = sp is None or (d is not None and d < sp)
    w0 = cfg.dense_weight
    steps = [round(w0 + i / 10, 1) for i in range(1, 11)] if up else [round(w0 - i / 10, 1) for i in range(1, 11)]
    prefix = "" if cfg.fusion == "weighted_rrf" else "fusion weighted_rrf, "
    for w in (x for x in steps if 0.0 <= x <= 1.0):
        text = f"{prefix}dense weight {'>=' if up else '<='} {w:g}"
        if offer(text, dataclasses.replace(cfg, fusion="weighted_rrf", dense_weight=w), abs(w - w0) / 0.5):
            return


def _by_heading(components: Components, source: str, heading: str, question: str) -> TrackTarget:
    records = components.store.records(ChunkFilter(sources=(source,), include_quarantined=True))
    if not records:
        raise RagError(f"no document named {source!r}; the Documents page lists them")
    under = [r for r in records if not heading.strip() or heading_names(r.chunk.heading_path, heading)]
    if not under:
        headings = sorted({r.chunk.heading for r in records})
        raise RagError(f"{source} has no heading {heading!r}; it has: {'; '.join(headings[:12])}")
    sections = sorted({_named_section(r.chunk.heading_path, heading) for r in under})
    if len(sections) > 1:  # two "Options" sections: tracking both as one would report on neither
        listed = "; ".join(" > ".join(p) for p in sections[:12])
        raise RagError(
            f"{heading!r} names {len(sections)} sections of {source}: {listed}. Give the full heading path of one"
        )
    section = tuple(r.chunk.id for r in sorted(under, key=lambda r: r.chunk.index))
    if len(under) == 1 or not question:
        best = min(under, key=lambda r: r.chunk.index)
        note = f"{len(under)} chunks under this heading; tracking the section" if len(under) > 1 else ""
        return TrackTarget(best, "heading", note, section, source, heading)
    vec = components.dense.encode_query(question)
    hits = components.store.search_dense(
        vec, len(under), ChunkFilter(ids=tuple(r.chunk.id for r in under), include_quarantined=True)
    )
    best_id = hits[0].id if hits else under[0].chunk.id
    best = next(r for r in under if r.chunk.id == best_id)
    note = f"{len(under)} chunks under this heading; tracking the section (first its chunk nearest the question)"
    return TrackTarget(best, "heading", note, section, source, heading)


def _named_section(path: tuple[str, ...], heading: str) -> tuple[str, ...]:
    """The section `heading` names for a chunk under `path`: the shortest start of the path it names (a
    subsection's chunk belongs to the section named, as gold counts it)."""
    return next(path[:j] for j in range(len(path) + 1) if heading_names(path[:j], heading))


def _by_text(components: Components, text: str) -> TrackTarget:
    """The stored chunk that contains `text`. Text no chunk holds is an error that names the chunk sharing most
    of its words: following some other chunk would report on a chunk nobody asked about."""
    store = components.store
    everything = ChunkFilter(include_quarantined=True)
    hits = store.search_sparse(components.sparse.encode_query(text), 20, everything) + store.search_dense(
        components.dense.encode_query(text), 20, everything
    )
    if not hits:
        raise RagError("the collection is empty: ingest documents first")
    ids = list(dict.fromkeys(h.id for h in hits))
    chunks = {c.chunk.id: c for c in store.records(ChunkFilter(ids=tuple(ids), include_quarantined=True))}
    wanted = reader_form(text)
    for cid in ids:
        if cid in chunks and wanted in reader_form(chunks[cid].chunk.text):
            return TrackTarget(chunks[cid], "text", "the chunk contains the pasted text")
    words = set(_WORDS.findall(wanted))

    def overlap(cid: str) -> float:
        return len(words & set(_WORDS.findall(reader_form(chunks[cid].chunk.text)))) / max(1, len(words))

    best = max((cid for cid in ids if cid in chunks), key=overlap)
    near = chunks[best].chunk
    raise RagError(
        f"no chunk holds the text {text.strip()[:80]!r}; the chunk sharing most of its words ({overlap(best):.0%}) "
        f"is {near.location} ({best}): track it by its id, or paste text it holds"
    )
