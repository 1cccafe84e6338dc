"""The offline answerer: quotes the source sentences that answer the question, each cited.

It writes nothing of its own, so it cannot state what the sources do not say; it can only pick the
wrong sentence, which its citation makes visible. What it can quote is a sentence, a table row (read as
"Header: value; ..."), a list item, or a sentence with the list or code block it introduces
(rag/answer/units.py). Each unit's relevance is

    0.6 * cosine(question, "heading: sentence") + 0.4 * IDF-weighted share of the question's terms it contains

with the collection's dense model and Snowball stems (stopwords dropped). Prefixing the heading lets a
sentence like "The link is valid for 30 minutes." match a question about password resets. The IDF
comes from every chunk the retrieval saw, so a word found everywhere (the product's name) counts for
little. A question with no terms left (e.g. Chinese, which the stemmer cannot split) is scored by
cosine alone.

Relevance alone quotes the sentence that repeats the question's words, often the one that names the
topic ("There are advantages and disadvantages to using WAL") rather than the one that answers (the
list of disadvantages after it). So units are ranked by the relevance of their topic (their own, or a
close neighbour's less a little, `in_context`) plus a share of how much they look like the kind of
answer the question asks for (a list, a command, a value, a reason, a definition: rag/answer/kinds.py).
The answer is the best unit plus up to two more within `_SPREAD` of it, each adding a key term of the
question the ones before lack (or, once, saying what its section's subject does: `names_its_section`); when
the best is of the kind asked, the others must be too, so the sentence that only names the topic is not
quoted beside the answer.

It abstains with NOT_IN_SOURCES, as the model is told to, when the answer score (the best unit's own
relevance averaged with the best chunk's cosine) is under `min_sentence_score` (the signal
bench/answer_quality.py measured to separate answerable from unanswerable questions best, with its AUC, in
bench/README.md; a question scored by its terms alone has a bar of its own, `_TERMS_ONLY_BAR`), or when the
question names something no retrieved chunk mentions and the best sentence ignores it (rag/answer/terms.py):
"Can I pay my invoice with Bitcoin?" used to get the refund-email sentence. Only a word written as a name
can be that something; an ordinary word the sources lack is the asker's paraphrase. This is a sentence
picker, not a reader; Claude decides answerability far better. Document text is only ever quoted, never followed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator, Sequence

import numpy as np

from rag.answer.citations import neutralise_markers
from rag.answer.generator import last_generation
from rag.answer.kinds import OTHER, fit, names_its_section, question_kind, states
from rag.answer.prompt import NOT_IN_SOURCES
from rag.answer.result import Generation, Source
from rag.answer.terms import content_terms, idf, key_terms, named_terms, without_term
from rag.answer.units import Unit, section_units
from rag.encoders.base import DenseEncoder, english_only
from rag.retrieval.result import RetrievalResult
from rag.text.cjk import has_cjk
from rag.text.words import plural

_DENSE_WEIGHT = 0.6
_SPREAD = 0.3  # later sentences must score within this of the best one
_MAX_SENTENCES = 3
_FIT_WEIGHT = 0.1  # how much the kind of answer counts beside relevance (docs/answers.md)
_CONTEXT_DROP = 0.05  # a unit inherits its topic's relevance less this much (`in_context`)
_CONTEXT_BEFORE = 2
# A relevance of terms alone (no cosine to average with) runs far lower than the answer score: this share of
# `min_sentence_score` keeps as many of the development sets' answerable questions as the bar itself does on
# the answer score (bench/README.md, issue 38).
_TERMS_ONLY_BAR = 0.4
_IGNORED = 0.02  # an unmentioned key term is ignored when dropping it raises the answer's cosine by this much


@dataclass(frozen=True)
class ScoredUnit:
    """A unit and what it was ranked by: `score` = context relevance + `_FIT_WEIGHT` * fit (docs/answers.md)."""

    unit: Unit
    score: float
    cosine: float = 0.0  # the dense part alone, what the key-term check compares
    vector: np.ndarray | None = field(default=None, compare=False, repr=False)
    relevance: float = 0.0  # its own relevance to the question, before context and kind
    fit: float = 0.0  # how much it looks like the kind of answer asked for (rag/answer/kinds.py)
    opens: bool = False  # it says what its section's subject does (`names_its_section`): quoted beside the best


class ExtractiveGenerator:
    """Offline, honest answers: the best-matching source sentences, verbatim, each cited.

    Example:
        gen = ExtractiveGenerator(components.dense, min_sentence_score=0.40)
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
        units = section_units(sources)
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
        relevance = []
        for unit, cos in zip(units, cosine):
            if total > 0:
                overlap = sum(weights[t] for t in weights.keys() & content_terms(unit.text)) / total
                relevance.append(dense_weight * float(cos) + (1 - dense_weight) * overlap)
            else:  # no term to match: the cosine alone, unless the model cannot read the question
                relevance.append(float(cos) if dense_weight else 0.0)
        kind = question_kind(question)
        fits = [fit(kind, u) for u in units]
        context = in_context(units, relevance) if kind != OTHER else relevance
        scored = [
            ScoredUnit(u, c + _FIT_WEIGHT * f, float(cos), vector, r, f, names_its_section(u))
            for u, r, c, f, cos, vector in zip(units, relevance, context, fits, cosine, vectors)
        ]
        # A fragment or a pointer ("See also set xtics (p. 218) for more information") is quoted only when nothing
        # that states something is left.
        return sorted(scored, key=lambda s: (not states(s.unit), -s.score))

    def stream(
        self, question: str, sources: Sequence[Source], retrieval: RetrievalResult | None = None
    ) -> Iterator[str | Generation]:
        scored = self.score(question, sources, retrieval)
        keys = key_terms(question)
        # The cosine of an English-only model on Chinese is noise (as in `score`): the sentence's terms decide
        # alone, on their own scale (`_TERMS_ONLY_BAR`).
        terms_only = has_cjk(question) and english_only(self.dense.name)
        cosine = None if terms_only else top_cosine(sources, retrieval)
        minimum = self.min_sentence_score * (_TERMS_ONLY_BAR if terms_only else 1.0)
        chosen = choose(scored, minimum, set(keys), cosine) if scored else []
        if not chosen:
            top = max(scored, key=lambda s: s.relevance) if scored else None
            best = f"; the best scored {top.relevance:.2f}: {top.unit.text!r}" if top else ""
            mean = f", averaged with the best chunk's cosine {cosine:.2f}," if cosine is not None and top else ""
            reason = f"no sentence of the {plural(len(sources), 'source')} sent scores {minimum:g} or more{best}{mean}"
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
        for part in (p for s in chosen for p in (s.unit, *s.unit.more)):
            spans[part.label] = spans.get(part.label, ()) + ((part.start, part.end),)
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
        """Key terms (as written) that no retrieved chunk contains and the best chosen sentence ignores.

        A sentence ignores a term when the question without that term is closer to it (by `_IGNORED`
        or more) than the question itself: it answers the rest of the question. "money back" for a
        refund sentence moves it closer (kept); "Bitcoin" for the refund-email sentence moves it away.
        The best sentence decides, as the answer is about it: a further one, quoted for another key
        term, once kept "Can I pay my invoice with Bitcoin?" answered with a pricing sentence.
        """
        names = named_terms(question)  # an ordinary word the sources lack is a paraphrase (rag/answer/terms.py)
        unseen = [t for t in keys if t in names and not any(t in terms for terms in seen)]
        if not unseen:
            return []
        ablated = [np.asarray(self.dense.encode_query(without_term(question, t))) for t in unseen]
        return [
            keys[t] for t, q in zip(unseen, ablated)
            if all(s.cosine - float(s.vector @ q) <= -_IGNORED for s in chosen[:1] if s.vector is not None)
        ]  # fmt: skip


