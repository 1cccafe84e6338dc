"""Section-level results: one hit per section (collapse) and the section handed to the answerer (small-to-big).

A small real document with one long section cut into several chunks and one short section, ingested
with the real encoders; the question matches the long section's words, so several of its chunks rank
high and crowd the short one out unless hits are collapsed by section.
"""

from __future__ import annotations

import dataclasses

import pytest

from rag.ask.answerer import answer_question
from rag.answer.prompt import render_source
from rag.answer.result import Source
from rag.settings.config import ChunkConfig
from rag.ingest.pipeline import ingest_files
from rag.ingest.loaders.document import load_document
from rag.retrieval.retrieve import retrieve

LONG = " ".join(
    f"Step {i}: the ferry timetable lists departures every hour on weekdays, and the ferry timetable changes on holidays."
    for i in range(12)
)
GUIDE = f"""# Ferry guide

## Timetable

{LONG[:400]}

{LONG[400:800]}

{LONG[800:]}

## Tickets

A ferry ticket for the timetable routes costs four euros; children travel free.
"""


@pytest.fixture
def ferry(components):
    ingest_files(components, [("ferry.md", GUIDE.encode())], ChunkConfig("heading", 450, 0))
    return components


def _config(components, **changes):
    return dataclasses.replace(components.settings.retrieval, **{"reranker": "none", "final_k": 2, "collapse": False, **changes})


QUESTION = "ferry timetable departures on weekdays and holidays and ticket price"


def test_without_collapse_one_section_fills_the_top_k(ferry):
    final = retrieve(ferry, QUESTION, _config(ferry)).final
    assert [c.chunk.chunk.heading_path[-1] for c in final] == ["Timetable", "Timetable"]


def test_collapse_keeps_the_best_chunk_per_section_and_names_the_ones_it_replaced(ferry):
    plain = retrieve(ferry, QUESTION, _config(ferry))
    result = retrieve(ferry, QUESTION, _config(ferry, collapse=True))
    final = result.final
    assert [c.chunk.chunk.heading_path[-1] for c in final] == ["Timetable", "Tickets"]
    assert final[0].id == plain.final[0].id  # the section's best chunk represents it
    folded = [c for c in result.candidates if c.collapsed_into]
    assert folded and all(c.collapsed_into == final[0].id and c.final_rank is None for c in folded)
    # Those that outrank the next section or rank within 2 x k are carried, shown under the section's chunk; one ranked
    # below "Tickets" and deeper stays folded (rag/retrieval/collapse.py).
    carried = sorted((c for c in folded if c.carried), key=lambda c: c.rerank.rank)
    assert carried and all(c.carried_at == 1 and "carried with its section's chunk" in c.movement for c in carried)
    assert all(c.rerank.rank <= 4 or c.rerank.rank < final[1].rerank.rank for c in carried)
    deep = [c for c in folded if not c.carried]
    assert all(c.rerank.rank > 4 and c.rerank.rank > final[1].rerank.rank for c in deep)
    assert all("collapsed: its section ranks as" in c.movement for c in deep)
    assert [c.id for c in result.shown] == [final[0].id, *(c.id for c in carried), final[1].id]
    assert all(not c.collapsed_into for c in result.ranked("rerank"))  # metrics see each section once
    assert folded[0].as_row()["collapsed_into"] == final[0].id


def test_section_context_hands_the_answerer_the_whole_section_at_its_offsets(ferry):
    doc = load_document("ferry.md", GUIDE.encode())
    result = retrieve(ferry, QUESTION, _config(ferry, context="section"))
    top = result.final[0]
    section = top.answer_chunk
    assert top.chunk.chunk.text != section.text and top.chunk.chunk.text in section.text
    assert section.id == top.id and section.heading_path == top.chunk.chunk.heading_path
    # the span of the document holding the three paragraphs of "Timetable": same offsets and words (the
    # whitespace between chunks, which no chunk stores, comes back as newlines of the same length)
    span = doc.text[section.start : section.end]
    assert len(section.text) == len(span) and section.text.split() == span.split()
    assert section.text.startswith(LONG[:30]) and section.text.endswith(LONG[-30:].strip())
    assert "children travel free" not in section.text  # never past the section's end
    # the chunk context leaves the answer's source as it was
    assert retrieve(ferry, QUESTION, _config(ferry)).final[0].answer_chunk == top.chunk.chunk


def test_the_prompt_and_the_offline_answer_use_the_section(ferry):
    config = _config(ferry, context="section", final_k=1)
    answer = answer_question(ferry, "When do ferries leave on weekdays?", config)
    assert not answer.abstained, answer.reason
    section = answer.retrieval.final[0].answer_chunk
    assert all(section.start <= c.start < c.end <= section.end for c in answer.citations)
    rendered = render_source(Source("S1", answer.retrieval.final[0], 1.0))
    assert LONG[-30:].strip() in rendered and LONG[:30] in rendered
