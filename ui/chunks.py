"""Chunk tables and the chunk browser of the Documents page.

Chunk text is untrusted: it reaches the screen only through st.dataframe, st.text and st.code (all
plain text), never through Markdown or HTML. Its fenced code blocks show as code (`chunk_text`), so a
listing reads as one, not as text between ``` lines.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence

import pandas as pd
import streamlit as st

from rag.catalog.documents import filter_chunks
from rag.ingest.fixes import DISABLED_AT, DISABLED_WHY, EDITED_AT, FLAGGED_WHY, disabled_words, edited_words
from rag.ingest.plan import ChunkDiff
from rag.text.words import plural
from rag.types import Chunk, StoredChunk
from ui.render import fence_parts

CHUNK_COLUMNS = {
    "index": st.column_config.NumberColumn("#", width="small"),
    "heading path": st.column_config.TextColumn("heading path"),
    "page": st.column_config.NumberColumn("page", width="small"),
    "chars": st.column_config.NumberColumn("chars", width="small"),
    "text": st.column_config.TextColumn("text", width="large"),
}


def chunk_rows(chunks: Sequence[Chunk], changes: list[str] | None = None) -> pd.DataFrame:
    """One row per chunk (the page column only when some chunk has a page); `changes` adds a first column."""
    rows = [
        {"index": c.index, "heading path": c.heading, "page": c.page, "chars": len(c.text), "text": c.text}
        for c in chunks
    ]
    frame = pd.DataFrame(rows, columns=list(CHUNK_COLUMNS))
    if changes is not None:
        frame.insert(0, "change", changes)
    if frame["page"].isna().all():
        frame = frame.drop(columns="page")
    return frame


def diff_rows(diff: ChunkDiff) -> pd.DataFrame:
    """A previewed document against its stored version: new and kept chunks in order, then the removed ones."""
    kept = sorted(
        [(c, "added") for c in diff.added] + [(c, "unchanged") for c in diff.unchanged], key=lambda p: p[0].index
    )
    gone = [(s.chunk, "removed") for s in sorted(diff.removed, key=lambda s: s.chunk.index)]
    pairs = kept + gone
    return chunk_rows([c for c, _ in pairs], [change for _, change in pairs])


def stored_status(record: StoredChunk) -> str:
    """Whether retrieval can return the chunk: "active", "disabled" (by a person), "quarantined" (for the scan's
    flag, or before who and when were recorded), or the role that keeps it out of ranking (a contents or index
    page, a scan's placeholder: rag.types.ROLE_INDEX ...); ", edited" after it when a person edited its text."""
    if record.quarantined:
        disabled = record.payload.get(DISABLED_AT) and record.payload.get(DISABLED_WHY) != FLAGGED_WHY
        status = "disabled" if disabled else "quarantined"
    else:
        status = f"{record.chunk.role}: out of ranking" if record.chunk.role else "active"
    return status + (", edited" if record.payload.get(EDITED_AT) else "")


def stored_rows(records: Sequence[StoredChunk]) -> pd.DataFrame:
    """Stored chunks with their status and injection-scan flags before the text."""
    frame = chunk_rows([r.chunk for r in records])
    frame.insert(len(frame.columns) - 1, "status", [stored_status(r) for r in records])
    frame.insert(len(frame.columns) - 1, "flags", [", ".join(r.flags) for r in records])
    return frame


def chunk_browser(records: Sequence[StoredChunk], key: str) -> StoredChunk | None:
    """A document's chunks, filtered by text; clicking a row shows that chunk whole (as Qdrant's point view does).
    Returns the chunk shown (None when no row is picked), for the page to offer its fixes."""
    query = st.text_input("Filter chunks", key=f"{key}_filter", placeholder="text, heading or id the chunk contains")
    shown = filter_chunks(records, query)
    if query.strip():
        verb = "contains" if len(shown) == 1 else "contain"
        st.caption(f"{plural(len(shown), 'chunk')} of {len(records):,} {verb} this text.")
    event = st.dataframe(
        stored_rows(shown),
        hide_index=True,
        column_config=CHUNK_COLUMNS,
        on_select="rerun",
        selection_mode="single-row",
        key=table_key(key, records[0].chunk.source if records else "", query),
        alt="Chunks of the chosen document",
    )
    rows = event.selection.rows if event else []
    if rows and rows[0] < len(shown):
        chunk_detail(shown[rows[0]])
        return shown[rows[0]]
    if shown:
        st.caption("Click a row to see the whole chunk, its id and its offsets, and to edit or disable it.")
    return None


def table_key(key: str, source: str, query: str) -> str:
    """The chunk table's widget key: one per document and filter, so a new one starts with nothing selected."""
    digest = hashlib.sha1(f"{source}\0{' '.join(query.casefold().split())}".encode()).hexdigest()[:12]
    return f"{key}_table_{digest}"


def chunk_detail(record: StoredChunk) -> None:
    """One chunk in full: id (copyable), heading path, offsets, status and flags, then its text as plain text."""
    chunk = record.chunk
    with st.container(border=True):
        st.code(chunk.id, language=None)
        where = f"chunk #{chunk.index} · characters {chunk.start:,}–{chunk.end:,}" + (
            f" · page {chunk.page}" if chunk.page is not None else ""
        )
        status = f"{disabled_words(record)} (never retrieved)" if record.quarantined else stored_status(record)
        st.text(
            f"{chunk.heading or '(no heading)'}\n{where} · {status}"
            + (f"\n{edited_words(record)}" if edited_words(record) else "")
            + (f"\nflags: {', '.join(record.flags)}" if record.flags else "")
        )
        chunk_text(chunk.text)


def chunk_text(text: str, prose: Callable[[int, int], None] | None = None) -> None:
    """Chunk text as a reader wants it: each fenced code block through st.code (with its fence's language), the
    text around them through `prose(start, end)` (a slice of `text`), by default st.text: never Markdown or HTML
    from the document."""
    for part in fence_parts(text):
        if part.code:
            st.code(text[part.start : part.end], language=part.language or None)
        elif prose is not None:
            prose(part.start, part.end)
        else:
            st.text(text[part.start : part.end])
