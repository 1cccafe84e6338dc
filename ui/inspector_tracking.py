"""The inspector's tracking tab: pick the chunk a question should have found and say where it was lost.

The widgets only; finding the target, tracking it and the verified fixes live in rag.inspect. Kept out of
pages/inspector.py so the page stays thin.
"""

from collections.abc import Callable, Hashable

import streamlit as st

from rag.catalog.documents import document_chunks
from rag.components import Components
from rag.errors import RagError
from rag.inspect.target import TrackTarget, find_target, refreshed
from rag.inspect.track import TrackReport, track
from rag.retrieval.question import clean_question
from rag.settings.config import RetrievalConfig
from rag.types import ChunkFilter
from ui import inspector_arithmetic, inspector_view, kept, report_download
from ui.safe import say

TRACK_BY = ("chunk id", "source + heading", "pasted text")


def run_track(
    components: Components,
    question: str,
    target: TrackTarget,
    config: RetrievalConfig,
    flt: ChunkFilter,
    scope: Hashable,
) -> TrackReport | None:
    try:
        with st.spinner("Scoring the chunk in every stage and re-running retrieval with candidate fixes…"):
            report = track(
                components, question, target, config, flt, mode=st.session_state.get("inspector_mode_result")
            )
    except RagError as e:
        say("error", "{e}", e=e)
        report = None
    kept.keep("inspector_track_report", report, scope)
    return report


def track_section(
    components: Components,
    question: str,
    config: RetrievalConfig,
    flt: ChunkFilter,
    scope: Hashable,
    on_apply: Callable[[RetrievalConfig, ChunkFilter | None], None],
) -> None:
    """The tracking tab: pick the expected chunk, track it, and follow it again when the question, a setting,
    the collection or its documents change (a new question clears it unless pinned)."""
    by = st.radio("Pick the expected chunk by", TRACK_BY, key="inspector_track_by", horizontal=True)
    pick: dict[str, str] = {}
    if by == TRACK_BY[0]:
        pick["chunk_id"] = st.text_input("Chunk id", key="inspector_track_id", placeholder="copy it from the table")
    elif by == TRACK_BY[1]:
        sources = sorted(components.store.sources())
        source = st.selectbox("Source", sources, key="inspector_track_source")
        headings = sorted({c.chunk.heading for c in document_chunks(components, source)}) if source else []
        if (linked := st.session_state.get("inspector_track_heading")) and linked not in headings:
            headings.insert(0, linked)  # a section a link names by a parent heading: all chunks under it
        pick = {
            "source": source or "",
            "heading": st.selectbox("Heading", headings, key="inspector_track_heading") or "",
        }
    else:
        pick["text"] = st.text_area("Text the expected chunk should contain", key="inspector_track_text")
    pinned = st.checkbox(
        "Keep tracking it for a new question", key="inspector_track_pin", help="Off: a new question clears the tracking"
    )
    report: TrackReport | None = kept.kept("inspector_track_report", scope)
    old: TrackReport | None = kept.outdated("inspector_track_report", scope)
    if old is not None and old.result.question != clean_question(question) and not pinned:
        kept.keep("inspector_track_report", None, scope)  # tracking belongs to the question it was made for
        old = None
    try:
        if st.button("Track", key="inspector_track_button") or st.session_state.pop("inspector_track_auto", False):
            report = run_track(
                components, question, find_target(components, question=question, **pick), config, flt, scope
            )
        elif old is not None:
            # The question, a setting (an applied fix included), the collection or its documents changed:
            # follow the same chunk again, read afresh, and never show an old verdict.
            report = run_track(components, question, refreshed(components, old.target), config, flt, scope)
    except RagError as e:
        say("error", "{e}", e=e)
        report = None
        kept.keep("inspector_track_report", None, scope)
    if report is not None:
        inspector_view.show_track(report, on_apply=on_apply)
        inspector_arithmetic.versus_panel(components, report)
        report_download.offer(components, report.result, report, "the search inspector", "inspector_track")
