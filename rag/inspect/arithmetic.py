"""Score arithmetic: how each candidate's fused score was made from its dense and sparse scores, and how the
reranker's score was made, in numbers a person can redo by hand.

Fusion runs inside Qdrant, which returns only the sum; its formulas are public and short, so the terms are
computed here from the two lists the stage table shows (the ones the prefetches found: same vectors, same
filter, same length) and checked against the score Qdrant returned, which is the one shown and ranked by:
- rrf: each list adds 1 / (k + rank - 1) (Qdrant counts ranks from 0); weighted_rrf: 1 / (k + rank / w - 1)
  with w the list's weight (rag/retrieval/fusion.py, `rrf_term`); union ranks the same way, here.
- dbsf: each list's scores are mapped from [mean - 3 sd, mean + 3 sd] (sample sd) onto [0, 1] and added; a
  list of one score, or of equal ones, gives 0.5.
A chunk one list missed gets nothing from it. `FusedArithmetic.matches` says whether the terms add up to the
engine's score (to float32 rounding); when they do not (tied scores ordered differently in the prefetch), the
page says so rather than show a sum that did not rank the chunk.

The reranker's side is the built-in rerankers' own parts (rag/retrieval/rerank.py, `ScorePart`): their scores
are computed as those sums, so the parts shown are the numbers that ranked the chunk. A cross-encoder's score
is one model output and has no parts.

`versus_above` answers "why is that chunk above mine?": the stage whose score ordered the two, and each of its
terms side by side, the one with the widest gap in the other's favour named as what decided.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from statistics import fmean, stdev
from typing import Sequence

from rag.components import Components
from rag.errors import ConfigError
from rag.ingest.sentences import sentence_texts
from rag.inspect.above import ranked_above, standing_candidate
from rag.inspect.explain import chunk_terms
from rag.retrieval.fusion import rrf_term
from rag.retrieval.rerank import RerankContext, ScorePart, get_reranker, sentence_cosines, total
from rag.retrieval.result import Candidate, RetrievalResult

LISTS = ("dense", "sparse")
BEST_SENTENCE = "best sentence cosine"
Scored = tuple[str, float]  # a chunk id and its score in one list


@dataclass(frozen=True)
class ListNorm:
    """DBSF's normalisation of one list: its scores mapped from [mean - 3 sd, mean + 3 sd] onto [0, 1]."""

    stage: str  # "dense" or "sparse"
    size: int
    mean: float
    sd: float  # the sample standard deviation (n - 1), as Qdrant takes it
    low: float  # mean - 3 sd
    high: float  # mean + 3 sd

    @classmethod
    def of(cls, stage: str, scores: Sequence[float]) -> ListNorm:
        mean = fmean(scores) if scores else 0.0
        sd = stdev(scores) if len(scores) > 1 else 0.0
        return cls(stage, len(scores), mean, sd, mean - 3 * sd, mean + 3 * sd)

    @property
    def flat(self) -> bool:
        """One score, or all equal: every chunk of the list gets 0.5."""
        return self.size < 2 or self.sd == 0.0

    def normalise(self, score: float) -> float:
        return 0.5 if self.flat else (score - self.low) / (self.high - self.low)


@dataclass(frozen=True)
class FusionTerm:
    """What one list added to a chunk's fused score."""

    stage: str  # "dense" or "sparse"
    rank: int | None  # 1-based in that list; None when the list did not find the chunk (it adds 0)
    score: float | None  # the list's own score for the chunk
    value: float  # what it adds
    weight: float  # the list's weight (weighted_rrf; 1 otherwise)
    formula: str  # the value's arithmetic, with the numbers: "1/(60 + 3 - 1)", "(0.81 - 0.40) / (1.12 - 0.40)"


@dataclass(frozen=True)
class FusedArithmetic:
    """A chunk's fused score as the sum of its lists' terms."""

    fusion: str
    terms: tuple[FusionTerm, ...]
    computed: float  # the terms' sum
    recorded: float | None  # the fused score retrieve() ranked by; None when fusion cut the chunk

    @property
    def matches(self) -> bool:
        """The sum is the engine's score, to the float32 precision Qdrant computes in."""
        return self.recorded is None or math.isclose(self.computed, self.recorded, rel_tol=1e-5, abs_tol=1e-6)

    def text(self) -> str:
        """ "dense 0.0164 + sparse 0.0159 = 0.0323" (what the stage table's fused column holds)."""
        if self.fusion in LISTS:
            return f"the {self.fusion} list alone: {self.computed:.4f}"
        shown = self.recorded if self.recorded is not None and self.matches else self.computed
        return " + ".join(f"{t.stage} {t.value:.4f}" for t in self.terms) + f" = {shown:.4f}"


