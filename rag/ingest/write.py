"""A plan written: the stored version of a document replaced atomically, behind the journal.

Readers never see a mix of a document's old and new chunks: the replacement runs under the store's
lock (in-process readers wait; on the embedded engine, other processes' too) and behind a journal (a
crash is rolled back or forward on next open). Writers never interleave on one document, whichever
process or machine they run on: each holds the document's lease in Qdrant on a server, its turn on the
embedded engine (rag/store/doc_lease.py).
"""

from __future__ import annotations

import logging
from contextlib import nullcontext
from typing import Sequence

from rag.components import Components
from rag.errors import LoaderError, RagError, StoreError
from rag.ingest.embed import embed_plans
from rag.ingest.fixes import fixed_meanwhile, refusal
from rag.ingest.originals import Originals
from rag.ingest.plan import Plan, plan_document
from rag.ingest.results import FileResult
from rag.store.base import PointData, chunk_payload
from rag.store.doc_lease import Held, InTurn
from rag.store.journal import JournalEntry, settle
from rag.types import ChunkFilter, Document

log = logging.getLogger(__name__)
# Where a kept chunk (same id: same text under the same heading) sits in its document, its role (a contents
# or index page, rag.types.ROLE_INDEX), which the loader may now read otherwise, and its parse signals (measured
# over the whole document, and absent from chunks stored before them): rewritten when changed.
_POSITION_FIELDS = ("start", "end", "index", "page", "heading_path", "heading", "role", "parse")
_DOC_FIELDS = ("doc_sha", "doc_size", "doc_kind", "doc_notes", "ingested_at", "tags", "original_name")


class _StalePlan(Exception):
    """The stored document changed between planning and applying (another session saved it)."""


# Re-plans allowed when other sessions keep saving the same document while this one embeds.
_SAVE_ATTEMPTS = 5


def save_plan(
    components: Components, plan: Plan, points: Sequence[PointData], tags: Sequence[str] | None, durable: bool = True
) -> FileResult:
    """Apply the plan; when another session replaced the document meanwhile, diff against its version and retry.

    A retry holds the document (its lease) from the new diff on: on a server no other writer can then save
    it first again, where two writers saving one document in a tight loop would starve one (each diff
    outdated by the other's save while embedding). On the embedded engine the lease is the turn of the
    write alone, so a retry can find the plan outdated again, up to `_SAVE_ATTEMPTS` in all.
    """
    try:
        return _saved(components, plan, points, durable, None)
    except _StalePlan:
        pass
    with components.leases.holding(components.store.collection, plan.doc.source) as held:
        for _ in range(_SAVE_ATTEMPTS - 1):
            plan = plan_document(components, plan.doc, plan.chunks, tags)
            if plan.unchanged:
                return plan.result("unchanged")
            (points,) = embed_plans(components, [plan])
            try:
                return _saved(components, plan, points, durable, held)
            except _StalePlan:
                continue
    raise StoreError(f"{plan.doc.source}: another session kept saving this document at the same time; try again")


def _saved(
    components: Components, plan: Plan, points: Sequence[PointData], durable: bool, held: Held | InTurn | None
) -> FileResult:
    result = _apply(components, plan, points, durable, held)
    keep_original(components, plan.doc)
    return result


def _apply(
    components: Components, plan: Plan, points: Sequence[PointData], durable: bool, held: Held | InTurn | None
) -> FileResult:
    """Replace the stored version of the document with the planned one, behind the journal.

    With `durable=False` the store is not flushed and the "commit" journal entry stays: the caller
    flushes once for many documents and then clears their entries (`make_durable`). Until then a
    crash rolls each of them forward, as for any committed entry.

    Raises:
        _StalePlan: the stored chunks are no longer those the plan was diffed against; applying it
            would keep chunks the other save removed and miss chunks it deleted.
        LoaderError: a chunk it removes was fixed (edited, disabled) after the plan was diffed, so no
            preview listed the fix it would drop.
    """
    store, stored, kept, removed = components.store, plan.stored, plan.kept, list(plan.removed)
    new = {c.id: chunk_payload(c, {}, plan.parse.get(c.id)) for c in kept}
    moved = {c.id for c in kept if _position(stored[c.id].payload) != _position(new[c.id])}
    source = plan.doc.source
    holding = nullcontext(held) if held else components.leases.holding(store.collection, source)
    with holding as held, store.lock:
        components.journal.settle_leftover(store, source)  # a writer before this one died part-way
        current = store.records(ChunkFilter(sources=(source,), include_quarantined=True))
        if {r.chunk.id for r in current} != set(stored):
            raise _StalePlan(source)
        meanwhile = fixed_meanwhile(plan.diff, current)
        if meanwhile:  # a person fixed a passage this ingest removes after it was previewed: never dropped unseen
            raise LoaderError(refusal(source, meanwhile, meanwhile=True))
        restore = {c.id: {k: stored[c.id].payload.get(k) for k in (*_POSITION_FIELDS, *_DOC_FIELDS)} for c in kept}
        store.ensure_space(_write_size(points, len(kept) + len(moved)))
        apply = JournalEntry(source, "apply", [p.id for p in points], removed, restore)
        held.renew()  # each step below starts only while this writer still holds the document (LeaseLost)
        components.journal.write(apply)
        try:
            store.upsert(points)
            if kept:
                store.set_payload([c.id for c in kept], plan.doc_meta)
            for chunk_id in moved:  # role None: none now
                store.set_payload([chunk_id], {k: new[chunk_id].get(k) for k in _POSITION_FIELDS})
        except RagError:
            _roll_back(components, apply)
            raise
        held.renew()  # lost: the writer that took the document over rolls this "apply" entry back
        components.journal.write(JournalEntry(source, "commit", [p.id for p in points], removed))
        store.delete(removed)
        if durable:
            make_durable(components, [source])
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


def make_durable(components: Components, sources: Sequence[str]) -> None:
    """Flush the store, then drop the journal entries it made unnecessary (under the lock: no
    session can be between writing and clearing its own entry for one of these sources meanwhile).

    An edge flush fsyncs: once per document it was a visible share of a first ingest (bench/README.md, ingest).
    """
    with components.store.lock:
        components.store.flush()
        for source in sources:
            components.journal.clear(source)


def _position(payload: dict) -> tuple:
    return tuple(tuple(v) if isinstance(v, list) else v for v in (payload.get(k) for k in _POSITION_FIELDS))
