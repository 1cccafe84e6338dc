"""Query expansion (PRF, dense PRF) as a switch everywhere a config is set: inspector, its links, the Eval tab, the CLI.

Expected expansion words always come from a direct `retrieve()` call with the same config on the same
store, never from a list written here.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from urllib.parse import parse_qs, urlparse

import pytest
from apptest_pages import open_page
from click.testing import CliRunner
from streamlit.testing.v1 import AppTest

from rag.cli import main
from rag.settings.labels import config_label
from rag.components import build_components
from rag.settings.config import RetrievalConfig, Settings
from rag.errors import ConfigError
from rag.eval.qsets import parse_question_set, sample_question_set_text
from rag.eval.runner import run_eval
from rag.eval.runs import db_path, list_runs, load_run
from rag.settings.links import inspector_params, parse_inspector_params
from rag.retrieval.result import RetrievalResult
from rag.retrieval.retrieve import retrieve

QUESTION = "How do refunds work?"
PRF = RetrievalConfig(fusion="rrf", reranker="none", prf=True, prf_terms=6)


def _direct(settings: Settings, config: RetrievalConfig, question: str = QUESTION) -> RetrievalResult:
    """What retrieve() gives for this config, with the store closed again so a page or the CLI can open it."""
    components = build_components(settings)
    try:
        return retrieve(components, question, config)
    finally:
        components.close()


def _captions(at: AppTest) -> list[str]:
    return [c.value.replace("\\", "") for c in at.caption]  # escape_markdown's backslashes off


# --- links -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "config",
    [
        RetrievalConfig(),
        PRF,
        RetrievalConfig(prf=True, prf_docs=5, prf_terms=3, prf_weight=0.1 + 0.2),  # 0.30000000000000004 survives
        RetrievalConfig(dense_prf=True, dense_prf_docs=2, dense_prf_weight=0.35, fusion="weighted_rrf", dense_weight=0.7, rrf_k=10),
        RetrievalConfig(prf=True, dense_prf=True, min_score=0.0, reranker="sentence-maxsim:0.7", candidates=12, final_k=3),
    ],
)
def test_config_survives_a_link_round_trip(config):
    params = inspector_params("why?", config)
    back = parse_inspector_params({k: [v] for k, v in params.items()}, RetrievalConfig())
    assert back.config == config and back.question == "why?"


def test_links_carry_only_what_differs_from_the_defaults():
    assert set(inspector_params("q", RetrievalConfig())) == {"q", "fusion", "candidates", "k", "reranker"}
    params = inspector_params("q", PRF)
    assert (params["prf"], params["prf_terms"]) == ("1", "6")
    assert "prf_docs" not in params and "dense_prf" not in params
    # On a deployment whose configured settings turn PRF on, a run with it off says prf=0.
    configured = RetrievalConfig(prf=True, prf_terms=4, min_score=0.2)
    plain = RetrievalConfig(min_score=0.3)
    params = inspector_params("q", plain, configured)
    assert (params["prf"], params["prf_terms"]) == ("0", "10")
    assert parse_inspector_params({k: [v] for k, v in params.items()}, configured).config == plain
    assert parse_inspector_params({k: [v] for k, v in params.items()}, RetrievalConfig()).config == plain


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("prf", "maybe", "link parameter prf must be 1 or 0 (true/false, yes/no and on/off work too); got 'maybe'"),
        ("prf_terms", "many", "link parameter prf_terms must be a whole number from 1 to 100; got 'many'"),
        ("prf_docs", "0", "link parameter prf_docs must be a whole number from 1 to 50; got '0'"),
        ("dense_prf_weight", "1.5", "link parameter dense_prf_weight must be a number above 0 and at most 1; got '1.5'"),
        ("candidates", "1e20", "link parameter candidates must be a whole number from 1 to 2000; got '1e20'"),
        ("min_score", "nan", "link parameter min_score must be a finite number, or empty for none; got 'nan'"),
    ],
)
def test_bad_link_values_name_the_parameter(name, value, message):
    with pytest.raises(ConfigError) as e:
        parse_inspector_params({name: [value]}, RetrievalConfig())
    assert message in str(e.value)


# --- inspector ---------------------------------------------------------------------------------------------


def test_turning_prf_on_in_the_inspector_shows_the_words_retrieve_added(sample_store):
    expected = _direct(sample_store, dataclasses.replace(PRF, prf_terms=10))
    assert expected.expansion
    at = open_page("pages/inspector.py", q=QUESTION, fusion="rrf", reranker="none")
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert not any("BM25 query expanded" in c or "expanded query the stages ran" in c for c in _captions(at))
    assert at.checkbox(key="inspector_prf").value is False
    at.checkbox(key="inspector_prf").check()
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    shown = _captions(at)
    assert f"sparse stage: BM25 query expanded with: {', '.join(expected.expansion)}" in [c.replace("**", "") for c in shown]
    assert any(config_label(expected.config) in c for c in shown)
    assert any(c.startswith("The scores below are for the expanded query the stages ran") for c in shown)  # the chunk detail says so
    # The table's sparse stage is the expanded query's ranking.
    table = at.dataframe(key="inspector_table").value
    sparse = table.dropna(subset=["sparse #"]).sort_values("sparse #")["chunk id"].tolist()
    assert sparse == [c.id for c in expected.ranked("sparse")]


def test_a_prf_link_sets_the_switches_and_b_can_turn_prf_on_in_the_comparison(sample_store):
    expected = _direct(sample_store, dataclasses.replace(PRF, fusion="sparse", dense_prf=True, dense_prf_docs=2))
    link = inspector_params(QUESTION, dataclasses.replace(PRF, dense_prf=True, dense_prf_docs=2))
    at = open_page("pages/inspector.py", **link)
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.checkbox(key="inspector_prf").value and at.number_input(key="inspector_prf_terms").value == 6
    assert at.checkbox(key="inspector_dense_prf").value and at.number_input(key="inspector_dense_prf_docs").value == 2
    assert any(c.startswith("**dense stage**: Dense stage re-ran") for c in _captions(at))
    # B: sparse only, PRF off, then on.
    at.selectbox(key="inspector_cmp_fusion").set_value("sparse")
    at.checkbox(key="inspector_cmp_prf").uncheck()
    at.button(key="inspector_cmp_button").click()
    at.run()
    assert not any("B**: sparse only · PRF" in m.value for m in at.markdown)
    at.checkbox(key="inspector_cmp_prf").check()
    at.button(key="inspector_cmp_button").click()
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any(m.value.startswith("**B**: sparse only · PRF 3 docs, 6 terms") for m in at.markdown)
    assert sum(f"BM25 query expanded with: {', '.join(expected.expansion)}" in c for c in _captions(at)) >= 2  # main view and B


# --- Eval tab ----------------------------------------------------------------------------------------------


def test_an_eval_run_with_prf_is_stored_labeled_and_linked_so(sample_store):
    at = open_page("pages/ask.py", timeout=120)
    at.button(key="eval_load_sample").click()
    at.run()
    at.button(key="eval_start").click()
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    at.checkbox(key="eval_prf").check()
    at.run()  # the PRF numbers are enabled once PRF is on
    at.number_input(key="eval_prf_terms").set_value(4)
    at.button(key="eval_start").click()
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    with_prf, without = list_runs(sample_store.data_dir, "sample")
    assert with_prf.config.prf and with_prf.config.prf_terms == 4 and not without.config.prf
    assert dataclasses.replace(with_prf.config, prf=False, prf_terms=without.config.prf_terms) == without.config
    labels = at.selectbox(key="eval_run_id").options
    # Runs are listed by name (their settings in words by default): the PRF run says so, the other does not.
    assert any(label.startswith(with_prf.label) and "PRF 3 docs, 4 terms" in label for label in labels)
    assert any(label.startswith(without.label) and "PRF" not in label for label in labels)
    assert any("prf False → True" in c and "prf_terms 10 → 4" in c for c in _captions(at))
    # Each question's "open in inspector" link reproduces the run's config exactly.
    stored = load_run(sample_store.data_dir, with_prf.id)
    for q in stored.questions:
        link = parse_qs(urlparse("inspector?" + "&".join(f"{k}={v}" for k, v in q.inspector.items())).query)
        assert parse_inspector_params(link, RetrievalConfig()).config == stored.config


def test_a_run_stored_before_the_expansion_fields_still_loads(sample_components):
    qset = parse_question_set(sample_question_set_text(), "sample")
    qset = dataclasses.replace(qset, questions=qset.questions[:2])
    run = run_eval(sample_components, qset, RetrievalConfig(candidates=20, reranker="none"))
    data_dir = sample_components.settings.data_dir
    with sqlite3.connect(db_path(data_dir)) as con:
        (config,) = con.execute("SELECT config FROM runs WHERE id = ?", (run.id,)).fetchone()
        old = {k: v for k, v in json.loads(config).items() if "prf" not in k}
        assert len(old) < len(json.loads(config))
        con.execute("UPDATE runs SET config = ? WHERE id = ?", (json.dumps(old), run.id))
    loaded = load_run(data_dir, run.id)
    assert loaded.config == run.config and not loaded.config.prf and not loaded.config.dense_prf


# --- CLI ---------------------------------------------------------------------------------------------------


def test_search_flags_turn_prf_on_and_report_the_words(sample_store):
    expected = _direct(sample_store, PRF)
    runner = CliRunner()
    out = runner.invoke(main, ["search", QUESTION, "--fusion", "rrf", "--reranker", "none", "--prf", "--prf-terms", "6", "--json", "--all"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert data["expansion"] == list(expected.expansion) and data["expansion"]
    sparse = sorted((r for r in data["results"] if r["sparse_rank"] is not None), key=lambda r: r["sparse_rank"])
    assert [r["chunk_id"] for r in sparse] == [c.id for c in expected.ranked("sparse")]  # the expanded query's ranking
    plain = json.loads(runner.invoke(main, ["search", QUESTION, "--fusion", "rrf", "--reranker", "none", "--json"]).stdout)
    assert plain["expansion"] == [] and plain["dense_feedback"] == []
    dense = json.loads(runner.invoke(main, ["search", QUESTION, "--dense-prf", "--dense-prf-docs", "2", "--json"]).stdout)
    assert len(dense["dense_feedback"]) == 2
    text = runner.invoke(main, ["search", QUESTION, "--fusion", "rrf", "--reranker", "none", "--prf", "--prf-terms", "6"])
    assert f"sparse stage: BM25 query expanded with: {', '.join(expected.expansion)}" in text.stderr
    bad = runner.invoke(main, ["search", QUESTION, "--prf-docs", "0"])
    assert bad.exit_code != 0 and "must be a whole number from 1 to 50; got '0'" in bad.output


def test_eval_flags_store_the_expansion_settings(sample_store, tmp_path):
    path = tmp_path / "sample.jsonl"
    path.write_text(sample_question_set_text(), encoding="utf-8")
    args = ["eval", str(path), "--limit", "3", "--reranker", "none", "--prf", "--prf-docs", "2", "--dense-prf", "--fusion", "weighted_rrf", "--dense-weight", "0.3", "--rrf-k", "20"]
    out = CliRunner().invoke(main, [*args, "--json"])
    assert out.exit_code == 0, out.output
    config = json.loads(out.stdout)["config"]
    assert (config["prf"], config["prf_docs"], config["dense_prf"], config["dense_weight"], config["rrf_k"]) == (True, 2, True, 0.3, 20)
    (run,) = list_runs(sample_store.data_dir)
    assert run.config.prf and run.config.dense_prf and run.config.prf_docs == 2
    text = CliRunner().invoke(main, ["eval", str(path), "--limit", "3", "--reranker", "none", "--prf"])
    assert text.exit_code == 0 and "PRF 3 docs, 10 terms" in text.stdout
