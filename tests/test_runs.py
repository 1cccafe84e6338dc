"""Eval runs on the sample help centre: stored, listed, compared, marked as baseline; cancelled runs leave no trace."""

from __future__ import annotations

import threading

import pytest
from anthropic_mock import MockedMessages, api_error

from rag.catalog.sample import sample_files
from rag.settings.config import RetrievalConfig
from rag.errors import GenerationError, RagError
from rag.eval.qsets import QuestionSet, parse_question_set, sample_question_set_text
from rag.eval.runner import EvalCancelled, run_eval
from rag.eval.runs import (
    FINAL_STAGE,
    baseline_of,
    compare_runs,
    delete_run,
    list_runs,
    load_run,
    rename_run,
    set_baseline,
)
from rag.settings.labels import config_label
from rag.ingest.pipeline import ingest_files
from rag.retrieval.result import STAGES


@pytest.fixture
def sample_set():
    return parse_question_set(sample_question_set_text(), "sample")


def test_run_is_stored_whole_and_scores_add_up(sample_components, sample_set):
    calls = []
    run = run_eval(sample_components, sample_set, RetrievalConfig(candidates=20, reranker="none"), progress=lambda d, n, m: calls.append((d, n)))
    assert calls == [(i, 20) for i in range(1, 21)]
    assert set(run.per_stage) == set(STAGES)
    stored = load_run(sample_components.settings.data_dir, run.id)
    assert stored == run and stored.questions == run.questions
    assert stored.config.candidates == 20
    assert stored.models["dense"] == "all-MiniLM-L6-v2" and stored.models["reranker"] == "none"
    # Each stage's mean is the mean of the stored per-question scores (unanswerable questions have none).
    answerable = [q for q in run.questions if q.answerable]
    assert len(answerable) == 17 and all(not q.scores for q in run.questions if not q.answerable)
    for stage in STAGES:
        for metric in ("ndcg@10", "recall@5", "hit@1", "mrr@10"):
            mean = sum(q.scores[stage][metric] for q in answerable) / len(answerable)
            assert run.per_stage[stage][metric] == pytest.approx(mean)
    # Failed questions are exactly those without gold in the final k, each with one verdict.
    for q in answerable:
        assert q.failed == (q.gold_ranks["final"] is None)
    assert run.metrics["hit@final"] == pytest.approx(sum(1 for q in answerable if q.gold_ranks["final"]) / 17)
    data_region = next(q for q in run.questions if q.id == "data-region")
    assert data_region.verdict.code == "final_k" and data_region.gold_ranks[FINAL_STAGE] > 5


def test_compare_runs_baseline_and_delete(sample_components, sample_set):
    data_dir = sample_components.settings.data_dir
    a = run_eval(sample_components, sample_set, RetrievalConfig(candidates=20, reranker="none"))
    # Sparse alone (dense weight 0): the English question about the Chinese export FAQ loses its gold.
    b = run_eval(sample_components, sample_set, RetrievalConfig(candidates=20, fusion="weighted_rrf", dense_weight=0.0, reranker="none"))
    assert [r.id for r in list_runs(data_dir, "sample")] == [b.id, a.id]
    cmp = compare_runs(load_run(data_dir, a.id), load_run(data_dir, b.id))
    assert cmp.same_collection
    assert cmp.config_changes()["fusion"] == ("dbsf", "weighted_rrf")
    for stage in STAGES:
        assert cmp.deltas[stage]["ndcg@10"] == pytest.approx(b.per_stage[stage]["ndcg@10"] - a.per_stage[stage]["ndcg@10"])
    assert "export-format" in {q.id for q in cmp.losses}
    for q in cmp.questions:
        if q.outcome == "win":
            assert q.score_b > q.score_a
        elif q.outcome == "loss":
            assert q.score_b < q.score_a
    # Exactly the questions whose verdict differs. A non-empty case is asserted on `wider` below: whether
    # the cross-lingual export question passes under `a` varied (once outside the top 5 in a full run
    # under load; rank 2 alone and after the ONNX tests), cause not found.
    assert {q.id for q in cmp.verdict_changes} == {q.id for q in cmp.questions if q.verdict_a != q.verdict_b}
    # k=10 keeps the data-region gold (rank 7) that k=5 cut: same ranking, one verdict gone.
    c = run_eval(sample_components, sample_set, RetrievalConfig(candidates=20, final_k=10, reranker="none"), save=False)
    wider = compare_runs(a, c)
    assert [(q.id, q.verdict_a, q.verdict_b) for q in wider.verdict_changes] == [("data-region", "final_k", None)]
    assert wider.wins == wider.losses == [] and wider.deltas["rerank"]["ndcg@10"] == 0
    assert wider.as_json()["verdict_changes"] == [{"id": "data-region", "a": "final_k", "b": None}]

    assert baseline_of(data_dir, "sample") is None
    set_baseline(data_dir, a.id)
    set_baseline(data_dir, b.id)  # moving the mark leaves one baseline per set
    assert [r.id for r in list_runs(data_dir) if r.baseline] == [b.id]
    assert baseline_of(data_dir, "sample") == b.id
    delete_run(data_dir, b.id)
    assert [r.id for r in list_runs(data_dir)] == [a.id]
    with pytest.raises(RagError, match="no eval run"):
        load_run(data_dir, b.id)


