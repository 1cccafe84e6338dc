"""The Eval tab through AppTest: sets (sample, upload, view, delete), a run with verdicts and inspector links,
baseline and comparison. The tab lives on the Ask page; AppTest renders a tab's content whichever is active."""

from __future__ import annotations

import json
from urllib.parse import parse_qs, urlparse

import pandas as pd
import pytest
from apptest_pages import open_page
from streamlit.testing.v1 import AppTest

from rag.config import RetrievalConfig
from rag.eval.qsets import list_question_sets
from rag.eval.runs import list_runs, load_run


def eval_tab() -> AppTest:
    return open_page("pages/ask.py", timeout=120)


def table(at: AppTest, column: str):
    """The first dataframe on the page that has `column`."""
    return next(df.value for df in at.dataframe if column in df.value.columns)


def ok(at: AppTest) -> AppTest:
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    return at


def test_sample_set_run_verdicts_and_inspector_links(sample_store):
    at = eval_tab()
    assert any("No question sets yet" in i.value for i in at.info)
    at.button(key="eval_load_sample").click()
    ok(at.run())
    assert at.selectbox(key="eval_set").value == "sample"
    assert len(table(at, "answerable")) == 20
    at.number_input(key="eval_candidates").set_value(20)
    at.button(key="eval_start").click()
    ok(at.run())
    (run,) = list_runs(sample_store.data_dir, "sample")
    assert any(run.id in s.value for s in at.success)
    stages = table(at, "ndcg@10")
    assert list(stages["stage"]) == ["dense", "sparse", "hybrid (fused)", "reranked"]
    assert stages.set_index("stage").loc["reranked", "ndcg@10"] == pytest.approx(run.per_stage["rerank"]["ndcg@10"])
    questions = table(at, "verdict")
    row = questions.set_index("id").loc["data-region"]  # its gold ranks 7th; the default k is 5
    assert row["verdict"] == "Cut by threshold or k" and pd.isna(row["final rank"])
    link = urlparse(row["inspector"])
    params = {k: v[0] for k, v in parse_qs(link.query).items()}
    assert link.path == "inspector"
    assert params["q"] == "Where is my data stored and how long are backups kept?"
    assert params["collection"] == sample_store.collection  # the link replays on the collection it ran on
    assert (params["fusion"], params["candidates"], params["k"], params["reranker"]) == ("dbsf", "20", "5", RetrievalConfig().reranker)
    stored = next(q for q in load_run(sample_store.data_dir, run.id).questions if q.id == "data-region")
    assert params["track"] == stored.verdict.track and params["track"] in stored.gold_chunks
    charts = at.get("vega_lite_chart")  # metrics per stage, then the per-run trend
    assert len(charts) >= 2 and "hybrid (fused)" in charts[0].proto.spec + str(charts[0].proto.datasets)


def test_upload_refuses_a_malformed_set_and_stores_a_good_one(sample_store):
    at = eval_tab()
    at.file_uploader(key="eval_upload").upload("broken set.jsonl", b'{"question": "a", "gold": "x"}\n{"question": \n', "application/jsonl")
    at.run()
    assert any("line 2" in e.value for e in at.error)
    assert list_question_sets(sample_store.data_dir) == []
    hostile = {"question": "<img src=x onerror=alert(1)> **bold** refund?", "gold": "5 to 10 business days"}
    good = json.dumps(hostile) + "\n" + json.dumps({"question": "Do you sell hardware?", "answerable": False}) + "\n"
    at.file_uploader(key="eval_upload").upload("my set.jsonl", good.encode(), "application/jsonl")
    ok(at.run())
    assert list_question_sets(sample_store.data_dir) == ["my-set"]
    assert at.selectbox(key="eval_set").value == "my-set"
    assert list(table(at, "answerable")["question"])[0] == hostile["question"]  # shown as data, verbatim
    # The question never reaches Markdown or HTML unescaped.
    for element in [*at.markdown, *at.caption, *at.get("html")]:
        assert "<img" not in str(getattr(element, "value", "")) and "**bold**" not in str(getattr(element, "value", ""))
    at.button(key="eval_delete_set").click()
    at.run()
    assert list_question_sets(sample_store.data_dir) == []


def test_compare_two_runs_and_mark_baseline(sample_store):
    at = eval_tab()
    at.button(key="eval_load_sample").click()
    at.run()
    at.button(key="eval_start").click()
    ok(at.run())
    first = list_runs(sample_store.data_dir, "sample")[0].id
    at.button(key="eval_mark_baseline").click()
    ok(at.run())
    assert [r.id for r in list_runs(sample_store.data_dir) if r.baseline] == [first]
    at.number_input(key="eval_k").set_value(10)
    at.button(key="eval_start").click()
    ok(at.run())
    second = list_runs(sample_store.data_dir, "sample")[0].id
    assert second != first and at.selectbox(key="eval_run_id").value == second
    assert at.selectbox(key="eval_compare_with").value == first  # the baseline by default
    changes = table(at, "verdict before").set_index("id")
    assert (changes.loc["data-region", "verdict before"], changes.loc["data-region", "verdict after"]) == ("Cut by threshold or k", "passed")
    deltas = table(at, "recall@20")
    assert set(deltas["stage"]) == {"dense", "sparse", "hybrid (fused)", "reranked"}
    assert any("final_k 5 → 10" in c.value.replace("\\", "") for c in at.caption)
