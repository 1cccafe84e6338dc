"""A generation checked against the sources it was given, assembled into the Answer every page shows.

Used by the front door (rag.ask) and by the agent mode, which writes and checks its own answer.
"""

from __future__ import annotations

import time

from rag.answer.checks import Gate, check_answer
from rag.answer.citations import inert_markers
from rag.answer.generator import Generator
from rag.answer.prompt import NOT_IN_SOURCES
from rag.answer.result import Answer, Citation, Generation
from rag.retrieval.result import RetrievalResult


def build_answer(
    question: str, result: RetrievalResult, checked: Gate, generator: Generator, generation: Generation, t0: float
) -> Answer:
    """Run the citation check on a generation and assemble the Answer."""
    sent = tuple(s.id for s in checked.sources)
    check = check_answer(generation.text, sent, [s.candidate.answer_chunk.text for s in checked.sources])
    abstained = bool(generation.abstain_reason) or check.abstained
    reason = generation.abstain_reason or (
        f"the generator found no answer in the {len(sent)} sources sent (it replied {NOT_IN_SOURCES})"
        if check.abstained
        else ""
    )
    by_id = {s.id: s for s in checked.sources}
    citations: list[Citation] = []
    for cid in () if abstained else check.cited:
        source = by_id[cid]
        chunk = source.candidate.chunk.chunk
        for start, end in generation.spans.get(source.label) or ((chunk.start, chunk.end),):
            citations.append(Citation(cid, chunk.source, chunk.heading, start, end, chunk.page, source.label))
    return Answer(
        question=question,
        # A forged marker stays visible, but as `(S2)`: never shown or counted as a citation.
        text=NOT_IN_SOURCES if abstained else inert_markers(generation.text, list(check.forged)),
        citations=tuple(citations),
        abstained=abstained,
        reason=reason,
        mode=generator.mode,
        sources=sent,
        invented=() if abstained else check.invented,
        uncited_sentences=() if abstained else check.uncited_sentences,
        retrieval=result,
        latency_ms=round((time.perf_counter() - t0) * 1000, 1),
        model=generation.model,
        relevance=checked.relevance,
        relevance_basis=checked.basis,
    )
