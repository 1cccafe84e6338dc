"""Retrieval metrics as pure functions of `(run, qrels)`, in BEIR's data shapes.

    run   = {qid: {doc_id: score}}   higher score ranks first
    qrels = {qid: {doc_id: grade}}   grade > 0 means relevant; grades feed nDCG

Every metric returns a `MetricResult`: one score per judged query plus their mean (Haystack's
`score` / `individual_scores`). A judged query is one with at least one relevant document; a judged
query missing from `run` scores 0, so an empty result can never look good. Inputs are never mutated
(BEIR's `evaluate()` deletes entries from the caller's results). Ties in score are broken by doc id,
ascending, so a result never depends on dict order.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

Run = Mapping[str, Mapping[str, float]]
Qrels = Mapping[str, Mapping[str, int]]

KS = (1, 3, 5, 10, 20)
MRR_K = 10
NDCG_K = 10
CONTEXT_PRECISION = "context_precision"  # at the run's final k: a name that does not change with k, so runs compare


@dataclass(frozen=True)
class MetricResult:
    """One metric over a query set: per-query scores and their mean (0.0 when no query is judged)."""

    name: str
    per_query: Mapping[str, float]

    @property
    def mean(self) -> float:
        return sum(self.per_query.values()) / len(self.per_query) if self.per_query else 0.0


def ranking(scores: Mapping[str, float]) -> list[str]:
    """Doc ids best first; equal scores fall back to doc id order."""
    return sorted(scores, key=lambda doc: (-scores[doc], doc))


def hit_at_k(run: Run, qrels: Qrels, k: int) -> MetricResult:
    """1 when any relevant doc is in the top k, else 0."""
    return _per_query(f"hit@{k}", run, qrels, lambda ranked, rel: float(any(d in rel for d in ranked[:k])))


def recall_at_k(run: Run, qrels: Qrels, k: int) -> MetricResult:
    """Share of the relevant docs found in the top k."""
    return _per_query(f"recall@{k}", run, qrels, lambda ranked, rel: sum(1 for d in ranked[:k] if d in rel) / len(rel))


def mrr_at_k(run: Run, qrels: Qrels, k: int = MRR_K) -> MetricResult:
    """Reciprocal rank of the first relevant doc within the top k (0 when none is there)."""

    def score(ranked: list[str], rel: Mapping[str, int]) -> float:
        return next((1.0 / rank for rank, d in enumerate(ranked[:k], 1) if d in rel), 0.0)

    return _per_query(f"mrr@{k}", run, qrels, score)


def ndcg_at_k(run: Run, qrels: Qrels, k: int = NDCG_K) -> MetricResult:
    """Normalised DCG with graded relevance and linear gain, as trec_eval's `ndcg_cut` (used by BEIR).

    DCG = sum over ranks i <= k of grade(i) / log2(i + 1); the ideal DCG ranks the judged grades
    highest first. Grades of 0 or below add nothing.
    """

    def score(ranked: list[str], rel: Mapping[str, int]) -> float:
        dcg = sum(rel.get(d, 0) / math.log2(i + 1) for i, d in enumerate(ranked[:k], 1))
        ideal = sorted(rel.values(), reverse=True)[:k]
        return dcg / sum(g / math.log2(i + 1) for i, g in enumerate(ideal, 1))

    return _per_query(f"ndcg@{k}", run, qrels, score)


def context_precision_at_k(run: Run, qrels: Qrels, k: int) -> MetricResult:
    """RAGAS's id-based (non-LLM) context precision over the k contexts an answerer is handed.

    The mean of precision@i over the ranks i <= k that hold a relevant doc (0 when none does), so it
    rewards relevant contexts ranked above irrelevant ones, which nDCG over units does not show when
    one gold section fills several of the k places.
    """

    def score(ranked: list[str], rel: Mapping[str, int]) -> float:
        found, total = 0, 0.0
        for i, d in enumerate(ranked[:k], 1):
            if d in rel:
                found += 1
                total += found / i
        return total / found if found else 0.0

    return _per_query(CONTEXT_PRECISION, run, qrels, score)


def evaluate(run: Run, qrels: Qrels, ks: Sequence[int] = KS) -> dict[str, MetricResult]:
    """Every metric the Eval tab shows: hit@k and recall@k for each k, MRR@10 and nDCG@10."""
    results = [hit_at_k(run, qrels, k) for k in ks] + [recall_at_k(run, qrels, k) for k in ks]
    results += [mrr_at_k(run, qrels), ndcg_at_k(run, qrels)]
    return {r.name: r for r in results}


def means(results: Mapping[str, MetricResult]) -> dict[str, float]:
    """{metric name: mean}."""
    return {name: r.mean for name, r in results.items()}


def by_query(results: Mapping[str, MetricResult]) -> dict[str, dict[str, float]]:
    """{qid: {metric name: score}}: the per-question rows of a results table."""
    out: dict[str, dict[str, float]] = {}
    for name, r in results.items():
        for qid, value in r.per_query.items():
            out.setdefault(qid, {})[name] = value
    return out


def _per_query(
    name: str, run: Run, qrels: Qrels, score: Callable[[list[str], Mapping[str, int]], float]
) -> MetricResult:
    per_query: dict[str, float] = {}
    for qid, grades in qrels.items():
        relevant = {d: g for d, g in grades.items() if g > 0}
        if not relevant:
            continue
        per_query[qid] = float(score(ranking(run.get(qid, {})), relevant))
    return MetricResult(name, MappingProxyType(per_query))
