"""Explanations: BM25 terms add up to Qdrant's sparse score; the best sentence is the one nearest the question."""

from __future__ import annotations

import math
import re

import pytest
from retrieval_corpus import KITCHEN, chunk_at, corpus  # noqa: F401 (fixture)

from rag.components import build_components
from rag.settings.config import RetrievalConfig, Settings
from rag.ingest.pipeline import ingest_files
from rag.errors import RagError
from rag.inspect.explain import explain, highlight_markdown
from rag.text.markdown import WORD_JOINER
from rag.retrieval.retrieve import retrieve
from rag.ingest.sentences import sentence_texts
from rag.types import ChunkFilter

QUESTION = "How do I bake the sourdough loaf in the oven?"


def test_sparse_terms_add_up_to_qdrant_score_with_its_idf(corpus):
    target = chunk_at(corpus, "kitchen.md", "Kitchen > Sourdough")
    result = retrieve(corpus, QUESTION, RetrievalConfig(candidates=8, fusion="rrf", reranker="none"))
    qdrant_score = result.get(target.chunk.id).sparse.score
    ex = explain(corpus, QUESTION, target.chunk.id)
    assert ex.sparse.score == pytest.approx(qdrant_score, rel=1e-5)
    assert sum(t.contribution for t in ex.sparse.terms) == pytest.approx(qdrant_score, rel=1e-4)
    assert {t.term for t in ex.sparse.terms} == {"bake", "sourdough", "loaf", "oven"}
    # The IDF is Qdrant's: ln(1 + (N - n + 0.5) / (n + 0.5)) with n counted from the stored vectors.
    records = corpus.store.records(ChunkFilter(include_quarantined=True), with_vectors=True)
    n_total = len(records)
    assert ex.sparse.total_chunks == n_total
    for term in ex.sparse.terms:
        n = sum(1 for r in records if term.index in r.sparse.indices)
        assert term.doc_freq == n
        assert term.idf == pytest.approx(math.log(1 + (n_total - n + 0.5) / (n + 0.5)), rel=1e-4)
        assert term.contribution == pytest.approx(term.query_weight * term.idf * term.doc_weight, rel=1e-6)
    terms = sorted(ex.sparse.terms, key=lambda t: -t.contribution)
    assert list(ex.sparse.terms) == terms
    # "sourdough" is only in the heading line the encoders see, not in the body text.
    by_term = {t.term: t for t in ex.sparse.terms}
    assert not by_term["sourdough"].in_text and by_term["oven"].in_text
    marked = {target.chunk.text[a:b].lower() for a, b in ex.sparse.spans}
    assert marked == {"bake", "loaf", "oven"}


def test_chunk_sharing_no_term_has_zero_sparse_score(corpus):
    target = chunk_at(corpus, "billing.md", "Billing > Refunds")
    ex = explain(corpus, "How can I get my money back?", target.chunk.id)
    assert ex.sparse.score == 0.0 and ex.sparse.terms == ()
    assert set(ex.sparse.missing) >= {"money", "back"}


def test_dense_best_sentence_is_the_nearest_one(corpus):
    target = chunk_at(corpus, "kitchen.md", "Kitchen > Sourdough")
    question = "What is the batch marker?"
    ex = explain(corpus, question, target.chunk.id)
    assert ex.dense.stored
    assert ex.dense.best.text == "The batch marker is zorblaxite."
    direct = float(corpus.dense.encode_documents([ex.dense.best.text])[0] @ corpus.dense.encode_query(question))
    assert ex.dense.best.cosine == pytest.approx(direct, abs=1e-5)
    assert ex.dense.best.cosine == max(s.cosine for s in ex.dense.sentences)
    assert target.chunk.text[ex.dense.best.start : ex.dense.best.end] == ex.dense.best.text
    result = retrieve(corpus, question, RetrievalConfig(candidates=8, fusion="dense", reranker="none"))
    assert ex.dense.score == pytest.approx(result.get(target.chunk.id).dense.score, abs=1e-5)


def test_heading_path_is_scored_as_a_sentence_and_never_highlighted_in_the_text(corpus):
    target = chunk_at(corpus, "kitchen.md", "Kitchen > Sourdough")
    ex = explain(corpus, "kitchen sourdough", target.chunk.id)
    assert [s.text for s in ex.dense.sentences] == sentence_texts(target.chunk)
    heading = ex.dense.sentences[0]
    assert heading.heading and heading.text == "Kitchen > Sourdough"
    assert not any(s.heading for s in ex.dense.sentences[1:])
    assert ex.dense.best is heading  # the question names the section and nothing else
    assert ":blue-background[" not in ex.markdown()


