"""A page's lines as a reader reads them: paragraphs on one line, words whole, ligatures as letters.

Typesetting breaks lines to fit the column, and hyphenates words to do it; a reader reads through both.
A line continues the one before it when both are body text (not a heading, not fixed-pitch code, which
keeps its line breaks), the one before it runs to the column's width (a short line ends its paragraph),
the next starts on the next baseline (a wider gap is a paragraph's space), not indented as a
paragraph's first line and not as a list item or a table's row (opening with the same sign). A word
hyphenated at a line's end is joined when the joined word occurs elsewhere in the document, or when
what follows the hyphen is no word of its own ("accord-" "ingly"); otherwise the hyphen was a real one
("command-line") and stays, without the line break. Paragraphs are then separated by a blank line, so
the chunker packs whole paragraphs; a run of one-line paragraphs (a list, a table's rows) stays one block.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from statistics import median
from typing import Iterable

from rag.ingest.loaders.pdf_pages import Line

_LIGATURES = re.compile("[\ufb00-\ufb06]")  # ﬀ ﬁ ﬂ ﬃ ﬄ ﬅ ﬆ: the Latin ligatures a font may map its glyphs to
_WORD = re.compile(r"[^\W\d_]+")
_END_FRAGMENT = re.compile(r"([^\W\d_]+)-$")
_START_FRAGMENT = re.compile(r"^([^\W\d_]+)")
_MARKDOWN_HEADING = re.compile(r"^#{1,6}(?:[ \t]|$)")
_LIST_ITEM = re.compile(r"^\s*(?:[•◦▪‣∗*–—-]|\d{1,2}[.)]|\(?[a-z]\))\s")
_FULL_SHARE = 0.75  # a line this share of its column's usual full length (or longer) runs to the margin
# Where too few lines start at an indent to tell its full length, a line is full at this many characters or
# more (a short document's short lines are each a paragraph).
_MIN_COLUMN_LINES = 20
_MIN_FULL = 60.0
_GAP = 1.35  # a baseline gap this many line spacings (or more) is a paragraph's space
_INDENT = (4.0, 25.0)  # a next line indented by this much (points) is a paragraph's first line


def fold_ligatures(text: str) -> str:
    """The ligature characters as their letters (NFKC of that block only: other compatibility forms stay)."""
    return _LIGATURES.sub(lambda m: unicodedata.normalize("NFKC", m.group()), text)


def document_words(pages: Iterable[Iterable[Line]]) -> set[str]:
    """Every word of the document's text, lowercased, the halves of words hyphenated at a line's end left out
    (so "compo-" and "nents" never vouch for themselves)."""
    words: set[str] = set()
    split = False  # the line before ended in a hyphenated word: this line's first word is its second half
    for lines in pages:
        for line in lines:
            found = _WORD.findall(line.text)
            ends_split = bool(_END_FRAGMENT.search(line.text.rstrip()))
            words.update(w.lower() for w in found[int(split) : len(found) - int(ends_split)])
            split = ends_split
    return words


@dataclass(frozen=True)
class Layout:
    """What a document's body text looks like: its line spacing and how long a full line is at each indent."""

    spacing: float | None
    full: dict[float, float]
    default_full: float

    def is_full(self, line: Line) -> bool:
        wanted = self.full.get(_column(line.x), self.default_full)
        return len(line.text.rstrip()) >= _FULL_SHARE * wanted


def layout_of(pages: Iterable[list[Line]]) -> Layout:
    """The document's line spacing (the commonest gap between consecutive body baselines) and, per
    indent, the length a full line has there (the 90th percentile of the lengths of lines starting there)."""
    gaps: Counter[float] = Counter()
    lengths: dict[float, list[int]] = {}
    everything: list[int] = []
    for lines in pages:
        body = [line for line in lines if _body(line)]
        for a, b in zip(body, body[1:]):
            if a.y is not None and b.y is not None and a.y > b.y:
                gaps[round(a.y - b.y, 1)] += 1
        for line in body:
            lengths.setdefault(_column(line.x), []).append(len(line.text.rstrip()))
            everything.append(len(line.text.rstrip()))
    full = {x: _p90(found) for x, found in lengths.items() if len(found) >= _MIN_COLUMN_LINES}
    default = max(_p90(everything) if everything else 0.0, _MIN_FULL)
    return Layout(gaps.most_common(1)[0][0] if gaps else None, full, default)


