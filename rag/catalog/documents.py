"""Managing what is stored: list, browse, delete, tag and quarantine documents, and the collection's counts.

Kept apart from `rag.ingest.pipeline` (which writes documents) so the Documents page and the CLI can read and
manage a collection without the ingest pipeline.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from rag.components import Components
from rag.ingest.originals import Originals
from rag.store.base import document_info
from rag.text.fold import match_key
from rag.types import QUARANTINED, ChunkFilter, DocumentInfo, StoredChunk, clean_tags, stored_name


def list_documents(components: Components) -> list[DocumentInfo]:
    """One row per ingested document, with its chunk count and metadata."""
    store = components.store
    rows = []
    for source, count in sorted(store.sources().items()):
        first = store.records(ChunkFilter(sources=(source,), include_quarantined=True), limit=1)
        rows.append(document_info(source, count, first[0].payload if first else {}))
    return rows


def document_chunks(components: Components, source: str) -> list[StoredChunk]:
    """A document's chunks in document order (quarantined ones included, marked)."""
    records = components.store.records(ChunkFilter(sources=(source,), include_quarantined=True))
    return sorted(records, key=lambda r: r.chunk.index)


def filter_chunks(records: Sequence[StoredChunk], text: str) -> list[StoredChunk]:
    """The chunks whose text, heading path or id contains `text` (case and spacing ignored); all for blank text."""
    wanted = match_key(text)
    if not wanted:
        return list(records)
    return [r for r in records if any(wanted in match_key(f) for f in (r.chunk.text, r.chunk.heading, r.chunk.id))]


def delete_document(components: Components, source: str) -> int:
    """Delete every chunk of `source`; returns how many were removed."""
    source = stored_name(source)
    n = components.store.delete_source(source)
    components.store.flush()
    Originals(components.settings.originals_dir).delete(source)
    return n


def set_tags(components: Components, source: str, tags: Sequence[str]) -> None:
    components.store.set_source_payload(source, {"tags": clean_tags(tags)})
    components.store.flush()


def set_quarantine(
    components: Components, chunk_ids: Sequence[str], quarantined: bool, marks: Mapping[str, Any] | None = None
) -> None:
    """Quarantined chunks stay stored and visible here, but retrieval never returns them. `marks`: payload
    fields written with the status, in the same write (who disabled them and when: rag.catalog.fixes)."""
    status = {"status": QUARANTINED if quarantined else "active"}
    components.store.set_payload(list(chunk_ids), status | dict(marks or {}))
    components.store.flush()


def flagged_chunks(components: Components) -> list[StoredChunk]:
    """Chunks the ingest-time injection scan flagged or marked unchecked (text it could not read), quarantined
    or not, each once, in source and document order: both are for a person to read."""
    filters = (
        ChunkFilter(include_quarantined=True, flagged_only=True),
        ChunkFilter(include_quarantined=True, unchecked_only=True),
    )
    records = {r.chunk.id: r for flt in filters for r in components.store.records(flt)}
    return sorted(records.values(), key=lambda r: (r.chunk.source, r.chunk.index))


@dataclass(frozen=True)
class CollectionStats:
    """The numbers at the top of the Documents page."""

    documents: int
    chunks: int
    flagged: int
    quarantined: int
    unchecked: int
    backend: str
    sentence_vectors: bool | None = None  # stored for sentence rescoring; None: no collection yet


def collection_stats(components: Components) -> CollectionStats:
    """Document and chunk counts, straight from the store (cheap: counts and one facet)."""
    store = components.store
    everything = store.count(ChunkFilter(include_quarantined=True))
    return CollectionStats(
        documents=len(store.sources()),
        chunks=everything,
        flagged=store.count(ChunkFilter(include_quarantined=True, flagged_only=True)),
        quarantined=everything - store.count(ChunkFilter()),
        unchecked=store.count(ChunkFilter(include_quarantined=True, unchecked_only=True)),
        backend=store.backend,
        sentence_vectors=sentence_vectors_stored(components),
    )


def sentence_vectors_stored(components: Components) -> bool | None:
    """Whether the collection stores sentence vectors (None: no collection yet). Cheap: metadata only."""
    models = components.store.collection_models()
    return models.sentence_vectors if models else None
