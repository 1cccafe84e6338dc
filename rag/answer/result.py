"""The values an answer is made of: the sources sent, what a generator produced, and the checked Answer.

All frozen: an Answer is logged, shown and compared by Eval, and must mean the same thing everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Protocol

from rag.retrieval.result import Candidate, RetrievalResult


class ModeStages(Protocol):
    """What an Answer needs of the mode that searched for it (rag.modes.result.ModeResult is one).

    Declared here, not imported: modes build on answers (the agent writes an Answer), so an answer
    only names the part of a mode's result it reads.
    """

    mode: str

    def summary_json(self) -> dict[str, Any]: ...


def source_label(position: int) -> str:
    """The short id a source gets in the prompt and in citation markers: S1, S2, ... in rank order."""
    return f"S{position}"


@dataclass(frozen=True)
class Source:
    """One chunk sent to the generator, with the label it is cited by and the relevance that let it through."""

    label: str
    candidate: Candidate
    relevance: float
    read_for: str | None = None  # the kept chunk whose section this one was read for (rag.answer.section_reads)

    @property
    def id(self) -> str:
        return self.candidate.id


@dataclass(frozen=True)
class Generation:
    """What a generator produced, before any check.

    `spans` narrows a label's citation to exact character spans of the document (the extractive
    answerer knows which sentence it quoted); without it a citation covers the whole chunk.
    `abstain_reason` is set when the generator itself declined (nothing relevant, a model refusal).
    """

    text: str
    model: str
    stop_reason: str = "end_turn"
    spans: Mapping[str, tuple[tuple[int, int], ...]] = field(default_factory=dict, compare=False, hash=False)
    abstain_reason: str = ""


@dataclass(frozen=True)
class Citation:
    """A cited span of a source document: chunk `id`, cited in the text as `[label]`."""

    id: str
    source: str
    heading: str
    start: int
    end: int
    page: int | None = None
    label: str = ""

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "label": self.label,
            "source": self.source,
            "heading": self.heading,
            "start": self.start,
            "end": self.end,
            "page": self.page,
        }


@dataclass(frozen=True)
class Answer:
    """A checked answer and everything needed to show, log, replay and score it.

    Example:
        answer = answer_question(components, "How long do refunds take?")
        if not answer.abstained:
            print(answer.text, [c.source for c in answer.citations])
        print(answer.as_json()["sources"])

    `text` keeps the citation markers (`[S1]`); `sources` are the chunk ids sent, in rank order, so
    `[S1]` is `sources[0]`. `relevance` holds, for every final candidate (sent or not), the score the
    abstention rule compared with `min_rerank_score`; `relevance_basis` says which score that was.
    """

    question: str
    text: str
    citations: tuple[Citation, ...]
    abstained: bool
    reason: str
    mode: str
    sources: tuple[str, ...]
    invented: tuple[str, ...]
    uncited_sentences: tuple[str, ...]
    retrieval: RetrievalResult
    latency_ms: float
    model: str
    relevance: Mapping[str, float] = field(default_factory=dict, compare=False, hash=False)
    relevance_basis: str = ""
    mode_result: ModeStages | None = field(default=None, compare=False, hash=False, repr=False)

    @property
    def retrieval_mode(self) -> str:
        """How the question was searched (plain, hyde, multi_hop, corrective, agent); `mode` is who wrote the text."""
        return self.retrieval.config.mode

    def label_of(self, chunk_id: str) -> str | None:
        """The citation label a sent chunk was given, or None if it was not sent."""
        return source_label(self.sources.index(chunk_id) + 1) if chunk_id in self.sources else None

    def as_json(self) -> dict[str, Any]:
        """The CLI's --json shape (also what the ask log stores)."""
        return {
            "question": self.question,
            "answer": self.text,
            "citations": [c.as_json() for c in self.citations],
            "abstained": self.abstained,
            "reason": self.reason,
            "mode": self.mode,
            "model": self.model,
            "retrieval_mode": self.retrieval_mode,
            "sources": list(self.sources),
            "invented": list(self.invented),
            "uncited_sentences": list(self.uncited_sentences),
            "latency_ms": self.latency_ms,
        } | (
            {"mode_stages": self.mode_result.summary_json()}
            if self.mode_result is not None and self.mode_result.mode != "plain"
            else {}
        )
