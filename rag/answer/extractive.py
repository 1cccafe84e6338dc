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
cosine alone. The answer is the best sentence plus up to two more within `_SPREAD` of it, each
adding a key term of the question the ones before lack (so no padding from a neighbouring sentence).
It abstains with NOT_IN_SOURCES, as the model is told to, when even the best sentence scores under
`min_sentence_score`, or when the question names something no retrieved chunk mentions and the
quoted sentences ignore it (rag/answer/terms.py): "Can I pay my invoice with Bitcoin?" used to get
the refund-email sentence (0.46). bench/answers.py measures both rules on the sample set and on
tests/data/sample_unanswerable.jsonl (numbers in the README). This is a sentence picker, not a
reader; Claude decides answerability far better.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterator, Sequence

import numpy as np

from rag.answer.citations import neutralise_markers
from rag.answer.generator import last_generation
from rag.answer.prompt import NOT_IN_SOURCES
from rag.answer.result import Generation, Source
from rag.answer.terms import content_terms, idf, key_terms, without_term
from rag.text.cjk import has_cjk
from rag.text.sentences import split_sentences
from rag.encoders.base import DenseEncoder, english_only
from rag.retrieval.result import RetrievalResult
from rag.text.words import plural

_DENSE_WEIGHT = 0.6
_SPREAD = 0.3  # later sentences must score within this of the best one
_MAX_SENTENCES = 3
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_TABLE_SEPARATOR = re.compile(r"^\s*\|?[\s:|-]+\|?\s*$")
_QUESTION_ENDS = ("?", "？")
_IGNORED = 0.02  # an unmentioned key term is ignored when dropping it raises the answer's cosine by this much


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
    cosine: float = 0.0  # the dense part alone, what the key-term check compares
    vector: np.ndarray | None = field(default=None, compare=False, repr=False)


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

    def score(
        self, question: str, sources: Sequence[Source], retrieval: RetrievalResult | None = None
    ) -> list[ScoredUnit]:
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
        vectors = self.dense.encode_documents(
            [f"{u.heading.split(' > ')[-1]}: {u.text}" if u.heading else u.text for u in units]
        )
        cosine = vectors @ np.asarray(query)
        seen = background(sources, retrieval)
        # A CJK bigram no retrieved text holds straddles two words of the question ("久内" in 多久内): an
        # artifact of the cut, not something asked about, so it does not weigh against every sentence.
        terms = {t for t in content_terms(question) if not has_cjk(t) or any(t in d for d in seen)}
        weights = idf(terms, seen)
        total = sum(weights.values())
        # An English-only model's cosine on Chinese or Japanese is noise: such a question is scored by its terms.
        dense_weight = 0.0 if has_cjk(question) and english_only(self.dense.name) else _DENSE_WEIGHT
        scored = []
        for unit, cos, vector in zip(units, cosine, vectors):
            if total > 0:
                overlap = sum(weights[t] for t in weights.keys() & content_terms(unit.text)) / total
                value = dense_weight * float(cos) + (1 - dense_weight) * overlap
            else:  # no term to match: the cosine alone, unless the model cannot read the question
                value = float(cos) if dense_weight else 0.0
            scored.append(ScoredUnit(unit, value, float(cos), vector))
        return sorted(scored, key=lambda s: -s.score)

    def stream(
        self, question: str, sources: Sequence[Source], retrieval: RetrievalResult | None = None
    ) -> Iterator[str | Generation]:
        scored = self.score(question, sources, retrieval)
        keys = key_terms(question)
        chosen = choose(scored, self.min_sentence_score, set(keys)) if scored else []
        if not chosen:
            best = f"; the best scored {scored[0].score:.2f}: {scored[0].unit.text!r}" if scored else ""
            reason = (
                f"no sentence of the {plural(len(sources), 'source')} sent scores {self.min_sentence_score:g} "
                f"or more{best}"
            )
        else:
            missing = self.ignored_terms(question, keys, chosen, background(sources, retrieval))
            reason = (
                f"the sources never mention {', '.join(repr(w) for w in missing)}, and the best sentence "
                f"({chosen[0].unit.text!r}) matches the question better without "
                f"{'it' if len(missing) == 1 else 'them'}" if missing else ""
            )  # fmt: skip
        if reason:
            yield NOT_IN_SOURCES
            yield Generation(NOT_IN_SOURCES, self.model, abstain_reason=reason)
            return
        # A bracket like `[S2]` in the quoted text would read as a citation of another source.
        lines = [_cited(s.unit) for s in chosen]
        spans: dict[str, tuple[tuple[int, int], ...]] = {}
        for s in chosen:
            spans[s.unit.label] = spans.get(s.unit.label, ()) + ((s.unit.start, s.unit.end),)
        for i, line in enumerate(lines):
            yield line if i == 0 else "\n" + line
        yield Generation("\n".join(lines), self.model, spans=spans)

    def generate(
        self, question: str, sources: Sequence[Source], retrieval: RetrievalResult | None = None
    ) -> Generation:
        return last_generation(self.stream(question, sources, retrieval))

    def ignored_terms(
        self, question: str, keys: dict[str, str], chosen: Sequence[ScoredUnit], seen: Sequence[set[str]]
    ) -> list[str]:
        """Key terms (as written) that no retrieved chunk contains and every chosen sentence ignores.

        A sentence ignores a term when the question without that term is closer to it (by `_IGNORED`
        or more) than the question itself: it answers the rest of the question. "money back" for a
        refund sentence moves it closer (kept); "Bitcoin" for the refund-email sentence moves it away.
        """
        unseen = [t for t in keys if not any(t in terms for terms in seen)]
        if not unseen:
            return []
        ablated = [np.asarray(self.dense.encode_query(without_term(question, t))) for t in unseen]
        return [
            keys[t] for t, q in zip(unseen, ablated)
            if all(s.cosine - float(s.vector @ q) <= -_IGNORED for s in chosen if s.vector is not None)
        ]  # fmt: skip


