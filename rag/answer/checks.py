"""The checks every answer goes through: the relevance gate before generating, the citation check after.

Gate: abstain without calling any generator when fewer than `min_sources` of the final chunks reach
`min_rerank_score`. Reranker scores do not share a scale ("none" repeats the fused RRF/DBSF scores,
"score-fusion" is min-max normalised per question so its best chunk always scores 1), so the gate
compares one absolute score: the dense cosine between question and chunk (the dense stage's score,
and Qdrant's cosine with the stored vector for a chunk only the sparse stage found). On the sample
help centre answerable questions reach 0.39-0.79 and off-topic ones stay under 0.16, hence the
default 0.25. The exception is a cross-encoder, whose score is the relevance judgement it was
trained to give: then its own score is compared, and RAGSCOPE_MIN_RERANK_SCORE must be set on its
scale.
Only chunks that pass are sent to the generator.

Citation check: a marker must name a source that was sent, and must be the answerer's own. A marker
that came out of a source's text (a document saying "... staff price is 1 euro [S2]", quoted) is
forged: it is reported with the invented ones, and not counted as citing anything.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from rag.answer.citations import CitationMarker, answer_sentences, marker_like, parse_citations
from rag.answer.prompt import NOT_IN_SOURCES
from rag.answer.result import Source, source_label
from rag.answer.section_reads import section_reads
from rag.components import Components
from rag.retrieval.rerank import stored_dense_scores
from rag.retrieval.result import RetrievalResult
from rag.settings.config import AnswerConfig
from rag.settings.rerankers import is_cross_encoder
from rag.text.fold import fold
from rag.types import ChunkFilter


@dataclass(frozen=True)
class Gate:
    """The outcome of the relevance gate: the sources to send, or why there are none worth sending."""

    sources: tuple[Source, ...]
    relevance: Mapping[str, float] = field(compare=False, hash=False)
    basis: str
    reason: str = ""

    @property
    def abstain(self) -> bool:
        return bool(self.reason)


@dataclass(frozen=True)
class AnswerCheck:
    """What the citation check found in an answer's text."""

    abstained: bool
    cited: tuple[str, ...]  # chunk ids, in order of first citation
    invented: tuple[str, ...]  # ids as written in the answer that name no source sent, or forged ones
    uncited_sentences: tuple[str, ...]
    forged: tuple[CitationMarker, ...] = ()  # markers taken from a source's text, not the answerer's own


def relevance_scores(components: Components, result: RetrievalResult) -> tuple[dict[str, float], str]:
    """The score the gate compares for each final chunk, and a name for it (shown with the abstention)."""
    final = result.final
    if is_cross_encoder(result.reranker):
        return {
            c.id: float(c.rerank.score) for c in final if c.rerank.score is not None
        }, f"rerank score ({result.reranker})"
    scores = {c.id: float(c.dense.score) for c in final if c.dense.score is not None}
    missing = [c for c in final if c.dense.score is None]
    if missing:
        components = components.in_space(result.config.dense_vector)  # the dense vector the stages ran in
        # Qdrant's cosine with the stored vectors and the query the dense stage ran, as for the others:
        # encoding the chunks again would not reproduce an int8 collection's stored vectors.
        query = result.query.dense_run if result.query is not None else components.dense.encode_query(result.question)
        scores.update(
            stored_dense_scores(
                components.store, query, ChunkFilter(ids=tuple(c.id for c in missing), include_quarantined=True)
            )
        )
    return scores, "dense cosine"


def gate(components: Components, result: RetrievalResult, config: AnswerConfig) -> Gate:
    """Decide which final chunks are relevant enough to send, or that the system must abstain.

    Args:
        components: used only to embed a chunk the dense stage did not score.
        result: the retrieval to answer from.
        config: `min_sources` and `min_rerank_score`.

    Returns:
        A Gate whose `reason` is non-empty when fewer than `min_sources` chunks pass.
    """
    relevance, basis = relevance_scores(components, result)
    final = result.final
    passing = [c for c in final if relevance.get(c.id, float("-inf")) >= config.min_rerank_score]
    reads = section_reads(passing, result)
    # A chunk read for a kept one's section passes with it, at the kept chunk's relevance (the gate scores finals).
    sources = tuple(
        Source(source_label(i), r.candidate, relevance[r.for_id or r.candidate.id], r.for_id)
        for i, r in enumerate(reads, 1)
    )
    if len(passing) >= config.min_sources:
        return Gate(sources, relevance, basis)
    if not final:
        reason = "nothing was retrieved: the collection is empty or the filter excludes every chunk"
    else:
        best = max(final, key=lambda c: relevance.get(c.id, float("-inf")))
        where = best.chunk.chunk.location
        reason = (
            f"only {len(passing)} of the {len(final)} retrieved chunks reach the minimum {basis} of "
            f"{config.min_rerank_score:g} (at least {config.min_sources} needed); the best was "
            f"{relevance.get(best.id, float('nan')):.2f} ({where})"
        )
    return Gate((), relevance, basis, reason)


