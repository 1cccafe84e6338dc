"""A collection's own settings: stored, refused when damaged, in force for search, ask, eval and every page, reset."""

from __future__ import annotations

import json

import pytest
from anthropic_mock import MockedMessages
from apptest_pages import open_page
from click.testing import CliRunner

from rag.ask.log import AskLog
from rag.cli import main
from rag.errors import ConfigError
from rag.eval.qsets import list_question_sets, load_question_set, sample_question_set_text
from rag.eval.runs import list_runs
from rag.settings.collection_settings import (
    COLLECTION,
    DEFAULT,
    ENVIRONMENT,
    GIVEN,
    in_force,
    load_collection_settings,
    reset_collection_settings,
    save_collection_settings,
    settings_path,
    with_collection_settings,
)
from rag.settings.config import RetrievalConfig, Settings
from rag.store import shared_home

STORED = {"fusion": "rrf", "candidates": 30}


def test_stored_settings_merge_and_win_over_the_environment_but_not_over_a_given_setting(settings):
    configured = settings.with_retrieval(fusion="sparse", final_k=7)  # as RAGSCOPE_FUSION / RAGSCOPE_FINAL_K would
    save_collection_settings(settings.data_dir, settings.collection, {"fusion": "rrf"}, note="by hand")
    save_collection_settings(settings.data_dir, settings.collection, {"candidates": 30})
    assert load_collection_settings(settings.data_dir, settings.collection).values == STORED
    force = in_force(configured, shared_home(configured))
    assert (force.config.fusion, force.config.candidates, force.config.final_k) == ("rrf", 30, 7)
    assert force.origins["fusion"] == COLLECTION and force.origins["final_k"] == ENVIRONMENT
    assert force.origins["reranker"] == DEFAULT
    given = force.given({"fusion": "dense", "candidates": None})
    assert given.config.fusion == "dense" and given.origins["fusion"] == GIVEN and given.origins["candidates"] == COLLECTION
    words = given.describe()
    assert "fusion from given for this call" in words and "candidates from this collection's stored settings" in words
    assert "final_k from the environment" in words
    assert with_collection_settings(configured, shared_home(configured)).retrieval == force.config
    # Another collection is untouched; reset returns this one to the configured settings.
    other_settings = Settings(data_dir=settings.data_dir, collection="other")
    other = in_force(other_settings, shared_home(other_settings))
    assert other.config == RetrievalConfig() and other.stored is None
    assert reset_collection_settings(settings.data_dir, settings.collection)
    assert in_force(configured, shared_home(configured)).config == configured.retrieval
    assert not reset_collection_settings(settings.data_dir, "docs")


def test_bad_values_are_refused_and_a_damaged_file_is_named(settings):
    with pytest.raises(ConfigError, match="Candidates per stage"):
        save_collection_settings(settings.data_dir, settings.collection, {"candidates": 0})
    with pytest.raises(ConfigError, match="unknown retrieval settings"):
        save_collection_settings(settings.data_dir, settings.collection, {"speed": 3})
    assert load_collection_settings(settings.data_dir, settings.collection) is None  # nothing was written
    path = settings_path(settings.data_dir, settings.collection)
    path.parent.mkdir(parents=True)
    path.write_text('{"values": {"fusion": "fastest"}}')
    with pytest.raises(ConfigError, match=f"{path.name}.*reset"):
        in_force(settings, shared_home(settings))
    refused = CliRunner().invoke(main, ["search", "refunds"])
    assert refused.exit_code == 1 and "Traceback" not in refused.output and "fastest" in refused.output
    assert CliRunner().invoke(main, ["settings", "--reset"]).exit_code == 0
    assert not path.exists()


