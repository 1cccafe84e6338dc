"""What ingesting a document will do, worked out read-only before anything is embedded: the diff against the
stored version (chunk ids are content hashes), the document's metadata, and the checks that refuse it."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Iterable, Mapping, Sequence

from rag.components import Components
from rag.errors import LoaderError
from rag.ingest.loaders.names import safe_source
from rag.ingest.parse_signals import measure
from rag.ingest.results import FileResult
from rag.types import Chunk, ChunkFilter, Document, StoredChunk, clean_tags


@dataclass(frozen=True)
class ChunkDiff:
    """How a document's new chunks relate to the stored ones."""

    added: tuple[Chunk, ...]
    unchanged: tuple[Chunk, ...]
    removed: tuple[StoredChunk, ...]

    @property
    def is_noop(self) -> bool:
        return not self.added and not self.removed


def stored_chunks(components: Components, source: str) -> dict[str, StoredChunk]:
    """The stored chunks of `source` by id, quarantined ones too (none when the collection does not exist yet)."""
    return {s.chunk.id: s for s in components.store.records(ChunkFilter(sources=(source,), include_quarantined=True))}


def chunk_diff(chunks: Sequence[Chunk], stored: Mapping[str, StoredChunk]) -> ChunkDiff:
    """Compare new chunks with a document's stored ones (`stored_chunks`)."""
    new_ids = {c.id for c in chunks}
    return ChunkDiff(
        added=tuple(c for c in chunks if c.id not in stored),
        unchanged=tuple(c for c in chunks if c.id in stored),
        removed=tuple(s for cid, s in stored.items() if cid not in new_ids),
    )


