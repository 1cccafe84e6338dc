"""Invisible format characters (Unicode category Cf): what ingest keeps out of stored text, and what they hide.

A reader sees nothing of a zero-width space, a bidi control or a soft hyphen, but a model is sent every one,
and Unicode's tag characters (U+E0020-U+E007E, "ASCII smuggling") spell a whole instruction that shows as
nothing on screen and that models read; so does a run of variation selectors after a letter or emoji, each
one byte ("emoji smuggling"). So stored text, which is what is shown, embedded and sent, holds none of them
(`drop_invisible`, called once for every format by `rag.ingest.loaders.document`), and what a removed run
spelled is kept beside the text for the injection scan to read (`spelled`).

Kept, because text needs them and they hide nothing: a zero-width joiner inside an emoji sequence (👩‍💻), a
zero-width joiner or non-joiner between letters of a script that shapes with them (Persian, Indic scripts),
the tag characters of a subdivision flag (🏴 + "gbsct" + cancel tag), one variation selector (❤️, a CJK
variant), and the visible Arabic number signs that Unicode files as format characters.
"""

from __future__ import annotations

import functools
import re
import sys
import unicodedata

_ZWNJ, _ZWJ = "\u200c", "\u200d"
RIGHT_TO_LEFT = "\u202e"  # the override: Latin letters after it are shown in reverse order
_FLAG, _CANCEL_TAG = "\U0001f3f4", "\U000e007f"
_FLAG_TAGS = re.compile("[\U000e0030-\U000e0039\U000e0061-\U000e007a]{2,6}\U000e007f")
_VISIBLE = frozenset("\u0600\u0601\u0602\u0603\u0604\u0605\u06dd\u070f\u0890\u0891\u08e2\U000110bd\U000110cd")
# Scripts that shape letters with ZWJ/ZWNJ: Hebrew to Myanmar, Khmer and Mongolian, and the Indic blocks after.
_JOINING = ((0x0590, 0x109F), (0x1780, 0x18AF), (0xA800, 0xA9FF), (0x11000, 0x11FFF))
# A run of other invisible characters this long can carry a message of its own (bits as two kinds of space).
MIN_CARRIER = 8


def drop_invisible(text: str) -> tuple[str, tuple[tuple[int, str], ...]]:
    """`text` without its invisible format characters, and the runs removed that may say something: (offset
    in the returned text, the characters) for each run holding tag characters, variation selectors, a
    right-to-left override (which shows the text after it back to front) or `MIN_CARRIER` characters."""
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
        if _TAG_CHAR.search(run) or _SELECTORS.fullmatch(run) or RIGHT_TO_LEFT in run or len(run) >= MIN_CARRIER:
            hidden.append((size, run))
        at = match.end()
    if not out:
        return text, ()
    out.append(text[at:])
    return "".join(out), tuple(hidden)


def spelled(run: str) -> str:
    """The text a removed run spells: Unicode tag characters are ASCII + U+E0000; variation selectors are
    bytes (VS1-16 are 0-15, VS17-256 are 16-255) of UTF-8 text. "" when it spells nothing readable."""
    if _SELECTORS.fullmatch(run):
        raw = bytes(ord(ch) - 0xFE00 if ch <= "\ufe0f" else ord(ch) - 0xE0100 + 16 for ch in run)
        return raw.decode("utf-8", errors="ignore")
    return "".join(chr(ord(ch) - 0xE0000) for ch in run if "\U000e0020" <= ch <= "\U000e007e")


_TAG_CHAR = re.compile("[\U000e0000-\U000e007f]")
_SELECTORS = re.compile("[\ufe00-\ufe0f\U000e0100-\U000e01ef]{2,}")


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
    """Runs of two or more variation selectors, and runs of Cf characters (read from the Unicode database once,
    on first use)."""
    codes = [c for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Cf"]
    ranges, first, last = [], codes[0], codes[0]
    for code in codes[1:]:
        if code != last + 1:
            ranges.append((first, last))
            first = code
        last = code
    ranges.append((first, last))
    cf = "[" + "".join(f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in ranges) + "]+"
    return re.compile(f"{_SELECTORS.pattern}|{cf}")
