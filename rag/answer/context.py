"""A cited span shown inside the document text around it, rebuilt from the stored chunks' char offsets.

The store keeps each chunk's exact `[start, end)` in its document, so the neighbours of the cited chunk
give the surrounding text without keeping the original file. Text between chunks that no chunk holds
(heading lines, blank lines) is replaced by the next chunk's heading, so a reader sees where a new
section starts. Overlapping chunks (fixed/recursive strategies) are stitched without repeating text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from rag.components import Components
from rag.documents import document_chunks
from rag.types import Chunk


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


def span_context(components: Components, source: str, chunk_id: str, spans: Sequence[tuple[int, int]], neighbours: int = 1) -> SpanContext | None:
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
    chunks = [r.chunk for r in document_chunks(components, source)]
    at = next((i for i, c in enumerate(chunks) if c.id == chunk_id), None)
    if at is None:
        return None
    cited = chunks[at]
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
        begin = chunk.start if cursor is None else max(chunk.start, cursor)
        cuts = sorted({begin, chunk.end, *(x for a, b in spans for x in (a, b) if begin < x < chunk.end)})
        for a, b in zip(cuts, cuts[1:]):
            inside = any(s <= a and b <= e for s, e in spans)
            pieces.append(Piece(chunk.text[a - chunk.start : b - chunk.start], inside))
        cursor = max(cursor or 0, chunk.end)
    return [p for p in pieces if p.text]

