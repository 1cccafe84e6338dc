"""Invisible format characters (Unicode category Cf): what ingest keeps out of stored text, and what they hide.

A reader sees nothing of a zero-width space, a bidi control or a soft hyphen, but a model is sent every one,
and Unicode's tag characters (U+E0020-U+E007E, "ASCII smuggling") spell a whole instruction that shows as
nothing on screen and that models read. So stored text, which is what is shown, embedded and sent, holds
none of them (`drop_invisible`, called once for every format by `rag.ingest.loaders.document`), and what a
removed run spelled is kept beside the text for the injection scan to read (`decode_tags`).

Kept, because text needs them and they hide nothing: a zero-width joiner inside an emoji sequence (👩‍💻), a
zero-width joiner or non-joiner between letters of a script that shapes with them (Persian, Indic scripts),
the tag characters of a subdivision flag (🏴 + "gbsct" + cancel tag), and the visible Arabic number signs
that Unicode files as format characters.
"""

from __future__ import annotations

import functools
import re
import sys
import unicodedata

_ZWNJ, _ZWJ = "\u200c", "\u200d"
_FLAG, _CANCEL_TAG = "\U0001f3f4", "\U000e007f"
_FLAG_TAGS = re.compile("[\U000e0030-\U000e0039\U000e0061-\U000e007a]{2,6}\U000e007f")
_VISIBLE = frozenset("\u0600\u0601\u0602\u0603\u0604\u0605\u06dd\u070f\u0890\u0891\u08e2\U000110bd\U000110cd")
# Scripts that shape letters with ZWJ/ZWNJ: Hebrew to Myanmar, Khmer and Mongolian, and the Indic blocks after.
_JOINING = ((0x0590, 0x109F), (0x1780, 0x18AF), (0xA800, 0xA9FF), (0x11000, 0x11FFF))
# A run of other invisible characters this long can carry a message of its own (bits as two kinds of space).
MIN_CARRIER = 8


def drop_invisible(text: str) -> tuple[str, tuple[tuple[int, str], ...]]:
    """`text` without its invisible format characters, and the runs removed that may say something: (offset
    in the returned text, the characters) for each run holding tag characters or `MIN_CARRIER` or more."""
    if text.isascii():
        return text, ()
    out: list[str] = []
    hidden: list[tuple[int, str]] = []
    at = size = 0
    for match in _format_runs().finditer(text):
        run = match.group(0)
        if _kept(text, match.start(), match.end()):
            continue
        out.append(text[at : match.start()])
        size += match.start() - at
        if _TAG_CHAR.search(run) or len(run) >= MIN_CARRIER:
            hidden.append((size, run))
        at = match.end()
    if not out:
        return text, ()
    out.append(text[at:])
    return "".join(out), tuple(hidden)


def decode_tags(run: str) -> str:
    """The ASCII text Unicode tag characters in `run` spell (each is its ASCII character + U+E0000)."""
    return "".join(chr(ord(ch) - 0xE0000) for ch in run if "\U000e0020" <= ch <= "\U000e007e")


_TAG_CHAR = re.compile("[\U000e0000-\U000e007f]")


def _kept(text: str, start: int, end: int) -> bool:
    run = text[start:end]
    before = text[start - 1] if start else ""
    after = text[end] if end < len(text) else ""
    if all(ch in _VISIBLE for ch in run):
        return True
    if before == _FLAG and _FLAG_TAGS.fullmatch(run):
        return True
    if run in (_ZWJ, _ZWNJ) and before and after:
        if run == _ZWJ and _emoji(before) and _emoji(after):
            return True
        return _joining(before) and _joining(after)
    return False


def _emoji(ch: str) -> bool:
    return unicodedata.category(ch) in ("So", "Sk") or ch == "\ufe0f"


def _joining(ch: str) -> bool:
    code = ord(ch)
    return unicodedata.category(ch)[0] in "LM" and any(low <= code <= high for low, high in _JOINING)


@functools.cache
def _format_runs() -> re.Pattern[str]:
    """Runs of Cf characters (read from the Unicode database once, on first use)."""
    codes = [c for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Cf"]
    ranges, first, last = [], codes[0], codes[0]
    for code in codes[1:]:
        if code != last + 1:
            ranges.append((first, last))
            first = code
        last = code
    ranges.append((first, last))
    return re.compile("[" + "".join(f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in ranges) + "]+")
