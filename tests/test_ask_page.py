"""The Ask page through AppTest: a cited answer with its span opened in place, flags, recent questions, Eval tab."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import parse_qs

from streamlit.testing.v1 import AppTest

from rag.ask.log import AskLog

APP = str(Path(__file__).resolve().parent.parent / "app.py")


def plain(label: str) -> str:
    """A label as shown: the page backslash-escapes Markdown in document-derived labels."""
    return re.sub(r"\\(.)", r"\1", label)


def _ask(at: AppTest, question: str) -> AppTest:
    at.text_input(key="ask_question").input(question)
    next(b for b in at.button if b.label == "Ask").click()
    return at.run()


def _ask_page() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    at.switch_page("pages/ask.py")
    return at.run()


def test_answers_with_cited_span_highlighted_in_its_document(sample_store):
    at = _ask(_ask_page(), "How long does a refund take to reach my card?")
    assert not at.exception
    assert not at.error, [e.value for e in at.error]
    html = [h.proto.body for h in at.get("html")]
    answer = html[0]
    assert "5 to 10 business days" in answer and "[S1]" in answer
    assert any("Answered by **extractive**" in c.value for c in at.caption)
    assert any("quoted from the sources as they are written, not generated" in c.value for c in at.caption)
    # [S1] links to its source's panel, a closed <details> the link opens, with the cited sentence
    # marked inside the Refunds section's text.
    assert '<a href="#ask-source-S1"' in answer
    panels = html[1]
    assert panels.count("<details") == 1 and 'id="ask-source-S1"' in panels.split("<details", 1)[1]
    assert "billing/plans.md › Billing &gt; Refunds" in panels
    assert "<mark" in panels and "Approved refunds" in panels.split("<mark", 1)[1]
    assert "To request a refund" in panels  # surrounding text of the same document, not only the span
    # Sources panel with the rerank columns, and the inspector link carrying question and settings.
    sources = at.dataframe[0].value
    assert {"rerank rank", "rerank score", "dense cosine"} <= set(sources.columns)
    assert (sources.iloc[0]["sent as"], bool(sources.iloc[0]["cited"])) == ("S1", True)
    link = next(p for p in at.get("page_link") if p.proto.label == "Open in inspector")
    params = parse_qs(link.proto.query_string)
    assert link.proto.page == "inspector"
    cfg = sample_store.retrieval
    expected = {"q": "How long does a refund take to reach my card?", "fusion": cfg.fusion, "candidates": str(cfg.candidates), "k": str(cfg.final_k), "reranker": cfg.reranker, "collection": "docs"}
    assert params == {k: [v] for k, v in expected.items()}
    # Logged, and listed under recent questions.
    recent = AskLog.for_settings(sample_store).recent()
    assert recent[0].question == "How long does a refund take to reach my card?"
    (entry,) = [plain(e.label) for e in at.expander if "How long does a refund" in plain(e.label)]
    assert re.search(r" — today \d\d:\d\d( UTC)?$", entry), entry  # not the raw ISO timestamp


def test_demo_view_shows_the_answer_and_its_sources_without_scores_or_tools(sample_store):
    at = _ask_page()
    at.toggle(key="ask_demo").set_value(True).run()
    at = _ask(at, "How long does a refund take to reach my card?")
    assert not at.exception and not at.error
    answer, panels = [h.proto.body for h in at.get("html")]
    assert '<a href="#ask-source-S1"' in answer and 'id="ask-source-S1"' in panels  # citation clicks kept
    assert len(at.dataframe) == 0 and not [c for c in at.caption if "Answered by" in c.value]
    assert not [e for e in at.expander if "question set" in e.label or "How long" in plain(e.label)]
    assert not [p for p in at.get("page_link") if p.proto.label == "Open in inspector"]


def test_empty_collection_points_to_the_documents_page():
    at = _ask_page()
    assert not at.exception
    assert any("has no documents yet" in i.value for i in at.info)
    # Its stable URL path (app.py), on the same collection: a followed link starts a new session.
    assert any("[Go to Documents](documents?collection=docs)" in m.value for m in at.markdown)


def test_off_topic_question_shows_abstention_and_reason(sample_store):
    at = _ask(_ask_page(), "What is the capital of France?")
    assert not at.exception
    assert any("Abstained" in w.value for w in at.warning)
    assert any("dense cosine" in t.value for t in at.text)
    assert AskLog.for_settings(sample_store).recent()[0].abstained


def test_empty_question_is_refused_with_a_message(sample_store):
    at = _ask(_ask_page(), "   ")
    assert not at.exception
    assert any("Type a question" in w.value for w in at.warning)
    assert AskLog.for_settings(sample_store).recent() == []


def test_ask_again_reuses_the_logged_settings(sample_store):
    at = _ask_page()
    at.selectbox(key="ask_fusion").set_value("rrf")
    at.number_input(key="ask_k").set_value(3)
    at = _ask(at, "How long is the password reset link valid?")
    record = AskLog.for_settings(sample_store).recent()[0]
    assert (record.config.fusion, record.config.final_k) == ("rrf", 3)
    at.selectbox(key="ask_fusion").set_value("dbsf")
    at.number_input(key="ask_k").set_value(5)
    at.run()
    at.button(key=f"ask_again_{record.id}").click().run()
    assert not at.exception
    assert at.selectbox(key="ask_fusion").value == "rrf" and at.number_input(key="ask_k").value == 3
    again = AskLog.for_settings(sample_store).recent()[0]
    assert again.id != record.id and again.question == record.question and again.config == record.config


def test_eval_tab_is_rendered(sample_store):
    at = _ask_page()
    assert not at.exception
    assert [t.label for t in at.tabs] == ["Ask", "Eval"]
    # The Eval tab works from here: the sample question set loads and becomes the chosen set.
    at.button(key="eval_load_sample").click()
    at.run()
    assert not at.exception
    assert not any("No question sets yet" in i.value for i in at.info)
    chosen = at.selectbox(key="eval_set")
    assert chosen.options == ["sample"] and chosen.value == "sample"  # stored under its name, and chosen


def test_add_asked_question_to_a_question_set(sample_store):
    from rag.eval.gold import SectionGold
    from rag.eval.qsets import load_question_set

    at = _ask(_ask_page(), "How long does a refund take to reach my card?")
    at.text_input(key="ask_add_set").input("my-questions")
    next(b for b in at.button if b.label == "Add question").click()
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any("Added to my-questions (1 questions)" in s.value.replace("\\", "") for s in at.success)
    qset = load_question_set(sample_store.data_dir, "my-questions")
    (question,) = qset.questions
    assert question.question == "How long does a refund take to reach my card?" and question.answerable
    assert isinstance(question.gold, SectionGold)
    assert ("billing/plans.md", "Billing > Refunds") in {(s.source, s.heading) for s in question.gold.sections}


def test_an_answer_stays_with_its_collection(sample_store):
    """After switching collection, the last answer (its sources, gold picker and inspector link) is not shown as if
    it came from the collection now picked; switching back shows it again."""
    from rag.catalog.collections import for_collection
    from rag.components import build_components
    from rag.ingest.pipeline import ingest_files

    other = build_components(for_collection(sample_store, "ferries"))
    assert not ingest_files(other, [("ferry.md", b"# Ferry\n\n## Tickets\n\nA single ferry ticket costs four euros.\n")]).errors
    other.close()
    at = _ask(_ask_page(), "How long does a refund take to reach my card?")
    assert "5 to 10 business days" in at.get("html")[0].proto.body
    picker = at.sidebar.selectbox(key="ui_collection_picker")
    picker.select("ferries")
    at.run()
    assert not at.exception
    assert not any("business days" in h.proto.body for h in at.get("html"))
    assert not any(p.proto.label == "Open in inspector" for p in at.get("page_link"))
    at.sidebar.selectbox(key="ui_collection_picker").select("docs")
    at.run()
    assert "5 to 10 business days" in at.get("html")[0].proto.body


def test_the_answer_in_the_second_chunk_of_the_first_section_is_a_source_under_its_sections_chunk(settings):
    """Ranked 2nd, behind a chunk of its own section, the answering chunk is carried with it (one hit per section,
    rag/retrieval/collapse.py): listed right under it in Sources and sent to the answerer."""
    from carry_corpus import ANSWER, QUESTION, ingest_guide

    from rag.components import build_components

    components = build_components(settings)
    ingest_guide(components)
    components.close()
    at = _ask(_ask_page(), QUESTION)
    assert not at.exception and not at.error, [e.value for e in at.error]
    sources = at.dataframe[0].value
    assert list(sources["read for"])[:2] == ["", "carried with S1 (outranks the next section)"]
    assert sources.iloc[1]["sent as"] == "S2" and sources.iloc[0]["heading"] == sources.iloc[1]["heading"]
    assert ANSWER in [h.proto.body for h in at.get("html")][1]  # the sources' panels hold its text
