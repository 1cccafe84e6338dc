"""The retrieval modes without an API key, on a two-hop corpus with the real models and store."""

from __future__ import annotations

import dataclasses

import pytest
from modes_corpus import OFF_TOPIC_QUESTION, TWO_HOP_QUESTION, heading_of, two_hop  # noqa: F401 (fixture)

from rag.answer.checks import relevance_scores
from rag.settings.config import RetrievalConfig
from rag.errors import QuestionError
from rag.modes.run import ModeUnavailable, mode_unavailable, run_mode
from rag.modes.options import ModeOptions
from rag.modes.multihop import bridge_terms
from rag.retrieval.result import StageScore

CONFIG = RetrievalConfig(final_k=3)
MAKER = "Manufacturers > Halberd Instruments"


def test_multi_hop_bridges_to_the_section_a_single_search_misses(two_hop):
    plain = run_mode(two_hop, TWO_HOP_QUESTION, "plain", CONFIG)
    assert heading_of(plain.result.final[0]) == "Products > Vexora"
    assert MAKER not in [heading_of(c) for c in plain.result.final]

    mr = run_mode(two_hop, TWO_HOP_QUESTION, "multi_hop", CONFIG)
    hop1, hop2 = mr.hops
    assert mr.backend == "offline" and "bridging" in mr.notes[0]
    assert hop1.result.final == plain.result.final and hop1.from_chunk == plain.result.final[0].id
    # The maker's name is carried; words only the Vexora chunk holds ("cradle") are not: they lead nowhere.
    assert hop1.carried[:2] == ("halberd", "instruments") and "cradle" not in hop1.carried
    assert hop2.query == f"{TWO_HOP_QUESTION} {' '.join(hop1.carried)}"
    assert MAKER in [heading_of(c) for c in hop2.result.final]
    assert MAKER in [heading_of(c) for c in mr.result.final]
    maker = next(c for c in mr.result.final if heading_of(c) == MAKER)
    assert mr.where_found(maker.id) == ["hop 2"]


def test_fused_hops_score_by_reciprocal_rank(two_hop):
    mr = run_mode(two_hop, TWO_HOP_QUESTION, "multi_hop", CONFIG)
    k = CONFIG.rrf_k
    for c in mr.result.ranked("rerank"):
        expected = sum(1.0 / (k + h.result.get(c.id).rerank.rank) for h in mr.hops if h.result.get(c.id) and h.result.get(c.id).rerank.rank)
        assert c.rerank.score == pytest.approx(expected)
    assert [c.final_rank for c in mr.result.final] == [1, 2, 3]
    # The question's own dense scores are kept, so the answer gate still compares question-chunk cosines.
    first = mr.hops[0].result
    for c in mr.result.final:
        own = first.get(c.id)
        assert c.dense == (own.dense if own else StageScore())


def test_bridge_terms_skip_words_the_question_has(two_hop):
    plain = run_mode(two_hop, TWO_HOP_QUESTION, "plain", CONFIG)
    best = plain.result.final[0]
    asking_for_it = bridge_terms(two_hop, "Which scanner does Halberd Instruments build?", best, 5, plain.result.filter)
    assert "halberd" not in asking_for_it and "instruments" not in asking_for_it


def test_hyde_offline_searches_with_a_labelled_pseudo_document(two_hop):
    mr = run_mode(two_hop, TWO_HOP_QUESTION, "hyde", CONFIG)
    stage = mr.hyde
    assert stage.pseudo_document and "pseudo-document" in mr.notes[0]
    assert "[S" not in stage.passage
    # The passage is quoted from what the question's own search found.
    assert any(stage.passage.rstrip(".") in c.chunk.chunk.text for c in stage.first_pass.final)
    assert stage.search.question == stage.passage
    assert (stage.search.config.fusion, stage.search.reranker) == ("dense", "none")
    # What the pages say ran: the passage search was not reranked, so "each reranked by" would be false.
    assert mr.result.reranker == f"rrf over 2 searches (question, hyde passage; question reranked by {stage.first_pass.reranker}, hyde passage not reranked)"
    k = CONFIG.rrf_k
    for c in mr.result.ranked("rerank"):
        parts = [r.get(c.id) for r in (stage.first_pass, stage.search)]
        assert c.rerank.score == pytest.approx(sum(1.0 / (k + p.rerank.rank) for p in parts if p and p.rerank.rank))
    assert [label for label, _ in mr.searches()] == ["question", "hyde passage"]