def in_context(units: Sequence[Unit], relevance: Sequence[float]) -> list[float]:
    """Each unit's relevance, raised to its topic's: the best of its own and, less `_CONTEXT_DROP`, that of the
    `_CONTEXT_BEFORE` units before it and the one after it in the same source.

    The sentence that answers often follows the one that names the topic and shares few of the question's
    words ("There are advantages and disadvantages to using WAL." then "WAL also has disadvantages: ...");
    within a topic the kind of answer decides (`fit`), so the topic sentence no longer wins on words alone.
    """
    out = []
    for i, u in enumerate(units):
        # A table row is about its own row (the next plan's price is not this one's); a fragment or a pointer
        # ("Syntax:", "See set polar (p. 212).") answers nothing, whatever its neighbours say.
        if u.carries == "row" or not states(u):
            out.append(relevance[i])
            continue
        near = [
            relevance[j] - _CONTEXT_DROP
            for j in range(max(0, i - _CONTEXT_BEFORE), min(len(units), i + 2))
            if j != i and units[j].label == u.label and units[j].carries != "row"
        ]
        out.append(max([relevance[i], *near]))
    return out


def _cited(unit: Unit) -> str:
    """A quoted unit with its citation marker: after the sentence, before a code block the sentence introduces
    (a marker after the code would read as part of it)."""
    if unit.carries == "list":  # every item is a claim of its source: each carries the marker of the chunk it is in
        parts = (unit, *unit.more)
        return "\n".join(f"{neutralise_markers(line)} [{p.label}]" for p in parts for line in p.text.split("\n"))
    sentence, newline, code = unit.text.partition("\n")
    return f"{neutralise_markers(sentence)} [{unit.label}]" + (newline + neutralise_markers(code) if newline else "")


