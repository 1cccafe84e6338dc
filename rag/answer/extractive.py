"""The offline answerer: quotes the source sentences that best answer the question, each cited.

It writes nothing of its own, so it cannot state what the sources do not say; it can only pick the
wrong sentence, which its citation makes visible. Each sentence (a table row counts as one, read as
"Header: value; ...") is scored by

    0.6 * cosine(question, "heading: sentence") + 0.4 * IDF-weighted share of the question's terms it contains

with the collection's dense model and Snowball stems (stopwords dropped). Prefixing the heading lets a
sentence like "The link is valid for 30 minutes." match a question about password resets. The IDF
comes from every chunk the retrieval saw, so a word found everywhere (the product's name) counts for
little: without it "Does Tidepool sell hardware?" matched "Tidepool has three plans." on the name
alone. A question with no terms left (e.g. Chinese, which the stemmer cannot split) is scored by
cosine alone. The answer is the best sentence plus up to two more within `_SPREAD` of it; when even
the best one scores under `min_sentence_score` it abstains with NOT_IN_SOURCES, as the model is told to.
On the sample set (rag/resources/sample_qa.jsonl) the default 0.45 answers 15 of the 17 answerable
questions (best sentence 0.47-0.78; the other two are English questions answered only in the Chinese
FAQ, which MiniLM, English-only, cannot match) and abstains on "Linux app" and "phone number" (also on
dark mode and hardware: 0.30-0.43), but answers "Bitcoin" (0.46, quoting the refund-email sentence,
cited and visibly off the point). The margin is thin: this is a sentence picker, not a reader; Claude
decides answerability far better.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Iterator, Sequence

import numpy as np

from rag.answer.citations import neutralise_markers
from rag.answer.generator import last_generation
from rag.answer.prompt import NOT_IN_SOURCES
from rag.answer.result import Generation, Source
from rag.chunker import split_sentences
from rag.encoders import DenseEncoder
from rag.retrieve import RetrievalResult

_DENSE_WEIGHT = 0.6
_SPREAD = 0.3  # later sentences must score within this of the best one
_MAX_SENTENCES = 3
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_TABLE_SEPARATOR = re.compile(r"^\s*\|?[\s:|-]+\|?\s*$")
_WORDS = re.compile(r"\w+")


@dataclass(frozen=True)
class Unit:
    """A quotable piece of a source: a sentence or a table row, with its span in the document."""

    label: str
    text: str
    start: int
    end: int
    heading: str


@dataclass(frozen=True)
class ScoredUnit:
    unit: Unit
    score: float


class ExtractiveGenerator:
    """Offline, honest answers: the best-matching source sentences, verbatim, each cited.

    Example:
        gen = ExtractiveGenerator(components.dense, min_sentence_score=0.45)
        result = gen.generate("How long do refunds take?", gate.sources)
        print(result.text)  # "Approved refunds reach your card within 5 to 10 business days. [S1]"
    """

    mode = "extractive"

    def __init__(self, dense: DenseEncoder, min_sentence_score: float) -> None:
        self.dense = dense
        self.min_sentence_score = min_sentence_score
        self.model = f"{dense.name} sentence scoring + term overlap"

    def score(self, question: str, sources: Sequence[Source], retrieval: RetrievalResult | None = None) -> list[ScoredUnit]:
        """Every quotable unit of the sources with its score, best first.

        Args:
            question: the question.
            sources: the chunks that passed the gate.
            retrieval: the retrieval they came from; its candidates are the background for IDF
                (without it, the sources themselves are).
        """
        units = [u for s in sources for u in quotable_units(s)]
        if not units:
            return []
        query = self.dense.encode_query(question)
        vectors = self.dense.encode_documents([f"{u.heading.split(' > ')[-1]}: {u.text}" if u.heading else u.text for u in units])
        cosine = vectors @ np.asarray(query)
        background = retrieval.candidates if retrieval is not None else [s.candidate for s in sources]
        weights = idf(content_terms(question), [content_terms(c.chunk.chunk.embed_text) for c in background])
        total = sum(weights.values())
        scored = []
        for unit, cos in zip(units, cosine):
            if total > 0:
                overlap = sum(weights[t] for t in weights.keys() & content_terms(unit.text)) / total
                value = _DENSE_WEIGHT * float(cos) + (1 - _DENSE_WEIGHT) * overlap
            else:
                value = float(cos)
            scored.append(ScoredUnit(unit, value))
        return sorted(scored, key=lambda s: -s.score)

    def stream(self, question: str, sources: Sequence[Source], retrieval: RetrievalResult | None = None) -> Iterator[str | Generation]:
        scored = self.score(question, sources, retrieval)
        if not scored or scored[0].score < self.min_sentence_score:
            best = f"; the best scored {scored[0].score:.2f}: {scored[0].unit.text!r}" if scored else ""
            reason = f"no sentence of the {len(sources)} sources sent scores {self.min_sentence_score:g} or more{best}"
            yield NOT_IN_SOURCES
            yield Generation(NOT_IN_SOURCES, self.model, abstain_reason=reason)
            return
        floor = max(self.min_sentence_score, scored[0].score - _SPREAD)
        chosen: list[Unit] = []
        for s in scored:
            if s.score >= floor and len(chosen) < _MAX_SENTENCES and s.unit.text not in {u.text for u in chosen}:
                chosen.append(s.unit)
        # A bracket like `[S2]` in the quoted text would read as a citation of another source.
        lines = [f"{neutralise_markers(u.text)} [{u.label}]" for u in chosen]
        spans: dict[str, tuple[tuple[int, int], ...]] = {}
        for u in chosen:
            spans[u.label] = spans.get(u.label, ()) + ((u.start, u.end),)
        for i, line in enumerate(lines):
            yield line if i == 0 else "\n" + line
        yield Generation("\n".join(lines), self.model, spans=spans)

    def generate(self, question: str, sources: Sequence[Source], retrieval: RetrievalResult | None = None) -> Generation:
        return last_generation(self.stream(question, sources, retrieval))


def quotable_units(source: Source) -> list[Unit]:
    """Sentences of a chunk's prose and rows of its tables (code blocks are skipped), with document spans."""
    chunk = source.candidate.chunk.chunk
    text = chunk.text
    units: list[Unit] = []
    para_start: int | None = None
    header: list[str] | None = None
    in_fence = False
    pos = 0

    def close_paragraph(at: int) -> None:
        nonlocal para_start
        if para_start is not None:
            for a, b in split_sentences(text, para_start, at):
                units.append(Unit(source.label, " ".join(text[a:b].split()), chunk.start + a, chunk.start + b, chunk.heading))
        para_start = None

    for line in text.split("\n"):
        end = pos + len(line)
        if _FENCE.match(line):
            close_paragraph(pos)
            in_fence = not in_fence
        elif in_fence:
            pass
        elif line.lstrip().startswith("|"):
            close_paragraph(pos)
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if header is None:
                header = cells
            elif not _TABLE_SEPARATOR.match(line):
                row = "; ".join(f"{h}: {v}" for h, v in zip(header, cells) if v)
                units.append(Unit(source.label, row, chunk.start + pos, chunk.start + end, chunk.heading))
        elif not line.strip():
            close_paragraph(pos)
            header = None
        else:
            header = None
            if para_start is None:
                para_start = pos
        pos = end + 1
    close_paragraph(len(text))
    return units


def content_terms(text: str) -> set[str]:
    """Stems of the words that carry meaning (the BM25 stopword list removed)."""
    stem = _stemmer().stem_word
    stop = _stopwords()
    return {stem(w) for w in _WORDS.findall(text.lower()) if w not in stop}


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
