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
    chunk = source.candidate.answer_chunk
    text = chunk.text
    units: list[Unit] = []
    para_start: int | None = None
    header: list[str] | None = None
    in_fence = False
    intro: int | None = None  # the unit that introduces what follows (a code block or a list)
    items = 0  # list items carried by `intro` so far
    pos = fence_start = 0

    def add(sentence: str, a: int, b: int, carries: str = "") -> None:
        units.append(Unit(source.label, sentence, chunk.start + a, chunk.start + b, chunk.heading, carries, len(units)))

    def close_paragraph(at: int, item: bool = False) -> None:
        """Add the paragraph's sentences; remember the last one when it introduces what follows."""
        nonlocal para_start, intro, items
        if para_start is None:
            return
        line = " ".join(text[para_start:at].split())
        if item and intro is not None and items < MAX_CARRIED_ITEMS:
            u = units[intro]
            if len(u.text) + len(line) <= MAX_CARRIED_CHARS:
                units[intro] = Unit(u.label, f"{u.text}\n{line}", u.start, chunk.start + at, u.heading, "list", u.index)
                items += 1
        elif not item:
            intro, items = None, 0
        last = None
        for a, b in split_sentences(text, para_start, at):
            sentence = " ".join(text[a:b].split())
            if not sentence.endswith(_QUESTION_ENDS):
                add(sentence, a, b)
                last = sentence
        if not item and last is not None and _INTRODUCES.search(last):
            intro = len(units) - 1
        para_start = None

    item_open = False  # the paragraph being read is a list item
    for line in text.split("\n"):
        end = pos + len(line)
        if _FENCE.match(line):
            if not in_fence:
                close_paragraph(pos, item_open)
                item_open = False
                fence_start = pos
            elif intro is not None and not units[intro].carries:
                u = units[intro]
                code = text[fence_start:end]
                carried = f"{u.text}\n{code}"
                units[intro] = Unit(u.label, carried, u.start, chunk.start + end, u.heading, "code", u.index)
                intro = None
            else:
                intro = None
            in_fence = not in_fence
        elif in_fence:
            pass
        elif line.lstrip().startswith("|"):
            close_paragraph(pos, item_open)
            item_open, intro = False, None
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if header is None:
                header = cells
            elif not _TABLE_SEPARATOR.match(line):
                row = "; ".join(f"{h}: {v}" for h, v in zip(header, cells) if v)
                add(row, pos, end, "row")
        elif not line.strip():
            close_paragraph(pos, item_open)
            item_open, header = False, None
        elif _LIST_ITEM.match(line):
            close_paragraph(pos, item_open)
            header, para_start, item_open = None, pos, True
        else:
            header = None
            if para_start is None:
                para_start = pos
        pos = end + 1
    close_paragraph(len(text), item_open)
    return units
