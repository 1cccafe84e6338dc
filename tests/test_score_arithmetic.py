"""Score arithmetic (rag/inspect/arithmetic.py): the fused score shown is the one the engine ranked by, term by
term, for DBSF, RRF and weighted RRF; the reranker's parts add up to its score; the chunk above a tracked target
is told with the term that decided; the BM25 terms of the question and each chunk's contributions add up."""

from __future__ import annotations

import dataclasses
import math
import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from retrieval_corpus import KEYWORD_QUESTION, PARAPHRASE_QUESTION, chunk_at, corpus  # noqa: F401 (fixture)

from rag.inspect.arithmetic import fuse_lists, score_arithmetic, versus_above
from rag.inspect.explain import chunk_terms
from rag.inspect.question_terms import no_term_note, question_terms
from rag.retrieval.retrieve import retrieve
from rag.settings.config import RetrievalConfig
from rag.store.base import CollectionModels, FusedQuery, PointData
from rag.store.edge import EdgeStore
from rag.types import SparseVector

DIM, POINTS, VOCAB = 8, 60, 24
FUSIONS = ("rrf", "dbsf", "weighted_rrf")


@pytest.fixture(scope="module")
def random_store(tmp_path_factory):
    """A real embedded Qdrant holding random dense and sparse vectors (no model: the lists are what matter)."""
    rng = np.random.default_rng(7)
    store = EdgeStore(tmp_path_factory.mktemp("fusion") / "qdrant", "fusion")
    store.ensure_collection(CollectionModels("random", DIM, "Qdrant/bm25"))
    points = []
    for i in range(POINTS):
        dense = rng.normal(size=DIM)
        terms = sorted(rng.choice(VOCAB, size=int(rng.integers(1, 6)), replace=False).tolist())
        sparse = SparseVector(tuple(terms), tuple(float(v) for v in rng.uniform(0.2, 2.0, size=len(terms))))
        cid = f"00000000-0000-4000-8000-{i:012d}"
        payload = {"source": "r.md", "heading_path": [], "text": str(i), "status": "active"}
        points.append(PointData(cid, (dense / np.linalg.norm(dense)).tolist(), sparse, payload))
    store.upsert(points)
    store.flush()
    yield store
    store.close()


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    fusion=st.sampled_from(FUSIONS),
    n=st.integers(1, 25),
    k=st.integers(1, 100),
    dense_weight=st.floats(0.0, 1.0),
    seed=st.integers(0, 2**32 - 1),
    query_terms=st.integers(1, 5),
)
def test_fused_terms_add_up_to_the_engines_fused_score(random_store, fusion, n, k, dense_weight, seed, query_terms):
    rng = random.Random(seed)
    dense = np.array([rng.gauss(0, 1) for _ in range(DIM)])
    dense = (dense / np.linalg.norm(dense)).tolist()
    terms = sorted(rng.sample(range(VOCAB), query_terms))
    sparse = SparseVector(tuple(terms), tuple(1.0 for _ in terms))
    dense_hits = random_store.search_dense(dense, n)
    sparse_hits = random_store.search_sparse(sparse, n)
    weights = (dense_weight, 1.0 - dense_weight)
    fused = random_store.search_fused(FusedQuery(dense, sparse, n, 2 * n, fusion, k, weights))
    arithmetic = fuse_lists(
        fusion, [(h.id, h.score) for h in dense_hits], [(h.id, h.score) for h in sparse_hits], k, dense_weight
    )
    assert {h.id for h in fused} == set(arithmetic.terms)  # the same union
    for hit in fused:
        assert arithmetic.computed(hit.id) == pytest.approx(hit.score, rel=1e-5, abs=1e-6), (fusion, hit.id)


def test_rrf_terms_are_one_over_k_plus_rank_minus_one_and_weighted_divide_the_rank():
    dense, sparse = [("a", 0.9), ("b", 0.8)], [("b", 7.0), ("c", 3.0)]
    rrf = fuse_lists("rrf", dense, sparse, 60, 0.5)
    assert rrf.computed("b") == 1 / (60 + 2 - 1) + 1 / (60 + 1 - 1)
    assert [t.formula for t in rrf.terms["b"]] == ["1/(60 + 2 - 1)", "1/(60 + 1 - 1)"]
    assert rrf.terms["c"][0].rank is None and rrf.terms["c"][0].value == 0.0
    weighted = fuse_lists("weighted_rrf", dense, sparse, 60, 0.8)
    assert weighted.computed("a") == pytest.approx(1 / (60 + 1 / 0.8 - 1))
    assert weighted.terms["c"][1].formula == "1/(60 + 2/0.2 - 1)"
    dbsf = fuse_lists("dbsf", dense, [("b", 7.0)], 60, 0.5)
    norm = dbsf.norms[0]
    assert norm.sd == pytest.approx(math.sqrt(((0.9 - 0.85) ** 2 + (0.8 - 0.85) ** 2) / 1))
    assert dbsf.computed("b") == pytest.approx((0.8 - norm.low) / (norm.high - norm.low) + 0.5)  # a list of one: 0.5


