"""Text as a reader sees it, for matching: one place for every "compare text as a person reads it".

`match_key` folds case, spacing and Unicode form (gold, the chunk filter, tracking by pasted text);
`rendered` drops the Markdown and HTML syntax a rendered page does not show, so text copied from the
page finds the source it came from; `reader_form` is both. `fold` and `strip_format` undo the tricks
that hide a word from a regex (the injection scan and citation markers):

A document can hide "ignore" or "[S2]" from a pattern while looking the same on screen: zero-width
characters or a soft hyphen inside the word (Unicode format characters, category Cf), full-width or
other compatibility forms (`ｉｇｎｏｒｅ`, `［Ｓ２］`), or letters of another script that look Latin
(Cyrillic `і`, `о`, `е`; Greek `ο`, `α`). `fold` undoes all three. It is for matching only: stored
and shown text is never changed by it.
"""

from __future__ import annotations

import html
import re
import unicodedata

# Inline Markdown/HTML a rendered page does not show: link and image targets, tags, code ticks, emphasis.
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
TAG = re.compile(r"</?[A-Za-z][^<>]*>")
_MARKS = re.compile(r"[`*_~]")
# Block syntax a rendered page shows as layout, not text (a copy from the browser leaves it out): list
# bullets and numbers, quote markers, a table's pipes and its header separator row.
_BLOCK_MARKS = re.compile(r"^[ \t]*(?:>[ \t]?)*(?:(?:[-*+]|\d{1,9}[.)])[ \t]+)?", re.MULTILINE)
_TABLE_RULE = re.compile(r"^[ \t]*\|?(?:[ \t]*:?-{3,}:?[ \t]*\|)+[ \t]*(?::?-{3,}:?[ \t]*)?$", re.MULTILINE)

# Cyrillic and Greek letters that render like a Latin letter in common fonts (Unicode's confusables
# for these scripts, narrowed to the ones that are near-identical; `в` or `п` are not).
_LOOKALIKES = {
    "а": "a",
    "е": "e",
    "о": "o",
    "р": "p",
    "с": "c",
    "у": "y",
    "х": "x",
    "ѕ": "s",
    "і": "i",
    "ј": "j",
    "ԁ": "d",
    "ԛ": "q",
    "ԝ": "w",
    "һ": "h",
    "ӏ": "l",
    "ү": "y",
    "к": "k",
    "м": "m",
    "т": "t",
    "н": "h",
    "А": "A",
    "В": "B",
    "Е": "E",
    "К": "K",
    "М": "M",
    "Н": "H",
    "О": "O",
    "Р": "P",
    "С": "C",
    "Т": "T",
    "Х": "X",
    "Ѕ": "S",
    "І": "I",
    "Ј": "J",
    "У": "Y",
    "Ү": "Y",
    "Ԁ": "D",
    "Ԛ": "Q",
    "Ԝ": "W",
    "Ӏ": "I",
    "α": "a",
    "ο": "o",
    "ν": "v",
    "ι": "i",
    "κ": "k",
    "ρ": "p",
    "τ": "t",
    "υ": "u",
    "χ": "x",
    "ε": "e",
    "Α": "A",
    "Β": "B",
    "Ε": "E",
    "Ζ": "Z",
    "Η": "H",
    "Ι": "I",
    "Κ": "K",
    "Μ": "M",
    "Ν": "N",
    "Ο": "O",
    "Ρ": "P",
    "Τ": "T",
    "Υ": "Y",
    "Χ": "X",
    "ı": "i",
    "ȷ": "j",
}
_LATIN = str.maketrans(_LOOKALIKES)


def strip_format(text: str) -> str:
    """NFKC-normalised `text` without format characters (zero-width spaces and joiners, soft hyphens, bidi marks)."""
    text = unicodedata.normalize("NFKC", text)
    return "".join(ch for ch in text if unicodedata.category(ch) != "Cf")


def fold(text: str) -> str:
    """`strip_format`, then every Latin look-alike letter replaced by the Latin letter it imitates.

    Real Cyrillic or Greek words turn into nonsense this way, so callers that match those languages
    match the `strip_format` form as well.
    """
    return strip_format(text).translate(_LATIN)


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
