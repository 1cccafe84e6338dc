"""Metric functions against values computed by hand (graded nDCG included)."""

import copy
import math

import pytest

from rag.eval.metrics import (
    KS,
    context_precision_at_k,
    by_query,
    evaluate,
    hit_at_k,
    means,
    mrr_at_k,
    ndcg_at_k,
    ranking,
    recall_at_k,
)

# q1: relevant a (grade 2) and b (grade 1); c judged non-relevant. q2: relevant x, never retrieved.
# q3 has no relevant doc, so it is not judged at all.
QRELS = {"q1": {"a": 2, "b": 1, "c": 0}, "q2": {"x": 1}, "q3": {"z": 0}}
RUN = {"q1": {"d": 0.9, "b": 0.8, "a": 0.7, "e": 0.1}, "q2": {"y": 0.5}, "q3": {"z": 1.0}}


def test_hit_and_recall_by_hand():
    # q1 ranks d, b, a, e: first relevant at rank 2, both relevant by rank 3.
    assert hit_at_k(RUN, QRELS, 1).per_query == {"q1": 0.0, "q2": 0.0}
    assert hit_at_k(RUN, QRELS, 3).per_query == {"q1": 1.0, "q2": 0.0}
    assert recall_at_k(RUN, QRELS, 2).per_query["q1"] == 0.5
    assert recall_at_k(RUN, QRELS, 3).per_query["q1"] == 1.0
    assert recall_at_k(RUN, QRELS, 3).mean == 0.5


def test_mrr_by_hand():
    result = mrr_at_k(RUN, QRELS, 10)
    assert result.per_query == {"q1": 0.5, "q2": 0.0}
    assert result.mean == 0.25
    assert mrr_at_k(RUN, QRELS, 1).per_query["q1"] == 0.0  # first relevant at rank 2 is outside @1


def test_graded_ndcg_by_hand():
    # DCG = 0/log2(2) + 1/log2(3) + 2/log2(4); ideal = 2/log2(2) + 1/log2(3)
    dcg = 1 / math.log2(3) + 2 / 2
    ideal = 2 / 1 + 1 / math.log2(3)
    result = ndcg_at_k(RUN, QRELS, 10)
    assert result.per_query["q1"] == pytest.approx(dcg / ideal)
    assert result.per_query["q1"] == pytest.approx(0.6199, abs=1e-4)
    assert result.per_query["q2"] == 0.0
    # Swapping a and b (the better grade first) is the ideal order: nDCG 1.
    swapped = {"q1": {"a": 0.9, "b": 0.8}}
    assert ndcg_at_k(swapped, QRELS, 10).per_query["q1"] == pytest.approx(1.0)
    # Cut at 2: DCG = 1/log2(3); ideal@2 = 2 + 1/log2(3).
    assert ndcg_at_k(RUN, QRELS, 2).per_query["q1"] == pytest.approx((1 / math.log2(3)) / (2 + 1 / math.log2(3)))


def test_queries_missing_from_run_score_zero_and_unjudged_are_skipped():
    result = recall_at_k({}, QRELS, 10)
    assert result.per_query == {"q1": 0.0, "q2": 0.0}
    assert "q3" not in ndcg_at_k(RUN, QRELS).per_query
    assert recall_at_k(RUN, {}, 5).mean == 0.0


def test_ties_break_by_doc_id_and_inputs_are_not_mutated():
    assert ranking({"b": 1.0, "a": 1.0, "c": 2.0}) == ["c", "a", "b"]
    run, qrels = copy.deepcopy(RUN), copy.deepcopy(QRELS)
    evaluate(run, qrels)
    assert run == RUN and qrels == QRELS


def test_evaluate_names_and_tables():
    results = evaluate(RUN, QRELS)
    expected = {f"hit@{k}" for k in KS} | {f"recall@{k}" for k in KS} | {"mrr@10", "ndcg@10"}
    assert set(results) == expected
    m = means(results)
    assert m["hit@3"] == 0.5 and m["mrr@10"] == 0.25
    rows = by_query(results)
    assert rows["q1"]["recall@1"] == 0.0 and rows["q1"]["recall@5"] == 1.0
    assert set(rows) == {"q1", "q2"}


def test_context_precision_by_hand():
    # q1 ranks d, b, a, e: relevant at ranks 2 and 3 -> (1/2 + 2/3) / 2; q2 has none in its contexts -> 0.
    assert context_precision_at_k(RUN, QRELS, 3).per_query == pytest.approx({"q1": (1 / 2 + 2 / 3) / 2, "q2": 0.0})
    assert context_precision_at_k(RUN, QRELS, 1).per_query["q1"] == 0.0  # only d is handed over
    # Relevant contexts first score 1 whatever follows; the same contexts with the relevant one last score less.
    first = {"q": {"r": 3.0, "x": 2.0, "y": 1.0}}
    last = {"q": {"x": 3.0, "y": 2.0, "r": 1.0}}
    assert context_precision_at_k(first, {"q": {"r": 1}}, 3).mean == 1.0
    assert context_precision_at_k(last, {"q": {"r": 1}}, 3).mean == pytest.approx(1 / 3)
