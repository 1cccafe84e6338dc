"""Fixing stored chunks by hand: edit one's text, disable and enable any, each fix written to the history.

The Documents page and `ragscope chunk` call these. An edit replaces the chunk's point whole, under the same id
(the source passage's hash, which keys the fix across re-ingests: rag.ingest.fixes): the new text, and its
dense, sparse and sentence vectors encoded by the collection's own encoders exactly as ingest encodes a chunk
(rag.ingest.embed.encode_chunks), and the injection scan run again on the new text. The passage's own text is
kept in the payload, so an edit back to it restores the chunk as ingested. A disable is the quarantine retrieval
already honours (rag.catalog.documents.set_quarantine) with who, when and why recorded.
"""

from __future__ import annotations

import dataclasses
import getpass
import uuid
from collections.abc import Sequence

from rag.catalog.documents import set_quarantine
from rag.components import Components
from rag.errors import RagError
from rag.ingest import fix_history
from rag.ingest.embed import encode_chunks
from rag.ingest.fix_history import HistoryEntry, now
from rag.ingest.fixes import (
    DISABLE_FIELDS,
    DISABLED_AT,
    DISABLED_BY,
    DISABLED_WHY,
    EDIT_FIELDS,
    EDITED_AT,
    EDITED_BY,
    ORIGINAL_TEXT,
    FixAction,
    where,
)
from rag.ingest.scan import scan_text
from rag.types import ChunkFilter, StoredChunk

_SCAN_FIELDS = ("flags", "flag_reason", "unchecked")  # rewritten from the new text's scan


def os_user() -> str:
    """Who fixes from the command line: the OS user ("cli" where the system names none)."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "cli"


def stored_chunk(components: Components, chunk_id: str) -> StoredChunk:
    """The stored chunk `chunk_id`, disabled or not.

    Raises:
        RagError: no chunk of the collection has that id.
    """
    chunk_id = chunk_id.strip()
    try:
        uuid.UUID(chunk_id)  # ids are UUIDs (rag.types.Chunk.make_id); the store would fail on another string
    except ValueError:
        found = []
    else:
        found = components.store.records(ChunkFilter(ids=(chunk_id,), include_quarantined=True))
    if not found:
        raise RagError(
            f"no chunk {chunk_id!r} in collection {components.settings.collection!r}; its id is shown in the "
            "Documents page's chunk browser, `ragscope search` and `ragscope docs --flagged`"
        )
    return found[0]


def edit_chunk(components: Components, chunk_id: str, text: str, who: str) -> StoredChunk:
    """Replace the chunk's text with `text` and its vectors with the new text's, marked edited by `who`, now.

    An edit back to the passage's own text restores the chunk as ingested (no longer marked edited).
    Returns the chunk as stored now.

    Raises:
        RagError: no such chunk, a blank text, or the text it has already.
    """
    record = stored_chunk(components, chunk_id)
    if not text.strip():
        raise RagError("a chunk's text cannot be empty: disable the chunk instead (`ragscope chunk disable ID`)")
    if text == record.chunk.text:
        raise RagError(f"chunk {record.chunk.id} has this text already: nothing to change")
    original = str(record.payload.get(ORIGINAL_TEXT) or record.chunk.text)
    chunk = dataclasses.replace(record.chunk, text=text)
    vectors = encode_chunks(components, [chunk])
    payload = {k: v for k, v in record.payload.items() if k not in (*EDIT_FIELDS, *_SCAN_FIELDS)}
    payload |= {"text": text, **scan_text(text, chunk.heading_path, chunk.source).payload()}
    stamp = now()
    if text != original:
        payload |= {EDITED_BY: who, EDITED_AT: stamp, ORIGINAL_TEXT: original}
    store = components.store
    with store.lock:  # an in-process ingest replaces the document under this lock: never between check and write
        if stored_chunk(components, chunk.id).chunk.text != record.chunk.text:
            raise RagError(f"chunk {chunk.id} was changed meanwhile (another session); look at it again, then edit")
        store.upsert([vectors.point(0, chunk.id, payload)])
        store.flush()
    details = {"old": record.chunk.text, "new": text, **({"restored": True} if text == original else {})}
    fix_history.append(
        components.settings, [HistoryEntry(FixAction.EDIT, chunk.id, where(record), who, stamp, details)]
    )
    return stored_chunk(components, chunk.id)


def disable_chunks(components: Components, chunk_ids: Sequence[str], who: str, why: str = "") -> int:
    """Disable these chunks: kept and shown, never retrieved, recorded as disabled by `who` now (for `why`).

    Returns how many were not disabled already (those are left as they were)."""
    records = [r for r in _records(components, chunk_ids) if not r.quarantined]
    stamp = now()
    ids = [r.chunk.id for r in records]
    set_quarantine(components, ids, True, {DISABLED_BY: who, DISABLED_AT: stamp, DISABLED_WHY: why})
    details = {"why": why} if why else {}
    entries = [HistoryEntry(FixAction.DISABLE, r.chunk.id, where(r), who, stamp, details) for r in records]
    fix_history.append(components.settings, entries)
    return len(records)


def enable_chunks(components: Components, chunk_ids: Sequence[str], who: str) -> int:
    """Enable these disabled (or quarantined) chunks again; returns how many were disabled."""
    records = [r for r in _records(components, chunk_ids) if r.quarantined]
    ids = [r.chunk.id for r in records]
    set_quarantine(components, ids, False, dict.fromkeys(DISABLE_FIELDS))
    stamp = now()
    entries = [HistoryEntry(FixAction.ENABLE, r.chunk.id, where(r), who, stamp) for r in records]
    fix_history.append(components.settings, entries)
    return len(records)


def _records(components: Components, chunk_ids: Sequence[str]) -> list[StoredChunk]:
    """The stored chunks of these ids, every one of which must exist (else nothing is changed)."""
    return [stored_chunk(components, chunk_id) for chunk_id in dict.fromkeys(chunk_ids)]
