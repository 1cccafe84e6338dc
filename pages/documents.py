"""Documents: upload, preview the chunks, ingest with progress, and manage what is stored.

Document text is untrusted: it is shown only through st.dataframe and st.text, and every file name
or message that reaches a Markdown-rendering element goes through md_escape.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd
import streamlit as st

from ui.collections import switch_collection
from ui.setup import page
from rag.answer.render import md_escape
from rag.archive import ArchiveLimits, ExpandedArchive, expand_zip, is_zip_name
from rag.collections import SAMPLE_COLLECTION
from rag.config import CHUNK_STRATEGIES, ChunkConfig
from rag.errors import RagError
from rag.documents import clean_tags, collection_stats, delete_document, document_chunks, flagged_chunks, list_documents, set_quarantine, set_tags
from rag.ingest import ChunkDiff, IngestSummary, diff_document, ingest_files, preview
from rag.loaders import load_document
from rag.sample import SAMPLE_TAG, sample_files
from rag.sentences import sentence_vectors_note
from rag.types import Chunk, Document, StoredChunk

components = page("Documents")
settings = components.settings

CHUNK_COLUMNS = {
    "index": st.column_config.NumberColumn("#", width="small"),
    "heading path": st.column_config.TextColumn("heading path"),
    "page": st.column_config.NumberColumn("page", width="small"),
    "chars": st.column_config.NumberColumn("chars", width="small"),
    "text": st.column_config.TextColumn("text", width="large"),
}


@st.cache_data(max_entries=64, show_spinner=False)
def load_and_chunk(name: str, data: bytes, strategy: str, size: int, overlap: int, max_bytes: int) -> tuple[Document, list[Chunk]]:
    """Loading and chunking is pure: cached so reruns (every widget change) do not parse PDFs again."""
    doc = load_document(name, data, max_bytes=max_bytes)
    return doc, preview(doc, ChunkConfig(strategy, size, overlap))


@st.cache_data(max_entries=8, show_spinner=False)
def expand_archive(name: str, data: bytes, limits: ArchiveLimits) -> ExpandedArchive:
    """Cached like load_and_chunk: an archive is inflated once, not on every rerun."""
    return expand_zip(name, data, limits)


def notice(kind: str, message: str) -> None:
    """Keep a message for the next run (callbacks run before the page is drawn)."""
    st.session_state["documents_notice"] = (kind, message)


def show_stats() -> None:
    try:
        stats = collection_stats(components)
    except RagError as e:
        st.error(str(e))
        return
    cols = st.columns(5)
    cols[0].metric("Documents", stats.documents)
    cols[1].metric("Chunks", stats.chunks)
    cols[2].metric("Flagged", stats.flagged, help="Chunks the injection scan flagged (see below)")
    cols[3].metric("Quarantined", stats.quarantined, help="Stored but never retrieved")
    cols[4].metric("Backend", "embedded" if stats.backend == "edge" else "server", help=f"Collection {settings.collection}")
    st.caption(sentence_vectors_note(stats.sentence_vectors))
    shown = st.session_state.pop("documents_notice", None)
    if shown:
        (st.success if shown[0] == "success" else st.error)(md_escape(shown[1]))


def chunk_rows(chunks: list[Chunk], changes: list[str] | None = None) -> pd.DataFrame:
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
    kept = sorted([(c, "added") for c in diff.added] + [(c, "unchanged") for c in diff.unchanged], key=lambda p: p[0].index)
    gone = [(s.chunk, "removed") for s in sorted(diff.removed, key=lambda s: s.chunk.index)]
    pairs = kept + gone
    return chunk_rows([c for c, _ in pairs], [change for _, change in pairs])


def expand_uploads(uploads: list) -> list[tuple[str, bytes]]:  # noqa: ANN001 - UploadedFile
    """Uploaded files as (name, bytes); .zip archives expanded, with a message for whatever they leave out."""
    files: list[tuple[str, bytes]] = []
    limits = ArchiveLimits.for_upload_mb(settings.max_upload_mb)
    for upload in uploads:
        if not is_zip_name(upload.name):
            files.append((upload.name, upload.getvalue()))
            continue
        try:
            archive = expand_archive(upload.name, upload.getvalue(), limits)
        except RagError as e:
            st.error(md_escape(str(e)))
            continue
        files += archive.files
        if archive.skipped:
            with st.expander(f"{len(archive.skipped)} entries of {md_escape(upload.name)} skipped"):
                st.text("\n".join(archive.skipped))
    return files


def run_ingest(files: list[tuple[str, bytes]], config: ChunkConfig, tags: list[str] | None) -> None:
    """Ingest with a progress bar and one line per finished file, then rerun to show the summary."""
    with st.status(f"Ingesting {len(files)} file(s)…", expanded=True) as status:
        bar = st.progress(0.0, text="Reading and chunking…")

        def progress(fraction: float, message: str) -> None:
            bar.progress(fraction, text=md_escape(message))
            if not message.startswith("embedding"):
                st.text(message)

        try:
            summary = ingest_files(components, files, config, tags, progress)
        except RagError as e:  # the store itself failed: nothing more to do this run
            status.update(label="Ingest failed", state="error")
            st.error(str(e))
            return
        status.update(label="Ingest finished", state="error" if summary.errors else "complete")
    st.session_state["documents_summary"] = summary
    st.rerun()


def show_summary(summary: IngestSummary) -> None:
    line = f"{summary.documents} document(s) ingested: {summary.chunks_written} chunks written, {summary.chunks_unchanged} unchanged"
    (st.warning if summary.errors else st.success)(f"{line}, {len(summary.errors)} error(s).")
    for failed in summary.errors:
        st.error(md_escape(failed.error))
    frame = pd.DataFrame([{k: getattr(f, k) for k in ("source", "status", "chunks", "written", "unchanged", "removed", "flagged")} for f in summary.files])
    st.dataframe(frame, hide_index=True, alt="Ingest results per file")


def add_documents() -> None:
    st.subheader("Add documents")
    if st.button("Load sample docs", key="documents_sample", help=f"The Tidepool help centre, into its own collection '{SAMPLE_COLLECTION}' (tagged '{SAMPLE_TAG}'), which the app switches to"):
        switch_collection(SAMPLE_COLLECTION)  # fictional docs never share a collection with real ones
        st.session_state["documents_load_sample"] = True
        st.rerun()
    if st.session_state.pop("documents_load_sample", False):  # this run is on the sample collection
        run_ingest(sample_files(), settings.chunk, [SAMPLE_TAG])
    uploads = st.file_uploader(
        "Files (Markdown, text, HTML, PDF, DOCX) or .zip archives of folders",
        accept_multiple_files=True,
        key="documents_upload",
        max_upload_size=settings.max_upload_mb,
    )
    cols = st.columns([2, 1, 1, 3])
    strategy = cols[0].selectbox("Strategy", CHUNK_STRATEGIES, index=CHUNK_STRATEGIES.index(settings.chunk.strategy), key="documents_strategy")
    size = cols[1].number_input("Size (chars)", 50, 20_000, settings.chunk.size, step=50, key="documents_size")
    overlap = cols[2].number_input("Overlap", 0, 10_000, settings.chunk.overlap, step=10, key="documents_overlap", help="Used by fixed and recursive")
    tag_text = cols[3].text_input("Tags", key="documents_tags", placeholder="comma-separated; empty keeps a document's tags")
    summary = st.session_state.get("documents_summary")
    if summary is not None:
        show_summary(summary)
    if not uploads:
        return
    try:
        config = ChunkConfig(strategy, int(size), int(overlap))
    except RagError as e:
        st.error(str(e))
        return
    files = expand_uploads(uploads)
    ready = preview_files(files, config)
    tags = clean_tags(tag_text.split(",")) if tag_text.strip() else None
    if st.button(f"Ingest {ready} file(s)", type="primary", disabled=not ready, key="documents_ingest"):
        run_ingest(files, config, tags)  # every file, so the summary accounts for the refused ones too


def preview_files(files: list[tuple[str, bytes]], config: ChunkConfig) -> int:
    """Show each file's chunks (and its diff against the stored version); returns how many load."""
    max_bytes = settings.max_upload_mb * 1024 * 1024
    loaded: dict[str, tuple[Document, list[Chunk], ChunkDiff]] = {}
    overview = []
    for name, data in files:
        try:
            doc, chunks = load_and_chunk(name, data, config.strategy, config.size, config.overlap, max_bytes)
            diff = diff_document(components, chunks, doc.source)
        except RagError as e:
            st.error(md_escape(str(e)))
            continue
        stored = bool(diff.unchanged or diff.removed)
        state = ("unchanged" if diff.is_noop else "changed") if stored else "new"
        overview.append({"source": doc.source, "kind": doc.kind, "chars": len(doc.text), "chunks": len(chunks), "state": state, "added": len(diff.added), "unchanged": len(diff.unchanged), "removed": len(diff.removed)})
        if len(chunks) > settings.max_chunks_per_doc:
            st.warning(md_escape(f"{doc.source}: {len(chunks):,} chunks is over the limit of {settings.max_chunks_per_doc:,}; ingest will refuse it."))
        loaded[doc.source] = (doc, chunks, diff)
    if not loaded:
        return 0
    st.markdown("**Preview** (nothing is written until you press Ingest)")
    st.dataframe(pd.DataFrame(overview), hide_index=True, alt="Preview: files to ingest")
    source = st.selectbox("Chunks of", list(loaded), key="documents_preview_file")
    _, chunks, diff = loaded[source]
    if diff.unchanged or diff.removed:
        st.caption(md_escape(f"{source} is stored already: {len(diff.added)} chunks added, {len(diff.unchanged)} unchanged, {len(diff.removed)} removed"))
        st.dataframe(diff_rows(diff), hide_index=True, column_config=CHUNK_COLUMNS, alt="Preview: chunks of the chosen file")
    else:
        st.dataframe(chunk_rows(chunks), hide_index=True, column_config=CHUNK_COLUMNS, alt="Preview: chunks of the chosen file")
    return len(overview)