@dataclass(frozen=True)
class RerankArithmetic:
    """A chunk's rerank score as the sum of the reranker's weighted parts."""

    reranker: str
    parts: tuple[ScorePart, ...]  # () when the reranker exposes none (a cross-encoder)
    computed: float | None  # the parts' sum; None without parts
    recorded: float | None  # the rerank score retrieve() ranked by
    sentence: str = ""  # sentence-maxsim, maxsim-fusion: the chunk's best-matching sentence
    note: str = ""  # why there are no parts

    @property
    def matches(self) -> bool:
        return self.computed is None or self.recorded is None or self.computed == self.recorded

    def text(self) -> str:
        """ "0.5 x best sentence cosine 0.7100 + 0.5 x chunk cosine 0.6200 = 0.6650"."""
        if not self.parts:
            return f"{_num(self.recorded)}: {self.note}"
        return " + ".join(_part_text(p) for p in self.parts) + f" = {_num(self.computed)}"


@dataclass(frozen=True)
class RowArithmetic:
    """One stage-table row's arithmetic."""

    chunk_id: str
    fused: FusedArithmetic
    rerank: RerankArithmetic | None  # None when the chunk never reached the reranker

    def as_dict(self) -> dict:
        """The JSON shape (`search --json`, `track --json`, the failure report)."""
        out = {"chunk_id": self.chunk_id, "fused": asdict(self.fused) | {"text": self.fused.text()}}
        out["fused"]["matches"] = self.fused.matches
        out["rerank"] = None if self.rerank is None else _rerank_dict(self.rerank)
        return out


@dataclass(frozen=True)
class Fusion:
    """The fusion arithmetic of two lists: each list's normalisation (dbsf) and each chunk's terms."""

    fusion: str
    rrf_k: int
    weights: tuple[float, float]  # (dense, sparse); (1, 1) unless weighted_rrf
    norms: tuple[ListNorm, ...]  # dbsf only
    terms: dict[str, tuple[FusionTerm, ...]]  # chunk id -> its terms, dense first

    def computed(self, chunk_id: str) -> float:
        return sum(t.value for t in self.terms.get(chunk_id, ()))

    def as_dict(self) -> dict:
        return {
            "fusion": self.fusion,
            "rrf_k": self.rrf_k,
            "weights": list(self.weights),
            "norms": [asdict(n) for n in self.norms],
        }


@dataclass(frozen=True)
class ScoreArithmetic:
    """Every candidate's arithmetic for one retrieval."""

    fusion: Fusion
    reranker: str
    rows: dict[str, RowArithmetic]

    def row(self, chunk_id: str) -> RowArithmetic | None:
        return self.rows.get(chunk_id)

    def as_dict(self) -> dict:
        """The retrieval-wide part (fusion, k, weights, each list's DBSF normalisation, the reranker); each row's
        own arithmetic goes with its row (`RowArithmetic.as_dict`)."""
        return {**self.fusion.as_dict(), "reranker": self.reranker}


@dataclass(frozen=True)
class TermGap:
    """One term of the deciding stage, for the chunk above and for the target."""

    name: str  # "dense", "sparse", or a reranker part's name
    above: float  # what the term added to the chunk above's score
    target: float

    @property
    def gap(self) -> float:
        return self.above - self.target


@dataclass(frozen=True)
class VersusAbove:
    """Why the chunk ranked just above the target beat it: the stage whose scores ordered them and its terms."""

    target_id: str
    above_id: str
    above_rank: int  # its rank in that stage (the final rank for a target in the final list)
    stage: str  # "rerank" or "fused": whose scores ordered the two
    above_score: float
    target_score: float
    gaps: tuple[TermGap, ...]  # the stage's terms, the widest gap in the above chunk's favour first
    text: str

    @property
    def decided_by(self) -> str | None:
        """The term that gave the chunk above its lead; None when no term has parts (a cross-encoder)."""
        return self.gaps[0].name if self.gaps else None

    def as_dict(self) -> dict:
        return asdict(self) | {"decided_by": self.decided_by}


