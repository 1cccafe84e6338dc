"""The parse signals of stored chunks, by document: what the Documents page, `ragscope docs --parse` and Eval
read (rag.ingest.parse_signals measures them).

A chunk stored before the signals were measured has none in its payload: its signals are then measured here
from its document's stored chunks, all but the text per page (the document's pages are not stored), which
reads as not measured. Nothing is written.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from rag.components import Components
from rag.ingest.parse_signals import PAYLOAD_KEY, SIGNALS, ParseSignals, measure
from rag.types import ChunkFilter, StoredChunk


@dataclass(frozen=True)
class ChunkParse:
    """One chunk with its signals and the ones that flag it; `stored`: read from its payload (else measured
    now, from its document's stored chunks)."""

    record: StoredChunk
    signals: ParseSignals
    stored: bool

    @property
    def flags(self) -> tuple[str, ...]:
        return self.signals.flags()


@dataclass(frozen=True)
class DocumentParse:
    """One document's chunks by signal: how many each signal flags, and the flagged chunks in document order."""

    source: str
    chunks: int
    flagged: tuple[ChunkParse, ...] = ()
    measured_now: int = 0  # chunks with no stored signals, measured on reading (stored before they existed)
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        """Chunks flagged by at least one signal."""
        return len(self.flagged)

    def as_json(self) -> dict:
        return {
            "source": self.source,
            "chunks": self.chunks,
            "flagged": self.total,
            "counts": dict(self.counts),
            "measured_now": self.measured_now,
            "flagged_chunks": [
                {"id": p.record.chunk.id, "index": p.record.chunk.index, "where": p.record.chunk.location,
                 "page": p.record.chunk.page, "flags": list(p.flags), "signals": p.signals.payload()}
                for p in self.flagged
            ],
        }  # fmt: skip


def document_parse(records: Sequence[StoredChunk]) -> list[ChunkParse]:
    """Every chunk of one document with its signals: stored ones as stored, the others measured now."""
    records = sorted(records, key=lambda r: r.chunk.index)
    stored = {r.chunk.id: ParseSignals.from_payload(r.payload.get(PAYLOAD_KEY)) for r in records}
    measured = measure([r.chunk for r in records]) if None in stored.values() else {}
    return [ChunkParse(r, stored[r.chunk.id] or measured[r.chunk.id], stored[r.chunk.id] is not None) for r in records]


def parse_overview(components: Components, sources: Iterable[str] | None = None) -> list[DocumentParse]:
    """Each stored document (or each of `sources`) with its flagged-chunk counts per signal, by source name."""
    flt = ChunkFilter(sources=tuple(sources or ()), include_quarantined=True)
    by_source: dict[str, list[StoredChunk]] = {}
    for r in components.store.records(flt):
        by_source.setdefault(r.chunk.source, []).append(r)
    out = []
    for source, records in sorted(by_source.items()):
        parsed = document_parse(records)
        flagged = tuple(p for p in parsed if p.flags)
        counts = {name: sum(name in p.flags for p in flagged) for name in SIGNALS}
        out.append(DocumentParse(source, len(records), flagged, sum(not p.stored for p in parsed), counts))
    return out


def chunk_parse(components: Components, chunk_id: str) -> ChunkParse | None:
    """One chunk's signals, read with its document's chunks; None when no such chunk is stored."""
    found = components.store.records(ChunkFilter(ids=(chunk_id,), include_quarantined=True), limit=1)
    if not found:
        return None
    records = components.store.records(ChunkFilter(sources=(found[0].chunk.source,), include_quarantined=True))
    return next((p for p in document_parse(records) if p.record.chunk.id == chunk_id), None)


def chunk_flags(components: Components, chunk_ids: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """The flags of each of `chunk_ids` that any signal flags (the others left out), read with their documents
    (a chunk stored without signals is measured among its document's chunks)."""
    wanted = set(chunk_ids)
    if not wanted:
        return {}
    found = components.store.records(ChunkFilter(ids=tuple(sorted(wanted)), include_quarantined=True))
    sources = {r.chunk.source for r in found}
    if not sources:
        return {}
    return {
        p.record.chunk.id: p.flags
        for doc in parse_overview(components, sources)
        for p in doc.flagged
        if p.record.chunk.id in wanted
    }
