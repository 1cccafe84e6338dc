"""Documents into the collection: diff against what is stored, embed only what changed, replace atomically.

Readers never see a mix of a document's old and new chunks: the replacement runs under the store's
lock (in-process readers wait) and behind a journal (a crash is rolled back or forward on next open).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterable, Sequence

from rag import journal
from rag.chunker import chunk_document
from rag.components import Components
from rag.config import ChunkConfig
from rag.errors import LoaderError, RagError
from rag.loaders import load_document
from rag.scan import scan_text
from rag.store import PointData, chunk_payload, document_info
from rag.store.base import QUARANTINED
from rag.types import Chunk, ChunkFilter, Document, DocumentInfo, StoredChunk

Progress = Callable[[float, str], None]
_POSITION_FIELDS = ("start", "end", "index", "page", "heading_path", "heading")
_DOC_FIELDS = ("doc_sha", "doc_size", "doc_kind", "ingested_at", "tags")


@dataclass(frozen=True)
class ChunkDiff:
    """How a document's new chunks relate to the stored ones."""

    added: tuple[Chunk, ...]
    unchanged: tuple[Chunk, ...]
    removed: tuple[StoredChunk, ...]

    @property
    def is_noop(self) -> bool:
        return not self.added and not self.removed


@dataclass(frozen=True)
class FileResult:
    source: str
    status: str  # "added" | "updated" | "unchanged" | "error"
    chunks: int = 0
    written: int = 0
    unchanged: int = 0
    removed: int = 0
    flagged: int = 0
    error: str = ""


@dataclass(frozen=True)
class IngestSummary:
    files: tuple[FileResult, ...]

    @property
    def documents(self) -> int:
        return sum(1 for f in self.files if f.status != "error")

    @property
    def chunks_written(self) -> int:
        return sum(f.written for f in self.files)

    @property
    def chunks_unchanged(self) -> int:
        return sum(f.unchanged for f in self.files)

    @property
    def errors(self) -> tuple[FileResult, ...]:
        return tuple(f for f in self.files if f.status == "error")


def preview(doc: Document, config: ChunkConfig) -> list[Chunk]:
    """The chunks a document would become, without writing anything."""
    return chunk_document(doc, config)


def diff_document(components: Components, chunks: Sequence[Chunk], source: str) -> ChunkDiff:
    """Compare new chunks with the stored chunks of `source` (ids are content hashes)."""
    stored = components.store.records(ChunkFilter(sources=(source,), include_quarantined=True))
    stored_ids = {s.chunk.id for s in stored}
    new_ids = {c.id for c in chunks}
    return ChunkDiff(
        added=tuple(c for c in chunks if c.id not in stored_ids),
        unchanged=tuple(c for c in chunks if c.id in stored_ids),
        removed=tuple(s for s in stored if s.chunk.id not in new_ids),
    )


