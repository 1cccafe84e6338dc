"""The Eval tab through AppTest: sets (sample, upload, view, delete), a run with verdicts and inspector links,
baseline and comparison. The tab lives on the Ask page; AppTest renders a tab's content whichever is active."""

from __future__ import annotations

import dataclasses
import json
from urllib.parse import parse_qs, urlparse

import pandas as pd
import pytest
from apptest_pages import open_page
from streamlit.testing.v1 import AppTest

from rag.components import build_components
from rag.ingest.pipeline import ingest_files
from rag.settings.config import RetrievalConfig
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
    assert any(f"Run “{run.label}” stored" in s.value.replace("\\", "") for s in at.success)  # named, not by id
    stages = table(at, "ndcg@10")
    assert list(stages["stage"]) == ["dense", "sparse", "hybrid (fused)", "reranked"]
    assert stages.set_index("stage").loc["reranked", "ndcg@10"] == pytest.approx(run.per_stage["rerank"]["ndcg@10"])
    questions = table(at, "verdict")
    row = questions.set_index("id").loc["data-region"]  # its gold ranks 7th; the default k is 5
    assert row["verdict"] == "Ranked below the final k" and pd.isna(row["final rank"])
    link = urlparse(row["inspector"])
    params = {k: v[0] for k, v in parse_qs(link.query).items()}
    assert link.path == "inspector"
    assert params["q"] == "Where is my data stored and how long are backups kept?"
    assert params["collection"] == sample_store.collection  # the link replays on the collection it ran on
    assert (params["fusion"], params["candidates"], params["k"], params["reranker"]) == ("dbsf", "20", "5", RetrievalConfig().reranker)
    stored = next(q for q in load_run(sample_store.data_dir, run.id).questions if q.id == "data-region")
    assert params["track"] == stored.verdict.track and params["track"] in stored.gold_chunks
    charts = at.get("vega_lite_chart")  # metrics per stage; one run is no trend, so its numbers show as metrics
    assert len(charts) == 1 and "hybrid (fused)" in charts[0].proto.spec + str(charts[0].proto.datasets)
    assert [m.label for m in at.metric] == ["ndcg@10 (reranked)", "recall@10 (reranked)"]
    assert at.metric[0].value == f"{run.per_stage['rerank']['ndcg@10']:.3f}"
    # The run is named by its settings, and the name can be edited.
    name = at.text_input(key=f"eval_run_name_{run.id}")
    assert name.value == run.name and "dbsf" in run.name
    name.set_value("first try")
    ok(at.run())
    assert load_run(sample_store.data_dir, run.id).name == "first try"
    assert "first try" in at.selectbox(key="eval_run_id").format_func(run.id)


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
    assert (changes.loc["data-region", "verdict before"], changes.loc["data-region", "verdict after"]) == ("Ranked below the final k", "passed")
    deltas = table(at, "recall@20")
    assert set(deltas["stage"]) == {"dense", "sparse", "hybrid (fused)", "reranked"}
    assert any("final_k 5 → 10" in c.value.replace("\\", "") for c in at.caption)
    assert any("0 wins, 0 losses, 1 verdict change**" in m.value for m in at.markdown)
    assert len(at.get("vega_lite_chart")) >= 2  # with two runs, the trend is drawn


def test_invalid_gold_is_listed_apart_and_questions_without_gold_link_without_tracking(sample_store):
    lines = [
        {"id": "leaf", "question": "Can I get my money back on a monthly plan?", "gold": [{"source": "billing/plans.md", "heading": "refunds"}]},
        {"id": "no-doc", "question": "What does the hardware cost?", "gold": [{"source": "hardware.md", "heading": "Prices"}]},
        {"id": "no-heading", "question": "How do refunds work?", "gold": [{"source": "billing/plans.md", "heading": "Refund policy"}]},
        # Marked unanswerable though the documents answer it: the offline answerer answers, a failure without gold.
        {"id": "answered", "question": "How long does it take for an approved refund to reach my card?", "answerable": False},
    ]
    at = eval_tab()
    at.file_uploader(key="eval_upload").upload("mixed.jsonl", "".join(json.dumps(x) + "\n" for x in lines).encode(), "application/jsonl")
    ok(at.run())
    at.checkbox(key="eval_answers").check()
    at.button(key="eval_start").click()
    ok(at.run())
    (run,) = list_runs(sample_store.data_dir, "mixed")
    assert any("2 questions left out of the metrics" in w.value for w in at.warning)
    invalid = table(at, "why it is invalid").set_index("id")
    assert set(invalid.index) == {"no-doc", "no-heading"}
    assert "document 'hardware.md' is not in the collection" in invalid.loc["no-doc", "why it is invalid"]
    assert "has no heading 'Refund policy'; nearest: 'Billing > Refunds'" in invalid.loc["no-heading", "why it is invalid"]
    assert any("1 of 2 questions failed" in m.value and "Answered but should have abstained (1)" in m.value for m in at.markdown)
    links = [e for e in at.get("page_link") if "inspector" in e.proto.page]
    assert [e.proto.label for e in links] == ["Open in the inspector"]  # the only failure has no gold to track
    assert "track=" not in links[0].proto.query_string and "q=" in links[0].proto.query_string
    stored = {q.id: q for q in load_run(sample_store.data_dir, run.id).questions}
    assert stored["leaf"].gold_chunks and stored["leaf"].verdict is None  # "refunds" names the Billing > Refunds section


