"""Documents: upload, preview the chunks, ingest with progress, and manage what is stored.

Document text is untrusted: it is shown only through st.dataframe and st.text, and every file name
or message that reaches a Markdown-rendering element goes through ui.safe.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import streamlit as st

from rag.catalog.collections import SAMPLE_COLLECTION
from rag.catalog.documents import (
    collection_stats,
    delete_document,
    document_chunks,
    flagged_chunks,
    list_documents,
    set_tags,
)
from rag.catalog.sample import SAMPLE_TAG, sample_files
from rag.errors import RagError
from rag.ingest.results import Prepared
from rag.ingest.sentences import sentence_vectors_note
from rag.settings.config import CHUNK_STRATEGIES, ChunkConfig
from rag.text.words import plural
from rag.types import clean_tags
from ui import chunk_fixes, documents_view, ingest_panel, outcome, parse_view
from ui.chunks import chunk_browser
from ui.collections import switch_collection
from ui.links import language_notice
from ui.outline import document_outline
from ui.safe import say
from ui.setup import page

components = page("Documents")
settings = components.settings


def notice(kind: str, message: str) -> None:
    """Keep a message for the next run (callbacks run before the page is drawn)."""
    outcome.keep("documents_notice", kind, message)


def show_stats() -> None:
    try:
        stats = collection_stats(components)
    except RagError as e:
        say("error", "{e}", e=e)
        return
    cols = st.columns(5)
    cols[0].metric("Documents", stats.documents)
    cols[1].metric("Chunks", stats.chunks)
    cols[2].metric("Flagged", documents_view.flagged_count(stats), help=documents_view.FLAGGED_HELP)
    cols[3].metric("Quarantined", stats.quarantined, help="Stored but never retrieved: disabled or quarantined")
    cols[4].metric(
        "Backend", "embedded" if stats.backend == "edge" else "server", help=f"Collection {settings.collection}"
    )
    st.caption(sentence_vectors_note(stats.sentence_vectors))
    language_notice(components)
    outcome.show("documents_notice")


def run_ingest(files: Sequence[ingest_panel.Item], config: ChunkConfig, tags: list[str] | None, drop: str = "") -> None:
    ingest_panel.run_ingest(components, files, config, tags, drop)


def add_documents() -> None:
    st.subheader("Add documents")
    if st.button(
        "Load sample docs",
        key="documents_sample",
        help=(
            f"The Tidepool help centre, into its own collection '{SAMPLE_COLLECTION}' (tagged '{SAMPLE_TAG}'), "
            "which the app switches to"
        ),
    ):
        switch_collection(SAMPLE_COLLECTION)  # fictional docs never share a collection with real ones
        st.session_state["documents_load_sample"] = True
        st.rerun()
    uploads = ingest_panel.upload_box(
        settings.max_upload_mb, f"documents_upload_{st.session_state.get('documents_upload_round', 0)}"
    )
    cols = st.columns([2, 1, 1, 3])
    strategy = cols[0].selectbox(
        "Strategy", CHUNK_STRATEGIES, index=CHUNK_STRATEGIES.index(settings.chunk.strategy), key="documents_strategy"
    )
    size = cols[1].number_input("Size (chars)", 50, 20_000, settings.chunk.size, step=50, key="documents_size")
    overlap = cols[2].number_input(
        "Overlap",
        0,
        10_000,
        settings.chunk.overlap,
        step=10,
        key="documents_overlap",
        help="Used by fixed and recursive",
    )
    tag_text = cols[3].text_input(
        "Tags", key="documents_tags", placeholder="comma-separated; empty keeps a document's tags"
    )
    summary = st.session_state.pop("documents_summary", None)  # shown once, right after its ingest
    if summary is not None:
        ingest_panel.show_summary(summary)
    if not uploads:
        return
    try:
        # The configured chunking with the form's three fields: the rest (heading weight) as the CLI ingests.
        config = dataclasses.replace(settings.chunk, strategy=strategy, size=int(size), overlap=int(overlap))
    except RagError as e:
        say("error", "{e}", e=e)
        return
    files = ingest_panel.expand_uploads(uploads, settings.max_upload_mb)
    items, changed, drop = ingest_panel.preview_files(components, files, config)
    tags = clean_tags(tag_text.split(",")) if tag_text.strip() else None
    prepared = sum(isinstance(i, Prepared) for i in items)
    ready = prepared if tags is not None else changed  # new tags rewrite unchanged documents too
    if prepared and not ready:
        which = "The file is" if prepared == 1 else f"All {prepared:,} files are"
        st.info(f"{which} stored already, unchanged: nothing to ingest.")
    elif ready and st.button(f"Ingest {plural(ready, 'file')}", type="primary", key="documents_ingest"):
        run_ingest(items, config, tags, drop)  # the refused files too, so the summary accounts for them


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


def documents_table() -> None:
    st.subheader("Ingested documents")
    docs = list_documents(components)
    if not docs:
        st.info("No documents yet: upload files above or load the sample docs.")
        return
    documents_view.documents_overview(docs)
    source = st.selectbox("Document", [d.source for d in docs], key="documents_selected")
    info = next(d for d in docs if d.source == source)
    records = document_chunks(components, source)
    picked = chunk_browser(records, "documents_chunks")
    if picked is not None:
        chunk_fixes.fix_panel(components, picked, act)
    document_outline(components, records)
    cols = st.columns([3, 1, 1])
    tag_key = f"documents_edit_tags_{info.sha256}_{source}"
    cols[0].text_input("Tags", ", ".join(info.tags), key=tag_key)
    cols[1].button("Save tags", key="documents_save_tags", on_click=save_tags, args=(source, tag_key))
    documents_view.delete_button(cols[2], components.settings.collection, info, delete)
    chunk_fixes.fix_history_table(components)


def flagged_section() -> None:
    st.subheader("Flagged chunks")
    flagged = flagged_chunks(components)
    if not flagged:
        st.caption("The injection scan flagged no chunk.")
        return
    chunk_fixes.quarantine_buttons(components, documents_view.flagged_picker(flagged), act)


if st.session_state.pop("documents_load_sample", False):  # this run is on the sample collection
    st.empty()  # where the body was: the whole of the collection shown before leaves the screen at once
    run_ingest(sample_files(), settings.chunk, [SAMPLE_TAG])  # reruns when done
with st.container():  # the body as one block, so the line above drops all of it (not left stale for minutes)
    show_stats()
    add_documents()
    documents_table()
    flagged_section()
    parse_view.parse_section(components)
    documents_view.maintenance(components)