def act(action: Callable[[], Any], success: Callable[[Any], str]) -> None:
    """Run a button's store action (in its callback); the outcome shows at the top of the next run."""
    try:
        result = action()
    except RagError as e:
        notice("error", str(e))
    else:
        notice("success", success(result))


def save_tags(source: str, key: str) -> None:
    # The tags are read here, not passed as args: args are fixed when the button is drawn.
    act(lambda: set_tags(components, source, st.session_state[key].split(",")), lambda _: f"Tags of {source} saved.")


def delete(source: str) -> None:
    st.session_state.pop("documents_confirm_delete", None)
    act(lambda: delete_document(components, source), lambda n: f"Deleted {source} ({n} chunks).")


def quarantine(ids: list[str], on: bool) -> None:
    act(lambda: set_quarantine(components, ids, on), lambda _: f"{len(ids)} chunk(s) {'quarantined' if on else 'released'}.")


def stored_rows(records: list[StoredChunk]) -> pd.DataFrame:
    frame = chunk_rows([r.chunk for r in records])
    frame.insert(len(frame.columns) - 1, "status", ["quarantined" if r.quarantined else "active" for r in records])
    frame.insert(len(frame.columns) - 1, "flags", [", ".join(r.flags) for r in records])
    return frame


def documents_table() -> None:
    st.subheader("Ingested documents")
    docs = list_documents(components)
    if not docs:
        st.info("No documents yet: upload files above or load the sample docs.")
        return
    frame = pd.DataFrame(
        [{"source": d.source, "kind": d.kind, "chunks": d.chunks, "size": d.size_bytes, "tags": list(d.tags), "ingested at": pd.to_datetime(d.ingested_at or None, utc=True)} for d in docs]
    )
    st.dataframe(
        frame,
        hide_index=True,
        alt="Ingested documents",
        column_config={
            "size": st.column_config.NumberColumn("size (bytes)", format="localized"),
            "tags": st.column_config.ListColumn("tags"),
            "ingested at": st.column_config.DatetimeColumn("ingested at (UTC)", format="YYYY-MM-DD HH:mm"),
        },
    )
    source = st.selectbox("Document", [d.source for d in docs], key="documents_selected")
    info = next(d for d in docs if d.source == source)
    st.dataframe(stored_rows(document_chunks(components, source)), hide_index=True, column_config=CHUNK_COLUMNS, alt="Chunks of the chosen document")
    cols = st.columns([3, 1, 1])
    tag_key = f"documents_edit_tags_{info.sha256}_{source}"
    cols[0].text_input("Tags", ", ".join(info.tags), key=tag_key)
    cols[1].button("Save tags", key="documents_save_tags", on_click=save_tags, args=(source, tag_key))
    if cols[2].button("Delete…", key="documents_delete"):
        st.session_state["documents_confirm_delete"] = source
    if st.session_state.get("documents_confirm_delete") == source:
        st.warning(md_escape(f"Delete {source} and its {info.chunks} chunks? This cannot be undone."))
        yes, no = st.columns(2)
        yes.button("Yes, delete", type="primary", key="documents_delete_yes", on_click=delete, args=(source,))
        no.button("Cancel", key="documents_delete_no", on_click=st.session_state.pop, args=("documents_confirm_delete", None))