def test_cancelled_run_stores_nothing_and_keeps_history(sample_components, sample_set):
    data_dir = sample_components.settings.data_dir
    kept = run_eval(sample_components, sample_set)
    cancel = threading.Event()
    seen = []

    def progress(done, total, message):
        seen.append(done)
        if done == 3:
            cancel.set()

    with pytest.raises(EvalCancelled, match="after 3 of 20 questions; nothing was stored"):
        run_eval(sample_components, sample_set, progress=progress, cancel=cancel)
    assert seen == [1, 2, 3]
    assert [r.id for r in list_runs(data_dir)] == [kept.id]
    assert load_run(data_dir, kept.id).questions == kept.questions


def test_a_failing_run_stores_nothing(sample_components, sample_set):
    # The real generator and SDK, with the API answering 500 on the wire: the run fails, history stays empty.
    api = MockedMessages(lambda body: api_error(500, "api_error", "boom"))
    with pytest.raises(GenerationError, match="the Anthropic API failed"):
        run_eval(sample_components, sample_set, generator=api.generator(sample_components.settings.answer))
    assert list_runs(sample_components.settings.data_dir) == []


def test_offline_answers_are_scored(sample_components, sample_set):
    # Three answerable questions (one whose gold the default k cuts) and the unanswerable ones: enough to count every rate.
    picked = [q for q in sample_set.questions if q.id in ("refund-time", "export-format", "data-region") or not q.answerable]
    run = run_eval(sample_components, QuestionSet("answers", tuple(picked)), answers=True, save=False)
    assert run.models["generator"].startswith("extractive")
    answers = run.answers
    assert answers["faithfulness"] is None  # no key, no judge
    assert answers["citation_validity"] == 1.0  # the extractive answerer only cites what it quoted
    unanswerable = [q for q in run.questions if not q.answerable]
    assert answers["abstention_accuracy"] == pytest.approx(sum(q.answer.abstained for q in unanswerable) / len(unanswerable))
    assert answers["false_abstentions"] == pytest.approx(sum(q.answer.abstained for q in run.questions if q.answerable) / 3)
    for q in run.questions:
        wrong = q.answer.abstained == q.answerable and (not q.answerable or q.gold_ranks["final"] is not None)
        expected = ("abstained_answerable" if q.answerable else "answered_unanswerable") if wrong else None
        assert (q.verdict.code if q.verdict and q.verdict.code in ("abstained_answerable", "answered_unanswerable") else None) == expected


def test_fingerprint_follows_the_collection_and_empty_collection_is_refused(components, sample_set):
    sample_set = QuestionSet("two", sample_set.questions[:2])
    with pytest.raises(RagError, match="has no chunks"):
        run_eval(components, sample_set)
    ingest_files(components, sample_files())  # the set's gold is there: a run of nothing scored is refused
    first = run_eval(components, sample_set, save=False).fingerprint
    assert run_eval(components, sample_set, save=False).fingerprint == first
    ingest_files(components, [("b.md", b"# B\n\nInvoices are emailed.\n")])
    assert run_eval(components, sample_set, save=False).fingerprint != first