def _cited(unit: Unit) -> str:
    """A quoted unit with its citation marker: after the sentence, before a code block the sentence introduces
    (a marker after the code would read as part of it)."""
    sentence, newline, code = unit.text.partition("\n")
    return f"{neutralise_markers(sentence)} [{unit.label}]" + (newline + neutralise_markers(code) if newline else "")


def choose(scored: Sequence[ScoredUnit], minimum: float, keys: set[str]) -> list[ScoredUnit]:
    """The sentences to quote: the best one, then up to two more that each add a key term not yet quoted.

    Each must score `minimum` and within `_SPREAD` of the best. Requiring a new key term is the
    per-sentence relevance floor: without it, "When does a downgrade take effect?" also quoted the
    upgrade sentence next to the answer, and "How much storage does Team include?" every plan's row.
    """
    if not scored or scored[0].score < minimum:
        return []
    floor = max(minimum, scored[0].score - _SPREAD)
    chosen = [scored[0]]
    covered = content_terms(scored[0].unit.text) & keys
    for s in scored[1:]:
        if len(chosen) == _MAX_SENTENCES or s.score < floor:
            break
        adds = (content_terms(s.unit.text) & keys) - covered
        if adds and s.unit.text not in {c.unit.text for c in chosen}:
            chosen.append(s)
            covered |= adds
    return chosen


def background(sources: Sequence[Source], retrieval: RetrievalResult | None) -> list[set[str]]:
    """The content terms of every chunk the retrieval saw (the sources alone without it): the IDF background."""
    chunks = retrieval.candidates if retrieval is not None else [s.candidate for s in sources]
    return [content_terms(c.chunk.chunk.embed_text) for c in chunks]


def quotable_units(source: Source) -> list[Unit]:
    """Sentences of a chunk's prose and rows of its tables, with document spans.

    A question is never a unit (a FAQ entry's title asks, it does not answer). Code blocks are not units
    of their own, but a sentence that introduces one ("Run this:") carries it, so the quote holds the
    command it announces.
    """
    chunk = source.candidate.answer_chunk
    text = chunk.text
    units: list[Unit] = []
    para_start: int | None = None
    header: list[str] | None = None
    in_fence = False
    intro: int | None = None  # the unit ending in ":" that the next code block belongs to
    pos = fence_start = 0

    def close_paragraph(at: int) -> None:
        """Add the paragraph's sentences; remember its last one when it introduces what follows (ends in ":")."""
        nonlocal para_start, intro
        if para_start is not None:
            intro = None
            for a, b in split_sentences(text, para_start, at):
                sentence = " ".join(text[a:b].split())
                if not sentence.endswith(_QUESTION_ENDS):
                    units.append(Unit(source.label, sentence, chunk.start + a, chunk.start + b, chunk.heading))
                intro = len(units) - 1 if sentence.endswith((":", "：")) and units else None
        para_start = None

    for line in text.split("\n"):
        end = pos + len(line)
        if _FENCE.match(line):
            if not in_fence:
                close_paragraph(pos)
                fence_start = pos
            elif intro is not None:
                u = units[intro]
                code = text[fence_start:end]
                units[intro] = Unit(u.label, f"{u.text}\n{code}", u.start, chunk.start + end, u.heading)
                intro = None
            in_fence = not in_fence
        elif in_fence:
            pass
        elif line.lstrip().startswith("|"):
            close_paragraph(pos)
            intro = None
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