def ingest_document(components: Components, doc: Document, config: ChunkConfig | None = None, tags: Sequence[str] | None = None) -> FileResult:
    """Chunk, diff, embed what is new, and replace the stored version of `doc` in one step.

    Args:
        components: store and encoders.
        doc: the loaded document.
        config: chunking settings (defaults to the configured ones).
        tags: tags for every chunk; None keeps the tags the document already has.

    Returns:
        What happened to the document, with chunk counts.
    """
    config = config or components.settings.chunk
    chunks = chunk_document(doc, config)
    if not chunks:
        raise LoaderError(f"{doc.source}: no text to index after chunking")
    limit = components.settings.max_chunks_per_doc
    if len(chunks) > limit:
        raise LoaderError(
            f"{doc.source}: would become {len(chunks):,} chunks, over the limit of {limit:,} per document "
            "(RAGSCOPE_MAX_CHUNKS); split it into smaller files or raise the limit"
        )
    components.check_models()
    components.ensure_collection()
    store = components.store
    stored = {s.chunk.id: s for s in store.records(ChunkFilter(sources=(doc.source,), include_quarantined=True))}
    old_tags = next(iter(stored.values())).tags if stored else ()
    doc_meta = {
        "doc_sha": doc.sha256,
        "doc_size": doc.size_bytes,
        "doc_kind": doc.kind,
        "ingested_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "tags": sorted(set(tags)) if tags is not None else list(old_tags),
    }
    added = [c for c in chunks if c.id not in stored]
    kept = [c for c in chunks if c.id in stored]
    removed = [i for i in stored if i not in {c.id for c in chunks}]
    if not added and not removed and stored and _same_doc(next(iter(stored.values())).payload, doc_meta, tags):
        return FileResult(doc.source, "unchanged", chunks=len(chunks), unchanged=len(chunks))

    # Encode outside the lock: it is the slow part, and readers need not wait for it.
    dense = components.dense.encode_documents([c.embed_text for c in added]) if added else []
    sparse = components.sparse.encode_documents([c.embed_text for c in added]) if added else []
    points = []
    flagged = 0
    for chunk, d, s in zip(added, dense, sparse):
        flags = scan_text(chunk.text)
        flagged += bool(flags)
        points.append(PointData(chunk.id, d, s, {**chunk_payload(chunk, doc_meta), "flags": list(flags), "status": "active"}))
    moved = {c.id: c for c in kept if _position(stored[c.id].payload) != _position(chunk_payload(c, {}))}
    folder = components.settings.data_dir / "journal"
    with store.lock:
        restore = {i: {k: stored[i].payload.get(k) for k in (*_POSITION_FIELDS, *_DOC_FIELDS)} for i in (c.id for c in kept)}
        journal.write(folder, journal.JournalEntry(doc.source, "apply", [p.id for p in points], removed, restore))
        store.upsert(points)
        if kept:
            store.set_payload([c.id for c in kept], doc_meta)
        for chunk_id, chunk in moved.items():
            store.set_payload([chunk_id], {k: v for k, v in chunk_payload(chunk, {}).items() if k in _POSITION_FIELDS})
        journal.write(folder, journal.JournalEntry(doc.source, "commit", [p.id for p in points], removed))
        store.delete(removed)
        store.flush()
        journal.clear(folder, doc.source)
    flagged += sum(1 for c in kept if stored[c.id].flags)
    return FileResult(
        doc.source,
        "updated" if stored else "added",
        chunks=len(chunks),
        written=len(points),
        unchanged=len(kept),
        removed=len(removed),
        flagged=flagged,
    )


def _position(payload: dict) -> tuple:
    return tuple(tuple(v) if isinstance(v, list) else v for v in (payload.get(k) for k in _POSITION_FIELDS))


def _same_doc(old: dict, new_meta: dict, tags: Sequence[str] | None) -> bool:
    return old.get("doc_sha") == new_meta["doc_sha"] and (tags is None or sorted(old.get("tags") or []) == new_meta["tags"])


def ingest_files(
    components: Components,
    files: Iterable[tuple[str, bytes]],
    config: ChunkConfig | None = None,
    tags: Sequence[str] | None = None,
    progress: Progress | None = None,
) -> IngestSummary:
    """Load and ingest many files; a bad file is reported and the others still go in.

    Args:
        files: (name, bytes) pairs; names become sources (sanitised).
        progress: called with (fraction done, message) after each file.
    """
    files = list(files)
    results = []
    max_bytes = components.settings.max_upload_mb * 1024 * 1024
    for n, (name, data) in enumerate(files, 1):
        try:
            doc = load_document(name, data, max_bytes=max_bytes)
            results.append(ingest_document(components, doc, config, tags))
        except RagError as e:
            results.append(FileResult(name, "error", error=str(e)))
        if progress:
            progress(n / len(files), f"{n}/{len(files)} {name}: {results[-1].status}")
    return IngestSummary(tuple(results))


def collect_paths(paths: Iterable[Path]) -> list[tuple[str, Path]]:
    """Expand files and folders (recursively) into (source name, path); folders keep relative paths."""
    from rag.loaders import SUPPORTED_SUFFIXES

    out = []
    for path in paths:
        if path.is_dir():
            for file in sorted(p for p in path.rglob("*") if p.is_file()):
                if file.suffix.lower() in SUPPORTED_SUFFIXES:
                    out.append((file.relative_to(path).as_posix(), file))
        else:
            out.append((path.name, path))
    return out


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


def delete_document(components: Components, source: str) -> int:
    """Delete every chunk of `source`; returns how many were removed."""
    n = components.store.delete_source(source)
    components.store.flush()
    return n


def set_tags(components: Components, source: str, tags: Sequence[str]) -> None:
    components.store.set_source_payload(source, {"tags": sorted({t.strip() for t in tags if t.strip()})})
    components.store.flush()


def set_quarantine(components: Components, chunk_ids: Sequence[str], quarantined: bool) -> None:
    """Quarantined chunks stay stored and visible here, but retrieval never returns them."""
    components.store.set_payload(list(chunk_ids), {"status": QUARANTINED if quarantined else "active"})
    components.store.flush()
