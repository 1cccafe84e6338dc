"""The forms of a text the patterns are matched against: the text as a reader (or a model) reads it.

Format characters (zero-width spaces, soft hyphens) are dropped, compatibility forms (full-width letters)
folded by NFKC, HTML entities decoded, Markdown emphasis inside a word removed, line breaks read as
spaces and Latin look-alike Cyrillic and Greek letters read as Latin (`rag.text.fold.fold`). Then the
respellings a reader undoes without noticing: letters split by dots or spaces ("I.g.n.o.r.e") joined
into a word, and leetspeak digits inside a word ("1gn0r3") read as the letters they stand for.
"""

from __future__ import annotations

import html
import re

from rag.text.fold import fold, strip_format

_EMPHASIS_IN_WORD = re.compile(r"(?<=\w)\*+(?=\w)")  # `ig**nore**`; an intraword `_` is no emphasis
# Four or more single letters, each followed by the same separator: "i.g.n.o.r.e", "i g n o r e",
# "i-g-n-o-r-e". A list like "a b c" is three and stays; a longer one joins into a non-word that no
# pattern matches, so joining it costs nothing.
_SPACED = re.compile(r"(?<!\w)([^\W\d_])([.\-_·*/]\s?|\s)(?:[^\W\d_]\2){2,}[^\W\d_](?!\w)")
_SEPARATORS = re.compile(r"[.\-_·*/\s]")
# A word of letters and leetspeak digits or signs, at least one of each kind and two letters: "1gn0r3",
# "pr3v10u5", "$y$tem". Version strings ("py310", "h264") have other digits or fold into non-words.
_LEET_WORD = re.compile(
    r"(?<![\w@$])(?=[^\W_]*[013457@$])(?=(?:[013457@$]*[^\W\d_]){2})(?:[^\W\d_]|[013457@$])+(?![\w@$])"
)
_LEET = str.maketrans("130457@$", "ieoastas")


def reader_forms(text: str) -> tuple[str, ...]:
    """Lower-cased forms of `text`: lines kept (for `^system:`), lines joined, look-alikes read as Latin,
    then respelled. The look-alike form is separate because it turns real Cyrillic and Greek words into
    nonsense; the others keep them for the Russian patterns. Usually most forms are equal: each is kept once.
    """
    plain = _EMPHASIS_IN_WORD.sub("", strip_format(html.unescape(text))).lower()
    joined = " ".join(plain.split())
    folded = " ".join(fold(plain).split())
    return tuple(dict.fromkeys((plain, joined, folded, respelled(folded))))


def shown(text: str, limit: int) -> str:
    """`text` quoted in a reason: one line, control characters replaced (a terminal never sees an escape
    sequence from a document), cut at `limit` characters."""
    text = "".join(ch if ch.isprintable() else "?" for ch in " ".join(text.split()))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def respelled(text: str) -> str:
    """`text` with spaced-out letters joined into words and leetspeak read as letters."""
    text = _SPACED.sub(lambda m: _SEPARATORS.sub("", m.group(0)), text)
    return _LEET_WORD.sub(lambda m: m.group(0).translate(_LEET), text)