def flagged_section() -> None:
    st.subheader("Flagged chunks")
    flagged = flagged_chunks(components)
    if not flagged:
        st.caption("The injection scan flagged no chunk.")
        return
    st.caption("Chunks that read as instructions to a model. Quarantined chunks stay stored but are never retrieved.")
    frame = stored_rows(flagged)
    frame.insert(0, "source", [r.chunk.source for r in flagged])
    st.dataframe(frame, hide_index=True, column_config=CHUNK_COLUMNS, alt="Flagged chunks")
    labels = {r.chunk.id: f"{r.chunk.source} #{r.chunk.index} ({'quarantined' if r.quarantined else 'active'})" for r in flagged}
    picked = st.multiselect("Chunks", list(labels), format_func=labels.__getitem__, key="documents_flag_pick")
    cols = st.columns(2)
    cols[0].button("Quarantine", key="documents_quarantine", disabled=not picked, on_click=quarantine, args=(picked, True))
    cols[1].button("Release", key="documents_release", disabled=not picked, on_click=quarantine, args=(picked, False))


def maintenance() -> None:
    st.subheader("Maintenance")
    if components.store.backend != "edge":
        st.caption("The Qdrant server optimizes in the background; nothing to do here.")
        return
    st.warning("Optimize merges segments and builds the vector indexes. It blocks the whole app, for every user, while it runs: seconds for thousands of chunks, minutes for hundreds of thousands.")
    if st.button("Maintenance: optimize", key="documents_optimize"):
        with st.spinner("Optimizing… (the app is blocked until this finishes)"):
            try:
                components.store.optimize()
                st.success("Optimized.")
            except RagError as e:
                st.error(str(e))


show_stats()
add_documents()
documents_table()
flagged_section()
maintenance()
