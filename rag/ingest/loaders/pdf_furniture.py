"""Running heads, running feet and page numbers: the lines a reader's eye skips, found per document.

Page furniture sits at a page's top or bottom edge. An edge line is furniture when it is a bare page number,
or when its text with the digits masked ("Chapter # : Basic Shell Features #") is an edge line at the same
height on several pages. A head that repeats too rarely to tell by its text (a two-page chapter's
"Chapter 1: Introduction 1") is still furniture when it sits in a band of heights where nearly every edge
line is furniture: the head band. The body's last lines share one height too (the bottom margin), but
their texts do not repeat, so that band is never taken.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from typing import Callable, Iterator

from rag.ingest.loaders.pdf_pages import Line

_EDGE_DEPTH = 2  # lines looked at from each edge: a head and a page number on lines of their own
# A page number alone: "12", "- 12 -", "Page 3 of 9", or a front-matter roman "iv" (a capital letter alone is an
# index's letter heading, so capital romans need two letters).
BARE_NUMBER = re.compile(r"^\s*(?:[Pp]age\s+)?[-–—]?\s*(?:\d+|[ivxlcdm]+|[IVXLCDM]{2,})\s*[-–—]?(?:\s+of\s+\d+)?\s*$")
_DIGITS = re.compile(r"\d+")
_BAND_SHARE = 0.25  # a band of heights holding edge lines of at least this share of the pages...
_BAND_FURNITURE = 0.8  # ...of which at least this share are furniture by their text, is a head or foot band
_REPEAT_SHARE = 0.05  # a masked edge text repeated on this share of the pages (at least twice) is furniture


def strip_furniture(pages: list[list[Line]]) -> list[list[Line]]:
    """Each page's lines without its running head, running foot and page number."""
    edges = [_edge_lines(lines) for lines in pages]
    edge_lines = [line for top, bottom in edges for _, line in (*top, *bottom)]
    repeats = Counter((mask(line.text), _band(line.y)) for line in edge_lines)
    needed = max(2, math.ceil(_REPEAT_SHARE * len(pages)))
    by_text = {key for key, n in repeats.items() if n >= needed}

    def plain(line: Line) -> bool:
        return bool(BARE_NUMBER.match(line.text)) or (mask(line.text), _band(line.y)) in by_text

    bands: dict[float, list[bool]] = defaultdict(list)
    for line in edge_lines:
        if line.y is not None:
            bands[_band(line.y)].append(plain(line))
    head_bands = {
        band
        for band, verdicts in bands.items()
        if len(verdicts) >= _BAND_SHARE * len(pages) and sum(verdicts) >= _BAND_FURNITURE * len(verdicts)
    }

    def furniture(line: Line) -> bool:
        return plain(line) or (line.y is not None and _band(line.y) in head_bands)

    out = []
    for lines, sides in zip(pages, edges):
        drop = {i for side in sides for i in _peel(side, furniture)}
        out.append([line for i, line in enumerate(lines) if i not in drop])
    return out


def _edge_lines(lines: list[Line]) -> tuple[list[tuple[int, Line]], list[tuple[int, Line]]]:
    """(index, line) of a page's first and of its last non-blank lines, each side outermost first."""
    filled = [(i, line) for i, line in enumerate(lines) if line.text.strip()]
    top = filled[:_EDGE_DEPTH]
    bottom = [item for item in reversed(filled[-_EDGE_DEPTH:]) if item not in top]
    return top, bottom


def _peel(side: list[tuple[int, Line]], furniture: Callable[[Line], bool]) -> Iterator[int]:
    """Indexes of one edge's furniture lines, from the edge inwards until a line is not furniture."""
    for i, line in side:
        if not furniture(line):
            return
        yield i


def mask(text: str) -> str:
    """A line's text with its numbers masked and spacing and case ignored: a running head on any page."""
    return _DIGITS.sub("#", " ".join(text.split()).lower())


def _band(y: float | None) -> float:
    """Heights within a couple of points read as one band (a baseline moves a little with the glyphs)."""
    return -1.0 if y is None else round(y / 3) * 3.0
