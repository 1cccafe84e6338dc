"""What the answerer reads of a kept section: the chunks it carries, topped up by its best-matching siblings.

Collapsing keeps a section's best-ranked chunk in the final top k and folds its siblings behind it, so
one long section cannot fill the list. The siblings that outrank the next section are carried with it
(rag/retrieval/collapse.py): they are part of the final list as shown, so the answerer always reads them.
In a long section (a manual's OPTIONS, a page of examples) the chunk that answers may rank lower still,
so `section_reads` tops the section up: it reads at least `section_reads - 1` siblings, those the
reranker scored best, while the section's reads stay within SECTION_CONTEXT_CHARS. One rule serves
both, since the carried chunks are the section's best-ranked siblings: read the best
max(carried, section_reads - 1) of them. Each is a source of its own (its own [S#] and offsets), so a
citation still opens its exact span.
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
    """The kept chunks, each followed by the siblings read with it (see the module docstring)."""
    config = result.config
    if not config.collapse or config.context == "section":
        return [Read(c) for c in kept]  # nothing folded, or small-to-big already hands over the whole section
    behind: dict[str, list[Candidate]] = {}
    for c in result.candidates:
        if c.collapsed_into and c.rerank.rank is not None:
            behind.setdefault(c.collapsed_into, []).append(c)
    out: list[Read] = []
    for c in kept:
        out.append(Read(c))
        size = len(c.answer_chunk.text)
        for n, sibling in enumerate(sorted(behind.get(c.id, ()), key=lambda x: x.rerank.rank)):
            size += len(sibling.answer_chunk.text)
            if not sibling.carried and (n >= config.section_reads - 1 or size > SECTION_CONTEXT_CHARS):
                break
            out.append(Read(sibling, c.id))
    return out
