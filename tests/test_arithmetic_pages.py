"""Issue 40, items 1 and 2, on the pages through AppTest: the inspector shows what BM25 searched and the selected
row's score arithmetic, and a question BM25 has no term of is said to be one on the inspector, Ask and Eval."""

from __future__ import annotations

import json
import re

import pytest
from apptest_pages import open_page
from retrieval_corpus import KEYWORD_QUESTION, ingest_corpus

from rag.components import build_components
from rag.eval.qsets import save_question_set
from rag.retrieval.retrieve import retrieve
from rag.settings.config import RetrievalConfig

STOP_WORDS = "What is it that they do?"
NO_TERM = "The keyword (BM25) search had no term to search"


def warnings(at) -> list[str]:
    """The page's warnings as shown (the page backslash-escapes Markdown in what it did not write)."""
    return [re.sub(r"\\(.)", r"\1", w.value) for w in at.warning]


@pytest.fixture
def ingested(settings):
    components = build_components(settings)
    ingest_corpus(components)
    components.close()
    return settings


def test_the_inspector_shows_what_bm25_searched_and_the_rows_arithmetic(ingested):
    at = open_page("pages/inspector.py", q=KEYWORD_QUESTION, fusion="dbsf", reranker="score-fusion")
    assert not at.exception and not at.error, [e.value for e in at.error]
    terms = next(d.value for d in at.dataframe if list(d.value.columns[:2]) == ["term", "kind"])
    assert "zorblaxite" in list(terms["term"]) and not any(NO_TERM in w for w in warnings(at))
    fused = next(d.value for d in at.dataframe if "arithmetic" in d.value.columns)
    assert list(fused["list"]) == ["dense", "sparse"]
    text = " ".join(m.value for m in at.markdown).replace("\\", "")
    assert "Fused score" in text and "DBSF" in text and "Rerank score" in text and "x chunk cosine" in text
    rerank = next(d.value for d in at.dataframe if "mixed value" in d.value.columns)
    assert list(rerank["part"]) == ["chunk cosine", "BM25"]
    assert any("mean" in c.value and "sd" in c.value for c in at.caption)  # DBSF's normalisation of each list


def test_a_question_of_stop_words_is_said_to_be_one_on_the_inspector_ask_and_eval(ingested):
    at = open_page("pages/inspector.py", q=STOP_WORDS)
    assert not at.exception
    assert any(NO_TERM in w and "they (stop word)" in w for w in warnings(at)), warnings(at)
    ask = open_page("pages/ask.py")
    ask.text_input(key="ask_question").input(STOP_WORDS)
    next(b for b in ask.button if b.label == "Ask").click()
    ask.run()
    assert not ask.exception and any(NO_TERM in w for w in warnings(ask)), warnings(ask)
    rows = [
        {"id": "q1", "question": STOP_WORDS, "answerable": False},
        {"id": "q2", "question": KEYWORD_QUESTION, "answerable": False},
    ]
    save_question_set(ingested.data_dir, "mixed", "\n".join(json.dumps(r) for r in rows))
    ev = open_page("pages/ask.py", tab="Eval")
    assert not ev.exception
    said = [w for w in warnings(ev) if "no term to search" in w]
    assert said and "q1" in said[0] and "q2" not in said[0]


def test_tracking_a_chunk_below_rank_1_shows_the_term_that_put_the_chunk_above_it(settings):
    components = build_components(settings)
    ingest_corpus(components)
    config = RetrievalConfig(candidates=8, final_k=8, fusion="rrf", reranker="none")
    first, second = retrieve(components, KEYWORD_QUESTION, config).final[:2]
    components.close()
    at = open_page(
        "pages/inspector.py", q=KEYWORD_QUESTION, fusion="rrf", reranker="none", candidates="8", k="8", track=second.id
    )
    assert not at.exception and not at.error, [e.value for e in at.error]
    said = next(m.value for m in at.markdown if m.value.startswith("**Why the chunk just above it won**"))
    assert "fused rank 1" in said and "decided by" in said
    gaps = next(d.value for d in at.dataframe if "gap" in d.value.columns)
    assert set(gaps["term"]) == {"dense", "sparse"}
    assert gaps["gap"].sum() == pytest.approx(first.fused.score - second.fused.score, abs=1e-6)
