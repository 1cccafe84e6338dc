"""What one retrieval saw: every candidate chunk with its rank and score in each stage, and the final top k.

Frozen values: the inspector shows them, Ask answers from `final`, Eval scores `ranked(stage)`, and
tracking, explaining and comparing reuse the question vectors kept on them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from rag.settings.config import RetrievalConfig
from rag.types import Chunk, ChunkFilter, SparseVector, StoredChunk

STAGES = ("dense", "sparse", "fused", "rerank")


@dataclass(frozen=True)
class StageScore:
    rank: int | None = None  # 1-based; None when the chunk was not in that stage's list
    score: float | None = None


@dataclass(frozen=True)
class Candidate:
    """One chunk seen by any stage, with its rank and score in each."""

    chunk: StoredChunk
    dense: StageScore = StageScore()
    sparse: StageScore = StageScore()
    fused: StageScore = StageScore()
    rerank: StageScore = StageScore()
    final_rank: int | None = None
    # With config.collapse: the id of the better-ranked chunk of the same section, which stands for both.
    collapsed_into: str | None = None
    # With config.collapse: folded, but ranked above the next section, so carried with the chunk it is folded
    # into: shown under it, read with it, counted at its rank (rag/retrieval/collapse.py).
    carried: bool = False
    # A carried chunk whose section is in the final top k: that section's final rank.
    carried_at: int | None = None
    # With config.dedupe: the id of the better-ranked chunk with the same text (rag/retrieval/dedupe.py).
    repeat_of: str | None = None
    # With config.dedupe, on the chunk that stands for its repeats: where they are ("source > heading").
    also_in: tuple[str, ...] = ()
    # With config.context == "section": the whole section around the chunk, which answers are built from.
    context: Chunk | None = None

    @property
    def id(self) -> str:
        return self.chunk.chunk.id

    def stage(self, name: str) -> StageScore:
        return getattr(self, name)

    @property
    def answer_chunk(self) -> Chunk:
        """What an answer is built from: the section around the chunk (small-to-big) or the chunk itself."""
        return self.context or self.chunk.chunk

    @property
    def shown_rank(self) -> int | None:
        """Where the final list shows it: its own final rank, or that of the section's chunk carrying it."""
        return self.final_rank or self.carried_at

    @property
    def final_score(self) -> float | None:
        """The last stage's score, for a chunk that reached the final top-k."""
        return self.rerank.score if self.final_rank is not None else None

    @property
    def movement(self) -> str:
        """Its path through the stages, e.g. "D4 S– → F2 → R1 ▲1" (the arrow: places gained by reranking)."""

        def r(stage: str) -> str:
            rank = self.stage(stage).rank
            return "–" if rank is None else str(rank)

        path = f"D{r('dense')} S{r('sparse')} → F{r('fused')} → R{r('rerank')}"
        if self.carried:
            path += f" (carried with its section's chunk {self.collapsed_into[:8]})"
        elif self.collapsed_into:
            path += f" (collapsed: its section ranks as {self.collapsed_into[:8]})"
        if self.repeat_of:
            path += f" (repeat: its text ranks as {self.repeat_of[:8]})"
        if self.fused.rank is None or self.rerank.rank is None:
            return path
        delta = self.fused.rank - self.rerank.rank
        return path + (f" ▲{delta}" if delta > 0 else f" ▼{-delta}" if delta < 0 else " =")

    def as_row(self) -> dict:
        """The flat record the CLI's --json and the inspector table use."""
        c = self.chunk.chunk
        row = {
            "chunk_id": c.id,
            "source": c.source,
            "heading": c.heading,
            "start": c.start,
            "end": c.end,
            "text": c.text,
        }
        for stage in STAGES:
            s = self.stage(stage)
            row[f"{stage}_rank"] = s.rank
            row[f"{stage}_score"] = s.score
        row["final_rank"] = self.final_rank
        row["collapsed_into"] = self.collapsed_into
        row["carried_at"] = self.carried_at  # shown under the section's chunk of that final rank
        row["repeat_of"] = self.repeat_of
        row["also_in"] = list(self.also_in)
        return row


@dataclass(frozen=True)
class QueryVectors:
    """The question's own vectors, and those the stages ran: the expanded ones under PRF / dense PRF (else the same).

    Kept on the result so that tracking, explaining and comparing reuse them instead of encoding the
    question again, and query exactly what the stage table shows.
    """

    dense: np.ndarray
    sparse: SparseVector
    dense_run: np.ndarray
    sparse_run: SparseVector
    space: str = ""  # the stored name of the dense vector `dense` was encoded for (rag/catalog/vectors.py)


@dataclass(frozen=True)
class RetrievalResult:
    """Everything one retrieval saw. `final` is what answers are built from."""

    question: str
    config: RetrievalConfig
    reranker: str
    candidates: tuple[Candidate, ...]
    filter: ChunkFilter = ChunkFilter()
    timings_ms: dict[str, float] = field(default_factory=dict, compare=False)
    # Words pseudo-relevance feedback added to the BM25 query (config.prf); the sparse stage used them.
    expansion: tuple[str, ...] = ()
    # Chunk ids dense feedback (config.dense_prf) moved the question vector toward; the dense stage was re-run
    # from there.
    dense_feedback: tuple[str, ...] = ()
    query: QueryVectors | None = field(default=None, compare=False, repr=False)

    @property
    def final(self) -> list[Candidate]:
        """The final top k, one chunk per section with collapsing on: what the answerer's sources start from."""
        return sorted((c for c in self.candidates if c.final_rank is not None), key=lambda c: c.final_rank)

    @property
    def shown(self) -> list[Candidate]:
        """The final list as every view shows it: each final chunk followed by the siblings it carries."""
        return [x for c in self.final for x in (c, *self.carried_by(c.id))]

    def carried_by(self, chunk_id: str) -> list[Candidate]:
        """The chunks carried with `chunk_id` (its section's siblings that outrank the next section), best first."""
        mine = (c for c in self.candidates if c.carried and c.collapsed_into == chunk_id)
        return sorted(mine, key=lambda c: c.rerank.rank or 0)

    def ranked_groups(self, stage: str) -> list[tuple[Candidate, ...]]:
        """`ranked(stage)`, each chunk with the chunks it carries (the last stage only): one rank per group.

        Metrics count a group at its rank, so a carried chunk counts where its section ranks, and a
        section still counts once.
        """
        ranked = self.ranked(stage)
        if stage != "rerank":
            return [(c,) for c in ranked]
        behind: dict[str, list[Candidate]] = {}
        for c in sorted((c for c in self.candidates if c.carried), key=lambda c: c.rerank.rank or 0):
            behind.setdefault(c.collapsed_into, []).append(c)
        return [(c, *behind.get(c.id, ())) for c in ranked]

    def ranked(self, stage: str) -> list[Candidate]:
        """Candidates in one stage's order (only those the stage returned); with collapsing on, the last
        stage lists each section once (its best chunk), as the final top k does; with repeats once, each
        repeated text once too. Metrics read `ranked_groups`, which adds the chunks a section carries."""
        kept = (
            c
            for c in self.candidates
            if c.stage(stage).rank is not None and not (stage == "rerank" and (c.collapsed_into or c.repeat_of))
        )
        return sorted(kept, key=lambda c: c.stage(stage).rank)

    def get(self, chunk_id: str) -> Candidate | None:
        return next((c for c in self.candidates if c.id == chunk_id), None)