def test_search_ask_and_eval_start_from_them_and_the_run_records_them(sample_store, tmp_path):
    save_collection_settings(sample_store.data_dir, sample_store.collection, STORED, note="tuned")
    shown = CliRunner().invoke(main, ["settings", "--json"])
    assert json.loads(shown.stdout)["origins"]["fusion"] == COLLECTION
    found = CliRunner().invoke(main, ["search", "How long do refunds take?", "--json"])
    assert found.exit_code == 0, found.output
    assert json.loads(found.stdout)["settings"]["config"]["candidates"] == 30
    asked = CliRunner().invoke(main, ["ask", "How long do refunds take?", "--json"])
    assert asked.exit_code == 0, asked.output
    (record,) = AskLog.for_settings(sample_store).recent(1, sample_store.collection)
    assert record.config.fusion == "rrf"
    path = tmp_path / "sample.jsonl"
    path.write_text(sample_question_set_text(), encoding="utf-8")
    ran = CliRunner().invoke(main, ["eval", str(path), "--json", "--fusion", "dbsf"])
    assert ran.exit_code == 0, ran.output
    data = json.loads(ran.stdout)
    assert data["config"]["fusion"] == "dbsf" and data["config"]["candidates"] == 30  # given wins, stored stays
    assert data["models"]["collection settings"].startswith("candidates=30")  # fusion was overridden
    assert "tuned" in data["models"]["collection settings"]


def test_every_page_starts_from_them_and_says_where_they_came_from(sample_store):
    save_collection_settings(sample_store.data_dir, sample_store.collection, STORED)
    for page in ("pages/ask.py", "pages/inspector.py", "pages/documents.py"):
        at = open_page(page, timeout=120)
        assert not at.exception, at.exception
        captions = " ".join(c.value for c in at.sidebar.caption).replace("\\", "")  # shown escaped
        assert "fusion, candidates from this collection's stored settings" in captions, page
    ask = open_page("pages/ask.py", timeout=120)
    assert ask.selectbox(key="ask_fusion").value == "rrf" and ask.number_input(key="ask_candidates").value == 30
    inspector = open_page("pages/inspector.py", timeout=120)
    assert inspector.selectbox(key="inspector_fusion").value == "rrf"


def _mock_sdk(monkeypatch, api: MockedMessages) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    monkeypatch.setattr("rag.answer.anthropic_client.sdk_client", lambda key, timeout, http_client=None: api.client())


def test_eval_tab_generates_then_saves_only_what_the_review_kept(sample_store, monkeypatch):
    failed = ("billing/invoices.md", "Billing > Failed payments")
    retry = "If a card payment fails, we retry it three times over 9 days and email the owners each time."
    body = {"questions": [
        {"source": failed[0], "heading": failed[1], "question": "My card was declined, will you retry?", "answer": retry},
        {"source": "billing/refunds.md", "heading": "Billing > Refunds", "question": "Refund timing?", "answer": "x"},
    ], "near_misses": [{"question": "Can I pay by cheque?"}]}  # fmt: skip
    _mock_sdk(monkeypatch, MockedMessages(lambda request: json.dumps(body)))
    at = open_page("pages/ask.py", timeout=120)
    at.multiselect(key="gen_sources").set_value(["billing/invoices.md"])
    at.number_input(key="gen_sample").set_value(1)
    at.button(key="gen_start").click()
    at.run()
    assert not at.exception, at.exception
    assert list_question_sets(sample_store.data_dir) == []  # nothing is stored before the review
    review = next(df.value for df in at.dataframe if "keep" in df.value.columns)  # the editable review table
    assert list(review["question"]) == ["My card was declined, will you retry?", "Can I pay by cheque?"]
    assert list(review["keep"]) == [True, True]
    dropped = next(df.value for df in at.dataframe if "why dropped" in df.value.columns)
    assert "gold is not in the collection" in dropped.iloc[0]["why dropped"]
    at.text_input(key="gen_set_name").set_value("generated").run()
    at.button(key="gen_save").click()
    at.run()
    assert not at.exception, at.exception
    qset = load_question_set(sample_store.data_dir, "generated")
    assert [q.question for q in qset.questions] == ["My card was declined, will you retry?", "Can I pay by cheque?"]
    assert any("Saved 2 reviewed questions" in s.value for s in at.success)
    assert at.selectbox(key="eval_set").value == "generated"
    assert not list_runs(sample_store.data_dir)  # saving a set runs nothing


def test_eval_tab_without_a_key_explains_and_offers_a_template(sample_store):
    at = open_page("pages/ask.py", timeout=120)
    assert any("With an Anthropic API key" in i.value for i in at.info)
    assert any(b.proto.label.startswith("Download a template") for b in at.get("download_button"))
