"""What the offline answerer can quote of a chunk: sentences and table rows, each with its span in the document.

A sentence that introduces what follows (it ends in ":", or announces "the following") carries it: the
code block, or the list, right after it. "WAL also has disadvantages:" alone answers nothing; with its
list it is the answer (docs/answers.md). A carried list or code block is part of the quote and of its
span, so a citation opens the whole of it. A question is never a unit (a FAQ entry's title asks, it does
not answer). List items are also units of their own: one item may be the whole answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rag.answer.result import Source
from rag.text.sentences import split_sentences

_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_TABLE_SEPARATOR = re.compile(r"^\s*\|?[\s:|-]+\|?\s*$")
_LIST_ITEM = re.compile(r"^\s{0,6}(?:[-*+•]|\d{1,3}[.)])\s+\S")
_INTRODUCES = re.compile(r"[:：]$|\bthe following\b|\bas follows\b|以下|如下", re.IGNORECASE)
_QUESTION_ENDS = ("?", "？")
# A list longer than this is quoted up to here: the answer stays readable, the span still opens it all.
MAX_CARRIED_ITEMS = 8
MAX_CARRIED_CHARS = 1200


@dataclass(frozen=True)
class Unit:
    """A quotable piece of a source: a sentence or a table row, with its span in the document.

    `carries` says what the sentence brings along after its first line: "code", "list" or "" (nothing);
    a table row is "row" (its topic is its own: it inherits no neighbour's, rag/answer/extractive.py).
    `index` is its place among the chunk's units, so neighbours can be found.
    """

    label: str
    text: str
    start: int
    end: int
    heading: str
    carries: str = ""
    index: int = 0


def quotable_units(source: Source) -> list[Unit]:
    """Sentences of a chunk's prose and list items, rows of its tables, with document spans (module docstring)."""
    reader = _UnitReader(source)
    for line in reader.text.split("\n"):
        reader.line(line)
    reader.close_paragraph(len(reader.text), reader.item_open)
    return reader.units


class _UnitReader:
    """One pass over a chunk's lines, a step per kind of line (fence, table row, blank, list item, prose)."""

    def __init__(self, source: Source) -> None:
        self.label = source.label
        self.chunk = source.candidate.answer_chunk
        self.text = self.chunk.text
        self.units: list[Unit] = []
        self.para_start: int | None = None
        self.header: list[str] | None = None
        self.in_fence = False
        self.intro: int | None = None  # the unit that introduces what follows (a code block or a list)
        self.items = 0  # list items carried by `intro` so far
        self.pos = self.fence_start = 0
        self.item_open = False  # the paragraph being read is a list item

    def add(self, sentence: str, a: int, b: int, carries: str = "") -> None:
        chunk = self.chunk
        self.units.append(Unit(self.label, sentence, chunk.start + a, chunk.start + b, chunk.heading, carries,
                               len(self.units)))  # fmt: skip

    def close_paragraph(self, at: int, item: bool = False) -> None:
        """Add the paragraph's sentences; remember the last one when it introduces what follows."""
        if self.para_start is None:
            return
        text, units = self.text, self.units
        line = " ".join(text[self.para_start : at].split())
        if item and self.intro is not None and self.items < MAX_CARRIED_ITEMS:
            u = units[self.intro]
            if len(u.text) + len(line) <= MAX_CARRIED_CHARS:
                carried = f"{u.text}\n{line}"
                units[self.intro] = Unit(u.label, carried, u.start, self.chunk.start + at, u.heading, "list", u.index)
                self.items += 1
        elif not item:
            self.intro, self.items = None, 0
        last = None
        for a, b in split_sentences(text, self.para_start, at):
            sentence = " ".join(text[a:b].split())
            if not sentence.endswith(_QUESTION_ENDS):
                self.add(sentence, a, b)
                last = sentence
        if not item and last is not None and _INTRODUCES.search(last):
            self.intro = len(units) - 1
        self.para_start = None

    def line(self, line: str) -> None:
        """Read one line of the chunk at `pos`."""
        pos, end = self.pos, self.pos + len(line)
        if _FENCE.match(line):
            self._fence(pos, end)
        elif self.in_fence:
            pass
        elif line.lstrip().startswith("|"):
            self._table_row(line, pos, end)
        elif not line.strip():
            self.close_paragraph(pos, self.item_open)
            self.item_open, self.header = False, None
        elif _LIST_ITEM.match(line):
            self.close_paragraph(pos, self.item_open)
            self.header, self.para_start, self.item_open = None, pos, True
        else:
            self.header = None
            if self.para_start is None:
                self.para_start = pos
        self.pos = end + 1

    def _fence(self, pos: int, end: int) -> None:
        """A fence opens or closes a code block; a closed block is carried by the sentence introducing it."""
        if not self.in_fence:
            self.close_paragraph(pos, self.item_open)
            self.item_open = False
            self.fence_start = pos
        elif self.intro is not None and not self.units[self.intro].carries:
            u = self.units[self.intro]
            carried = f"{u.text}\n{self.text[self.fence_start : end]}"
            self.units[self.intro] = Unit(u.label, carried, u.start, self.chunk.start + end, u.heading, "code", u.index)
            self.intro = None
        else:
            self.intro = None
        self.in_fence = not self.in_fence

    def _table_row(self, line: str, pos: int, end: int) -> None:
        """A table's first row is its header; each later row (not the separator) is a unit naming its cells."""
        self.close_paragraph(pos, self.item_open)
        self.item_open, self.intro = False, None
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if self.header is None:
            self.header = cells
        elif not _TABLE_SEPARATOR.match(line):
            row = "; ".join(f"{h}: {v}" for h, v in zip(self.header, cells) if v)
            self.add(row, pos, end, "row")
