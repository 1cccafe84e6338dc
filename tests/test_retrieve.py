"""retrieve(): per-stage ranks and scores on a corpus whose order is known by construction (real models, real Qdrant)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from counting import CountingDense
from retrieval_corpus import KEYWORD_QUESTION, PARAPHRASE_QUESTION, chunk_at, corpus  # noqa: F401 (fixture)

from rag.components import build_components
from rag.settings.config import RetrievalConfig
from rag.errors import ConfigError
from rag.catalog.documents import set_quarantine
from rag.ingest.pipeline import ingest_files
from rag.retrieval.rerank import clear_sentence_cache
from rag.retrieval.retrieve import retrieve
from rag.catalog.sample import sample_files
from rag.ingest.sentences import sentence_texts
from rag.types import ChunkFilter



def test_exact_keyword_only_bm25_finds(corpus):
    target = chunk_at(corpus, "kitchen.md", "Kitchen > Sourdough")
    result = retrieve(corpus, KEYWORD_QUESTION, RetrievalConfig(candidates=3, final_k=3, fusion="rrf", reranker="none"))
    mine = result.get(target.chunk.id)
    # Only one chunk holds the made-up word, so the sparse list is exactly that chunk.
    assert [c.id for c in result.ranked("sparse")] == [target.chunk.id]
    assert mine.sparse.rank == 1 and mine.sparse.score > 0
    # Dense prefers the three "What is <name>?" entries.
    dense = result.ranked("dense")
    assert len(dense) == 3 and mine.dense.rank is None
    assert {c.chunk.chunk.heading for c in dense} == {"Gadgets > What is Vexora?", "Gadgets > What is Lumiq?", "Gadgets > What is Corvan?"}
    # RRF in Qdrant: 1 / (k + rank - 1); the sparse #1 ties with the dense #1 and so reaches the top 2.
    assert mine.fused.score == pytest.approx(1 / 60, rel=1e-5)
    assert mine.fused.rank in (1, 2) and mine.final_rank in (1, 2)
    assert result.reranker == "none"


def test_paraphrase_only_dense_finds(corpus):
    target = chunk_at(corpus, "billing.md", "Billing > Refunds")
    result = retrieve(corpus, PARAPHRASE_QUESTION, RetrievalConfig(candidates=3, final_k=3, fusion="dense", reranker="none"))
    mine = result.get(target.chunk.id)
    assert mine.dense.rank == 1
    assert mine.sparse.rank is None  # it shares no word with the question
    sparse_headings = {c.chunk.chunk.heading for c in result.ranked("sparse")}
    assert {"Billing > Payment methods", "Billing > Backups"} <= sparse_headings
    assert mine.fused.rank == 1 and mine.final_rank == 1  # dense-only fusion keeps the dense order


def test_rrf_and_weighted_rrf_scores_follow_qdrant_formulas(corpus):
    k = 10
    plain = retrieve(corpus, PARAPHRASE_QUESTION, RetrievalConfig(candidates=4, final_k=4, fusion="rrf", rrf_k=k, reranker="none"))
    for c in plain.ranked("fused"):
        expected = sum(1 / (k + s.rank - 1) for s in (c.dense, c.sparse) if s.rank is not None)
        assert c.fused.score == pytest.approx(expected, rel=1e-5)
    w = 0.8
    weighted = retrieve(corpus, PARAPHRASE_QUESTION, RetrievalConfig(candidates=4, final_k=4, fusion="weighted_rrf", rrf_k=k, dense_weight=w, reranker="none"))
    for c in weighted.ranked("fused"):
        # Qdrant's weighted RRF divides the rank by the weight: 1 / (k + rank / w - 1).
        parts = [(c.dense, w), (c.sparse, 1 - w)]
        expected = sum(1 / (k + s.rank / wt - 1) for s, wt in parts if s.rank is not None and wt > 0)
        assert c.fused.score == pytest.approx(expected, rel=1e-5)
    scores = [c.fused.score for c in weighted.ranked("fused")]
    assert scores == sorted(scores, reverse=True)


def test_dbsf_and_union_fusions(corpus):
    dbsf = retrieve(corpus, PARAPHRASE_QUESTION, RetrievalConfig(candidates=3, final_k=3, fusion="dbsf", reranker="none"))
    # Qdrant's DBSF: each list's scores mapped by (s - (mean - 3 sd)) / (6 sd) (sample sd), then summed per chunk.
    norms = {}
    for stage in ("dense", "sparse"):
        scores = np.array([getattr(c, stage).score for c in dbsf.ranked(stage)])
        low, width = scores.mean() - 3 * scores.std(ddof=1), 6 * scores.std(ddof=1)
        norms[stage] = {c.id: (getattr(c, stage).score - low) / width for c in dbsf.ranked(stage)}
    expected = {cid: norms["dense"].get(cid, 0.0) + norms["sparse"].get(cid, 0.0) for cid in norms["dense"] | norms["sparse"]}
    fused = dbsf.ranked("fused")
    assert [c.id for c in fused] == sorted(expected, key=expected.get, reverse=True)[: len(fused)]
    for c in fused:
        assert c.fused.score == pytest.approx(expected[c.id], rel=1e-4)
    union = retrieve(corpus, PARAPHRASE_QUESTION, RetrievalConfig(candidates=3, final_k=10, fusion="union", reranker="none"))
    found = {c.id for c in union.ranked("dense")} | {c.id for c in union.ranked("sparse")}
    # Union cuts nothing before the reranker: every chunk either list found is reranked.
    assert {c.id for c in union.ranked("rerank")} == found
    assert len(union.ranked("fused")) == len(found) > 3


def test_no_reranker_keeps_fused_scores_and_min_score_cuts_them(corpus):
    result = retrieve(corpus, PARAPHRASE_QUESTION, RetrievalConfig(candidates=4, final_k=4, fusion="dbsf", reranker="none"))
    for c in result.ranked("fused"):
        assert (c.rerank.rank, c.rerank.score) == (c.fused.rank, c.fused.score)
    fused = [c.fused.score for c in result.ranked("fused")]
    cut = (fused[1] + fused[2]) / 2
    kept = retrieve(corpus, PARAPHRASE_QUESTION, RetrievalConfig(candidates=4, final_k=4, fusion="dbsf", reranker="none", min_score=cut))
    assert [c.rerank.score for c in kept.final] == fused[:2]


def test_dense_cosine_reranker_rescores_with_stored_vectors(corpus):
    result = retrieve(corpus, PARAPHRASE_QUESTION, RetrievalConfig(candidates=3, final_k=5, fusion="union", reranker="dense-cosine"))
    assert result.reranker == "dense-cosine"
    for c in result.ranked("rerank"):
        if c.dense.rank is not None:
            assert c.rerank.score == pytest.approx(c.dense.score, abs=1e-5)
    # A chunk only the sparse list found still gets its real cosine (not 0, not missing).
    sparse_only = [c for c in result.ranked("rerank") if c.dense.rank is None]
    assert sparse_only and all(c.rerank.score != 0.0 for c in sparse_only)
    assert result.final[0].chunk.chunk.heading == "Billing > Refunds"


def test_score_fusion_reranker_mixes_normalised_scores(corpus):
    result = retrieve(corpus, PARAPHRASE_QUESTION, RetrievalConfig(candidates=3, final_k=5, fusion="union", reranker="score-fusion:1"))
    # With the whole weight on dense, the order is the dense cosine order over the union.
    reranked = result.ranked("rerank")
    assert reranked[0].chunk.chunk.heading == "Billing > Refunds" and reranked[0].rerank.score == pytest.approx(1.0)
    assert reranked[-1].rerank.score == pytest.approx(0.0)
    sparse_side = retrieve(corpus, PARAPHRASE_QUESTION, RetrievalConfig(candidates=3, final_k=5, fusion="union", reranker="score-fusion:0"))
    assert sparse_side.get(reranked[0].id).rerank.score == pytest.approx(0.0)  # Refunds has no BM25 score


def test_sentence_maxsim_reranker_takes_best_sentence(corpus):
    result = retrieve(corpus, "Which shipping boxes can be scanned?", RetrievalConfig(candidates=3, final_k=3, fusion="dense", reranker="sentence-maxsim:1"))
    query = corpus.dense.encode_query("Which shipping boxes can be scanned?")
    ranked = result.ranked("rerank")
    assert len(ranked) == 3
    for c in ranked:  # the best of the chunk's heading path and its sentences
        assert c.rerank.score == pytest.approx(float(np.max(corpus.dense.encode_documents(sentence_texts(c.chunk.chunk)) @ query)), abs=1e-5)


def test_filters_are_applied_inside_qdrant(corpus):
    # Unfiltered, the refund question's top 2 come from billing; a post-filter would leave nothing.
    flt = ChunkFilter(sources=("kitchen.md",))
    result = retrieve(corpus, PARAPHRASE_QUESTION, RetrievalConfig(candidates=2, final_k=2, fusion="dense", reranker="none"), flt)
    assert len(result.ranked("dense")) == 2
    assert {c.chunk.chunk.source for c in result.candidates} == {"kitchen.md"}
    assert result.filter == flt
    tagged = retrieve(corpus, PARAPHRASE_QUESTION, RetrievalConfig(candidates=2, final_k=2, fusion="rrf", reranker="none"), ChunkFilter(tags=("hardware",)))
    assert len(tagged.ranked("dense")) == 2
    assert {c.chunk.chunk.source for c in tagged.candidates} == {"gadgets.md"}


def test_quarantined_chunk_is_never_returned(corpus):
    target = chunk_at(corpus, "billing.md", "Billing > Refunds")
    set_quarantine(corpus, [target.chunk.id], True)
    try:
        result = retrieve(corpus, PARAPHRASE_QUESTION, RetrievalConfig(candidates=8, final_k=8, fusion="union", reranker="none"))
        assert result.get(target.chunk.id) is None
    finally:
        set_quarantine(corpus, [target.chunk.id], False)


def test_unknown_reranker_is_a_clear_error(corpus):
    with pytest.raises(ConfigError, match="unknown reranker"):
        retrieve(corpus, "x", RetrievalConfig(reranker="magic"))
    with pytest.raises(ConfigError, match="between 0 and 1"):
        retrieve(corpus, "x", RetrievalConfig(reranker="sentence-maxsim:2"))


def test_movement_shows_rank_path(corpus):
    result = retrieve(corpus, PARAPHRASE_QUESTION, RetrievalConfig(candidates=3, final_k=5, fusion="union", reranker="dense-cosine"))
    refunds = next(c for c in result.candidates if c.chunk.chunk.heading == "Billing > Refunds")
    assert refunds.movement.startswith(f"D1 S– → F{refunds.fused.rank} → R1")
    assert refunds.movement.endswith(f"▲{refunds.fused.rank - 1}" if refunds.fused.rank > 1 else "=")


def test_maxsim_fusion_mixes_sentence_side_with_bm25(corpus):
    question = "Which shipping boxes can be scanned?"
    config = RetrievalConfig(candidates=3, final_k=5, fusion="union", reranker="maxsim-fusion:1")
    sentence_only = retrieve(corpus, question, dataclasses.replace(config, reranker="sentence-maxsim"))
    mixed = retrieve(corpus, question, config)
    # With the whole weight on the dense side, its order is sentence-maxsim's order.
    assert [c.id for c in mixed.ranked("rerank")] == [c.id for c in sentence_only.ranked("rerank")]
    assert mixed.ranked("rerank")[0].rerank.score == pytest.approx(1.0)
    # With none on it, both fusions are the same min-max BM25 scores.
    bm25_a = retrieve(corpus, question, dataclasses.replace(config, reranker="maxsim-fusion:0"))
    bm25_b = retrieve(corpus, question, dataclasses.replace(config, reranker="score-fusion:0"))
    assert {c.id: c.rerank.score for c in bm25_a.ranked("rerank")} == pytest.approx({c.id: c.rerank.score for c in bm25_b.ranked("rerank")})


SAMPLE_QUESTIONS = (
    "How long does it take for an approved refund to reach my card?",
    "Can I get my money back on a monthly plan?",
    "How do I turn on two-factor authentication?",
)


def test_rrf_ties_are_ordered_by_chunk_id_so_every_run_ranks_alike(sample_components):
    """A chunk at rank r of one list only ties with one at rank r of the other list only; the engine
    ordered such ties differently in each process, so an eval run could not be repeated."""
    config = RetrievalConfig(candidates=8, final_k=8, fusion="rrf", reranker="none", collapse=False)
    tied = 0
    for question in SAMPLE_QUESTIONS:
        fused = retrieve(sample_components, question, config).ranked("fused")
        assert len(fused) == 8  # the whole union is fetched, then cut to the configured candidates
        keys = [(-c.fused.score, c.id) for c in fused]
        assert keys == sorted(keys)
        tied += sum(1 for a, b in zip(fused, fused[1:]) if a.fused.score == b.fused.score)
    assert tied >= 3  # the witness: these questions do tie


def test_stored_sentence_vectors_rescore_like_query_time_encoding_without_encoding(sample_components, settings):
    """Stored float sentence vectors (MaxSim in Qdrant) and the fallback's per-question encoding give the
    same scores and order; int8 ones (the default) come within a few hundredths; the stored paths never
    ask the encoder for a document text."""
    int8 = dataclasses.replace(sample_components, dense=CountingDense(sample_components.dense))
    made = [build_components(dataclasses.replace(settings, collection=name, **change)) for name, change in (("plain", {"sentence_vectors": False}), ("float", {"sentence_pooling": "separate"}))]
    try:
        for comps in made:
            assert not ingest_files(comps, sample_files()).errors
        plain, stored = (dataclasses.replace(c, dense=CountingDense(c.dense)) for c in made)
        assert int8.store.collection_models().sentence_pooling == "separate-int8" and stored.store.collection_models().sentence_pooling == "separate"
        assert not plain.store.collection_models().sentence_vectors
        for reranker in ("sentence-maxsim", "maxsim-fusion:0.6"):
            for question in SAMPLE_QUESTIONS:
                config = RetrievalConfig(reranker=reranker)
                clear_sentence_cache()  # a new question for every path
                from_store, quantised, encoded = (retrieve(c, question, config) for c in (stored, int8, plain))
                assert [c.id for c in from_store.ranked("rerank")] == [c.id for c in encoded.ranked("rerank")]
                expected = {c.id: c.rerank.score for c in encoded.ranked("rerank")}
                assert {c.id: c.rerank.score for c in from_store.ranked("rerank")} == pytest.approx(expected, abs=1e-4)
                if reranker == "sentence-maxsim":  # raw cosines (maxsim-fusion rescales them over the candidates)
                    assert {c.id: c.rerank.score for c in quantised.ranked("rerank")} == pytest.approx(expected, abs=0.03)
        assert stored.dense.calls == [] and int8.dense.calls == []
        assert plain.dense.calls  # the witness works: the fallback did encode the candidates' sentences
    finally:
        for comps in made:
            comps.close()