def fuse_lists(
    fusion: str, dense: Sequence[Scored], sparse: Sequence[Scored], rrf_k: int, dense_weight: float
) -> Fusion:
    """The terms of every chunk either list holds, for `fusion`; each list is (chunk id, score) best first.

    Pure: the property test checks it against the engine's fused scores over random lists.
    """
    lists = {"dense": list(dense), "sparse": list(sparse)}
    weights = (dense_weight, 1.0 - dense_weight) if fusion == "weighted_rrf" else (1.0, 1.0)
    norms = tuple(ListNorm.of(s, [score for _, score in lists[s]]) for s in LISTS) if fusion == "dbsf" else ()
    places = {s: {cid: (rank, score) for rank, (cid, score) in enumerate(lists[s], 1)} for s in LISTS}
    terms: dict[str, tuple[FusionTerm, ...]] = {}
    for cid in dict.fromkeys(cid for s in LISTS for cid, _ in lists[s]):
        row = []
        for i, stage in enumerate(LISTS):
            if fusion in LISTS and stage != fusion:
                continue
            rank, score = places[stage].get(cid, (None, None))
            norm = norms[i] if norms else None
            row.append(_term(fusion, stage, rank, score, rrf_k, weights[i], norm))
        terms[cid] = tuple(row)
    return Fusion(fusion, rrf_k, weights, norms, terms)


def score_arithmetic(components: Components, result: RetrievalResult) -> ScoreArithmetic:
    """Every candidate's fused and rerank arithmetic, from the lists and query vectors `result` ran."""
    config = result.config
    fusion = fuse_lists(
        config.fusion, _list(result, "dense"), _list(result, "sparse"), config.rrf_k, config.dense_weight
    )
    reranks = _rerank_rows(components, result)
    rows = {
        c.id: RowArithmetic(
            c.id,
            FusedArithmetic(config.fusion, fusion.terms.get(c.id, ()), fusion.computed(c.id), c.fused.score),
            reranks.get(c.id),
        )
        for c in result.candidates
    }
    return ScoreArithmetic(fusion, result.reranker, rows)


def explained_rows(
    components: Components, result: RetrievalResult, ids: Sequence[str], arithmetic: ScoreArithmetic | None = None
) -> dict[str, dict]:
    """JSON of each chunk `ids` names: its score arithmetic and the BM25 contributions behind its sparse score
    (`ragscope search --json` and `track --json` add them to their rows)."""
    arithmetic = arithmetic or score_arithmetic(components, result)
    terms = chunk_terms(components, result, ids)
    return {
        cid: {
            "arithmetic": row.as_dict() if (row := arithmetic.row(cid)) else None,
            "sparse_terms": terms[cid].as_dict() if cid in terms else None,
        }
        for cid in ids
    }


def versus_above(result: RetrievalResult, arithmetic: ScoreArithmetic, chunk_id: str) -> VersusAbove | None:
    """The comparison of the target (the chunk standing for it, when its section's chunk does) with the chunk
    ranked just above it: in the final list when it is there (rag/inspect/above.py's order), else in the last
    stage that ranked it. None when nothing ranks above it."""
    target = standing_candidate(result, chunk_id)
    if target is None:
        return None
    above_list = ranked_above(result, chunk_id)
    if above_list:
        above, rank = above_list[-1].candidate, above_list[-1].rank
    else:
        stage = "rerank" if target.rerank.rank is not None else "fused"
        ranked = result.ranked(stage)
        place = next((i for i, c in enumerate(ranked) if c.id == target.id), None)
        if not place:  # first in its stage, or in none
            return None
        above, rank = ranked[place - 1], place
    return _versus(result, arithmetic, above, rank, target)


def _versus(
    result: RetrievalResult, arithmetic: ScoreArithmetic, above: Candidate, rank: int, target: Candidate
) -> VersusAbove:
    a_row, t_row = arithmetic.row(above.id), arithmetic.row(target.id)
    by_rerank = (
        result.reranker != "none"
        and above.rerank.score is not None
        and target.rerank.score is not None
        and above.rerank.score != target.rerank.score
    )
    if by_rerank:
        stage, a_score, t_score = "rerank", above.rerank.score, target.rerank.score
        a_parts = {p.name: p.term for p in (a_row.rerank.parts if a_row and a_row.rerank else ())}
        t_parts = {p.name: p.term for p in (t_row.rerank.parts if t_row and t_row.rerank else ())}
    else:  # no reranker, or a tie it left to the fused order
        stage, a_score, t_score = "fused", above.fused.score or 0.0, target.fused.score or 0.0
        a_parts = {t.stage: t.value for t in (a_row.fused.terms if a_row else ())}
        t_parts = {t.stage: t.value for t in (t_row.fused.terms if t_row else ())}
    names = list(dict.fromkeys((*a_parts, *t_parts)))
    gaps = tuple(sorted((TermGap(n, a_parts.get(n, 0.0), t_parts.get(n, 0.0)) for n in names), key=lambda g: -g.gap))
    text = _versus_text(stage, a_score, t_score, gaps)
    return VersusAbove(target.id, above.id, rank, stage, a_score, t_score, gaps, text)