@pytest.fixture(scope="module")
def int8_kitchen(tmp_path_factory):
    """The kitchen document in a collection made with the defaults: int8 sentence vectors."""
    components = build_components(Settings(data_dir=tmp_path_factory.mktemp("int8") / "data"))
    assert components.settings.sentence_pooling == "separate-int8"
    assert not ingest_files(components, [("kitchen.md", KITCHEN.encode())]).errors
    yield components
    components.close()


def test_dense_cosines_are_the_stored_sentence_vectors_the_reranker_read(int8_kitchen):
    """With int8 sentence vectors (the default) a fresh float encoding is not what MaxSim scored:
    the panel must show the stored vectors' cosines, or its "best sentence" disagrees with the rerank."""
    question = "What is the batch marker?"
    target = chunk_at(int8_kitchen, "kitchen.md", "Kitchen > Sourdough")
    result = retrieve(int8_kitchen, question, RetrievalConfig(candidates=8, fusion="dense", reranker="sentence-maxsim:1"))
    ex = explain(int8_kitchen, question, target.chunk.id, result)
    assert ex.dense.stored and ex.dense.best.text == "The batch marker is zorblaxite."
    assert ex.markdown().endswith(":blue-background[The **batch** **marker** is zorblaxite\\.]")
    assert ex.dense.best.cosine == pytest.approx(result.get(target.chunk.id).rerank.score, abs=1e-5)
    (maxsim,) = int8_kitchen.store.search_sentences(result.query.dense_run, 1, ChunkFilter(ids=(target.chunk.id,)))
    assert ex.dense.best.cosine == pytest.approx(maxsim.score, abs=1e-5)
    fresh = float(int8_kitchen.dense.encode_documents([ex.dense.best.text])[0] @ result.query.dense_run)
    assert abs(fresh - ex.dense.best.cosine) > 1e-3  # what the panel showed before: not what was scored


def test_without_stored_sentence_vectors_the_cosines_are_encoded_as_the_reranker_does(tmp_path):
    components = build_components(Settings(data_dir=tmp_path / "data", sentence_vectors=False))
    try:
        assert not ingest_files(components, [("kitchen.md", KITCHEN.encode())]).errors
        question = "What is the batch marker?"
        target = chunk_at(components, "kitchen.md", "Kitchen > Sourdough")
        result = retrieve(components, question, RetrievalConfig(candidates=8, fusion="dense", reranker="sentence-maxsim:1"))
        ex = explain(components, question, target.chunk.id, result)
        assert not ex.dense.stored
        fresh = components.dense.encode_documents(sentence_texts(target.chunk)) @ result.query.dense_run
        assert [s.cosine for s in ex.dense.sentences] == pytest.approx(fresh.tolist(), abs=1e-5)
        assert ex.dense.best.cosine == pytest.approx(result.get(target.chunk.id).rerank.score, abs=1e-5)
    finally:
        components.close()


def test_unknown_chunk_is_a_clear_error(corpus):
    with pytest.raises(RagError, match="no chunk with id"):
        explain(corpus, QUESTION, "00000000-0000-0000-0000-000000000000")


HOSTILE = "Click <script>alert(1)</script> ![x](http://evil.example/a.png) [here](http://e.x) :red[big] $x^2$ # not a heading\n    code? | a | b |\n1. item *em* _u_ `tick` &amp; ~~s~~"


def _unescape(markdown: str) -> str:
    """The text a reader sees: escapes read, highlights and the invisible word joiners (no autolink) gone."""
    text = markdown.replace("  \n", "\n").replace("\u00a0", " ").replace(WORD_JOINER, "")
    text = re.sub(r":blue-background\[((?:\\.|[^\]\\])*)\]", r"\1", text)
    text = text.replace("**", "")
    return re.sub(r"\\(.)", r"\1", text)


def test_highlight_escapes_everything_markdown_could_interpret():
    md = highlight_markdown(HOSTILE, [], None)
    assert _unescape(md) == HOSTILE
    # No unescaped character that could start HTML, a link, an image, a directive, math or emphasis.
    assert not re.search(r"(?<!\\)[<>\[\]!*_`$:&|#~]", md)
    assert "\n    " not in md  # indentation cannot make a code block


def test_highlight_marks_terms_and_sentence_and_keeps_text():
    text = "Refunds take 5 days. Card <b>refunds</b> are [fast]."
    sentence = (21, len(text))
    terms = [(0, 7), (text.index("refunds"), text.index("refunds") + 7)]
    md = highlight_markdown(text, terms, sentence)
    assert md.startswith("**Refunds**")
    assert ":blue-background[" in md and "**refunds**" in md
    assert _unescape(md) == text
    assert "<b>" not in md
