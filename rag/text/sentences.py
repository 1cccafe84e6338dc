"""Sentence boundaries: one splitter for the chunker, the offline answerer, sentence vectors and the inspector.

Western sentence ends need a space after them; CJK full stops (。！？；) do not, so Chinese text is never
cut mid-sentence. Closing quotes and brackets stay with the sentence they close.
"""

from __future__ import annotations

import re

from rag.text.cjk import cjk_characters

# End of a sentence: Western punctuation followed by space, or CJK punctuation (no space needed).
# Group 1 / 2: closing quotes and brackets, which belong to the sentence they close.
SENTENCE_END = re.compile(r"(?<=[.!?])([\"'”’)\]]*)\s+(?=\S)|(?<=[。！？；])(?![。！？；])([」』”’）)]*)")


# Inline code (`git add .`): a full stop inside it ends no sentence.
_INLINE_CODE = re.compile(r"`[^`\n]+`")
_WORD = re.compile(r"[^\W\d_]{2,}")
# A sentence this short ("Yes.", "In short:", "是的。") states nothing a reader would ask a source for.
_MIN_WORDS, _MIN_CJK = 3, 4


def states_something(sentence: str) -> bool:
    """Whether `sentence` is long enough to state a fact: 3 words, or 4 CJK characters (no spaces to count)."""
    return len(_WORD.findall(sentence)) >= _MIN_WORDS or cjk_characters(sentence) >= _MIN_CJK


def split_sentences(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Sentence spans (absolute offsets) inside text[start:end], whitespace trimmed; inline code is never cut."""
    end = len(text) if end is None else end
    code = [(m.start(), m.end()) for m in _INLINE_CODE.finditer(text, start, end)]
    spans, cursor = [], start
    for match in SENTENCE_END.finditer(text, start, end):
        if any(a < match.start() < b for a, b in code):
            continue
        spans.append((cursor, match.start() + len(match.group(1) or match.group(2) or "")))
        cursor = match.end()
    spans.append((cursor, end))
    return [t for t in (trim_span(text, a, b) for a, b in spans) if t]


def trim_span(text: str, start: int, end: int) -> tuple[int, int] | None:
    """text[start:end] without its leading and trailing white space, as a span; None when nothing is left."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return (start, end) if end > start else None