@dataclass(frozen=True)
class Plan:
    """What ingesting one document will do, worked out (read-only) before any embedding."""

    doc: Document
    chunks: tuple[Chunk, ...]
    stored: dict[str, StoredChunk]
    diff: ChunkDiff
    doc_meta: dict[str, Any]
    same_doc: bool  # stored already with the same text and tags
    # Each chunk's parse signals (rag.ingest.parse_signals) as its payload stores them, by chunk id: measured
    # over the whole document, so a kept chunk's may change too (a line now repeated in more chunks).
    parse: Mapping[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def added(self) -> tuple[Chunk, ...]:
        return self.diff.added

    @property
    def kept(self) -> tuple[Chunk, ...]:
        return self.diff.unchanged

    @property
    def removed(self) -> tuple[str, ...]:
        return tuple(s.chunk.id for s in self.diff.removed)

    @property
    def unchanged(self) -> bool:
        return self.same_doc and not self.added and not self.removed

    def result(self, status: str, written: int = 0, flagged: int = 0) -> FileResult:
        return FileResult(
            self.doc.source,
            status,
            chunks=len(self.chunks),
            written=written,
            unchanged=len(self.kept),
            removed=len(self.removed),
            flagged=flagged,
            notes=self.doc.notes,
        )


def plan_document(components: Components, doc: Document, chunks: Sequence[Chunk], tags: Sequence[str] | None) -> Plan:
    """Diff `doc`'s chunks against what is stored (ids are content hashes), checking them first.

    Raises:
        LoaderError: no chunks, more than the configured limit, chunk ids that repeat, or a stored
            document of the same source name that came from a different file (`identity_clash`).
    """
    refused = chunk_refusal(doc, chunks, components.settings.max_chunks_per_doc)
    if refused:
        raise LoaderError(refused)
    components.check_models()
    components.ensure_collection()
    stored = stored_chunks(components, doc.source)
    first = next(iter(stored.values()), None)
    clash = identity_clash(doc, first.payload if first else {})
    if clash:
        raise LoaderError(clash)
    doc_meta = {
        "original_name": doc.identity,
        "doc_sha": doc.sha256,
        "doc_size": doc.size_bytes,
        "doc_kind": doc.kind,
        "doc_notes": list(doc.notes),  # shown with the document on the Documents page ("no text layer: ...")
        "ingested_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "tags": clean_tags(tags) if tags is not None else list(first.tags if first else ()),
    }
    return Plan(
        doc=doc,
        chunks=tuple(chunks),
        stored=stored,
        diff=chunk_diff(chunks, stored),
        doc_meta=doc_meta,
        same_doc=first is not None and _same_doc(first.payload, doc_meta, tags),
        parse={cid: signals.payload() for cid, signals in measure(chunks, doc).items()},
    )


def chunk_refusal(doc: Document, chunks: Sequence[Chunk], limit: int) -> str:
    """Why `doc`'s chunks may not be written ("" when they may): none, more than `limit`, or ids that repeat.

    Checked from the chunks alone, before the collection is touched, so `ingest --dry-run` can say it too."""
    if not chunks:
        return f"{doc.source}: no text to index after chunking"
    if len(chunks) > limit:
        return (
            f"{doc.source}: would become {len(chunks):,} chunks, over the limit of {limit:,} per document "
            "(RAGSCOPE_MAX_CHUNKS); split it into smaller files or raise the limit"
        )
    repeated = repeated_ids(chunks)
    return f"{doc.source}: {repeated_message(chunks, repeated)}" if repeated else ""


def repeated_ids(chunks: Iterable[Chunk]) -> set[str]:
    """Ids given to more than one chunk: each would overwrite the other in the store."""
    seen: set[str] = set()
    repeated = set()
    for chunk in chunks:
        (repeated if chunk.id in seen else seen).add(chunk.id)
    return repeated


def repeated_message(chunks: Iterable[Chunk], repeated: set[str]) -> str:
    """The refusal for chunks whose ids repeat, naming where each one is."""
    where = sorted(
        {f"{c.source} chunk {c.index + 1} ({c.heading or 'no heading'})" for c in chunks if c.id in repeated}
    )
    return (
        f"not ingested: chunk ids repeat ({'; '.join(where)}), so one chunk would overwrite another. "
        "Nothing was written; please report this"
    )


def identity_clash(doc: Document, stored_payload: Mapping[str, Any]) -> str:
    """Why `doc` may not replace the stored document of its source name ("" when it may).

    Names are cleaned when stored (control characters dropped, long names cut), so a different file
    can arrive under a stored document's name, in a later command where `name_clashes` cannot see
    both; replacing would lose the other file's text without a word. Each document records the
    name its file was given; a document stored before that was recorded has an unknown original
    and is replaced, as before (and its original is recorded then).
    """
    stored = stored_payload.get("original_name")
    if not stored or stored == doc.identity:
        return ""
    return (
        f"{doc.source}: not ingested: the file '{doc.identity}' would be stored as the document '{doc.source}', "
        f"which holds the file '{stored}'; this one would replace it. Rename one of the files, or delete the "
        "stored document first"
    )


def _same_doc(old: dict, new_meta: dict, tags: Sequence[str] | None) -> bool:
    """Stored already as planned: same text, same tags, and its original recorded (else it is written, to record it)."""
    return (
        old.get("doc_sha") == new_meta["doc_sha"]
        and old.get("original_name") == new_meta["original_name"]
        and (tags is None or sorted(old.get("tags") or []) == new_meta["tags"])
    )


def name_clashes(entries: Sequence[tuple[str, str]]) -> dict[int, str]:
    """Which of `entries` ((name, how to point at it in a message)) would be stored as the same document.

    A document's identity is its source name, so two inputs with one name would end as one document,
    the second silently replacing the first. Returns, for the index of every input in such a group,
    an error naming all of them. Names that cannot be sanitised are left for the loader to report.
    """
    groups: dict[str, list[int]] = {}
    for i, (name, _) in enumerate(entries):
        try:
            groups.setdefault(safe_source(name), []).append(i)
        except LoaderError:
            continue
    out: dict[int, str] = {}
    for source, members in groups.items():
        if len(members) > 1:
            named = ", ".join(entries[i][1] for i in members)
            message = (
                f"not ingested: {named} would all be stored as the document {source!r} and one would replace "
                "the other; rename them, ingest their common parent folder, or ingest them into different collections"
            )
            out.update({i: f"{entries[i][1]}: {message}" for i in members})
    return out