def reading_lines(lines: list[Line], words: set[str], layout: Layout) -> list[str]:
    """The page's lines with each paragraph on one line and blank lines between paragraphs."""
    blocks: list[_Block] = []
    previous: Line | None = None
    for line in lines:
        if not line.text.strip():
            previous = None  # a blank line from the text layer ends a paragraph
            continue
        kind = "heading" if line.heading else "code" if line.mono else "text"
        last = blocks[-1] if blocks and previous is not None else None
        if last and kind == "text" and _body(previous) and _continues(previous, line, layout):
            last.lines[-1] = _join(last.lines[-1], line.text.strip(), words)
            last.parts += 1
        elif last and kind == last.kind == "code":
            last.lines.append(line.text.rstrip())
        else:
            blocks.append(_Block(kind, [_not_heading(line.text.strip()) if kind == "text" else line.text.rstrip()]))
        previous = line
    out: list[str] = []
    for before, block in zip([None, *blocks], blocks):
        if before is not None and not (before.one_line_text and block.one_line_text):
            out.append("")
        out.extend(block.lines)
    return out


@dataclass
class _Block:
    """A paragraph (one line of text made of `parts` lines of the page), a heading, or code lines."""

    kind: str  # "text", "code" or "heading"
    lines: list[str]
    parts: int = 1

    @property
    def one_line_text(self) -> bool:
        """A paragraph of one short line: a list's item or a table's row, kept in one block with its neighbours."""
        return self.kind == "text" and self.parts == 1


def join_across_pages(before: list[str], after: list[str], words: set[str]) -> None:
    """A word hyphenated at the end of one page and ended on the next: the word whole on the first page (its
    end moved there), so no page's text starts or ends in half a word."""
    if not before or not after:
        return
    end, start = _END_FRAGMENT.search(before[-1]), _START_FRAGMENT.match(after[0])
    if end and start and after[0][:1].islower() and _one_word(end.group(1), start.group(1), words):
        before[-1] = before[-1][:-1] + start.group(1)
        after[0] = after[0][len(start.group(1)) :].lstrip()
        if not after[0]:
            del after[0]


def join_hyphenated(lines: list[str], words: set[str]) -> list[str]:
    """The lines as they are (a contents or index page), except that a line ending in a word hyphenated at
    its end is joined with the next ("non-incremental-forward-" "search-history")."""
    out: list[str] = []
    for line in lines:
        if out and _END_FRAGMENT.search(out[-1]) and line.lstrip()[:1].isalpha():
            out[-1] = _join(out[-1], line.strip(), words)
        else:
            out.append(line)
    return out


def _continues(a: Line, b: Line, layout: Layout) -> bool:
    """Whether line `b` continues the paragraph of line `a` (the line before it)."""
    text = a.text.rstrip()
    if _END_FRAGMENT.search(text) and b.text.lstrip()[:1].isalpha():
        return True  # a word hyphenated at the line's end goes on, whatever the layout says
    if text.endswith(":") or _LIST_ITEM.match(b.text) or _same_marker(a.text, b.text) or not layout.is_full(a):
        return False
    if a.y is not None and b.y is not None and layout.spacing:
        if not 0 < a.y - b.y <= _GAP * layout.spacing:
            return False
    if a.x is not None and b.x is not None and _INDENT[0] < b.x - a.x <= _INDENT[1]:
        return False
    return True


def _same_marker(a: str, b: str) -> bool:
    """Both lines open with the same sign ("%a ...", "%b ..."; "-n ...", "-p ..."): rows of a table or items of
    a list of options, each its own line, however long."""
    first, second = a.lstrip()[:1], b.lstrip()[:1]
    return bool(first) and first == second and not first.isalnum() and not first.isspace()


def _join(a: str, b: str, words: set[str]) -> str:
    """Line `b` after line `a` in one paragraph: a word hyphenated across them joined when the document
    uses it whole, the hyphen kept (without the break) when not."""
    end, start = _END_FRAGMENT.search(a), _START_FRAGMENT.match(b)
    if end and start:
        return a[:-1] + b if _one_word(end.group(1), start.group(1), words) else a + b
    if a.endswith("-") and start:
        return a + b
    return f"{a} {b}"


def _one_word(head: str, tail: str, words: set[str]) -> bool:
    """Whether `head`-`tail`, hyphenated at a line's end, is one word: the document uses it whole, or the tail
    is no word of its own ("accord-" "ingly"). A compound's parts are words ("command-" "line"), and a
    capital after the hyphen names something ("pre-" "POSIX"): those keep their hyphen."""
    if (head + tail).lower() in words:
        return True
    return tail[:1].islower() and tail.lower() not in words


def _not_heading(text: str) -> str:
    """Body text that starts like a Markdown heading ("# ($#) Expands to ..."), indented one space so the chunker
    does not read it as one (as rag.ingest.loaders.pdf marks the page's lines)."""
    return f" {text}" if _MARKDOWN_HEADING.match(text) else text


def _body(line: Line) -> bool:
    return bool(line.text.strip()) and not line.mono and not line.heading


def _column(x: float | None) -> float:
    return -1.0 if x is None else round(x / 4) * 4.0


def _p90(values: list[int]) -> float:
    ordered = sorted(values)
    return float(ordered[int(0.9 * (len(ordered) - 1))]) if ordered else median(values)
