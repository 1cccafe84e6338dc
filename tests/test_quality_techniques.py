"""The retrieval-quality techniques of issue 7 behave as designed, on small constructed corpora with the real models."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from rag.components import Components
from rag.settings.config import RetrievalConfig, Settings
from rag.encoders.sparse import FastembedBm25Encoder, collection_avg_len
from rag.errors import ConfigError, EncoderError
from rag.ingest.pipeline import ingest_files
from rag.retrieval.prf import expand_query, rocchio
from rag.retrieval.retrieve import retrieve

# Only "cardio.md" shares words with the question; "infarct.md" talks about the same thing in the
# words of cardio.md's second half, so BM25 alone cannot find it, but feedback from cardio.md can.
CORPUS = {
    "cardio.md": "# Chest pain\n\nSudden chest pain in older smokers. Myocardial infarction troponin elevation.\n",
    "infarct.md": "# Troponin\n\nTroponin elevation confirms myocardial infarction; troponin assays are sensitive.\n",
    "garden.md": "# Roses\n\nPrune roses in early spring and water them weekly.\n",
    "bread.md": "# Sourdough\n\nFeed the starter flour and water, then bake the loaf hot.\n",
}
QUESTION = "sudden chest pain in smokers"


@pytest.fixture
def small(components: Components) -> Components:
    summary = ingest_files(components, ((name, text.encode()) for name, text in CORPUS.items()))
    assert not summary.errors
    return components


def _sources(result, stage: str) -> list[str]:
    return [c.chunk.chunk.source for c in result.ranked(stage)]


def test_prf_adds_feedback_terms_and_finds_a_document_bm25_alone_misses(small: Components) -> None:
    plain = retrieve(small, QUESTION, RetrievalConfig(fusion="sparse", candidates=4))
    expanded = retrieve(small, QUESTION, RetrievalConfig(fusion="sparse", candidates=4, prf=True, prf_docs=1, prf_terms=10))

    assert _sources(plain, "sparse") == ["cardio.md"]
    assert plain.expansion == ()
    assert {"myocardial", "infarction", "troponin"} <= set(expanded.expansion)
    assert not {"sudden", "chest", "pain", "smokers"} & set(expanded.expansion)  # already in the question
    assert _sources(expanded, "sparse")[:2] == ["cardio.md", "infarct.md"]


def test_prf_keeps_the_question_terms_and_caps_the_new_ones(small: Components) -> None:
    sparse = small.sparse
    query = sparse.encode_query(QUESTION)
    feedback = [(CORPUS["cardio.md"], 2.0), (CORPUS["bread.md"], 1.0)]
    out = expand_query(sparse, query, feedback, n_terms=4, weight=0.4)

    n = len(query.indices)
    assert out.vector.indices[:n] == query.indices and out.vector.values[:n] == query.values
    added = dict(zip(out.vector.indices[n:], out.vector.values[n:], strict=True))
    assert len(added) == len(out.terms) == 4
    assert not set(added) & set(query.indices)
    assert max(added.values()) == pytest.approx(0.4) and all(0 < v <= 0.4 for v in added.values())
    # cardio.md has twice the feedback score, so its words outrank bread.md's.
    assert set(out.terms[:2]) <= {"myocardial", "infarction", "troponin", "elevation", "older"}


def test_prf_without_feedback_leaves_the_query_alone(small: Components) -> None:
    query = small.sparse.encode_query(QUESTION)
    assert expand_query(small.sparse, query, [], n_terms=5, weight=0.5).vector == query


def test_avg_len_is_the_mean_bm25_length_of_the_collection() -> None:
    enc = FastembedBm25Encoder()
    texts = ["The cat sat on the mat.", "Dogs bark loudly at night near the river bank."]
    lengths = enc.doc_lengths(texts)
    assert lengths[0] == 3  # the, on: stopwords
    assert collection_avg_len(enc, texts) == pytest.approx(sum(lengths) / 2)
    with pytest.raises(EncoderError, match="empty collection"):
        collection_avg_len(enc, [])


def test_avg_len_normalises_a_document_of_average_length_to_plain_saturation() -> None:
    # With |d| == avg_len, BM25's term weight is tf (k + 1) / (tf + k): 1.0 for a word seen once.
    text = "Quantum tunnelling explains alpha decay in heavy nuclei."
    length = FastembedBm25Encoder().doc_lengths([text])[0]
    at_avg = FastembedBm25Encoder(avg_len=float(length)).encode_documents([text])[0]
    default = FastembedBm25Encoder().encode_documents([text])[0]
    assert len(at_avg.values) == len(default.values) > 0
    assert all(v == pytest.approx(1.0) for v in at_avg.values)
    assert all(v > 1.0 for v in default.values)  # 256 >> this length: short documents are boosted


def test_prf_settings_are_checked_and_read_from_the_environment() -> None:
    with pytest.raises(ConfigError, match=r"PRF term weight \(prf_weight\) must be a number above 0 and at most 1; got 0.0"):
        RetrievalConfig(prf_weight=0.0)
    with pytest.raises(ConfigError, match=r"prf_docs\) must be a whole number from 1 to 50"):
        RetrievalConfig(prf_docs=0)
    settings = Settings.from_env({"RAGSCOPE_PRF": "1", "RAGSCOPE_PRF_TERMS": "7"})
    assert settings.retrieval.prf and settings.retrieval.prf_terms == 7
    assert Settings.from_env({"RAGSCOPE_PRF": "0"}).retrieval.prf is False
    with pytest.raises(ConfigError, match=r"Dense PRF weight \(dense_prf_weight\)"):
        RetrievalConfig(dense_prf_weight=1.5)
    assert Settings.from_env({"RAGSCOPE_DENSE_PRF": "yes", "RAGSCOPE_DENSE_PRF_DOCS": "2"}).retrieval.dense_prf_docs == 2


def test_rocchio_moves_the_question_toward_its_feedback_and_stays_unit_length() -> None:
    rng = np.random.default_rng(0)
    query = rng.normal(size=8).astype(np.float32)
    query /= np.linalg.norm(query)
    feedback = rng.normal(size=(3, 8)).astype(np.float32)
    centroid = feedback.mean(axis=0) / np.linalg.norm(feedback.mean(axis=0))
    moved = rocchio(query, feedback, 0.5)
    further = rocchio(query, feedback, 1.0)
    assert np.linalg.norm(moved) == pytest.approx(1.0, abs=1e-6)
    assert float(query @ centroid) < float(moved @ centroid) < float(further @ centroid)
    assert np.array_equal(rocchio(query, [], 0.5), query)


def test_dense_prf_reruns_the_dense_search_from_the_moved_vector(small: Components) -> None:
    config = RetrievalConfig(fusion="dbsf", candidates=4, reranker="none")
    plain = retrieve(small, "heart attack markers", config)
    moved = retrieve(small, "heart attack markers", dataclasses.replace(config, dense_prf=True, dense_prf_docs=1, dense_prf_weight=1.0))
    top = plain.ranked("fused")[0].id
    # The first fused hit was the feedback: the moved question is closer to it than the question was.
    assert moved.get(top).dense.score > plain.get(top).dense.score
