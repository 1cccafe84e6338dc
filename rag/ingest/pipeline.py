"""Documents into the collection: diff against what is stored, embed only what changed, replace atomically.

Readers never see a mix of a document's old and new chunks: the replacement runs under the store's
lock (in-process readers wait) and behind a journal (a crash is rolled back or forward on next open).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import AbstractSet, Any, Callable, Iterable, Sequence

import numpy as np

from rag.store.journal import JournalEntry, settle
from rag.ingest.chunker import chunk_document
from rag.components import Components
from rag.settings.config import INT8_RUNTIME, ChunkConfig
from rag.encoders.base import DenseEncoder
from rag.encoders.factory import dense_encoder
from rag.errors import LoaderError, RagError, StoreError
from rag.ingest.loaders.document import load_document
from rag.ingest.loaders.names import safe_source
from rag.ingest.loaders.names import SUPPORTED_SUFFIXES
from rag.ingest.originals import Originals
from rag.ingest.scan import scan_text
from rag.ingest.sentences import sentence_spans, sentence_texts
from rag.types import clean_tags
from rag.store.base import PointData, chunk_payload
from rag.text.words import plural
from rag.types import Chunk, ChunkFilter, Document, StoredChunk

log = logging.getLogger(__name__)

Progress = Callable[[float, str], None]
EncodeProgress = Callable[[str, int, int], None]  # (what: "chunks" | "sentences", done, total)
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


@dataclass(frozen=True)
class Prepared:
    """A document already loaded and chunked (the Documents page's preview), for `ingest_files` to
    write without loading and chunking the bytes again."""

    doc: Document
    chunks: tuple[Chunk, ...]


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


@dataclass(frozen=True)
class _Plan:
    """What ingesting one document will do, worked out (read-only) before any embedding."""

    doc: Document
    chunks: tuple[Chunk, ...]
    stored: dict[str, StoredChunk]
    added: tuple[Chunk, ...]
    kept: tuple[Chunk, ...]
    removed: tuple[str, ...]
    doc_meta: dict[str, Any]
    same_doc: bool  # stored already with the same text and tags

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
        )


# New chunks are embedded in groups spanning documents: one encoder call sorts a group by length and
# fills every batch, as the model's own benchmark does. Per-document calls (~20 chunks each on the
# FastAPI docs) leave batches part-empty and padded.
ENCODE_GROUP = 256
# Texts per encoder call inside a group: small enough to report progress every few seconds. Also for
# sentence vectors: on 2 cores, 1,500 FastAPI-docs sentences sorted by length took 16-20 s at 32-64 a
# batch but 24-28 s at 128-256 (larger batches are slower on CPU even when short texts pad little).
ENCODE_BATCH = 64


def ingest_document(components: Components, doc: Document, config: ChunkConfig | None = None, tags: Sequence[str] | None = None) -> FileResult:
    """Chunk, diff, embed what is new, and replace the stored version of `doc` in one step.

    Args:
        components: store and encoders.
        doc: the loaded document.
        config: chunking settings (defaults to the configured ones).
        tags: tags for every chunk; None keeps the tags the document already has.

    Returns:
        What happened to the document, with chunk counts.

    Raises:
        LoaderError: the document has no text to index or more chunks than the configured limit.
        RagError: the store or an encoder failed; the stored version of the document is untouched.
    """
    config = config or components.settings.chunk
    plan = _plan(components, doc, chunk_document(doc, config), tags)
    if plan.unchanged:
        return plan.result("unchanged")
    (points,) = _embed(components, [plan])
    return _save(components, plan, points, tags)


def _plan(components: Components, doc: Document, chunks: Sequence[Chunk], tags: Sequence[str] | None) -> _Plan:
    """Diff `doc`'s chunks against what is stored (ids are content hashes)."""
    if not chunks:
        raise LoaderError(f"{doc.source}: no text to index after chunking")
    limit = components.settings.max_chunks_per_doc
    if len(chunks) > limit:
        raise LoaderError(
            f"{doc.source}: would become {len(chunks):,} chunks, over the limit of {limit:,} per document "
            "(RAGSCOPE_MAX_CHUNKS); split it into smaller files or raise the limit"
        )
    repeated = _repeated_ids(chunks)
    if repeated:
        raise LoaderError(f"{doc.source}: {_repeated_message(chunks, repeated)}")
    components.check_models()
    components.ensure_collection()
    stored = {s.chunk.id: s for s in components.store.records(ChunkFilter(sources=(doc.source,), include_quarantined=True))}
    first = next(iter(stored.values()), None)
    doc_meta = {
        "doc_sha": doc.sha256,
        "doc_size": doc.size_bytes,
        "doc_kind": doc.kind,
        "ingested_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "tags": clean_tags(tags) if tags is not None else list(first.tags if first else ()),
    }
    new_ids = {c.id for c in chunks}
    return _Plan(
        doc=doc,
        chunks=tuple(chunks),
        stored=stored,
        added=tuple(c for c in chunks if c.id not in stored),
        kept=tuple(c for c in chunks if c.id in stored),
        removed=tuple(i for i in stored if i not in new_ids),
        doc_meta=doc_meta,
        same_doc=first is not None and _same_doc(first.payload, doc_meta, tags),
    )


def _repeated_ids(chunks: Iterable[Chunk]) -> set[str]:
    """Ids given to more than one chunk: each would overwrite the other in the store."""
    seen: set[str] = set()
    repeated = set()
    for chunk in chunks:
        (repeated if chunk.id in seen else seen).add(chunk.id)
    return repeated


def _repeated_message(chunks: Iterable[Chunk], repeated: set[str]) -> str:
    where = sorted({f"{c.source} chunk {c.index + 1} ({c.heading or 'no heading'})" for c in chunks if c.id in repeated})
    return f"not ingested: chunk ids repeat ({'; '.join(where)}), so one chunk would overwrite another. Nothing was written; please report this"


def _embed(components: Components, plans: Sequence[_Plan], progress: EncodeProgress | None = None) -> list[list[PointData]]:
    """Dense + sparse vectors and payloads for every plan's new chunks, encoded together, plus each
    chunk's sentence vectors when the collection stores them, made as its record says (late pooling
    from the chunks' own forward pass, or a second pass over the sentences).

    `progress(what, done, total)` follows each encoder batch ("chunks", then "sentences" for a
    collection whose sentences are encoded separately).
    """
    added = [(p, c) for p in plans for c in p.added]
    chunks = [c for _, c in added]
    texts = [c.embed_text for c in chunks]
    models = components.store.collection_models()
    sentences: list[Any] = [None] * len(added)
    if models is not None and models.sentence_vectors and models.sentence_pooling == "late":
        dense, sentences = encode_late(components.dense, chunks, _stage(progress, "chunks"))
    else:
        dense = _encode_sorted(components.dense, texts, _stage(progress, "chunks"))
        if models is not None and models.sentence_vectors:
            encoder = components.dense
            if models.sentence_pooling == "separate-int8":
                encoder = dense_encoder(components.settings.dense_model, INT8_RUNTIME, components.settings.data_dir / "models")
            sentences = encode_sentences(encoder, chunks, _stage(progress, "sentences"))
    sparse = components.sparse.encode_documents(texts) if texts else []
    points: dict[int, list[PointData]] = {id(p): [] for p in plans}
    for (plan, chunk), d, s, rows in zip(added, dense, sparse, sentences, strict=True):
        payload = {**chunk_payload(chunk, plan.doc_meta), "flags": list(scan_text(chunk.text)), "status": "active"}
        points[id(plan)].append(PointData(chunk.id, d, s, payload, rows))
    return [points[id(p)] for p in plans]


def encode_sentences(dense: DenseEncoder, chunks: Sequence[Chunk], progress: Callable[[int, int], None] | None = None) -> list[np.ndarray]:
    """Each chunk's `sentence_texts` vectors (one array per chunk), every distinct text encoded once.

    Chunks of one section share their heading line, so it is encoded once for all of them. Public so
    that bench/quality.py times exactly the work ingest adds for sentence vectors.
    """
    per_chunk = [sentence_texts(c) for c in chunks]
    unique = list(dict.fromkeys(t for texts in per_chunk for t in texts))
    vectors = _encode_sorted(dense, unique, progress)
    row = {text: i for i, text in enumerate(unique)}
    return [vectors[[row[t] for t in texts]] for texts in per_chunk]


def encode_late(dense: DenseEncoder, chunks: Sequence[Chunk], progress: Callable[[int, int], None] | None = None) -> tuple[np.ndarray, list[np.ndarray]]:
    """Each chunk's vector and its `sentence_texts` vectors, from one forward pass over the chunk
    ("late chunking": each sentence's span of token states is pooled, `DenseEncoder.encode_spans`).

    No sentence is encoded twice; only the sentences past the model's window (the end of a chunk
    longer than its 256 tokens) have no token states, and those are encoded on their own, each
    distinct text once. Public so that bench/quality.py measures exactly what ingest stores.
    """
    texts = [c.embed_text for c in chunks]
    spans = [sentence_spans(c) for c in chunks]
    vectors = np.zeros((len(chunks), dense.dim if chunks else 0), dtype=np.float32)
    sentences: list[np.ndarray] = [np.zeros((0, 0), dtype=np.float32)] * len(chunks)
    beyond: list[tuple[int, int]] = []
    batches = _length_batches(texts)
    for n, batch in enumerate(batches):
        out = dense.encode_spans([texts[i] for i in batch], [spans[i] for i in batch], batch_size=ENCODE_BATCH)
        vectors[batch] = out.texts
        for k, i in enumerate(batch):
            sentences[i] = out.spans[k]
        beyond += [(batch[k], j) for k, j in out.beyond]
        if progress:
            progress(min((n + 1) * ENCODE_BATCH, len(texts)), len(texts))
    if beyond:
        alone = [texts[i][slice(*spans[i][j])] for i, j in beyond]
        unique = list(dict.fromkeys(alone))
        encoded = _encode_sorted(dense, unique, None)
        row = {text: k for k, text in enumerate(unique)}
        for (i, j), text in zip(beyond, alone, strict=True):
            sentences[i][j] = encoded[row[text]]
    return vectors, sentences


def _length_batches(texts: Sequence[str]) -> list[list[int]]:
    """Indices of `texts` in batches of similar length (longest first, as sentence-transformers sorts
    inside one call, so little padding)."""
    order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
    return [order[at : at + ENCODE_BATCH] for at in range(0, len(order), ENCODE_BATCH)]


def _encode_sorted(dense: DenseEncoder, texts: Sequence[str], progress: Callable[[int, int], None] | None) -> np.ndarray:
    """`texts` encoded in `_length_batches`, in input order; `progress(done, total)` after each batch."""
    if not texts:
        return np.zeros((0, 0), dtype=np.float32)  # without loading the model for its dimension
    out = np.zeros((len(texts), dense.dim), dtype=np.float32)
    for n, batch in enumerate(_length_batches(texts)):
        out[batch] = dense.encode_documents([texts[i] for i in batch], batch_size=ENCODE_BATCH)
        if progress:
            progress(min((n + 1) * ENCODE_BATCH, len(texts)), len(texts))
    return out


def _stage(progress: EncodeProgress | None, what: str) -> Callable[[int, int], None] | None:
    return (lambda done, total: progress(what, done, total)) if progress else None


class _StalePlan(Exception):
    """The stored document changed between planning and applying (another session saved it)."""


# Re-plans allowed when other sessions keep saving the same document while this one embeds.
_SAVE_ATTEMPTS = 5


def _save(
    components: Components, plan: _Plan, points: Sequence[PointData], tags: Sequence[str] | None, durable: bool = True
) -> FileResult:
    """Apply the plan; when another session replaced the document meanwhile, diff against its version and retry."""
    for _ in range(_SAVE_ATTEMPTS):
        try:
            result = _apply(components, plan, points, durable)
            keep_original(components, plan.doc)
            return result
        except _StalePlan:
            plan = _plan(components, plan.doc, plan.chunks, tags)
            if plan.unchanged:
                return plan.result("unchanged")
            (points,) = _embed(components, [plan])
    raise StoreError(f"{plan.doc.source}: another session kept saving this document at the same time; try again")


def _apply(components: Components, plan: _Plan, points: Sequence[PointData], durable: bool = True) -> FileResult:
    """Replace the stored version of the document with the planned one, behind the journal.

    With `durable=False` the store is not flushed and the "commit" journal entry stays: the caller
    flushes once for many documents and then clears their entries (`_make_durable`). Until then a
    crash rolls each of them forward, as for any committed entry.

    Raises:
        _StalePlan: the stored chunks are no longer those the plan was diffed against; applying it
            would keep chunks the other save removed and miss chunks it deleted.
    """
    store, stored, kept, removed = components.store, plan.stored, plan.kept, list(plan.removed)
    moved = {c.id: c for c in kept if _position(stored[c.id].payload) != _position(chunk_payload(c, {}))}
    with store.lock:
        current = store.records(ChunkFilter(sources=(plan.doc.source,), include_quarantined=True))
        if {r.chunk.id for r in current} != set(stored):
            raise _StalePlan(plan.doc.source)
        restore = {c.id: {k: stored[c.id].payload.get(k) for k in (*_POSITION_FIELDS, *_DOC_FIELDS)} for c in kept}
        store.ensure_space(_write_size(points, len(kept) + len(moved)))
        apply = JournalEntry(plan.doc.source, "apply", [p.id for p in points], removed, restore)
        components.journal.write(apply)
        try:
            store.upsert(points)
            if kept:
                store.set_payload([c.id for c in kept], plan.doc_meta)
            for chunk_id, chunk in moved.items():
                store.set_payload([chunk_id], {k: v for k, v in chunk_payload(chunk, {}).items() if k in _POSITION_FIELDS})
        except RagError:
            _roll_back(components, apply)
            raise
        components.journal.write(JournalEntry(plan.doc.source, "commit", [p.id for p in points], removed))
        store.delete(removed)
        if durable:
            _make_durable(components, [plan.doc.source])
    flagged = sum(1 for p in points if p.payload["flags"]) + sum(1 for c in kept if stored[c.id].flags)
    return plan.result("updated" if stored else "added", written=len(points), flagged=flagged)


def _write_size(points: Sequence[PointData], updated: int) -> int:
    """Bytes a replacement may add on disk, generously: every vector and payload twice (the engine's
    write-ahead log, then its segment), plus a little per payload update."""
    per_point = sum(
        4 * len(p.dense)
        + 4 * sum(len(row) for row in (p.sentences if p.sentences is not None else ()))
        + 8 * len(p.sparse.indices)
        + 2 * len(p.payload.get("text", ""))
        + 1024
        for p in points
    )
    return 2 * per_point + 2048 * updated


def _roll_back(components: Components, apply: JournalEntry) -> None:
    """Undo a replacement whose writes failed (a full disk, a lost server) now, so the document is
    wholly its old version at once; if that fails too, the entry stays and the next open undoes it."""
    try:
        settle(components.store, apply)
    except RagError:
        return
    components.journal.clear(apply.source)


def keep_original(components: Components, doc: Document) -> None:
    """Keep the file a stored document came from, so eval can tell parse loss from wording (rag.ingest.originals)."""
    originals = Originals(components.settings.originals_dir)
    try:
        if doc.original and not originals.holds(doc.source, doc.original):
            originals.save(doc.source, doc.original)
    except OSError as e:  # the chunks are stored; only the parse-loss check loses this document
        log.warning("could not keep the original of %s: %s", doc.source, e)


def _make_durable(components: Components, sources: Sequence[str]) -> None:
    """Flush the store, then drop the journal entries it made unnecessary (under the lock: no
    session can be between writing and clearing its own entry for one of these sources meanwhile).

    An edge flush costs ~0.1-0.3 s here (it fsyncs); once per document it was ~10% of a first ingest.
    """
    with components.store.lock:
        components.store.flush()
        for source in sources:
            components.journal.clear(source)


def _position(payload: dict) -> tuple:
    return tuple(tuple(v) if isinstance(v, list) else v for v in (payload.get(k) for k in _POSITION_FIELDS))


def _same_doc(old: dict, new_meta: dict, tags: Sequence[str] | None) -> bool:
    return old.get("doc_sha") == new_meta["doc_sha"] and (tags is None or sorted(old.get("tags") or []) == new_meta["tags"])


def ingest_files(
    components: Components,
    files: Iterable[tuple[str, bytes] | Prepared],
    config: ChunkConfig | None = None,
    tags: Sequence[str] | None = None,
    progress: Progress | None = None,
) -> IngestSummary:
    """Load and ingest many files; a bad file is reported and the others still go in.

    New chunks of several documents are embedded together (see ENCODE_GROUP); each document is
    still replaced on its own, atomically, right after its group is embedded, and the store is
    flushed once per group.

    Two files that would be stored under one source name (the same name twice, or names that
    sanitise alike) are both refused with an error naming them: one would silently replace the other.

    Args:
        components: store and encoders.
        files: (name, bytes) pairs, names becoming sources (sanitised); or `Prepared` documents,
            written as they were chunked (a preview's chunks), without loading them again.
        config: chunking settings for the (name, bytes) pairs (defaults to the configured ones).
        tags: tags for every document; None keeps each document's current tags.
        progress: called with (fraction of files done, message) as files finish and while a group
            of chunks is being embedded.

    Returns:
        One result per file, in the order given.
    """
    files = list(files)
    config = config or components.settings.chunk
    max_bytes = components.settings.max_upload_mb * 1024 * 1024
    results: list[FileResult | None] = [None] * len(files)
    pending: list[tuple[int, _Plan]] = []

    def finish(i: int, result: FileResult) -> None:
        results[i] = result
        if progress:
            done = sum(r is not None for r in results)
            progress(done / len(files), f"{done}/{len(files)} {result.source}: {result.status}")

    def encoding(what: str, done: int, total: int) -> None:
        if progress:
            finished = sum(r is not None for r in results)
            progress(finished / len(files), f"embedding {what} {done}/{total} ({plural(len(pending), 'file')})")

    def flush() -> None:
        if not pending:
            return
        # Ids are unique per document (checked in _plan) and contain the source; this is the check
        # across the group, before anything of it is written.
        repeated = _repeated_ids(c for _, p in pending for c in p.chunks)
        for i, plan in [(i, p) for i, p in pending if repeated & {c.id for c in p.chunks}]:
            finish(i, FileResult(plan.doc.source, "error", error=f"{plan.doc.source}: {_repeated_message((c for _, p in pending for c in p.chunks), repeated)}"))
            pending.remove((i, plan))
        if not pending:
            return
        try:
            groups = _embed(components, [p for _, p in pending], encoding)
        except RagError as e:  # an encoder failure fails the whole group; nothing of it was written
            for i, plan in pending:
                finish(i, FileResult(plan.doc.source, "error", error=str(e)))
            pending.clear()
            return
        done: list[tuple[int, FileResult]] = []
        for (i, plan), points in zip(pending, groups):
            try:
                result = _save(components, plan, points, tags, durable=False)
            except RagError as e:
                result = FileResult(plan.doc.source, "error", error=str(e))
            done.append((i, result))
        written = [r for _, r in done if r.status != "error"]
        try:
            if written:
                _make_durable(components, [r.source for r in written])
        except RagError as e:
            message = f"written but not flushed ({e}); the next open of the store finishes it"
            done = [(i, r if r.status == "error" else FileResult(r.source, "error", error=f"{r.source}: {message}")) for i, r in done]
        for i, result in done:
            finish(i, result)
        pending.clear()

    names = [item.doc.source if isinstance(item, Prepared) else item[0] for item in files]
    clashes = name_clashes([(name, f"file {i + 1} ({name!r})") for i, name in enumerate(names)])
    for i, (name, item) in enumerate(zip(names, files, strict=True)):
        if i in clashes:
            finish(i, FileResult(name, "error", error=clashes[i]))
            continue
        try:
            doc = item.doc if isinstance(item, Prepared) else load_document(name, item[1], max_bytes=max_bytes)
            plan = _plan(components, doc, item.chunks if isinstance(item, Prepared) else chunk_document(doc, config), tags)
        except RagError as e:
            finish(i, FileResult(name, "error", error=str(e)))
            continue
        if plan.unchanged:
            keep_original(components, doc)  # the file may differ where its chunks do not (an HTML page's navigation)
            finish(i, plan.result("unchanged"))
            continue
        pending.append((i, plan))
        if sum(len(p.added) for _, p in pending) >= ENCODE_GROUP:
            flush()
    flush()
    return IngestSummary(tuple(r for r in results if r is not None))


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


# Folders that hold tool state, not documents; anything whose name starts with "." is hidden too.
_NOT_DOCUMENT_FOLDERS = {"__pycache__", "node_modules", "__MACOSX", "site-packages", "dist-packages"}


@dataclass(frozen=True)
class CollectedPaths:
    """What a folder walk found: the files to read, and every file or folder left out with the reason."""

    files: tuple[tuple[str, Path], ...]  # (source name relative to the folder given, path)
    skipped: tuple[tuple[str, str], ...]  # (path, reason)


def collect_paths(paths: Iterable[Path], own_folders: Iterable[Path] = ()) -> CollectedPaths:
    """Expand files and folders (recursively) into (source name, path); folders keep relative paths.

    In a folder, documents and `.zip` archives (expanded by the caller, within the archive limits)
    are collected; hidden files and folders (`.git`, `.env`, a file named `.md`), tool and package
    folders (`__pycache__`, `node_modules`, a Python virtual environment: its licences and READMEs
    are not the user's documents), `own_folders` (ragscope's own data dir, which `ragscope ingest .`
    in the folder holding `./data` would otherwise walk), symbolic links and unsupported types are
    skipped, none descended into, and each is reported so nothing disappears silently. A file named
    explicitly is always collected. A file reached twice (given twice, or also inside a folder
    given) is listed once, under the name it was first reached by: it is one document, not two.
    """
    import os

    files: dict[Path, tuple[str, Path]] = {}
    skipped: list[tuple[str, str]] = []
    own = {p.resolve() for p in own_folders}
    for path in paths:
        if not path.is_dir():
            files.setdefault(path.resolve(), (path.name, path))
            continue

        def unreadable(error: OSError) -> None:
            skipped.append((str(error.filename), f"cannot read this folder ({error.strerror})"))

        for folder, dirs, names in os.walk(path, onerror=unreadable):
            here = Path(folder)
            for d in sorted(dirs):
                reason = _left_out(d, here / d, own)
                if reason:
                    skipped.append((str(here / d) + "/", reason))
                    dirs.remove(d)
            dirs.sort()
            for name in sorted(names):
                file = here / name
                suffix = file.suffix.lower()
                reason = _left_out(name, file) or (
                    "" if suffix in SUPPORTED_SUFFIXES or suffix == ".zip" else f"unsupported file type {suffix or '(none)'}"
                )
                if reason:
                    skipped.append((str(file), reason))
                else:
                    files.setdefault(file.resolve(), (file.relative_to(path).as_posix(), file))
    return CollectedPaths(tuple(files.values()), tuple(skipped))


def _left_out(name: str, path: Path, own: AbstractSet[Path] = frozenset()) -> str:
    """Why a folder walk does not take this file or folder ("" when it does); folders are also judged by
    what they are (a virtual environment, ragscope's own data dir), not only by name."""
    if path.is_symlink():
        return "a symbolic link (not followed)"
    if name.startswith("."):
        return "hidden (its name starts with a dot)"
    if not path.is_dir():
        return ""
    if name in _NOT_DOCUMENT_FOLDERS:
        return "tool or package folder, not documents"
    if (path / "pyvenv.cfg").is_file() or (path / "conda-meta").is_dir():
        return "a Python virtual environment, not documents"
    if path.resolve() in own:
        return "ragscope's own data folder (RAGSCOPE_DATA_DIR), not documents"
    return ""