@pytest.mark.parametrize("fusion", FUSIONS)
@pytest.mark.parametrize("reranker", ["none", "score-fusion:0.7", "maxsim-fusion", "sentence-maxsim"])
def test_every_row_of_a_real_collection_shows_the_scores_retrieve_ranked_by(corpus, fusion, reranker):
    config = RetrievalConfig(candidates=6, final_k=3, fusion=fusion, reranker=reranker, dense_weight=0.7)
    result = retrieve(corpus, KEYWORD_QUESTION, config)
    arithmetic = score_arithmetic(corpus, result)
    assert set(arithmetic.rows) == {c.id for c in result.candidates}
    for c in result.candidates:
        row = arithmetic.row(c.id)
        if c.fused.score is not None:
            assert row.fused.matches and row.fused.recorded == c.fused.score
            assert row.fused.computed == pytest.approx(c.fused.score, rel=1e-5, abs=1e-6)
        if c.rerank.score is not None:
            assert row.rerank.computed == c.rerank.score  # the parts are what the reranker summed
            assert row.rerank.parts
        data = row.as_dict()
        assert data["fused"]["text"] and data["chunk_id"] == c.id
    if "maxsim" in reranker:  # the sentence it matched is named
        top = arithmetic.row(result.final[0].id).rerank
        assert top.sentence and top.sentence in result.final[0].chunk.chunk.embed_text


def test_the_chunk_above_a_target_is_told_with_the_term_that_decided(corpus):
    config = RetrievalConfig(candidates=8, final_k=8, fusion="rrf", reranker="none")
    result = retrieve(corpus, KEYWORD_QUESTION, config)
    second = result.final[1]
    versus = versus_above(result, score_arithmetic(corpus, result), second.id)
    assert versus.above_id == result.final[0].id and versus.stage == "fused"
    assert versus.above_score == result.final[0].fused.score and versus.target_score == second.fused.score
    gaps = {g.name: g.gap for g in versus.gaps}
    assert set(gaps) == {"dense", "sparse"}
    assert sum(gaps.values()) == pytest.approx(versus.above_score - versus.target_score, abs=1e-6)
    assert versus.decided_by == max(gaps, key=gaps.get) and versus.decided_by in versus.text
    assert versus_above(result, score_arithmetic(corpus, result), result.final[0].id) is None


def test_bm25_contributions_of_every_candidate_add_up_to_its_sparse_score(corpus):
    result = retrieve(corpus, "bake the loaf in a hot oven", RetrievalConfig(candidates=8, fusion="rrf"))
    explained = chunk_terms(corpus, result, [c.id for c in result.candidates])
    ranked = [c for c in result.candidates if c.sparse.score is not None]
    assert ranked
    for c in ranked:
        total = sum(t.contribution for t in explained[c.id].terms)
        assert total == pytest.approx(c.sparse.score, rel=1e-4)


def test_question_terms_carry_the_collections_idf_and_name_the_terms_no_chunk_holds(corpus):
    terms = question_terms(corpus, "Bake the zorblaxite qwxzyt")
    by_word = {t.word: t for t in terms.terms}
    assert set(by_word) == {"bake", "zorblaxite", "qwxzyt"}
    assert ("the", "stop word") in terms.dropped
    assert terms.absent == ("qwxzyt",) and terms.usable and not terms.note
    n = terms.total_chunks
    assert by_word["zorblaxite"].doc_freq == 1
    assert by_word["zorblaxite"].idf == pytest.approx(math.log(1 + (n - 1 + 0.5) / 1.5), rel=1e-4)


@pytest.mark.parametrize("question", ["What is it that they do?", "→ ★ ✓"])
def test_a_question_of_stop_words_or_symbols_is_reported_empty(corpus, question):
    terms = question_terms(corpus, question)
    assert terms.terms == () and not terms.usable
    assert "no term to search" in terms.note and terms.note == no_term_note(corpus, question)
    assert not retrieve(corpus, question).ranked("sparse")  # what the note says: the sparse stage is empty
    assert no_term_note(corpus, PARAPHRASE_QUESTION) == ""
    assert terms.as_dict()["usable"] is False


def test_a_stage_no_reranker_of_its_name_made_shows_no_parts_and_says_why(corpus):
    result = retrieve(corpus, KEYWORD_QUESTION, RetrievalConfig(candidates=6, fusion="rrf", reranker="score-fusion"))
    merged = dataclasses.replace(result, reranker="rrf of 2 searches, each reranked by score-fusion")
    row = score_arithmetic(corpus, merged).row(result.final[0].id)
    assert row.rerank.parts == () and row.rerank.computed is None and row.rerank.matches
    assert "searches combined" in row.rerank.text() and row.fused.matches
