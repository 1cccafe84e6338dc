"""Issue 40, items 3 and 4 through the pages (AppTest): the inspector says whether it runs what Ask and Eval run, a
question from the Ask log replays with the settings it was answered with (marked where today's differ), and a
tracked target and an Eval verdict each offer their failure report for download."""

from __future__ import annotations

from urllib.parse import parse_qsl

from apptest_pages import open_page
from streamlit.testing.v1 import AppTest

from rag.ask.answerer import answer_question
from rag.ask.log import AskLog
from rag.components import build_components
from rag.eval.qsets import install_sample_set
from rag.eval.runner import run_eval
from rag.eval.verdict_report import verdict_report
from rag.settings.collection_settings import save_collection_settings
from rag.settings.config import RetrievalConfig

QUESTION = "How long does a refund take to reach my card?"
REPORTS = ["Download report (Markdown)", "Download report (JSON)"]


def _plain(text: str) -> str:
    return text.replace("\\", "")


def _ok(at: AppTest) -> AppTest:
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    return at


def _downloads(at: AppTest) -> list[str]:
    return [b.proto.label for b in at.get("download_button") if b.proto.label.startswith("Download report")]


def test_a_question_from_the_ask_log_replays_with_the_settings_it_was_answered_with(sample_store):
    components = build_components(sample_store)
    try:
        answer = answer_question(components, QUESTION, RetrievalConfig(fusion="rrf", final_k=3))
        AskLog.for_settings(sample_store).record(answer, sample_store.collection)
    finally:
        components.close()
    save_collection_settings(sample_store.data_dir, sample_store.collection, {"candidates": 30})  # today's, since
    ask = _ok(open_page("pages/ask.py", timeout=120))
    captions = [_plain(c.value) for c in ask.caption]
    today = "fusion rrf (today: dbsf); candidates 50 (today: 30); final k 3 (today: 5)"
    assert f"Answered with settings that differ from today's: {today}" in captions
    link = next(p for p in ask.get("page_link") if p.proto.label == "Replay in inspector")
    inspector = _ok(open_page("pages/inspector.py", timeout=120, **dict(parse_qsl(link.proto.query_string))))
    assert inspector.selectbox(key="inspector_fusion").value == "rrf"
    assert inspector.number_input(key="inspector_k").value == 3
    assert inspector.number_input(key="inspector_candidates").value == 50  # the answer's, not today's 30
    [replay] = [_plain(i.value) for i in inspector.info if "Replaying" in i.value]
    assert replay.startswith("Replaying the ask of today ") and replay.endswith(
        f"today's stored settings differ in: {today}"
    )
    inspector.number_input(key="inspector_k").set_value(4).run()
    assert "The stage settings have changed since that ask: final k 4 (the ask: 3)" in [
        _plain(c.value) for c in inspector.caption
    ]


def test_the_inspector_says_it_runs_what_ask_runs_until_the_form_changes_a_setting(sample_store):
    at = _ok(open_page("pages/inspector.py", timeout=120, q=QUESTION))
    assert "✓ This page runs what Ask and Eval run for this collection" in [_plain(c.value) for c in at.caption]
    assert not [i for i in at.info if "differs" in i.value]
    at.selectbox(key="inspector_fusion").set_value("rrf").run()
    _ok(at)
    assert [_plain(i.value) for i in at.info if "differs" in i.value] == [
        "This page differs from Ask and Eval in: fusion rrf (Ask: dbsf)"
    ]
    [line] = [_plain(c.value) for c in at.sidebar.caption if c.value.startswith("Retrieval")]
    assert line.startswith("Retrieval on this page: rrf ") and line.endswith(
        " · differs from Ask and Eval in: fusion rrf (Ask: dbsf)"
    )


def test_a_tracked_target_offers_its_report(sample_store):
    components = build_components(sample_store)
    try:
        refunds = next(r.chunk.id for r in components.store.records() if "business days" in r.chunk.text)
    finally:
        components.close()
    at = _ok(open_page("pages/inspector.py", timeout=120, q=QUESTION, k="1", track=refunds))
    assert _downloads(at) == REPORTS


def test_each_eval_verdict_offers_its_report(sample_store):
    components = build_components(sample_store)
    try:
        run = run_eval(components, install_sample_set(sample_store.data_dir), RetrievalConfig(candidates=20))
        failed = next(q for q in run.questions if q.id == "data-region")  # its gold ranks 7th; the default k is 5
        report = verdict_report(components.with_stored_settings(), run, failed).as_json()
    finally:
        components.close()
    assert failed.verdict is not None and failed.verdict.title in report["question"]["came_from"]
    assert report["lost"]["lost_at"] == "final_k" and report["fix"]["verified"] and report["above"]
    assert report["target"]["chunk_id"] == failed.verdict.track
    assert report["settings"]["config"]["candidates"] == 20 and report["settings"]["origins"]["candidates"] == "given"
    at = _ok(open_page("pages/ask.py", timeout=120))
    assert _downloads(at) == []  # made on request: each re-runs its question
    at.button(key=f"eval_report_{run.id}_{failed.id}_make").click()
    _ok(at.run())
    assert _downloads(at) == REPORTS


def test_the_ask_pages_sidebar_follows_its_own_settings_form(sample_store):
    """The Ask page's form changes what the next ask runs; the sidebar's retrieval line then says so."""
    at = _ok(open_page("pages/ask.py", timeout=120))
    at.selectbox(key="ask_fusion").set_value("rrf").run()
    [line] = [_plain(c.value) for c in _ok(at).sidebar.caption if c.value.startswith("Retrieval")]
    assert line.startswith("Retrieval on this page: rrf ")
    assert line.endswith(" · differs from the collection's settings in: fusion rrf (collection: dbsf)")