def test_hyde_offline_without_an_answer_keeps_the_question_search(two_hop):
    mr = run_mode(two_hop, OFF_TOPIC_QUESTION, "hyde", CONFIG)
    assert mr.hyde.passage == "" and mr.hyde.search is None
    assert mr.result == mr.hyde.first_pass
    assert any("no hypothetical passage" in n for n in mr.notes)


def test_corrective_offline_keeps_the_chunks_the_gate_would_send(two_hop):
    mr = run_mode(two_hop, TWO_HOP_QUESTION, "corrective", CONFIG)
    (attempt,) = mr.corrective.attempts
    scores, basis = relevance_scores(two_hop, attempt.result)
    assert attempt.basis == basis == "dense cosine" and attempt.threshold == two_hop.settings.answer.min_rerank_score
    assert {g.chunk_id: g.score for g in attempt.grades} == scores
    relevant = [c.id for c in attempt.result.final if scores[c.id] >= attempt.threshold]
    assert 0 < len(relevant) < len(attempt.result.final)  # one chunk graded out
    assert [c.id for c in mr.result.final] == relevant and not mr.abstained
    assert mr.corrective.action.startswith(f"kept the {len(relevant)} relevant of 3")


def test_corrective_offline_tries_every_action_then_abstains(two_hop):
    mr = run_mode(two_hop, OFF_TOPIC_QUESTION, "corrective", CONFIG, options=ModeOptions(wider_candidates=3))
    attempts = mr.corrective.attempts
    assert [a.action for a in attempts] == ["first pass", "retry with PRF", "more candidates", "union fusion"]
    configs = [a.result.config for a in attempts]
    assert [c.prf for c in configs] == [False, True, True, True]
    assert [c.candidates for c in configs] == [50, 50, 150, 150]
    assert [c.fusion for c in configs] == ["dbsf", "dbsf", "dbsf", "union"]
    assert all(g.score < 0.25 and not a.is_relevant(g) for a in attempts for g in a.grades)
    assert mr.abstained and mr.result.final == [] and mr.corrective.action == "abstained"
    assert "threshold of 0.25 after 4 searches" in mr.reason


def test_corrective_skips_actions_that_change_nothing(two_hop):
    already = dataclasses.replace(CONFIG, prf=True, fusion="union")
    mr = run_mode(two_hop, OFF_TOPIC_QUESTION, "corrective", already)
    assert [a.action for a in mr.corrective.attempts] == ["first pass", "more candidates"]


def test_corrective_threshold_is_a_setting(two_hop):
    mr = run_mode(two_hop, TWO_HOP_QUESTION, "corrective", CONFIG, options=ModeOptions(grade_threshold=0.9))
    assert mr.abstained and all(a.threshold == 0.9 for a in mr.corrective.attempts)


def test_agent_is_unavailable_offline_and_says_why(two_hop):
    assert "ANTHROPIC_API_KEY" in mode_unavailable(two_hop.settings, "agent")
    assert mode_unavailable(two_hop.settings, "multi_hop") == ""
    with pytest.raises(ModeUnavailable, match="needs Claude"):
        run_mode(two_hop, TWO_HOP_QUESTION, "agent")
    with pytest.raises(ModeUnavailable, match="mode must be one of"):
        run_mode(two_hop, TWO_HOP_QUESTION, "telepathy")
    with pytest.raises(QuestionError, match="type a question"):
        run_mode(two_hop, "  \n ", "multi_hop")


def test_plain_mode_is_plain_retrieval(two_hop):
    mr = run_mode(two_hop, TWO_HOP_QUESTION, "plain", CONFIG)
    assert mr.notes == () and mr.hops == () and mr.searches() == [("question", mr.result)]
