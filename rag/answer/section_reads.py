"""What the answerer reads of a kept section when "one hit per section" folded the rest of it away.

Collapsing keeps a section's best-ranked chunk in the final top k and folds its siblings behind it, so
one long section cannot fill the list. But in a long section (a manual's OPTIONS, a page of examples)
the chunk that ranked the section is often a sibling of the one that answers. `section_reads` hands the
answerer, beside each kept chunk, up to `section_reads - 1` of the chunks collapsed behind it, those the
reranker scored best for the question, while the section's reads stay within SECTION_CONTEXT_CHARS.
Each is a source of its own (its own [S#] and offsets), so a citation still opens its exact span.
Retrieval metrics do not change: the final list is the same; only what the answerer reads grows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rag.retrieval.context import SECTION_CONTEXT_CHARS
from rag.retrieval.result import Candidate, RetrievalResult


@dataclass(frozen=True)
class Read:
    """A chunk handed to the answerer; `for_id` is the kept chunk whose section it was read for (None: a hit)."""

    candidate: Candidate
    for_id: str | None = None


def section_reads(kept: Sequence[Candidate], result: RetrievalResult) -> list[Read]:
    """The kept chunks, each followed by the best-matching chunks collapsed behind it (see the module docstring)."""
    config = result.config
    if config.section_reads <= 1 or not config.collapse or config.context == "section":
        return [Read(c) for c in kept]  # small-to-big already hands over the whole section
    behind: dict[str, list[Candidate]] = {}
    for c in result.candidates:
        if c.collapsed_into and c.rerank.rank is not None:
            behind.setdefault(c.collapsed_into, []).append(c)
    out: list[Read] = []
    for c in kept:
        out.append(Read(c))
        size = len(c.answer_chunk.text)
        for sibling in sorted(behind.get(c.id, ()), key=lambda x: x.rerank.rank)[: config.section_reads - 1]:
            size += len(sibling.answer_chunk.text)
            if size > SECTION_CONTEXT_CHARS:
                break
            out.append(Read(sibling, c.id))
    return out
