"""Text as a reader sees it, for matching: the tricks that hide a word from a regex are undone.

A document can hide "ignore" or "[S2]" from a pattern while looking the same on screen: zero-width
characters or a soft hyphen inside the word (Unicode format characters, category Cf), full-width or
other compatibility forms (`ｉｇｎｏｒｅ`, `［Ｓ２］`), or letters of another script that look Latin
(Cyrillic `і`, `о`, `е`; Greek `ο`, `α`). `fold` undoes all three. It is for matching only: stored
and shown text is never changed by it.
"""

from __future__ import annotations

import unicodedata

# Cyrillic and Greek letters that render like a Latin letter in common fonts (Unicode's confusables
# for these scripts, narrowed to the ones that are near-identical; `в` or `п` are not).
_LOOKALIKES = {
    "а": "a", "е": "e", "о": "o", "р": "p", "с": "c", "у": "y", "х": "x", "ѕ": "s", "і": "i", "ј": "j",
    "ԁ": "d", "ԛ": "q", "ԝ": "w", "һ": "h", "ӏ": "l", "ү": "y", "к": "k", "м": "m", "т": "t", "н": "h",
    "А": "A", "В": "B", "Е": "E", "К": "K", "М": "M", "Н": "H", "О": "O", "Р": "P", "С": "C", "Т": "T",
    "Х": "X", "Ѕ": "S", "І": "I", "Ј": "J", "У": "Y", "Ү": "Y", "Ԁ": "D", "Ԛ": "Q", "Ԝ": "W", "Ӏ": "I",
    "α": "a", "ο": "o", "ν": "v", "ι": "i", "κ": "k", "ρ": "p", "τ": "t", "υ": "u", "χ": "x", "ε": "e",
    "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N", "Ο": "O",
    "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X", "ı": "i", "ȷ": "j",
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
