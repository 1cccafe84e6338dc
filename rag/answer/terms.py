"""The words of a question that an answer must be about: stems, IDF, and the key terms the sources lack.

The offline answerer quotes sentences; it cannot reason about whether they answer. What it can check
is vocabulary. A question's content words (Snowball stems, BM25 stopwords dropped) that no retrieved
chunk contains (document frequency 0, the highest IDF there is) name something the sources never
mention: "Bitcoin" in "Can I pay my invoice with Bitcoin?", "Linux" in "Is there a desktop app for
Linux?". The sources can still answer in other words ("money back" for "refund"), so such a term
only counts as uncovered when the quoted answer also matches the question better WITHOUT it (dense
cosine, see `ExtractiveGenerator`): the answer is then about the rest of the question, not about
that term. Words that shape a question without naming its subject ("how long", "what happens") are
never key terms: they are absent from almost every document but say nothing about answerability.

Only a term written as a name can be missing (`named_terms`): capitalised inside a sentence ("Bitcoin",
"Linux"), with capitals after its first letter ("iPhone", "GraphQL", "SMS"), letters and then digits
("ipv6"; a number with a unit or an ordinal, "10MB", "10th", is none), an identifier ("max_age"), code in
backticks, or any Latin word in a Chinese question (a command or a product: "flatpak", "ufw"). An ordinary
lowercase word the sources never use is the asker's own wording far more often than a thing the sources
lack: "a branded 404 page", "bounce to https", "the visitor's IP", "a switch" for an option. Those
paraphrases used to make the answerer refuse questions its sources answer (bench/README.md).
"""

from __future__ import annotations

import math
import re
from functools import lru_cache
from importlib import resources
from typing import Sequence

from rag.text.cjk import analyzer, has_cjk

_WORDS = re.compile(r"\w+")
_CODE_SPAN = re.compile(r"`([^`]+)`")
# Where a capital letter only starts a sentence: the question's start, or after . ! ? : (and quotes or brackets).
_SENTENCE_START = re.compile(r"(^|[.!?:。！？：]\s+)[\"'(\[]*$")
_BIGRAMS = analyzer("bigram")
# Chinese words that ask rather than name ("how long", "how", "can I"): bigrams that say nothing about
# which sentence answers, like QUESTION_WORDS in English.
_CJK_QUESTION_WORDS = frozenset(
    "多久 多少 如何 怎么 怎样 什么 哪些 哪里 哪个 为何 是否 能否 可以 可否 请问 几天 几个 需要 支持".split()
)

# Stems of words that ask rather than name: "how long/many/much/often", "what happens", "can I get/use".
QUESTION_WORDS = frozenset(
    "long mani much often happen get take tell come realli check cost includ use need want know way "
    "possibl support allow avail exist anyth someth".split()
)


def content_terms(text: str) -> set[str]:
    """Stems of the words that carry meaning (the BM25 stopword list removed); CJK text as character bigrams,
    the terms BM25 matches it by (rag.text.cjk)."""
    stem = _stemmer().stem_word
    stop = _stopwords()
    return {stem(w) for w in _WORDS.findall(_BIGRAMS(text).lower()) if w not in stop and w not in _CJK_QUESTION_WORDS}


def key_terms(question: str) -> dict[str, str]:
    """The question's key terms: stem -> the word as written. Question words and non-Latin runs dropped.

    CJK words are left out: their bigrams include pairs that straddle two words ("久内" in 多久内), which
    no text contains, so a coverage check would refuse every Chinese question.
    """
    stem = _stemmer().stem_word
    stop = _stopwords()
    terms: dict[str, str] = {}
    for word in _WORDS.findall(question):
        low = word.lower()
        if low in stop or not low.isascii():
            continue
        term = stem(low)
        if term not in QUESTION_WORDS:
            terms.setdefault(term, word)
    return terms


def named_terms(question: str) -> set[str]:
    """Stems of the question's words written as names somewhere in it (module docstring)."""
    stem = _stemmer().stem_word
    names = {stem(w.lower()) for span in _CODE_SPAN.findall(question) for w in _WORDS.findall(span)}
    latin_in_cjk = has_cjk(question)  # a Latin word in a Chinese question is a command or a name, not a paraphrase
    for m in _WORDS.finditer(question):
        word = m.group()
        if not word.isascii() or word[0].isdigit():  # a number, with a unit or as an ordinal ("10MB", "10th")
            continue
        capitalised = word[0].isupper() and not _SENTENCE_START.search(question[: m.start()])
        if (
            latin_in_cjk
            or capitalised
            or any(c.isupper() for c in word[1:])
            or "_" in word
            or any(c.isdigit() for c in word)
        ):
            names.add(stem(word.lower()))
    return names


def without_term(question: str, term: str) -> str:
    """The question with every word whose stem is `term` removed (what the ablation check encodes)."""
    stem = _stemmer().stem_word
    return _WORDS.sub(lambda m: "" if stem(m.group().lower()) == term else m.group(), question)


def idf(terms: set[str], documents: Sequence[set[str]]) -> dict[str, float]:
    """Smoothed inverse document frequency of each term over `documents` (BM25's form, never negative)."""
    n = len(documents)
    return {t: math.log(1 + (n - df + 0.5) / (df + 0.5)) for t in terms for df in [sum(t in d for d in documents)]}


@lru_cache(maxsize=1)
def _stemmer():  # noqa: ANN202
    from py_rust_stemmers import SnowballStemmer  # fastembed's own stemmer, installed with it

    return SnowballStemmer("english")


@lru_cache(maxsize=1)
def _stopwords() -> frozenset[str]:
    path = resources.files("rag") / "resources" / "bm25" / "english.txt"
    return frozenset(path.read_text(encoding="utf-8").split())
