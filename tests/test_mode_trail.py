"""Tracking a chunk through a mode's searches: the hop / attempt / call where it appeared or was lost.

Real models and store on the two-hop corpus; the agent's Claude over the mocked Messages endpoint.
"""

from __future__ import annotations

from anthropic_mock import MockedMessages, blocks, text_block, tool_use
from modes_corpus import TWO_HOP_QUESTION, heading_of, two_hop  # noqa: F401 (fixture)

from rag.settings.config import RetrievalConfig
from rag.inspect.mode_trail import mode_trail
from rag.inspect.target import TrackTarget
from rag.inspect.track import track
from rag.modes.run import run_mode
from rag.modes.options import ModeOptions

MAKER = "Manufacturers > Halberd Instruments"
PRODUCT = "Products > Vexora"


def chunk_id(mr, heading: str) -> str:  # noqa: ANN001
    return next(c.id for _, r in mr.searches() for c in r.candidates if heading_of(c) == heading)


def test_multi_hop_trail_names_the_hop_that_found_it_and_the_merge_that_lost_it(two_hop):
    mr = run_mode(two_hop, TWO_HOP_QUESTION, "multi_hop", RetrievalConfig(final_k=2))
    trail = mode_trail(mr, chunk_id(mr, MAKER))
    hop1, hop2, final = trail.sightings
    assert (hop1.search, hop2.search, final.search) == ("hop 1", "hop 2", "final")
    assert hop1.final_rank is None and hop1.note.startswith(("a candidate (rerank rank", "not among its"))
    assert hop2.final_rank == 2 and hop2.query.startswith(f"{TWO_HOP_QUESTION} halberd instruments") and final.final_rank is None
    assert trail.summary == f"appeared in hop 2 (final rank 2), then lost when the searches were combined ({mr.result.reranker})"
    assert not trail.found
    product = mode_trail(mr, chunk_id(mr, PRODUCT))
    assert "its words halberd, instruments" in product.sightings[0].note and product.found
    assert product.summary.startswith("first appeared in hop 1 (final rank 1); final rank 1")


def test_corrective_trail_names_the_grade_and_threshold_that_discarded_it(two_hop):
    mr = run_mode(two_hop, TWO_HOP_QUESTION, "corrective", RetrievalConfig(final_k=3), options=ModeOptions(grade_threshold=0.95))
    trail = mode_trail(mr, chunk_id(mr, PRODUCT))
    first = trail.sightings[0]
    assert first.search == "first pass" and first.final_rank == 1
    assert "(dense cosine) against the threshold 0.95: discarded" in first.note
    assert trail.summary.startswith("appeared in first pass (final rank 1), then the grader discarded it in the first pass (grade 0.")
    assert [s.search for s in trail.sightings] == ["first pass", "retry with PRF", "more candidates", "union fusion", "final"]


def test_agent_trail_names_the_call_and_the_label_claude_saw(two_hop):
    api = MockedMessages.replying(
        [
            blocks(tool_use("search_docs", {"query": "Vexora scanner"}, "toolu_1")),
            blocks(tool_use("search_docs", {"query": "Halberd Instruments workshop"}, "toolu_2")),
            blocks(text_block("Tampere [S4]."), stop_reason="end_turn"),
        ]
    )
    mr = run_mode(two_hop, TWO_HOP_QUESTION, "agent", RetrievalConfig(final_k=3), client=api.client())
    maker = chunk_id(mr, MAKER)
    trail = mode_trail(mr, maker)
    call2 = trail.sightings[1]
    assert call2.search == "call 2" and call2.query == "Halberd Instruments workshop"
    assert f"shown to Claude as {mr.answer.label_of(maker)}" in call2.note
    assert trail.summary.startswith("first appeared in call 2")


def test_track_under_a_mode_carries_the_trail(two_hop):
    config = RetrievalConfig(final_k=2, mode="multi_hop")
    mr = run_mode(two_hop, TWO_HOP_QUESTION, config=config)
    target = TrackTarget(next(c.chunk for c in mr.hops[1].result.candidates if heading_of(c) == MAKER), "heading")
    report = track(two_hop, TWO_HOP_QUESTION, target, config, mode=mr, max_candidates=60)
    assert report.mode is not None and report.mode.summary.startswith("appeared in hop 2")
    assert report.result.question == TWO_HOP_QUESTION  # the stages are the question's own search
    assert track(two_hop, TWO_HOP_QUESTION, target, RetrievalConfig(final_k=2), max_candidates=60).mode is None
