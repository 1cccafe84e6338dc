"""Parse quality on the pages, through AppTest (issue 40, item 5): the Documents page lists documents by their
flagged chunks per parse signal and shows the flagged chunks' text; the Eval tab names the failed question
whose gold sits in a flagged chunk."""

from __future__ import annotations

import json

import pytest
from apptest_pages import open_page
from parse_pdf import harbour_pdf
from streamlit.testing.v1 import AppTest

from rag.components import build_components
from rag.eval.qsets import save_question_set
from rag.eval.runner import run_eval
from rag.ingest.pipeline import ingest_files
from rag.settings.config import RetrievalConfig

GUIDE = b"# Ferry guide\n\n## Tickets\n\nA single ticket costs four euros.\n"
QUESTIONS = (
    {"id": "blank", "question": "How much is a season ticket?", "gold": "Intentionally left blank"},
    {"id": "address", "question": "When do the ferries run in a gale?", "gold": "proof of address"},
)


@pytest.fixture
def harbour(settings):
    """The handbook PDF and a Markdown guide stored, and a run of two failed questions (k=1) stored, before the
    page opens (the store is closed again so the page can lock it)."""
    components = build_components(settings)
    assert not ingest_files(components, [("harbour.pdf", harbour_pdf()), ("guide.md", GUIDE)]).errors
    qset = save_question_set(settings.data_dir, "harbour", "\n".join(json.dumps(q) for q in QUESTIONS))
    run_eval(components, qset, RetrievalConfig(final_k=1, candidates=20))
    components.close()
    return settings


def _frame(at: AppTest, alt: str):
    (frame,) = [d.value for d in at.dataframe if d.proto.alt == alt]
    return frame


def _ok(at: AppTest) -> AppTest:
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    return at


def test_documents_page_lists_documents_by_parse_signals_and_shows_the_flagged_chunks(harbour):
    at = _ok(open_page("pages/documents.py"))
    table = _frame(at, "Documents by parse signals").set_index("source")
    assert list(table.index) == ["harbour.pdf", "guide.md"]  # most flagged first
    assert table.loc["harbour.pdf", ["flagged", "index", "furniture", "thin_page"]].tolist() == [2, 1, 1, 1]
    assert table.loc["guide.md", "flagged"] == 0
    assert set(table["measured"]) == {"at ingest"}
    assert at.selectbox(key="documents_parse_source").options == ["harbour.pdf"]  # only documents with some
    chunks = _frame(at, "Chunks with parse problems")
    assert list(chunks["heading path"]) == ["Notes", "Index"]
    assert "Intentionally left blank." in chunks["text"].iloc[0]
    assert "page furniture" in chunks["flagged for"].iloc[0]
    at.selectbox(key="documents_parse_signal").set_value("index")
    chunks = _frame(_ok(at.run()), "Chunks with parse problems")
    assert list(chunks["heading path"]) == ["Index"] and chunks["flagged for"].iloc[0] == "index or contents lines"


def test_eval_tab_names_the_failed_question_whose_gold_sits_in_a_flagged_chunk(harbour):
    at = _ok(open_page("pages/ask.py", timeout=120))
    assert at.selectbox(key="eval_set").value == "harbour"
    assert any("1 failed question with gold in chunks with parse problems" in w.value for w in at.warning)
    (frame,) = [d.value for d in at.dataframe if "parse problems" in d.value.columns]
    assert list(frame["id"]) == ["blank"]
    assert "page furniture" in frame["parse problems"].iloc[0]
    assert any("Parse problems: gold chunk" in t.value for t in at.text)  # in the question's own verdict too
