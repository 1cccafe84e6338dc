"""Parts of the Documents page that only show what is stored: the documents table, the flagged chunks, maintenance."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pandas as pd
import streamlit as st

from rag.catalog.documents import CollectionStats
from rag.components import Components
from rag.errors import RagError
from rag.types import DocumentInfo, StoredChunk
from ui import kept
from ui.chunks import CHUNK_COLUMNS, stored_rows
from ui.safe import say


def documents_overview(docs: Sequence[DocumentInfo]) -> None:
    """One row per stored document: kind, chunks, size, tags, when it was ingested; then what its loader warned
    of ("no text layer: needs OCR"), as a warning each."""
    frame = pd.DataFrame(
        [
            {
                "source": d.source,
                "kind": d.kind,
                "chunks": d.chunks,
                "size": d.size_bytes,
                "tags": list(d.tags),
                "ingested at": pd.to_datetime(d.ingested_at or None, utc=True),
                "notes": "; ".join(d.notes),
            }
            for d in docs
        ]
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
    for d in docs:
        for note in d.notes:
            say("warning", "{source}: {note}", source=d.source, note=note)


FLAGGED_HELP = "Chunks the injection scan flagged, and those it could not check (unchecked): the list below holds both"


def flagged_count(stats: CollectionStats) -> str:
    """The Flagged metric as the list under "Flagged chunks" counts: "0, 1 unchecked" when the scan could not read
    a chunk, so the metric never says 0 above a list of one (issue 38, item 11)."""
    return f"{stats.flagged:,}" + (f", {stats.unchecked:,} unchecked" if stats.unchecked else "")


def flagged_picker(flagged: Sequence[StoredChunk]) -> list[str]:
    """The chunks the injection scan flagged or marked unchecked, as a table with the reasons (plain text:
    they quote the chunk), and the ids the person picks to quarantine or release."""
    st.caption(
        "Chunks that read as instructions to a model (flagged), or hold text the scan cannot read (unchecked: "
        "another script or language, a cipher), with why. Quarantined chunks stay stored but are never retrieved."
    )
    frame = stored_rows(flagged)
    frame.insert(0, "source", [r.chunk.source for r in flagged])
    frame.insert(len(frame.columns) - 1, "why flagged", [r.flag_reason for r in flagged])
    frame.insert(len(frame.columns) - 1, "unchecked", [r.unchecked for r in flagged])
    st.dataframe(frame, hide_index=True, column_config=CHUNK_COLUMNS, alt="Flagged chunks")
    labels = {
        r.chunk.id: f"{r.chunk.source} #{r.chunk.index} ({'quarantined' if r.quarantined else 'active'})"
        for r in flagged
    }
    picked = st.multiselect("Chunks", list(labels), format_func=labels.__getitem__, key="documents_flag_pick")
    return picked


def maintenance(components: Components) -> None:
    """The embedded engine's optimize action, with what it costs everyone while it runs."""
    st.subheader("Maintenance")
    if components.store.backend != "edge":
        st.caption("The Qdrant server optimizes in the background; nothing to do here.")
        return
    st.caption("Optimize merges segments and builds the vector indexes: worth it after a large ingest.")
    # The cost is said when it is about to be paid, not on every visit: a warning always shown reads as a fault.
    if st.button("Optimize…", key="documents_optimize"):
        st.session_state["documents_optimize_ask"] = True
    if not st.session_state.get("documents_optimize_ask"):
        return
    st.warning(
        "Optimizing blocks the whole app, for every user, while it runs: seconds for thousands of chunks, "
        "minutes for hundreds of thousands."
    )
    yes, no = st.columns(2)
    no.button("Cancel", key="documents_optimize_no", on_click=st.session_state.pop, args=("documents_optimize_ask",))
    if yes.button("Yes, optimize now", type="primary", key="documents_optimize_yes"):
        st.session_state.pop("documents_optimize_ask", None)
        with st.spinner("Optimizing… (the app is blocked until this finishes)"):
            try:
                components.store.optimize()
                st.success("Optimized.")
            except RagError as e:
                say("error", "{e}", e=e)


def delete_button(
    slot: st.delta_generator.DeltaGenerator, collection: str, info: DocumentInfo, delete: Callable[[str], None]
) -> None:
    """Delete…, then a confirmation naming the document and its chunk count; `delete(source)` runs on Yes."""
    source = info.source
    if slot.button("Delete…", key="documents_delete"):
        # Asked in this collection: after a switch, a document of the same name there is not the one meant.
        kept.keep("documents_confirm_delete", source, collection)
    if kept.kept("documents_confirm_delete", collection) == source:
        say("warning", "Delete {source} and its {n} chunks? This cannot be undone.", source=source, n=info.chunks)
        yes, no = st.columns(2)
        yes.button("Yes, delete", type="primary", key="documents_delete_yes", on_click=delete, args=(source,))
        no.button(
            "Cancel", key="documents_delete_no", on_click=st.session_state.pop, args=("documents_confirm_delete", None)
        )