def check_answer(text: str, sources: Sequence[str], texts: Sequence[str] = ()) -> AnswerCheck:
    """Check an answer's citations against the sources that were sent.

    Args:
        text: the answer with its markers.
        sources: chunk ids sent, in rank order (`[S1]` is `sources[0]`); a marker may also name a
            chunk id directly.
        texts: the text of each source sent, in the same order; with it, markers copied from source
            text are found (see `forged_markers`).

    Returns:
        The chunk ids cited, the ids that name nothing sent or were forged (invented: an error to
        show), the sentences that state something without a citation, and whether the answer abstained.
    """
    if NOT_IN_SOURCES in text:
        return AnswerCheck(True, (), (), ())
    by_marker = {source_label(i): cid for i, cid in enumerate(sources, 1)} | {cid.lower(): cid for cid in sources}
    forged = forged_markers(text, texts)
    cited: list[str] = []
    invented: list[str] = []
    for marker in parse_citations(text):
        for ref in marker.ids:
            cid = by_marker.get(ref)
            if cid is None or marker in forged:
                if ref not in invented:
                    invented.append(ref)
            elif cid not in cited:
                cited.append(cid)
    uncited = tuple(s.text for s in answer_sentences(text) if s.needs_citation and not s.ids)
    return AnswerCheck(False, tuple(cited), tuple(invented), uncited, tuple(forged))


_WORDS = re.compile(r"\w+")
_CONTEXT = 3  # words either side of a marker compared with a source's


def forged_markers(text: str, texts: Sequence[str]) -> list[CitationMarker]:
    """The markers of an answer that did not come from the answerer.

    Two kinds: (1) copied: a source's text has a citation-like bracket with the same id, with the same
    words right before it (or, at a sentence start, right after it) as the marker in the answer; (2)
    misattributed: the sentence is a verbatim quote of a source (`texts[i]` is `S{i+1}`), but none of
    the sources it cites contains it, so its markers point somewhere the words did not come from.

    Args:
        text: the answer.
        texts: the text of each source sent, in label order.
    """
    markers = parse_citations(text)
    forged = {m for m in markers if _copied(text, m, texts)}
    flat = [" ".join(_words(t)) for t in texts]
    for sentence in answer_sentences(text):
        body = " ".join(_words(sentence.text))
        quoted_from = {source_label(i) for i, t in enumerate(flat, 1) if body and f" {body} " in f" {t} "}
        if sentence.needs_citation and quoted_from and not quoted_from & set(sentence.ids):
            forged |= {m for m in markers if _belongs(text, sentence.start, sentence.end, m)}
    return sorted(forged, key=lambda m: m.start)


def _copied(text: str, marker: CitationMarker, texts: Sequence[str]) -> bool:
    before = _words(text[: marker.start])[-_CONTEXT:]
    after = _words(text[marker.end :])[:_CONTEXT]
    for source in texts:
        for found in marker_like(source):
            if not set(found.ids) & set(marker.ids):
                continue
            src_before = _words(source[: found.start])[-_CONTEXT:]
            src_after = _words(source[found.end :])[:_CONTEXT]
            if (len(src_before) >= 2 and before[-len(src_before) :] == src_before) or (
                len(src_after) >= 2 and after[: len(src_after)] == src_after
            ):
                return True
    return False


def _belongs(text: str, start: int, end: int, marker: CitationMarker) -> bool:
    """Whether `marker` cites the sentence at `[start, end)`: inside it, or after it with only markers between."""
    return marker.start >= start and (marker.start < end or not _words(text[end : marker.start]))


def _words(text: str) -> list[str]:
    """The words of `text`, folded and lower-cased, citation-like brackets left out."""
    for m in reversed(marker_like(text)):
        text = f"{text[: m.start]} {text[m.end :]}"
    return [w.lower() for w in _WORDS.findall(fold(text))]
