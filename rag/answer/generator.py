"""The seam between answering and whatever writes the answer text."""

from __future__ import annotations

from typing import Generator as PyGenerator
from typing import Iterator, Protocol, Sequence

from rag.answer.result import Generation, Source
from rag.retrieval.result import RetrievalResult


class Generator(Protocol):
    """Writes an answer from the sources that passed the gate.

    `stream()` yields text deltas, then exactly one Generation (the whole text and how it ended), so a
    page can show words as they come and still get the complete result. `retrieval` is everything the
    retrieval saw, for generators that weigh the sources against it. Failures raise GenerationError.
    """

    mode: str  # "anthropic" | "extractive": shown next to every answer
    model: str

    def generate(
        self, question: str, sources: Sequence[Source], retrieval: RetrievalResult | None = None
    ) -> Generation: ...

    def stream(
        self, question: str, sources: Sequence[Source], retrieval: RetrievalResult | None = None
    ) -> Iterator[str | Generation]: ...


def relay(items: Iterator[str | Generation]) -> PyGenerator[str, None, Generation]:
    """Pass a stream's text deltas on and return its final Generation (`generation = yield from relay(...)`)."""
    final = None
    for item in items:
        if isinstance(item, Generation):
            final = item
        else:
            yield item
    if final is None:
        raise RuntimeError("generator stream ended without a Generation")  # a bug in the generator, not user input
    return final


def last_generation(items: Iterator[str | Generation]) -> Generation:
    """Drain a stream and return its final Generation (for callers that do not show deltas)."""
    deltas = relay(items)
    while True:
        try:
            next(deltas)
        except StopIteration as done:
            return done.value