def test_runs_are_named_by_their_settings_and_can_be_renamed(sample_components, sample_set):
    data_dir = sample_components.settings.data_dir
    small = QuestionSet("sample", sample_set.questions[:2])
    config = RetrievalConfig(candidates=20, reranker="none")
    run = run_eval(sample_components, small, config)
    named = run_eval(sample_components, small, config, name="my try")
    assert run.name == config_label(config) and named.label == "my try"
    rename_run(data_dir, run.id, "  baseline   dense+bm25 ")
    assert load_run(data_dir, run.id).name == "baseline dense+bm25"
    with pytest.raises(RagError, match="cannot be empty"):
        rename_run(data_dir, run.id, "   ")
    assert [r.label for r in list_runs(data_dir, "sample")] == ["my try", "baseline dense+bm25"]


def test_a_history_from_before_run_names_is_migrated(tmp_path):
    import json
    import sqlite3

    data_dir = tmp_path / "old"
    data_dir.mkdir()
    config = RetrievalConfig(candidates=30, fusion="rrf")
    with sqlite3.connect(data_dir / "eval.sqlite") as con:  # the schema before the name column
        con.execute(
            "CREATE TABLE runs (id TEXT PRIMARY KEY, created_at TEXT NOT NULL, set_name TEXT NOT NULL, collection TEXT NOT NULL, config TEXT NOT NULL,"
            " models TEXT NOT NULL, fingerprint TEXT NOT NULL, per_stage TEXT NOT NULL, answers TEXT NOT NULL, baseline INTEGER NOT NULL DEFAULT 0)"
        )
        con.execute(
            "INSERT INTO runs VALUES (?,?,?,?,?,?,?,?,?,1)",
            ("20261101-120000-ab12", "2026-11-01T12:00:00+00:00", "sample", "docs", json.dumps(__import__("dataclasses").asdict(config)), "{}", "f", "{}", "{}"),
        )
    (old,) = list_runs(data_dir)
    assert old.name == config_label(config) and old.baseline and old.id == "20261101-120000-ab12"
    rename_run(data_dir, old.id, "from last month")
    assert load_run(data_dir, old.id).label == "from last month"


def test_a_run_stored_before_a_setting_existed_reads_as_it_ran(sample_components, sample_set):
    """A run stored before collapsing existed ran without it: read back, it must not claim today's default
    (one hit per section), and a key this version no longer knows does not break the history."""
    import json
    import sqlite3

    from rag.eval.runs import db_path

    run = run_eval(sample_components, sample_set, RetrievalConfig(final_k=3))
    data_dir = sample_components.settings.data_dir
    old = {k: v for k, v in json.loads(json.dumps(__import__("dataclasses").asdict(run.config))).items() if k != "collapse"}
    with sqlite3.connect(db_path(data_dir)) as con:
        con.execute("UPDATE runs SET config = ? WHERE id = ?", (json.dumps(old | {"a_removed_knob": 7}), run.id))
    assert RetrievalConfig().collapse is True  # today's default differs from how the old run ran
    loaded = load_run(data_dir, run.id)
    assert loaded.config.collapse is False and loaded.config.final_k == 3
    assert [r.id for r in list_runs(data_dir)] == [run.id]


def test_runs_stored_within_one_second_list_in_the_order_they_ran(sample_components, sample_set):
    import dataclasses

    from rag.eval.runs import save_run

    data_dir = sample_components.settings.data_dir
    first = run_eval(sample_components, sample_set, RetrievalConfig(candidates=20, reranker="none"))
    # The same timestamp for runs stored one after another, and ids that sort the other way round.
    later = [dataclasses.replace(first, id=f"{9 - i}" * 12, name=f"run {i}") for i in range(3)]
    for run in later:
        save_run(data_dir, run)
    assert [r.name for r in list_runs(data_dir, "sample")][:3] == ["run 2", "run 1", "run 0"]
