"""The forms of a text the patterns are matched against: the text as a reader (or a model) reads it.

Each form is a skeleton (`rag.text.fold.skeleton`): lower case, no format characters (zero-width spaces,
soft hyphens, tag characters), no accents, strokes or other combining marks, compatibility forms folded and
every look-alike letter Unicode lists read as the letter it imitates; HTML entities are decoded. One form
keeps the lines and the markup (`^system:`, `</sources>`); the others read the text rendered, as a page
shows it (`rag.text.fold.rendered`: emphasis around or inside words, link syntax, code ticks, tags and
table pipes gone), on one line, with spaces between CJK characters closed up. Then the respellings a reader
undoes without noticing: letters split by dots or spaces ("I.g.n.o.r.e", "i g n o r e") joined into a word,
and leetspeak digits inside a word ("1gn0r3") read as the letters they stand for.
"""

from __future__ import annotations

import html
import re

from rag.text.confusables import ambiguous_l
from rag.text.fold import rendered, skeleton, strip_marks

_EMPHASIS_IN_WORD = re.compile(r"(?<=\w)\*+(?=\w)")  # `ig**nore**`, in the form that keeps the markup
# Three or more single letters, each followed by the same separator: "i.g.n.o.r.e", "i g n o r e",
# "i-g-n-o-r-e". Words spaced out with a wider gap between them ("i g n o r e   a l l") join word by word.
# A list like "a b c" joins into a non-word that no pattern matches, so joining costs nothing. Two letters
# join only with a separator that spaces out a longer word of the same text ("a.s" beside "t.o.d.a.s", not
# the "e.g" of plain prose, nor the words "o p" of "o p\tr\to\tm\tp\tt").
_SPACED = re.compile(r"(?<!\w)[^\W\d_]([.\-_·*/]\s?|\s)(?:[^\W\d_]\1)+[^\W\d_](?!\w)")
_SEPARATORS = re.compile(r"[.\-_·*/\s]")
# Spaces other than the plain one (thin, no-break, ideographic...) become tabs before the skeleton folds
# them all into plain spaces: letters spaced with one kind and words with another still join word by word.
_OTHER_SPACE = re.compile(r"[^\S \n\t]")
_CJK = r"\u2e80-\u2fdf\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_CJK_GAP = re.compile(rf"(?<=[{_CJK}])\s+(?=[{_CJK}])")
# A word of letters and leetspeak digits or signs, at least one of each kind and two letters: "1gn0r3",
# "pr3v10u5", "$y$tem". Version strings ("py310", "h264") have other digits or fold into non-words.
_LEET_WORD = re.compile(
    r"(?<![\w@$])(?=[^\W_]*[013457@$])(?=(?:[013457@$]*[^\W\d_]){2})(?:[^\W\d_]|[013457@$])+(?![\w@$])"
)
_LEET = str.maketrans("130457@$", "ieoastas")
RUN_TOGETHER = 20  # letters: a spaced-out run this long holds several words with no gap left between them


def reader_forms(text: str) -> tuple[str, ...]:
    """Skeletons of `text`: lines and markup kept, then rendered on one line, then respelled; and the same
    again with the look-alikes of a vertical stroke read the other way (i as l, l as i) when it has any.
    Usually some forms are equal: each is kept once."""
    unescaped = html.unescape(text)
    forms = []
    flipped = () if unescaped.isascii() else tuple(unescaped.translate(t) for t in ambiguous_l())
    for variant in dict.fromkeys((unescaped, *flipped)):
        shown = _shown(variant)
        forms.append(skeleton(_EMPHASIS_IN_WORD.sub("", variant)))
        forms += [_one_line(skeleton(t)) for t in (shown, respelled(shown))]
    return tuple(dict.fromkeys(forms))


def as_written(text: str, start: int, end: int) -> str:
    """The part of `text` that `reader_forms(text)[0][start:end]` reads, lower-cased: what a match in the first
    form quotes, in the letters the document uses (a skeleton of Russian is a jumble of look-alikes). That form
    is the skeleton of each character in turn, so its positions map back one character at a time."""
    source = _EMPHASIS_IN_WORD.sub("", html.unescape(text))
    at = 0
    first = last = None
    for i, ch in enumerate(source):
        at += len(skeleton(ch))
        if first is None and at > start:
            first = i
        if at >= end:
            last = i + 1
            break
    return source[first or 0 : last or len(source)].lower()


def run_together(text: str) -> list[str]:
    """The spaced-out runs of `text` ("i g n o r e a l l p r e v i o u s") that join into `RUN_TOGETHER` or
    more letters: words whose gaps are gone, which no pattern reads."""
    joined = (_SEPARATORS.sub("", m.group(0)) for m in _SPACED.finditer(_shown(html.unescape(text))))
    return [skeleton(word) for word in joined if len(word) >= RUN_TOGETHER]


def _shown(text: str) -> str:
    """`text` rendered, without combining marks, with other spaces as tabs: the letters as a reader sees them
    before they are respelled (a look-alike or an accented letter is still one letter to space out)."""
    return strip_marks(_OTHER_SPACE.sub("\t", rendered(text)))


def shown(text: str, limit: int) -> str:
    """`text` quoted in a reason: one line, control characters replaced (a terminal never sees an escape
    sequence from a document), cut at `limit` characters."""
    text = "".join(ch if ch.isprintable() else "?" for ch in " ".join(text.split()))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def respelled(text: str) -> str:
    """`text` with spaced-out letters joined into words and leetspeak read as letters."""
    separators = {m.group(1) for m in _SPACED.finditer(text)}
    text = _SPACED.sub(lambda m: _SEPARATORS.sub("", m.group(0)), text)
    if separators:
        pairs = "|".join(map(re.escape, separators))
        text = re.sub(rf"(?<!\w)[^\W\d_](?:{pairs})[^\W\d_](?!\w)", lambda m: _SEPARATORS.sub("", m.group(0)), text)
    return _LEET_WORD.sub(lambda m: m.group(0).translate(_LEET), text)


def _one_line(text: str) -> str:
    return " ".join(_CJK_GAP.sub("", text).split())
