"""Text as a reader sees it, for matching: one place for every "compare text as a person reads it".

`match_key` folds case, spacing and Unicode form (gold, the chunk filter, tracking by pasted text);
`rendered` drops the Markdown and HTML syntax a rendered page does not show, so text copied from the
page finds the source it came from; `reader_form` is both. `fold` and `strip_format` undo the tricks
that hide a word from a regex (the injection scan and citation markers):

A document can hide "ignore" or "[S2]" from a pattern while looking the same on screen: zero-width
characters or a soft hyphen inside the word (Unicode format characters, category Cf), full-width or
other compatibility forms (`ｉｇｎｏｒｅ`, `［Ｓ２］`), or letters of another script that look Latin
(Cyrillic `і`, `о`, `е`; Armenian `օ`, Cherokee `Ꭺ`, small capitals `ɪɴ`). `fold` undoes all three;
`skeleton`, what the injection scan matches, also drops accents and other combining marks and the case.
They are for matching only: stored and shown text is never changed by them.
"""

from __future__ import annotations

import functools
import html
import re
import sys
import unicodedata

from rag.text.confusables import lookalike_table

# Inline Markdown/HTML a rendered page does not show: link and image targets, tags, code ticks, emphasis.
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
TAG = re.compile(r"</?[A-Za-z][^<>]*>")
_MARKS = re.compile(r"[`*_~]")
# Block syntax a rendered page shows as layout, not text (a copy from the browser leaves it out): list
# bullets and numbers, quote markers, a table's pipes and its header separator row.
_BLOCK_MARKS = re.compile(r"^[ \t]*(?:>[ \t]?)*(?:(?:[-*+]|\d{1,9}[.)])[ \t]+)?", re.MULTILINE)
_TABLE_RULE = re.compile(r"^[ \t]*\|?(?:[ \t]*:?-{3,}:?[ \t]*\|)+[ \t]*(?::?-{3,}:?[ \t]*)?$", re.MULTILINE)
_MARKS_CF = ("Mn", "Me", "Cf")


def strip_format(text: str) -> str:
    """NFKC-normalised `text` without format characters (zero-width spaces and joiners, soft hyphens, bidi marks)."""
    text = unicodedata.normalize("NFKC", text)
    return "".join(ch for ch in text if unicodedata.category(ch) != "Cf")


def fold(text: str) -> str:
    """`strip_format`, then every look-alike letter Unicode's confusables list replaced by the letter it
    imitates (`rag.text.confusables`; case kept). Real Cyrillic or Greek words turn into nonsense this way."""
    return strip_format(text).translate(lookalike_table())


def skeleton(text: str) -> str:
    """`text` as the injection scan matches it, patterns included: lower case, without format characters or
    combining marks (NFKD splits accents, strokes and stacked marks off the letter), every look-alike read as
    the letter it imitates. A pattern passed through it too meets "précédentes" written "precedentes",
    "p̶r̶é̶c̶é̶d̶e̶n̶t̶e̶s̶" or with Armenian letters alike; real Cyrillic words read as in the patterns."""
    if text.isascii():
        return text.lower()
    table = _skeleton_table()
    return unicodedata.normalize("NFKD", text).translate(table).lower().translate(table)


@functools.cache
def _skeleton_table() -> dict[int, str | None]:
    """The look-alike table with marks left out of its targets, plus every format character and combining mark
    (Mn, Me) removed (read from the Unicode database once, on first use)."""
    lookalikes = lookalike_table()
    table: dict[int, str | None] = dict(lookalikes)
    # A capital that Unicode files with no letter reads as its small letter does: "З" is filed with the
    # digit 3, "з" with "ɜ" (while "Ν" is an N and "ν" a v: a capital's own letter comes first).
    for code, target in lookalikes.items():
        capital = chr(code).upper()
        if len(capital) == 1 and not capital.isascii() and capital != chr(code):
            if not lookalikes.get(ord(capital), "").isalpha():
                table[ord(capital)] = target
    table = {code: strip_marks(target) for code, target in table.items() if target is not None}
    for code in range(sys.maxunicode + 1):
        if unicodedata.category(chr(code)) in _MARKS_CF:
            table[code] = None
    return table


def strip_marks(text: str) -> str:
    """`text` without format characters or combining marks (accents, strokes, stacked marks: NFD splits
    them off the letter), letters and spacing otherwise as written."""
    if text.isascii():
        return text
    return "".join(ch for ch in unicodedata.normalize("NFD", text) if unicodedata.category(ch) not in _MARKS_CF)


def match_key(text: str) -> str:
    """Case, spacing and Unicode form folded (documents are stored NFC; a Mac may type "é" decomposed)."""
    return " ".join(unicodedata.normalize("NFC", text).casefold().split())


def rendered(text: str) -> str:
    """Text as a reader sees it rendered: list, quote and table syntax, link targets, tags, code ticks and
    emphasis marks dropped, entities decoded."""
    text = _BLOCK_MARKS.sub("", _TABLE_RULE.sub("", text)).replace("|", " ")
    return _MARKS.sub("", _LINK.sub(r"\1", TAG.sub("", html.unescape(text))))


def reader_form(text: str) -> str:
    """The form text is found in chunks by: case-, whitespace- and markup-insensitive, so that text copied
    from the rendered page ("call frobnicate(level=3)") finds the Markdown it was rendered from
    ("call `frobnicate(level=3)`"), links, code ticks, emphasis, tags and entities included."""
    return match_key(rendered(text))
