"""Answers in a retrieval mode: the mode's final list feeds the same gate, generator and citation check.

Real models and store on the two-hop corpus; Claude (for the mode's steps and, where named, the
answer) over the shared mocked Messages endpoint (real SDK).
"""

from __future__ import annotations

import dataclasses

from anthropic_mock import MockedMessages, blocks, text_block, tool_use
from modes_corpus import OFF_TOPIC_QUESTION, TWO_HOP_QUESTION, heading_of, two_hop  # noqa: F401 (fixture)

from rag.answer.result import Answer
from rag.ask.answerer import answer_question, stream_answer
from rag.ask.log import AskLog
from rag.settings.config import RetrievalConfig
from rag.modes.hyde import HYDE_SYSTEM

MAKER = "Manufacturers > Halberd Instruments"


def test_the_agent_answers_through_the_same_citation_check_and_is_logged(two_hop):
    api = MockedMessages.replying(
        [
            blocks(tool_use("search_docs", {"query": "Vexora scanner maker"}, "toolu_1"), tool_use("search_docs", {"query": "Halberd Instruments faulty units workshop"}, "toolu_2")),
            blocks(text_block("Send it to the workshop in Tampere [S2]. See also [S9]."), stop_reason="end_turn"),
        ]
    )
    items = list(stream_answer(two_hop, TWO_HOP_QUESTION, RetrievalConfig(final_k=3, mode="agent"), client=api.client()))
    text, answer = items
    assert isinstance(answer, Answer) and text == answer.text
    assert (answer.retrieval_mode, answer.mode) == ("agent", "agent") and answer.invented == ("S9",)
    s2 = answer.sources[1]
    assert [c.label for c in answer.citations] == ["S2"] and answer.citations[0].id == s2
    assert answer.mode_result is not None and [label for label, _ in answer.mode_result.searches()] == ["call 1", "call 2"]
    assert answer.as_json()["mode_stages"]["stages"][1]["query"] == "Halberd Instruments faulty units workshop"
    log = AskLog.for_settings(two_hop.settings)
    record = log.get(log.record(answer, two_hop.settings.collection))
    assert record.config.mode == "agent" and record.invented == ("S9",)


def test_claude_writes_the_hyde_passage_and_the_offline_answerer_answers_from_the_fused_list(two_hop):
    api = MockedMessages.replying(["Faulty Vexora scanners go to the workshop of their manufacturer, Halberd Instruments."])
    answer = answer_question(two_hop, TWO_HOP_QUESTION, RetrievalConfig(final_k=3, mode="hyde"), client=api.client())
    (request,) = api.requests
    assert request["system"] == HYDE_SYSTEM
    mr = answer.mode_result
    assert mr.backend == "claude" and mr.hyde.written_by.startswith("Claude") and not mr.hyde.pseudo_document
    assert answer.mode == "extractive" and answer.retrieval is not mr.hyde.first_pass
    assert set(answer.sources) <= {c.id for c in mr.result.final} and answer.retrieval.config.mode == "hyde"
    assert answer.retrieval.reranker.startswith("rrf over 2 searches (question, hyde passage")


def test_corrective_abstention_sends_nothing_to_the_generator(two_hop):
    api = MockedMessages.replying([])  # any generator call would fail the test: nothing is queued
    answer = answer_question(two_hop, OFF_TOPIC_QUESTION, RetrievalConfig(final_k=3, mode="corrective"), generator=api.generator())
    assert api.requests == []
    assert answer.abstained and answer.sources == () and answer.citations == ()
    assert answer.reason.startswith("corrective retrieval abstained: no chunk reached the dense cosine threshold of 0.25 after 4 searches")


def test_multi_hop_answer_reads_the_fused_hops(two_hop):
    plain = answer_question(two_hop, TWO_HOP_QUESTION, RetrievalConfig(final_k=3))
    hopped = answer_question(two_hop, TWO_HOP_QUESTION, RetrievalConfig(final_k=3, mode="multi_hop"))
    assert plain.mode_result is None and plain.retrieval_mode == "plain" and "mode_stages" not in plain.as_json()
    assert hopped.retrieval == hopped.mode_result.result
    final = [heading_of(c) for c in hopped.retrieval.final]
    assert MAKER in final and MAKER not in [heading_of(c) for c in plain.retrieval.final]
    assert dataclasses.asdict(hopped.retrieval.config)["mode"] == "multi_hop"
