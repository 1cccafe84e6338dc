"""Chinese, Japanese and Korean text as terms BM25 can match.

Those scripts write words without spaces, so a whitespace tokenizer reads a whole run of characters
("多久内能退货") as one token that no other text contains, and the sparse stage finds nothing. Before
the BM25 encoder sees a text, each run of CJK characters is rewritten as space-separated terms; Latin
text around it is left exactly as it was, so English chunks get the same terms as before.

Two analyzers, chosen by `RAGSCOPE_SPARSE_TOKENIZER` and recorded with each collection (its chunks and
its questions must be cut the same way):
- `bigram`: overlapping character bigrams, as Lucene's CJKAnalyzer does ("退货政策" -> 退货 货政 政策);
  a run of one character stays one term. No dictionary, works for every CJK language.
- `jieba`: the jieba segmenter's words (Chinese), searched as jieba's search mode cuts them (a long
  word also gives its shorter words), Japanese and Korean runs fall back to bigrams.
`whitespace` is the tokenizer collections were made with before this: runs stay whole.
Why the default: docs/retrieval-quality.md, "Chinese".
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

SPARSE_TOKENIZERS = ("bigram", "jieba", "whitespace")
# Han (with extension A and compatibility ideographs), Hiragana, Katakana, Hangul syllables and jamo.
_CJK_CHAR = r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\u1100-\u11ff\u3130-\u318f]"
_CJK_ONE = re.compile(_CJK_CHAR)
_CJK_RUN = re.compile(_CJK_CHAR + "+")
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def has_cjk(text: str) -> bool:
    """Whether `text` holds any CJK character (the analyzers change nothing else)."""
    return _CJK_RUN.search(text) is not None


def cjk_characters(text: str) -> int:
    """How many CJK characters `text` holds: their count, not their words, says how much a CJK sentence says."""
    return len(_CJK_ONE.findall(text))


def bigrams(run: str) -> list[str]:
    """Overlapping character bigrams of one CJK run; a one-character run is its own term."""
    return [run] if len(run) < 2 else [run[i : i + 2] for i in range(len(run) - 1)]


def jieba_terms(run: str) -> list[str]:
    """jieba's search-mode words for a Chinese run (bigrams for a run without Han characters)."""
    if not _HAN.search(run):
        return bigrams(run)
    return [w for w in _jieba().lcut_for_search(run) if w.strip()]


def analyzer(name: str) -> Callable[[str], str]:
    """The text rewrite for a sparse tokenizer setting: CJK runs become space-separated terms.

    Raises:
        ValueError: an unknown tokenizer name.
    """
    if name == "whitespace":
        return _unchanged
    if name not in SPARSE_TOKENIZERS:
        raise ValueError(f"unknown sparse tokenizer {name!r}; use one of {', '.join(SPARSE_TOKENIZERS)}")
    cut = bigrams if name == "bigram" else jieba_terms

    def analyze(text: str) -> str:
        return _CJK_RUN.sub(lambda m: " " + " ".join(cut(m.group())) + " ", text)

    return analyze


def _unchanged(text: str) -> str:
    return text


@lru_cache(maxsize=1)
def _jieba():  # noqa: ANN202 - the jieba module
    """jieba, imported and its dictionary loaded once per process (a second of start-up only Chinese
    collections pay), not once per CJK run; jieba.initialize takes its own lock."""
    try:
        import jieba
    except ImportError:
        raise ValueError("the jieba tokenizer needs the package: pip install -e '.[zh]' (or use bigram)") from None
    jieba.setLogLevel(60)  # its "Building prefix dict" lines are noise on every start
    jieba.initialize()
    return jieba
