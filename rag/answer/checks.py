"""The checks every answer goes through: the relevance gate before generating, the citation check after.

Gate: abstain without calling any generator when fewer than `min_sources` of the final chunks reach
`min_rerank_score`. Reranker scores do not share a scale ("none" repeats the fused RRF/DBSF scores,
"score-fusion" is min-max normalised per question so its best chunk always scores 1), so the gate
compares one absolute score: the dense cosine between question and chunk (the dense stage's score,
computed for a chunk only the sparse stage found). On the sample help centre answerable questions
reach 0.39-0.79 and off-topic ones stay under 0.16, hence the default 0.25. The exception is a
cross-encoder, whose score is the relevance judgement it was trained to give: then its own score is
compared, and RAGSCOPE_MIN_RERANK_SCORE must be set on its scale.
Only chunks that pass are sent to the generator.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

from rag.answer.citations import answer_sentences, parse_citations
from rag.answer.prompt import NOT_IN_SOURCES
from rag.answer.result import Source, source_label
from rag.components import Components
from rag.config import AnswerConfig
from rag.rerank import CROSS_ENCODER_PREFIX
from rag.retrieve import RetrievalResult


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
    invented: tuple[str, ...]  # ids as written in the answer that name no source sent
    uncited_sentences: tuple[str, ...]


def relevance_scores(components: Components, result: RetrievalResult) -> tuple[dict[str, float], str]:
    """The score the gate compares for each final chunk, and a name for it (shown with the abstention)."""
    final = result.final
    if result.reranker.startswith(CROSS_ENCODER_PREFIX):
        return {c.id: float(c.rerank.score) for c in final if c.rerank.score is not None}, f"rerank score ({result.reranker})"
    scores = {c.id: float(c.dense.score) for c in final if c.dense.score is not None}
    missing = [c for c in final if c.dense.score is None]
    if missing:
        query = components.dense.encode_query(result.question)
        vectors = components.dense.encode_documents([c.chunk.chunk.embed_text for c in missing])
        scores.update({c.id: float(v @ query) for c, v in zip(missing, vectors)})
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
    sources = tuple(Source(source_label(i), c, relevance[c.id]) for i, c in enumerate(passing, 1))
    if len(passing) >= config.min_sources:
        return Gate(sources, relevance, basis)
    if not final:
        reason = "nothing was retrieved: the collection is empty or the filter excludes every chunk"
    else:
        best = max(final, key=lambda c: relevance.get(c.id, float("-inf")))
        where = " > ".join((best.chunk.chunk.source, *best.chunk.chunk.heading_path))
        reason = (
            f"only {len(passing)} of the {len(final)} retrieved chunks reach the minimum {basis} of "
            f"{config.min_rerank_score:g} (at least {config.min_sources} needed); the best was "
            f"{relevance.get(best.id, float('nan')):.2f} ({where})"
        )
    return Gate((), relevance, basis, reason)


def check_answer(text: str, sources: Sequence[str]) -> AnswerCheck:
    """Check an answer's citations against the sources that were sent.

    Args:
        text: the answer with its markers.
        sources: chunk ids sent, in rank order (`[S1]` is `sources[0]`); a marker may also name a
            chunk id directly.

    Returns:
        The chunk ids cited, the ids that name nothing sent (invented: an error to show), the
        sentences that state something without a citation, and whether the answer abstained.
    """
    if NOT_IN_SOURCES in text:
        return AnswerCheck(True, (), (), ())
    by_marker = {source_label(i): cid for i, cid in enumerate(sources, 1)} | {cid.lower(): cid for cid in sources}
    cited: list[str] = []
    invented: list[str] = []
    for marker in parse_citations(text):
        for ref in marker.ids:
            cid = by_marker.get(ref)
            if cid is None:
                if ref not in invented:
                    invented.append(ref)
            elif cid not in cited:
                cited.append(cid)
    uncited = tuple(s.text for s in answer_sentences(text) if s.needs_citation and not s.ids)
    return AnswerCheck(False, tuple(cited), tuple(invented), uncited)
