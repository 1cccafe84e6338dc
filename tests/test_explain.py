"""Explanations: BM25 terms add up to Qdrant's sparse score; the best sentence is the one nearest the question."""

from __future__ import annotations

import math
import re

import pytest
from retrieval_corpus import chunk_at, corpus  # noqa: F401 (fixture)

from rag.config import RetrievalConfig
from rag.errors import RagError
from rag.inspect.explain import explain, highlight_markdown
from rag.retrieve import retrieve
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
    assert ex.dense.best.text == "The batch marker is zorblaxite."
    direct = float(corpus.dense.encode_documents([ex.dense.best.text])[0] @ corpus.dense.encode_query(question))
    assert ex.dense.best.cosine == pytest.approx(direct, abs=1e-5)
    assert ex.dense.best.cosine == max(s.cosine for s in ex.dense.sentences)
    assert target.chunk.text[ex.dense.best.start : ex.dense.best.end] == ex.dense.best.text
    result = retrieve(corpus, question, RetrievalConfig(candidates=8, fusion="dense", reranker="none"))
    assert ex.dense.score == pytest.approx(result.get(target.chunk.id).dense.score, abs=1e-5)


def test_unknown_chunk_is_a_clear_error(corpus):
    with pytest.raises(RagError, match="no chunk with id"):
        explain(corpus, QUESTION, "00000000-0000-0000-0000-000000000000")


HOSTILE = "Click <script>alert(1)</script> ![x](http://evil.example/a.png) [here](http://e.x) :red[big] $x^2$ # not a heading\n    code? | a | b |\n1. item *em* _u_ `tick` &amp; ~~s~~"


def _unescape(markdown: str) -> str:
    text = markdown.replace("  \n", "\n").replace("\u00a0", " ")
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
