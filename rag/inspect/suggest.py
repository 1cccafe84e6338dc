"""The setting changes that surface a tracked chunk, each verified by re-running `retrieve()`.

Single changes (final k, candidates, dense weight, fusion, reranker, min score, filter) are tried; only
changes that really put the chunk in the final top-k are offered, and only small ones (see `is_small`)
are advised: a fix that makes every answer read ten times more chunks is no fix. When no small change
works, the report says why, in terms of the two search spaces.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Callable, Sequence

from rag.components import Components
from rag.inspect.standings import ChunkProbe, StageStanding, rank_text
from rag.retrieval.rerank import get_reranker
from rag.retrieval.result import Candidate, RetrievalResult
from rag.retrieval.retrieve import retrieve
from rag.settings.config import FUSION_METHODS, RetrievalConfig
from rag.settings.rerankers import RERANKERS
from rag.types import ChunkFilter

# A change is small when final k at most doubles (or grows by at most K_SLACK) and candidates grow at
# most CANDIDATES_FACTOR-fold (or by CANDIDATES_SLACK). Final k is how many chunks every answer reads;
# candidates are paid for in search and rerank time on every question.
K_FACTOR, K_SLACK = 2, 5
CANDIDATES_FACTOR, CANDIDATES_SLACK = 5, 50


@dataclass(frozen=True)
class Suggestion:
    """A setting change verified by re-running retrieve(): with it, the chunk reaches the final top-k."""

    text: str  # e.g. "candidates >= 42"
    config: RetrievalConfig
    flt: ChunkFilter
    final_rank: int
    cost: float  # relative size of the change; the smallest is listed first


def fixes_for(
    components: Components,
    probe: ChunkProbe,
    stages: Sequence[StageStanding],
    dropped: str,
    config: RetrievalConfig,
    max_candidates: int,
) -> tuple[tuple[Suggestion, ...], tuple[Suggestion, ...], str]:
    """The verified changes that surface the lost chunk, smallest first, split into the small ones (advised)
    and those too large to advise, and, when no small one works, why not.

    Args:
        dropped: the stage that lost it (`where_dropped`); it decides which kinds of change are tried.
        config: the settings tracked with, which "small" is measured against.
        max_candidates: the largest candidates setting tried (each try is a full retrieval).
    """
    verified = sorted(_suggest(components, probe, stages, dropped, max_candidates), key=lambda s: s.cost)
    small = tuple(s for s in verified if is_small(s.config, config))
    large = tuple(s for s in verified if not is_small(s.config, config))
    no_fix = "" if small else _why_no_small_fix(probe.result, stages, large)
    return small, large, no_fix


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
            else f"BM25 ranks it {rank_text(sparse.would_be_rank)}, outside the {n} candidates"
        )
    if not dense.in_list:
        pool = result.ranked("dense")
        lowest = pool[-1].dense.score if pool else None
        below = f"; the {n} candidates reach down to {lowest:.3f}" if lowest is not None else ""
        similarity = (
            f"its dense similarity {dense.score:.3f} ranks {rank_text(dense.would_be_rank)}"
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


def _suggest(
    components: Components, probe: ChunkProbe, stages: Sequence[StageStanding], dropped: str, max_candidates: int
) -> list[Suggestion]:
    """Every single change of the kinds that can mend this loss that really puts the chunk in the final top-k."""
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
        if (k := _smallest_k(cfg, rerank.would_be_rank, run)) is not None:
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

    # Shown counts a sibling carried with its section's chunk, found at its rank (rag/retrieval/loss.py).
    n = _smallest(start, cap, lambda n: (c := at(n)) is not None and c.shown_rank is not None)
    if n is not None:
        offer(f"candidates >= {n}", dataclasses.replace(cfg, candidates=n), (n - cfg.candidates) / cfg.candidates)
        return
    n = _smallest(start, cap, lambda n: (c := at(n)) is not None and c.rerank.rank is not None)
    if n is not None and (k := _smallest_k(dataclasses.replace(cfg, candidates=n), at(n).rerank.rank, run)) is not None:
        text = f"candidates >= {n} and final k >= {k}"
        offer(
            text,
            dataclasses.replace(cfg, candidates=n, final_k=k),
            (n - cfg.candidates) / cfg.candidates + (k - cfg.final_k) / cfg.final_k,
        )


def _smallest_k(cfg: RetrievalConfig, rerank_rank: int, run: Callable) -> int | None:
    """The smallest final k above `cfg`'s that shows the chunk, trying k in order, each verified by `run`.

    Its rerank rank is a final k that shows it (collapsing and repeats only free places above it), but often
    more than it needs: a section's other chunks rank there too without taking a place. The final list is the
    first k of one order that k does not change (folding, repeats and min score do not depend on it), so the
    rank it is shown at with that k is the least k that can show it: the search starts there and goes up
    (a sibling carried with its section may need a little more k to be carried).
    """
    at_rank = run(dataclasses.replace(cfg, final_k=rerank_rank))
    if at_rank is None or at_rank.shown_rank is None:
        return None
    for k in range(max(cfg.final_k + 1, at_rank.shown_rank), rerank_rank + 1):
        shown = run(dataclasses.replace(cfg, final_k=k))
        if shown is not None and shown.shown_rank is not None:
            return k
    return None


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