def choose(
    scored: Sequence[ScoredUnit], minimum: float, keys: set[str], cosine: float | None = None
) -> list[ScoredUnit]:
    """The sentences to quote: the best one, then up to two more that each add a key term not yet quoted, or (one
    of them) say what its section's subject does (`ScoredUnit.opens`).

    None when the answer signal, the best unit's own relevance averaged with `cosine` (the best chunk's,
    `top_cosine`; the relevance alone without it), is under `minimum`: the signal that separated
    answerable from unanswerable questions best (bench/README.md). Each further sentence must score
    within `_SPREAD` of the best. Requiring a new key term is the per-sentence relevance floor: without
    it, "When does a downgrade take effect?" also quoted the upgrade sentence next to the answer, and
    "How much storage does Team include?" every plan's row.
    """
    if not scored:
        return []
    best = max(s.relevance for s in scored)
    if (best if cosine is None else (best + cosine) / 2) < minimum:
        return []
    floor = scored[0].score - _SPREAD
    chosen = [scored[0]]
    covered = content_terms(scored[0].unit.text) & keys
    for s in scored[1:]:
        if len(chosen) == _MAX_SENTENCES or s.score < floor:
            break
        if scored[0].fit > 0 and s.fit == 0:
            continue  # the best answers the kind asked: a sentence that only names the topic adds nothing
        adds = (content_terms(s.unit.text) & keys) - covered
        # A sentence saying what a section's subject does is quoted beside the best one even when it repeats its
        # terms (once): a manual's detail ("Rotates the view angles of a 3D plot ...", under "Projection") shares
        # the question's words, and what the command is for ("The set view command sets the viewing angle") is
        # said once, at the top of its section.
        opens = s.opens and not any(c.opens for c in chosen)
        if (adds or opens) and not any(s.unit.text in c.unit.whole for c in chosen):
            chosen.append(s)
            covered |= adds
    return chosen


def top_cosine(sources: Sequence[Source], retrieval: RetrievalResult | None) -> float | None:
    """The best dense cosine of any chunk the retrieval saw (the sources alone without it); None without one."""
    chunks = retrieval.candidates if retrieval is not None else [s.candidate for s in sources]
    return max((c.dense.score for c in chunks if c.dense.score is not None), default=None)


def background(sources: Sequence[Source], retrieval: RetrievalResult | None) -> list[set[str]]:
    """The content terms of every chunk the retrieval saw (the sources alone without it): the IDF background."""
    chunks = retrieval.candidates if retrieval is not None else [s.candidate for s in sources]
    return [content_terms(c.chunk.chunk.embed_text) for c in chunks]
