"""Collection health probe: can each chunk be found by a sentence lifted from it?

A chunk that its own sentence cannot retrieve at rank 1 is a chunk no paraphrase will find either: it
may be a near-duplicate, too long for the dense model's window, or drowned by boilerplate. The probe
samples chunks, searches one of their sentences with the real `retrieve()`, and lists the failures
(marking those where the winner contains the same sentence, which is duplication, not a miss).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Callable

from rag.components import Components
from rag.errors import RagError
from rag.retrieval.retrieve import retrieve
from rag.settings.config import RetrievalConfig
from rag.text.fold import match_key
from rag.text.sentences import split_sentences
from rag.types import ChunkFilter, StoredChunk

Progress = Callable[[float, str], None]
_MIN_WORDS = 6
_MAX_CHARS = 300


@dataclass(frozen=True)
class ProbeCase:
    chunk: StoredChunk
    sentence: str
    rank: int | None  # the chunk's own final rank for its sentence; None when outside the top-k
    top: StoredChunk | None  # what ranked first
    duplicate: bool  # the winner contains the same sentence

    @property
    def ok(self) -> bool:
        return self.rank == 1


@dataclass(frozen=True)
class ProbeReport:
    cases: tuple[ProbeCase, ...]
    config: RetrievalConfig

    @property
    def share_at_1(self) -> float:
        return sum(c.ok for c in self.cases) / len(self.cases) if self.cases else 0.0

    @property
    def failures(self) -> tuple[ProbeCase, ...]:
        return tuple(c for c in self.cases if not c.ok)


def lifted_sentence(text: str, rng: random.Random) -> str:
    """One sentence of `text` with enough words to be a fair query (else the text's start)."""
    sentences = [text[a:b] for a, b in split_sentences(text)]
    usable = [s for s in sentences if len(s.split()) >= _MIN_WORDS]
    chosen = rng.choice(usable) if usable else text
    return " ".join(chosen.split())[:_MAX_CHARS]


def probe(
    components: Components, sample: int = 50, config: RetrievalConfig | None = None, flt: ChunkFilter | None = None,
    seed: int = 0, progress: Progress | None = None,
) -> ProbeReport:  # fmt: skip
    """Search a sentence lifted from each of `sample` chunks and see whether its own chunk comes first.

    Args:
        sample: how many chunks to probe (fewer if the collection is smaller).
        config: retrieval settings (default: the configured ones).
        flt: restrict sampling and search to some sources/tags.
        seed: the same seed probes the same chunks with the same sentences.
        progress: called with (fraction done, message) after each chunk.

    Raises:
        RagError: the collection (or the filtered part) has no chunks.
    """
    if sample < 1:
        raise RagError(f"probe sample must be at least 1; got {sample}")
    config = config or components.settings.retrieval
    flt = flt or ChunkFilter()
    rng = random.Random(seed)
    # Ids are content hashes, so the store's id order is already a shuffle; read a bounded slice.
    pool = components.store.records(flt, limit=max(sample * 20, 1000))
    if not pool:
        raise RagError("no chunks to probe: ingest documents first (or widen the filter)")
    chosen = sorted(rng.sample(pool, min(sample, len(pool))), key=lambda c: (c.chunk.source, c.chunk.index))
    cases = []
    for i, chunk in enumerate(chosen, 1):
        sentence = lifted_sentence(chunk.chunk.text, rng)
        result = retrieve(components, sentence, config, flt)
        own = result.get(chunk.chunk.id)
        top = result.final[0].chunk if result.final else None
        duplicate = (
            top is not None and top.chunk.id != chunk.chunk.id and match_key(sentence) in match_key(top.chunk.text)
        )
        cases.append(ProbeCase(chunk, sentence, own.final_rank if own else None, top, duplicate))
        if progress:
            progress(i / len(chosen), f"{i}/{len(chosen)} probed")
    return ProbeReport(tuple(cases), config)