def _versus_text(stage: str, a_score: float, t_score: float, gaps: tuple[TermGap, ...]) -> str:
    lead = f"{stage} score {a_score:.4f} vs {t_score:.4f}"
    if a_score == t_score:
        lead += " (a tie: the earlier stage's order kept)"
    if not gaps:
        return f"{lead}; the reranker shows no parts"
    won = gaps[0]
    said = f"{lead}; decided by {won.name}: {won.above:.4f} vs {won.target:.4f} ({won.gap:+.4f})"
    lost = [g for g in gaps if g.gap < 0]
    if lost:
        said += "; " + ", ".join(f"{g.name} favoured the target ({g.gap:+.4f})" for g in lost)
    return said


def _term(
    fusion: str, stage: str, rank: int | None, score: float | None, k: int, weight: float, norm: ListNorm | None
) -> FusionTerm:
    if rank is None or score is None:
        return FusionTerm(stage, None, None, 0.0, weight, "not in the list: 0")
    if fusion in LISTS:
        return FusionTerm(stage, rank, score, score, 1.0, f"{score:.4f}, the list's own score")
    if norm is not None:
        formula = (
            "0.5 (the list's scores are all equal)"
            if norm.flat
            else f"({score:.4f} - {norm.low:.4f}) / ({norm.high:.4f} - {norm.low:.4f})"
        )
        return FusionTerm(stage, rank, score, norm.normalise(score), 1.0, formula)
    # Qdrant counts ranks from 0 (rag/retrieval/fusion.py): the 1-based rank r is its r - 1.
    value = rrf_term(rank - 1, k, weight)
    formula = f"1/({k} + {rank} - 1)" if weight == 1.0 else f"1/({k} + {rank}/{weight:g} - 1)"
    return FusionTerm(stage, rank, score, value, weight, formula if weight > 0 else "weight 0: 0")


def _list(result: RetrievalResult, stage: str) -> list[Scored]:
    return [(c.id, c.stage(stage).score) for c in result.ranked(stage)]


def _rerank_rows(components: Components, result: RetrievalResult) -> dict[str, RerankArithmetic]:
    """Each reranked chunk's parts, from the reranker itself over the same pool and vectors retrieve() gave it."""
    pool = result.ranked("fused")
    recorded = {c.id: c.rerank.score for c in pool}
    try:
        parts_of = getattr(get_reranker(result.reranker), "parts", None)
        note = "the model's own score, which has no parts to show"
    except ConfigError:  # no reranker of that name: a mode's searches combined (rag/modes/fusion.py)
        parts_of, note = None, "the mode's searches combined by rank (see its stages), not one reranker's score"
    if parts_of is None or result.query is None or not pool:
        return {cid: RerankArithmetic(result.reranker, (), None, score, note=note) for cid, score in recorded.items()}
    q = result.query
    prior = tuple(c.fused.score for c in pool)
    ctx = RerankContext(
        result.question, q.dense_run, q.sparse_run, components.store, components.dense, result.filter, prior
    )
    chunks = [c.chunk for c in pool]
    rows = {}
    for c, parts in zip(pool, parts_of(result.question, chunks, ctx), strict=True):
        sentence = _best_sentence(components, result, c) if _has_sentence(parts) else ""
        rows[c.id] = RerankArithmetic(result.reranker, parts, total(parts), recorded[c.id], sentence)
    return rows


def _has_sentence(parts: Sequence[ScorePart]) -> bool:
    return any(p.name == BEST_SENTENCE or _has_sentence(p.parts) for p in parts)


def _best_sentence(components: Components, result: RetrievalResult, c: Candidate) -> str:
    """The sentence (or heading path) whose cosine was the chunk's best: what MaxSim matched."""
    cosines, _ = sentence_cosines(components.store, components.dense, result.query.dense_run, c.chunk)
    texts = sentence_texts(c.chunk.chunk)
    return texts[max(range(len(cosines)), key=cosines.__getitem__)] if cosines else ""


def _part_text(p: ScorePart) -> str:
    raw = " + ".join(_part_text(q) for q in p.parts) if p.parts else f"{p.raw:.4f}"
    if p.low is not None and p.high is not None:
        normalised = (
            "0 (the candidates' scores are all equal)"
            if p.high <= p.low
            else f"({p.raw:.4f} - {p.low:.4f}) / ({p.high:.4f} - {p.low:.4f}) = {p.value:.4f}"
        )
        return f"{p.weight:g} x {p.name} [{raw}] normalised {normalised}"
    if p.parts:
        return f"{p.weight:g} x {p.name} [{raw}]"
    return f"{p.weight:g} x {p.name} {raw}"


def _rerank_dict(r: RerankArithmetic) -> dict:
    return asdict(r) | {"matches": r.matches, "text": r.text()}


def _num(x: float | None) -> str:
    return "–" if x is None else f"{x:.4f}"
