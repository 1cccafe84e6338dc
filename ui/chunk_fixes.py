"""Chunk fixes on the Documents page: edit a chunk's text, disable or enable it, quarantine flagged ones
(rag.catalog.fixes), and the confirmation an upload asks for before its ingest drops the fixes of passages that
changed (rag.ingest.fixes).

Chunk text is untrusted: it is edited in a st.text_area and shown through st.text (plain text), and the names
of what a fix drops reach Markdown only through ui.safe. Who fixes is the signed-in user (OIDC), else "app"
(a RAGSCOPE_PASSWORD names nobody).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import Any

import pandas as pd
import streamlit as st

from rag.catalog.fixes import disable_chunks, edit_chunk, enable_chunks
from rag.components import Components
from rag.ingest import fix_history
from rag.ingest.fixes import FLAGGED_WHY, ORIGINAL_TEXT, edited_words
from rag.ingest.preview import FilePreview
from rag.text.words import plural
from rag.types import StoredChunk
from ui.safe import say
from ui.setup import signed_in_name

# The page's runner of a button's store action: act(action, success message from its result).
Act = Callable[[Callable[[], Any], Callable[[Any], str]], None]


def who() -> str:
    """Who a fix made on the page is recorded as."""
    return signed_in_name() or "app"


def fix_panel(components: Components, record: StoredChunk, act: Act) -> None:
    """The chosen chunk's fixes: its text to edit (saved: encoded again), and Disable or Enable (the chunk's
    detail above says whether, by whom and when it was edited or disabled)."""
    chunk = record.chunk
    with st.container(border=True):
        st.markdown("**Fix this chunk**")
        original = record.payload.get(ORIGINAL_TEXT)
        if original:
            with st.expander("The passage as ingested"):
                st.text(str(original))
        # A key per stored text: after a save the box shows the text as stored, not the draft.
        key = f"documents_fix_text_{hashlib.sha1(f'{chunk.id}{chunk.text}'.encode()).hexdigest()[:12]}"
        st.text_area(
            "Text",
            chunk.text,
            key=key,
            height=160,
            help="Saved, retrieval searches the chunk by this text (its vectors are encoded again). Kept across "
            "re-ingests while the passage is unchanged in its file; the passage's own text restores it.",
        )
        cols = st.columns(2)
        cols[0].button(
            "Save text",
            key="documents_fix_save",
            on_click=lambda: act(
                lambda: edit_chunk(components, chunk.id, st.session_state[key], who()),
                lambda saved: f"Chunk #{chunk.index} {edited_words(saved) or 'restored to its passage'}.",
            ),
        )
        if record.quarantined:
            cols[1].button(
                "Enable",
                key="documents_fix_enable",
                help="Retrieval returns the chunk again",
                on_click=act,
                args=(lambda: enable_chunks(components, [chunk.id], who()), lambda _: f"Chunk #{chunk.index} enabled."),
            )
        else:
            cols[1].button(
                "Disable",
                key="documents_fix_disable",
                help="Kept and shown here, never retrieved (search, ask, eval) until enabled",
                on_click=act,
                args=(
                    lambda: disable_chunks(components, [chunk.id], who()),
                    lambda _: f"Chunk #{chunk.index} disabled: never retrieved until enabled.",
                ),
            )


def quarantine_buttons(components: Components, picked: list[str], act: Act) -> None:
    """Quarantine (a disable, for the scan's flag) or release the flagged chunks picked."""
    cols = st.columns(2)
    n = plural(len(picked), "chunk")
    cols[0].button(
        "Quarantine",
        key="documents_quarantine",
        disabled=not picked,
        on_click=act,
        args=(lambda: disable_chunks(components, picked, who(), FLAGGED_WHY), lambda _: f"{n} quarantined."),
    )
    cols[1].button(
        "Release",
        key="documents_release",
        disabled=not picked,
        on_click=act,
        args=(lambda: enable_chunks(components, picked, who()), lambda _: f"{n} released."),
    )


def fix_history_table(components: Components) -> None:
    """The collection's fixes, newest first, in an expander (nothing when none was ever made)."""
    entries = fix_history.read(components.settings)
    if not entries:
        return
    with st.expander(f"Fix history: {plural(len(entries), 'fix', 'fixes')} in this collection"):
        rows = [
            e.as_json() | {"details": "; ".join(f"{k}: {v}" for k, v in e.details.items() if k != "old")}
            for e in reversed(entries)
        ]
        st.dataframe(pd.DataFrame(rows), hide_index=True, alt="Fix history")


def confirm_drops(files: Sequence[FilePreview]) -> str:
    """The fixes ingesting these files would drop (their passages changed), listed, and a box to confirm:
    who allows dropping them once ticked, else "" (ingest then refuses those files, naming the fixes)."""
    dropping = [(f.doc.source, fix) for f in files if f.doc is not None and not f.refused for fix in f.dropped]
    if not dropping:
        return ""
    say(
        "warning",
        "Ingesting would drop {n}: the passages they fix changed in the new version of the file. Without "
        "confirming, the file is not ingested and the fixes stay.",
        n=plural(len(dropping), "chunk fix", "chunk fixes"),
    )
    st.text("\n".join(f"{source}: {fix.where} ({fix.chunk_id}): {fix.words}" for source, fix in dropping))
    digest = hashlib.sha1("".join(fix.chunk_id for _, fix in dropping).encode()).hexdigest()[:12]
    return who() if st.checkbox("Drop these fixes and ingest", key=f"documents_drop_fixes_{digest}") else ""
