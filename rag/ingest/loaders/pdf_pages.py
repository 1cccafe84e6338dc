"""A PDF page's text layer as lines, each with where it sits and how it is set.

pypdf's plain extraction reads these manuals best of the libraries measured (docs/pdf.md), two-column
index pages in column order included; its visitor tells, per line, the height on the page (running heads
sit at one height on many pages), the font size (headings without an outline) and whether a fixed-pitch
font sets it (code and examples keep their line breaks; a line of prose naming a `variable` is still prose).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

# Fixed-pitch families: TeX's typewriter fonts (CMTT, CMSLTT, LMMono), Courier, and the usual monospace faces.
_MONO_SHARE = 0.9  # a line is code when this share of its characters is fixed-pitch (prose names `code` too)
_MONO_FONT = re.compile(r"(?i)mono|courier|typewriter|cm\w*tt\d|lmtt|consol|menlo|inconsolata|fixed|code")


@dataclass(frozen=True)
class Line:
    """One line of a page's text, as pypdf extracted it."""

    text: str
    y: float | None = None  # the baseline's height on the page (points from the bottom); None when unknown
    x: float | None = None  # where its first glyph starts (points from the left): indents start paragraphs
    size: float = 0.0  # the font size most of its characters are drawn in
    mono: bool = False  # (nearly) all its characters are in a fixed-pitch font: code, not a word set in code
    heading: bool = False  # a `#` heading line the loader made (rag.ingest.loaders.pdf)


def page_lines(page: Any) -> list[Line]:  # noqa: ANN401 - a pypdf PageObject
    """The page's lines in pypdf's reading order, blank ones kept (they separate paragraphs)."""
    info: dict[str, Line] = {}
    visitor = _LineVisitor(info)
    text = page.extract_text(visitor_text=visitor) or ""
    visitor.end_line()
    lines = []
    for line in text.split("\n"):
        found = info.get(line_key(line))
        lines.append(Line(line, found.y, found.x, found.size, found.mono) if found else Line(line))
    return lines


def line_key(line: str) -> str:
    """A line's text with spacing and case ignored: how the visitor's lines are found in pypdf's text."""
    return " ".join(line.split()).lower()


class _LineVisitor:
    """Records, per line of extracted text, its height, and the size and kind of font most of it uses."""

    def __init__(self, out: dict[str, Line]) -> None:
        self.out = out
        self.line = ""
        self.y: float | None = None
        self.x: float | None = None
        self.sizes: Counter[float] = Counter()
        self.mono = 0

    def __call__(self, text: str, cm: list[float], tm: list[float], font: Any, size: float) -> None:  # noqa: ANN401
        scale = math.hypot(tm[1], tm[3]) * math.hypot(cm[1], cm[3]) if tm and cm else 1.0
        effective = round(size * (scale or 1.0), 1)
        x = tm[4] * cm[0] + tm[5] * cm[2] + cm[4] if tm and cm else None
        y = tm[4] * cm[1] + tm[5] * cm[3] + cm[5] if tm and cm else None
        mono = bool(_MONO_FONT.search(str(font.get("/BaseFont", "")))) if isinstance(font, dict) else False
        for part in re.split(r"(\n)", text):
            if part == "\n":
                self.end_line()
            elif part:
                self.line += part
                chars = len(part.strip())
                if chars and self.y is None:
                    self.x, self.y = x, y
                self.sizes[effective] += chars
                self.mono += chars if mono else 0

    def end_line(self) -> None:
        """Close the line being collected (also called once after the page: its last line has no newline)."""
        if self.line.strip() and self.sizes:
            self.out[line_key(self.line)] = Line(
                self.line,
                None if self.y is None else round(self.y, 1),
                None if self.x is None else round(self.x, 1),
                self.sizes.most_common(1)[0][0],
                self.mono >= _MONO_SHARE * sum(self.sizes.values()),
            )
        self.line, self.x, self.y, self.sizes, self.mono = "", None, None, Counter(), 0
