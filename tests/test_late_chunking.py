"""Sentence vectors pooled from the chunk's own forward pass ("late chunking"), on the real MiniLM."""

from __future__ import annotations

import numpy as np
import pytest

from rag.ingest.chunker import chunk_document
from rag.settings.config import ChunkConfig
from rag.ingest.embed import encode_late
from rag.ingest.loaders.document import load_document
from rag.catalog.sample import sample_files
from rag.ingest.sentences import sentence_spans, sentence_texts
from rag.types import Chunk

FERRY = """# Ferry guide

## Tickets

A single ticket costs four euros at the kiosk. Dogs travel free if they stay on a lead. The upper deck closes when the wind is strong.
"""


@pytest.fixture(scope="module")
def dense(default_dense):
    return default_dense


def _chunks(name: str, text: str) -> list[Chunk]:
    return chunk_document(load_document(name, text.encode()), ChunkConfig())


def test_sentence_spans_point_at_the_sentence_texts_inside_the_embedded_text():
    chunks = [c for name, data in sample_files() for c in chunk_document(load_document(name, data), ChunkConfig())]
    odd = Chunk("x", "notes/a > b.md", ("", "Setup > tips"), 0, 9, "No stops", 0)  # empty title, separators in names
    for chunk in [*chunks, odd]:
        assert [chunk.embed_text[a:b] for a, b in sentence_spans(chunk)] == sentence_texts(chunk)
    assert sentence_texts(odd) == [" > Setup > tips", "No stops"]


def test_chunk_vectors_from_the_pooling_pass_are_the_usual_ones(dense):
    chunks = _chunks("ferry.md", FERRY)
    vectors, _ = encode_late(dense, chunks)
    assert np.allclose(vectors, dense.encode_documents([c.embed_text for c in chunks]), atol=1e-5)


def test_a_question_about_one_sentence_scores_highest_on_that_sentences_pooled_vector(dense):
    (chunk,) = _chunks("ferry.md", FERRY)
    _, (pooled,) = encode_late(dense, [chunk])
    assert pooled.shape == (4, dense.dim)  # the heading path, then three sentences
    assert np.allclose(np.linalg.norm(pooled, axis=1), 1.0, atol=1e-5)
    questions = dense.encode_documents(["how much is a ticket", "can I bring my dog", "is the top deck open in storms"])
    assert list((questions @ pooled.T).argmax(axis=1)) == [1, 2, 3]


def test_sentences_past_the_models_window_are_encoded_on_their_own(dense):
    sentences = [f"Stop number {i} of the harbour line is served every hour." for i in range(60)]  # far over 256 tokens
    chunk = Chunk("x", "line.md", (), 0, 0, " ".join(sentences), 0)
    out = dense.encode_spans([chunk.embed_text], [sentence_spans(chunk)])
    assert out.beyond and out.beyond[-1] == (0, 59) and (0, 0) not in out.beyond
    _, (pooled,) = encode_late(dense, [chunk])
    assert np.allclose(pooled[59], dense.encode_documents([sentences[59]])[0], atol=1e-5)
    assert not np.allclose(pooled[0], dense.encode_documents([sentences[0]])[0], atol=1e-3)  # inside the window: pooled
