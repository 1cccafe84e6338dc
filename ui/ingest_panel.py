"""The Documents page's upload path: expand uploads, show the preview rag.ingest.preview decides, ingest with
progress, summarise.

Kept out of pages/documents.py so the page reads as its layout. File names and messages that reach a
Markdown-rendering element go through md_escape; chunk text only through st.dataframe.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import streamlit as st

from rag.components import Components
from rag.encoders.base import DenseEncoder
from rag.errors import RagError
from rag.ingest import preview
from rag.ingest.eta import Eta
from rag.ingest.loaders.archive import ArchiveLimits, ExpandedArchive, expand_zip, is_zip_name
from rag.ingest.loaders.formats import format_labels
from rag.ingest.loaders.pdf import NO_TEXT_LAYER
from rag.ingest.pipeline import ingest_files
from rag.ingest.preview import Item
from rag.ingest.results import IngestSummary
from rag.ingest.upload_limit import limit_note, limit_problem, uploader_cap_mb
from rag.settings.config import ChunkConfig
from rag.text.sizes import MIB, mib
from rag.text.words import plural
from rag.types import Chunk, Document
from ui import chunk_fixes
from ui.chunks import CHUNK_COLUMNS, chunk_rows, diff_rows
from ui.model_notes import model_notes
from ui.render import md_escape
from ui.safe import say


@st.cache_data(max_entries=64, show_spinner=False)
def load_and_chunk(
    name: str, data: bytes, config: ChunkConfig, max_bytes: int, dense_name: str, _dense: DenseEncoder
) -> tuple[Document, list[Chunk]]:
    """Loading and chunking is pure: cached so reruns (every widget change) do not parse PDFs again.

    Keyed on the whole ChunkConfig: a field left out of the key would preview (and ingest) the chunks of
    another configuration; the encoder keyed by its name ("semantic" cuts with it)."""
    return preview.load_and_chunk(name, data, config, max_bytes, _dense)


def cached_load(
    name: str, data: bytes, config: ChunkConfig, max_bytes: int, dense: DenseEncoder
) -> tuple[Document, list[Chunk]]:
    """rag.ingest.preview's loader, through the cache."""
    return load_and_chunk(name, data, config, max_bytes, dense.name, dense)


@st.cache_data(max_entries=8, show_spinner=False)
def expand_archive(name: str, data: bytes, limits: ArchiveLimits) -> ExpandedArchive:
    """Cached like load_and_chunk: an archive is inflated once, not on every rerun."""
    return expand_zip(name, data, limits)


def upload_box(max_upload_mb: int, key: str) -> list:
    """The file uploader; its label states the limit in MiB, as the CLI does (Streamlit's line below: the same).

    It takes no more than the one limit the server and the app share (rag/ingest/upload_limit.py): the browser
    refuses a larger file on its chip with that number; one that reaches the app anyway gets its error
    (expand_uploads).
    """
    server_mb = int(st.get_option("server.maxUploadSize"))
    if problem := limit_problem(max_upload_mb, server_mb):
        st.warning(problem)
    cap_mb = uploader_cap_mb(max_upload_mb, server_mb)
    return (
        st.file_uploader(
            f"Files ({format_labels()}) or .zip archives of folders, up to {mib(cap_mb * MIB)} each",
            accept_multiple_files=True,
            key=key,
            help=limit_note(max_upload_mb, server_mb),
            max_upload_size=cap_mb,
        )
        or []
    )


def expand_uploads(uploads: list, max_upload_mb: int) -> list[tuple[str, bytes]]:
    """Uploaded files as (name, bytes); .zip archives expanded, with a message for whatever they leave out.

    A file over the upload limit (a .zip too) is passed on whole: loading it refuses it with the limit in
    MiB, shown on the page and counted in the ingest summary, as the CLI refuses it."""
    files: list[tuple[str, bytes]] = []
    limits = ArchiveLimits.for_upload_mb(max_upload_mb)
    for upload in uploads:
        if not is_zip_name(upload.name) or upload.size > max_upload_mb * MIB:
            files.append((upload.name, upload.getvalue()))
            continue
        try:
            archive = expand_archive(upload.name, upload.getvalue(), limits)
        except RagError as e:
            st.error(md_escape(str(e)))
            continue
        files += archive.files
        if archive.skipped:
            with st.expander(f"{plural(len(archive.skipped), 'entry', 'entries')} of {md_escape(upload.name)} skipped"):
                st.text("\n".join(archive.skipped))
    return files


def run_ingest(
    components: Components,
    files: Sequence[Item],
    config: ChunkConfig,
    tags: list[str] | None,
    drop_fixes: str = "",
) -> None:
    """Ingest with a progress bar and one line per finished file, then rerun to show the summary once
    (`drop_fixes`: who confirmed dropping the fixes of changed passages, `chunk_fixes.confirm_drops`).

    The uploader gets a new key, so it comes back empty instead of offering the same files again.
    """
    with st.status(f"Ingesting {plural(len(files), 'file')}…", expanded=True) as status:
        notes = st.empty()
        bar = st.progress(0.0, text="Loading the models, then embedding…")
        eta = Eta()

        def progress(fraction: float, message: str) -> None:
            left = eta.left(round(fraction * len(files)), len(files))
            bar.progress(fraction, text=md_escape(message + (f" · files: {left}" if left else "")))
            if not message.startswith("embedding"):
                st.text(message)

        try:
            with model_notes(notes):
                summary = ingest_files(components, files, config, tags, progress, drop_fixes=drop_fixes)
        except RagError as e:  # the store itself failed: nothing more to do this run
            status.update(label="Ingest failed", state="error")
            say("error", "{e}", e=e)
            return
        status.update(label="Ingest finished", state="error" if summary.errors else "complete")
    st.session_state["documents_summary"] = summary
    st.session_state["documents_upload_round"] = st.session_state.get("documents_upload_round", 0) + 1
    st.rerun()


