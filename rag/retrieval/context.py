"""Document text around a chunk, rebuilt from the stored chunks' char offsets: the cited span shown in
place, and the whole section around a retrieved chunk handed to the answerer (small-to-big).

The store keeps each chunk's exact `[start, end)` in its document, so the neighbours of the cited chunk
give the surrounding text without keeping the original file. Text between chunks that no chunk holds
(heading lines, blank lines) is replaced by the next chunk's heading, so a reader sees where a new
section starts. Overlapping chunks (fixed/recursive strategies) are stitched without repeating text. A chunk
a person edited (rag.catalog.fixes) keeps its passage's offsets but not its text, so it is never cut or joined
by them: it is shown whole, and a section's context stops at it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Sequence

from rag.catalog.documents import document_chunks
from rag.components import Components
from rag.types import Chunk

# Small-to-big stops growing a section's context past this (a 100-page section is not one source).
SECTION_CONTEXT_CHARS = 6000


@dataclass(frozen=True)
class Piece:
    """A run of document text; `cited` runs are the ones to highlight."""

    text: str
    cited: bool = False


@dataclass(frozen=True)
class SpanContext:
    """The cited chunk with its neighbours, cut into highlighted and plain pieces."""

    source: str
    heading: str
    page: int | None
    pieces: tuple[Piece, ...]

    @property
    def cited_text(self) -> str:
        return "".join(p.text for p in self.pieces if p.cited)


def span_context(
    components: Components, source: str, chunk_id: str, spans: Sequence[tuple[int, int]], neighbours: int = 1
) -> SpanContext | None:
    """The document text around a cited chunk, with the cited spans marked.

    Args:
        components: the store to read the document's chunks from.
        source: the cited chunk's document.
        chunk_id: the cited chunk.
        spans: absolute `[start, end)` offsets in the document to highlight (a sentence, or the chunk).
        neighbours: how many chunks to show on each side.

    Returns:
        The context, or None when the chunk is no longer stored (the document was deleted or re-ingested).
    """
    # Disabled (quarantined) neighbours are never shown: retrieval never returns them, so no page does.
    chunks = [r.chunk for r in document_chunks(components, source) if not r.quarantined or r.chunk.id == chunk_id]
    at = next((i for i, c in enumerate(chunks) if c.id == chunk_id), None)
    if at is None:
        return None
    cited = chunks[at]
    if cited.edited:  # spans in it count on its own text, not the document's: the whole of it is what is cited
        spans = [(cited.start, cited.end)]
    window = chunks[max(0, at - neighbours) : at + neighbours + 1]
    return SpanContext(cited.source, cited.heading, cited.page, tuple(stitch(window, spans)))


def stitch(chunks: Sequence[Chunk], spans: Sequence[tuple[int, int]]) -> list[Piece]:
    """Join consecutive chunks of one document into pieces, marking the parts inside `spans`."""
    pieces: list[Piece] = []
    cursor: int | None = None
    heading: tuple[str, ...] | None = None
    for chunk in chunks:
        if chunk.heading_path != heading and chunk.heading_path:
            pieces.append(Piece(("\n\n" if pieces else "") + f"[{chunk.heading}]\n"))
        elif cursor is not None and chunk.start > cursor:
            pieces.append(Piece("\n\n"))
        heading = chunk.heading_path
        if chunk.edited:  # its text is not the document's between its offsets: shown whole, cited if a span meets it
            cited = any(s < chunk.end and chunk.start < e for s, e in spans)
            pieces.append(Piece(chunk.text, cited))
            cursor = max(cursor or 0, chunk.end)
            continue
        begin = chunk.start if cursor is None else max(chunk.start, cursor)
        cuts = sorted({begin, chunk.end, *(x for a, b in spans for x in (a, b) if begin < x < chunk.end)})
        for a, b in zip(cuts, cuts[1:]):
            inside = any(s <= a and b <= e for s, e in spans)
            pieces.append(Piece(chunk.text[a - chunk.start : b - chunk.start], inside))
        cursor = max(cursor or 0, chunk.end)
    return [p for p in pieces if p.text]


def section_contexts(
    components: Components, hits: Sequence[Chunk], limit: int = SECTION_CONTEXT_CHARS
) -> dict[str, Chunk]:
    """Small-to-big: for each retrieved chunk, its whole section as one chunk for the answerer.

    Retrieval ranks small chunks (sharper vectors); an answer wants the section they sit in. The
    section is the run of the document's chunks with the hit's heading path around it, grown outward
    from the hit while it stays within `limit` characters. Quarantined chunks are never added.

    Args:
        components: the store to read the documents' chunks from.
        hits: the final chunks, in rank order.
        limit: the most characters one context holds (the hit itself is always whole).

    Returns:
        {hit id: a Chunk with the hit's id and heading, spanning the section's offsets}; a hit whose
        document is gone maps to nothing (the answerer then uses the chunk itself).
    """
    by_source: dict[str, list[Chunk]] = {}
    out: dict[str, Chunk] = {}
    for hit in hits:
        if hit.source not in by_source:
            by_source[hit.source] = [r.chunk for r in document_chunks(components, hit.source) if not r.quarantined]
        chunks = by_source[hit.source]
        at = next((i for i, c in enumerate(chunks) if c.id == hit.id), None)
        if at is None or hit.edited:  # an edited chunk's offsets no longer index its text: it is its own context
            continue
        lo = hi = at
        size = hit.end - hit.start
        grown = True
        while grown:
            grown = False
            for nxt in (hi + 1, lo - 1):
                if (
                    0 <= nxt < len(chunks)
                    and chunks[nxt].heading_path == hit.heading_path
                    and not chunks[nxt].edited  # a section stops at an edited chunk, whose text stands alone
                    and nxt in (lo - 1, hi + 1)
                ):
                    span = max(chunks[hi].end, chunks[nxt].end) - min(chunks[lo].start, chunks[nxt].start)
                    if span <= max(limit, size):
                        lo, hi, grown = min(lo, nxt), max(hi, nxt), True
        out[hit.id] = _joined(hit, chunks[lo : hi + 1])
    return out


def _joined(hit: Chunk, run: Sequence[Chunk]) -> Chunk:
    """One chunk over consecutive chunks: a gap between them (whitespace no chunk stores) becomes as many
    newlines, so every offset inside stays the document's; overlapping text is kept once."""
    text, cursor = "", run[0].start
    for c in run:
        if c.start > cursor:
            text += "\n" * (c.start - cursor)
        text += c.text[max(0, cursor - c.start) :]
        cursor = max(cursor, c.end)
    return replace(hit, start=run[0].start, end=cursor, text=text)
