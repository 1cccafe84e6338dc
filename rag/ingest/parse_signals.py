"""How well a chunk's text was parsed, measured: what share of it is index lines, page furniture, a broken
table or repeated boilerplate, and how much text its pages hold.

The loaders already clean what they can tell (rag.ingest.loaders.pdf_furniture drops running heads at a page's
edges, rag.ingest.loaders.pdf_roles stores contents and index pages out of ranking, rag.ingest.repeated drops
a site's chrome); these signals measure what is left in each stored chunk, with the same rules where one
exists, so a failed question whose gold sits in a chunk of index lines or footers can say so (issue 40, item 5).
A signal is a measured value, stored in the chunk's payload (`parse`); whether it flags the chunk is decided
when read, by the thresholds in `SIGNALS` (documented in docs/retrieval-quality.md#parse-signals), so a
threshold changed here applies to chunks stored before.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from rag.ingest.loaders.pdf_furniture import BARE_NUMBER, mask
from rag.ingest.loaders.pdf_roles import MIN_LINES, REFERENCE_SHARE, page_reference
from rag.types import ROLE_NO_TEXT, Chunk, Document


@dataclass(frozen=True)
class Signal:
    """One parse signal: what it measures, in words, and the value from which it flags a chunk."""

    title: str
    threshold: float
    flags_above: bool  # flagged at or above the threshold (shares); below it for the text on a page


# The thresholds, in one place. Index lines use the rule that names a PDF page an index page.
SIGNALS: dict[str, Signal] = {
    "index": Signal("index or contents lines", REFERENCE_SHARE, True),
    "furniture": Signal("page furniture (running heads, footers, page numbers)", 0.4, True),
    "table": Signal("broken table (cells on lines of their own)", 0.6, True),
    "thin_page": Signal("near-empty pages (a scan, a figure)", 150, False),
    "boilerplate": Signal("repeated boilerplate", 0.4, True),
}
PAYLOAD_KEY = "parse"
MIN_FRAGMENTS = 8  # a broken table has at least this many cell lines: a short list of names is not one
FURNITURE_CHARS = 80  # a furniture line is at most this long; a longer repeated line is boilerplate
MIN_REPEATS = 3  # a line repeated in this many chunks of its document (and...
REPEAT_SHARE = 0.1  # ...in this share of them) is furniture or boilerplate, not the chunk's own text
_FRAGMENT_CHARS = 24  # a table cell on a line of its own: a short line of one or two words
_NOT_PROSE = re.compile(r"^\s*(?:#{1,6}\s|\||```|[-*•]\s|\d{1,2}[.)]\s)")  # headings, pipe rows, fences, items


@dataclass(frozen=True)
class ParseSignals:
    """What one chunk's text measured. Shares run from 0 to 1; `page_chars` is None when the format has no
    pages (or the chunk was measured from the store, where its document's pages are not known).

    Example:
        signals = measure(chunks, doc)[chunks[0].id]
        signals.flags()  # ("index",) for a chunk of index lines
    """

    index: float = 0.0  # share of its lines that are contents or index entries (a name, then page numbers)
    furniture: float = 0.0  # share of its characters in page furniture: page numbers, repeated short lines
    table: float = 0.0  # share of its lines that are a table's cells, one or two words a line
    boilerplate: float = 0.0  # share of its characters in long lines repeated across its document's chunks
    page_chars: int | None = None  # characters (not spaces) per page over the pages it spans

    def flags(self) -> tuple[str, ...]:
        """The signals that flag this chunk, in `SIGNALS` order."""
        out = []
        for name, signal in SIGNALS.items():
            value = getattr(self, "page_chars" if name == "thin_page" else name)
            if value is not None and (value >= signal.threshold if signal.flags_above else value < signal.threshold):
                out.append(name)
        return tuple(out)

    def payload(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_payload(cls, data: Mapping[str, Any] | None) -> ParseSignals | None:
        """The signals stored with a chunk; None for a chunk stored before they were measured."""
        if not isinstance(data, Mapping):
            return None
        chars = data.get("page_chars")
        return cls(
            *(float(data.get(k) or 0.0) for k in ("index", "furniture", "table", "boilerplate")),
            None if chars is None else int(chars),
        )


def flag_titles(flags: Sequence[str]) -> str:
    """The flags in words, for a person: "index or contents lines; repeated boilerplate"."""
    return "; ".join(SIGNALS[f].title for f in flags)


def measure(chunks: Sequence[Chunk], doc: Document | None = None) -> dict[str, ParseSignals]:
    """Each chunk's signals, by id. `chunks` are all of one document's (repeats are counted across them);
    `doc`, when known, gives its pages (the text on each page a chunk spans)."""
    repeated = _repeated_lines(chunks)
    sizes = _page_sizes(doc) if doc is not None and doc.pages else None
    out = {}
    for chunk in chunks:
        lines = _lines(chunk.text)
        chars = sum(len(t) for t in lines) or 1
        refs = [page_reference(t) for t in lines]
        fragments = [not ref and _fragment(t) for t, ref in zip(lines, refs)]
        furniture = sum(len(t) for t in lines if _furniture(t, repeated))
        boiler = sum(len(t) for t in lines if len(t) > FURNITURE_CHARS and mask(t) in repeated)
        enough = len(lines) >= MIN_LINES
        out[chunk.id] = ParseSignals(
            index=round(sum(refs) / len(lines), 3) if enough else 0.0,
            furniture=round(furniture / chars, 3),
            table=round(sum(fragments) / len(lines), 3) if sum(fragments) >= MIN_FRAGMENTS else 0.0,
            boilerplate=round(boiler / chars, 3),
            page_chars=None if sizes is None else _span_chars(chunk, doc, sizes),
        )
    return out


def _lines(text: str) -> list[str]:
    """The chunk's non-blank lines, stripped, those inside code fences left out (code repeats by nature)."""
    out, fenced = [], False
    for line in text.split("\n"):
        stripped = line.strip()
        if stripped.startswith("```"):
            fenced = not fenced
        elif stripped and not fenced:
            out.append(stripped)
    return out


def _repeated_lines(chunks: Sequence[Chunk]) -> set[str]:
    """The lines (numbers masked) that are in at least MIN_REPEATS chunks and REPEAT_SHARE of them."""
    counts = Counter(key for c in chunks for key in {mask(t) for t in _lines(c.text) if not _NOT_PROSE.match(t)})
    floor = max(MIN_REPEATS, REPEAT_SHARE * len(chunks))
    return {key for key, n in counts.items() if n >= floor}


def _furniture(line: str, repeated: set[str]) -> bool:
    """A page number alone, or a short line its document repeats (a running head, a footer, a copyright line)."""
    return bool(BARE_NUMBER.match(line)) or (len(line) <= FURNITURE_CHARS and mask(line) in repeated)


def _fragment(line: str) -> bool:
    return len(line) <= _FRAGMENT_CHARS and len(line.split()) <= 2 and not _NOT_PROSE.match(line)


def _page_sizes(doc: Document) -> list[int]:
    """Characters (not spaces) on each page of the document's text."""
    bounds = [*doc.pages, len(doc.text)]
    return [sum(not ch.isspace() for ch in doc.text[a:b]) for a, b in zip(bounds, bounds[1:])]


def _span_chars(chunk: Chunk, doc: Document, sizes: list[int]) -> int:
    """The mean characters per page over the pages the chunk spans; 0 for a scan's placeholder, whose text is
    ragscope's note, not the PDF's."""
    if chunk.role == ROLE_NO_TEXT:
        return 0
    first = doc.page_at(chunk.start) or 1
    last = doc.page_at(max(chunk.start, chunk.end - 1)) or first
    span = sizes[first - 1 : last]
    return round(sum(span) / len(span)) if span else 0