def show_summary(summary: IngestSummary) -> None:
    """One box for the whole ingest (the errors listed in it), then the per-file table."""
    # Counted as the Ingest button counted them: the documents that were new or changed; the unchanged ones apart.
    changed = sum(f.status in ("added", "updated") for f in summary.files)
    same = sum(f.status == "unchanged" for f in summary.files)
    line = f"{plural(changed, 'document')} ingested: {plural(summary.chunks_written, 'chunk')} written" + (
        f"; {plural(same, 'document')} already stored, unchanged" if same else ""
    )
    if not summary.errors:
        st.success(f"{line}.")
    else:
        errors = "\n".join(f"- {md_escape(failed.error)}" for failed in summary.errors)
        st.warning(f"{line}, {plural(len(summary.errors), 'error')}:\n\n{errors}")
    frame = pd.DataFrame(
        [
            {k: getattr(f, k) for k in ("source", "status", "chunks", "written", "unchanged", "removed", "flagged")}
            for f in summary.files
        ]
    )
    st.dataframe(frame, hide_index=True, alt="Ingest results per file")


def loader_notes(notes: list[tuple[str, str]]) -> None:
    """What loading left out (hidden HTML text, …): one box for the whole preview with the files listed, not a box
    per file (issue 38, item 11); a scan's OCR warning stays a warning of its own."""
    for source, note in [n for n in notes if n[1].startswith(NO_TEXT_LAYER)]:
        say("warning", "{source}: {note}", source=source, note=note)
    notes = [n for n in notes if not n[1].startswith(NO_TEXT_LAYER)]
    if len(notes) == 1:
        say("info", "{source}: {note}", source=notes[0][0], note=notes[0][1])
    elif notes:
        files = len({source for source, _ in notes})
        lines = "\n".join(f"- {md_escape(source)}: {md_escape(note)}" for source, note in notes)
        st.info(f"Text left out while loading {plural(files, 'file')}:\n\n{lines}")


def preview_files(
    components: Components, files: list[tuple[str, bytes]], config: ChunkConfig
) -> tuple[list[Item], int, str]:
    """Show each file's chunks (and its diff against the stored version), as rag.ingest.preview decided them,
    and the chunk fixes its ingest would drop, with a box to confirm that.

    Returns:
        What to ingest: the previewed documents as `Prepared` (ingest writes exactly these chunks,
        without loading and chunking again) and, as (name, bytes), the files that failed to load;
        how many of the documents are new or changed; and who confirmed dropping fixes ("" if none did).
    """
    batch = preview.preview_batch(components, files, config, cached_load)
    for message in batch.warnings:
        say(message.kind, message.template, **message.values)
    for file in batch.files:
        if file.error:
            st.error(md_escape(file.error))
        elif file.over_limit:
            say(file.over_limit.kind, file.over_limit.template, **file.over_limit.values)
    shown = [(f, f.doc) for f in batch.files if f.doc is not None]  # the files that loaded
    loader_notes([(doc.source, note) for _, doc in shown for note in doc.notes])
    if not shown:
        return batch.items, 0, ""
    st.markdown("**Preview** (nothing is written until you press Ingest)")
    st.dataframe(
        pd.DataFrame([_overview_row(f, doc) for f, doc in shown]), hide_index=True, alt="Preview: files to ingest"
    )
    loaded = {doc.source: f for f, doc in shown}
    source = st.selectbox("Chunks of", list(loaded), key="documents_preview_file")
    chosen = loaded[source]
    diff = chosen.diff
    if chosen.stored:
        st.caption(
            md_escape(
                f"{source} is stored already: {plural(len(diff.added), 'chunk')} added, {len(diff.unchanged):,} "
                f"unchanged, {len(diff.removed):,} removed"
            )
        )
        st.dataframe(
            diff_rows(diff), hide_index=True, column_config=CHUNK_COLUMNS, alt="Preview: chunks of the chosen file"
        )
    else:
        st.dataframe(
            chunk_rows(chosen.chunks),
            hide_index=True,
            column_config=CHUNK_COLUMNS,
            alt="Preview: chunks of the chosen file",
        )
    return batch.items, batch.changed, chunk_fixes.confirm_drops(batch.files)


def _overview_row(file: preview.FilePreview, doc: Document) -> dict[str, object]:
    """The preview table's row of a file that loaded (`doc`: its document)."""
    return {
        "source": doc.source,
        "kind": doc.kind,
        "chars": len(doc.text),
        "chunks": len(file.chunks),
        "state": file.state,
        "added": len(file.diff.added),
        "unchanged": len(file.diff.unchanged),
        "removed": len(file.diff.removed),
    }