def test_a_link_opens_the_ask_page_on_its_eval_tab(sample_store):
    at = open_page("pages/ask.py", timeout=120, tab="Eval")
    ok(at)
    assert at.session_state["tab"] == "Eval" and "Eval" in at.title[0].value
    assert any("[Eval: question sets and runs](ask?tab=Eval&collection=docs)" in m.value for m in at.sidebar.markdown)


def test_a_set_names_the_collection_of_its_last_run_and_warns_on_another(sample_store):
    at = eval_tab()
    at.button(key="eval_load_sample").click()
    ok(at.run())
    assert any(c.value == "This set has never run." for c in at.caption)
    at.number_input(key="eval_candidates").set_value(20)
    at.button(key="eval_start").click()
    ok(at.run())
    (run,) = list_runs(sample_store.data_dir, "sample")
    last = [c.value.replace("\\", "") for c in at.caption if c.value.startswith("Last run:")]
    assert len(last) == 1 and last[0].startswith(f"Last run: “{run.label}” on collection {sample_store.collection}, today ")
    assert not any("last ran on collection" in i.value for i in at.info)
    # The same set opened on another collection (one that exists: a link to a missing one is refused): its last
    # run's numbers are not about this one.
    components = build_components(dataclasses.replace(sample_store, collection="other"))
    assert not ingest_files(components, [("note.md", b"# Note\n\nA short note.\n")]).errors
    components.close()
    other = open_page("pages/ask.py", timeout=120, collection="other")
    ok(other)
    assert other.selectbox(key="eval_set").value == "sample"
    notes = [i.value for i in other.info if "last ran on collection" in i.value]
    assert len(notes) == 1 and f"“{sample_store.collection}”" in notes[0] and "“other”" in notes[0] and run.label in notes[0].replace("\\", "")


def test_offline_answers_are_scored_against_answer_text_gold(sample_store):
    """Both offline answers say their gold answer (the yearly-price question is answered from its table row, issue
    38): the page scores them correct and lists no verdict. The verdict for an answer that cites the gold without
    saying it is checked in tests/test_verdicts.py."""
    plans = [{"source": "billing/plans.md", "heading": "Billing > Plans and prices"}]
    refunds = [{"source": "billing/plans.md", "heading": "Billing > Refunds"}]
    lines = [
        {"id": "team-yearly", "question": "How much does the Team plan cost per member when paying yearly?", "gold": plans, "answer": "| Team | $8 | $80 | Unlimited | 100 GB |"},
        {"id": "monthly", "question": "Can I get my money back on a monthly plan?", "gold": refunds,
         "answer": "Monthly plans are not refunded, but you can cancel at any time and keep access until the end of the month you paid for."},
    ]  # fmt: skip
    at = eval_tab()
    at.file_uploader(key="eval_upload").upload("answers.jsonl", "".join(json.dumps(x) + "\n" for x in lines).encode(), "application/jsonl")
    ok(at.run())
    at.checkbox(key="eval_answers").check()
    at.button(key="eval_start").click()
    ok(at.run())
    (run,) = list_runs(sample_store.data_dir, "answers")
    assert run.answers["answer_correctness"] == 1.0 and run.answers["citation_validity"] == 1.0
    metrics = table(at, "answer metric").set_index("answer metric")["value"]
    assert metrics["answer correctness"] == "1.000" and metrics["faithfulness"].startswith("needs an API key")
    stored = {q.id: q for q in load_run(sample_store.data_dir, run.id).questions}
    assert all(stored[q].verdict is None and stored[q].answer.check.correct for q in ("team-yearly", "monthly"))


def test_the_sample_set_on_another_collection_is_refused_and_says_why(settings):
    """Issue 38, item 7: every question left out is not a stored "nDCG@10 0.000" run."""
    components = build_components(settings)
    assert not ingest_files(components, [("note.md", b"# Note\n\nThe ferry leaves at nine.\n")]).errors
    components.close()
    at = eval_tab()
    at.button(key="eval_load_sample").click()
    ok(at.run())
    at.button(key="eval_start").click()
    at.run()
    assert not at.exception, at.exception
    errors = [e.value.replace("\\", "") for e in at.error]
    assert any(
        e.startswith("nothing stored: all ") and "left out of the metrics" in e and f"collection '{settings.collection}'" in e
        and "Was the set written for another collection?" in e
        for e in errors
    ), errors
    assert list_runs(settings.data_dir) == []
    assert not any("stored: nDCG@10" in s.value for s in at.success)
