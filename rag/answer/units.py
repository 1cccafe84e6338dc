"""What the offline answerer can quote of a chunk: sentences and table rows, each with its span in the document.

A sentence that introduces what follows (it ends in ":", or announces "the following") carries it: the
code block, or the list, right after it. "WAL also has disadvantages:" alone answers nothing; with its
list it is the answer (docs/answers.md). A carried list or code block is part of the quote and of its
span, so a citation opens the whole of it. A question is never a unit (a FAQ entry's title asks, it does
not answer). List items are also units of their own: one item may be the whole answer.

A list longer than a chunk is cut by the chunk's end: the introducing sentence and its first items in one
chunk, the rest of the items at the start of the next. When that next chunk of the section was sent too (the
answerer reads a section's siblings, rag/answer/section_reads.py), the list carries on into it
(`section_units`): the quote is the whole list, each item cited by the chunk it is in. The unit is ranked by
its own chunk's part (`text`): the items read on only lengthen the quote, so a long list of another topic
does not outrank the sentence that answers by holding more of the question's words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Sequence

from rag.answer.result import Source
from rag.text.sentences import split_sentences

_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_TABLE_SEPARATOR = re.compile(r"^\s*\|?[\s:|-]+\|?\s*$")
_LIST_ITEM = re.compile(r"^\s{0,6}(?:[-*+•]|\d{1,3}[.)])\s+\S")
_INTRODUCES = re.compile(r"[:：]$|\bthe following\b|\bas follows\b|以下|如下", re.IGNORECASE)
_QUESTION_ENDS = ("?", "？")
# A full stop after a short abbreviation ("e.g.", "i.e.", "(p.", "etc.") followed by a lowercase word or a number
# ends no sentence: "... on the same page, e.g. to make a panel ..." and "See set polar (p. 212)." are one each.
_ABBREVIATION = re.compile(r"(?:^|[\s(\[])(?:[A-Za-z]{1,3}\.)+$")
_CONTINUES = re.compile(r"[a-z0-9]")
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
    # The rest of a carried list, read from the next chunk of the section: items cited by their own label.
    more: tuple[Unit, ...] = ()

    @property
    def whole(self) -> str:
        """What is quoted: its own text and the items it carries on from the next chunk."""
        return "\n".join([self.text, *(m.text for m in self.more)])


def section_units(sources: Sequence[Source]) -> list[Unit]:
    """Every source's units (`quotable_units`), a list cut off by a chunk's end carried on into the next chunk
    of the same section where that chunk was sent too (module docstring)."""
    readers = [_read(s) for s in sources]
    place = {(r.chunk.source, r.chunk.index): r for r in readers}
    units: list[Unit] = []
    for r in readers:
        own = list(r.units)
        nxt = place.get((r.chunk.source, r.chunk.index + 1))
        if r.open_intro is not None and nxt is not None and nxt.chunk.heading_path == r.chunk.heading_path:
            own[r.open_intro] = _carried_on(own[r.open_intro], r.items, nxt.leading)
        units.extend(own)
    return units


def _sentences(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """`split_sentences`, with a cut after an abbreviation followed by a lowercase word or a number undone."""
    spans: list[tuple[int, int]] = []
    for a, b in split_sentences(text, start, end):
        if spans and _CONTINUES.match(text[a]) and _ABBREVIATION.search(text[spans[-1][0] : spans[-1][1]]):
            spans[-1] = (spans[-1][0], b)
        else:
            spans.append((a, b))
    return spans


def _carried_on(intro: Unit, items: int, leading: Sequence[Unit]) -> Unit:
    """`intro` with the next chunk's leading list items after its own, within the carried list's limits."""
    carried = intro.text.split("\n")
    size, more = len(intro.text), []
    for item in leading:
        if items + len(more) >= MAX_CARRIED_ITEMS or size + len(item.text) > MAX_CARRIED_CHARS:
            break
        if item.text not in carried:  # an overlap between the chunks repeats an item: quoted once
            more.append(item)
            size += len(item.text) + 1
    return replace(intro, carries="list", more=tuple(more)) if more else intro


def quotable_units(source: Source) -> list[Unit]:
    """Sentences of a chunk's prose and list items, rows of its tables, with document spans (module docstring)."""
    return _read(source).units


def _read(source: Source) -> _UnitReader:
    reader = _UnitReader(source)
    for line in reader.text.split("\n"):
        reader.line(line)
    reader.close_paragraph(len(reader.text), reader.item_open)
    return reader


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
        self.full = False  # the list `intro` carries reached MAX_CARRIED_CHARS
        self.leading: list[Unit] = []  # the list items the chunk starts with, whole (a list cut off before)
        self.prose = False  # something other than a list item was read: no further item is leading

    @property
    def open_intro(self) -> int | None:
        """The unit whose list the chunk's end may have cut off: the last unit introduces one and carries
        all the items after it, with room for more."""
        if (
            self.intro is None
            or self.full
            or self.items >= MAX_CARRIED_ITEMS
            or self.units[self.intro].carries == "code"
        ):
            return None
        return self.intro

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
        if item and not self.prose:
            self.leading.append(Unit(self.label, line, self.chunk.start + self.para_start, self.chunk.start + at,
                                     self.chunk.heading, "list"))  # fmt: skip
        self.prose = self.prose or not item
        if item and self.intro is not None and self.items < MAX_CARRIED_ITEMS:
            u = units[self.intro]
            if len(u.text) + len(line) <= MAX_CARRIED_CHARS:
                carried = f"{u.text}\n{line}"
                units[self.intro] = Unit(u.label, carried, u.start, self.chunk.start + at, u.heading, "list", u.index)
                self.items += 1
            else:
                self.full = True
        elif not item:
            self.intro, self.items, self.full = None, 0, False
        last = None
        for a, b in _sentences(text, self.para_start, at):
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
            self.item_open, self.prose = False, True
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
        self.item_open, self.intro, self.prose = False, None, True
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if self.header is None:
            self.header = cells
        elif not _TABLE_SEPARATOR.match(line):
            row = "; ".join(f"{h}: {v}" for h, v in zip(self.header, cells) if v)
            self.add(row, pos, end, "row")
