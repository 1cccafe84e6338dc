"""The inspector's URL: what a link asks for, and the question written back as soon as it is asked.

A link is applied once per distinct set of parameters (pages/inspector.py apply_link); the question typed
afterwards goes into the URL at once, so a reload or a copied address shows the question on screen,
not the one the page was opened with (issue 38, item 4).
"""

from __future__ import annotations

import streamlit as st

from rag.settings.links import COLLECTION

QUESTION = "q"
# A tracked chunk in the URL belongs to the question it came with: a new question drops it.
TRACK_PARAMS = ("track", "track_source", "track_heading")
SEEN = "inspector_link"  # the link last applied, as link_seen() gives it


def link_params() -> dict[str, list[str]]:
    """The URL's parameters the inspector reads (ui.collections keeps the collection's own)."""
    return {k: st.query_params.get_all(k) for k in st.query_params if k != COLLECTION}


def link_seen(params: dict[str, list[str]]) -> tuple:
    """A link's parameters in a comparable form: the same link is applied once, not on every rerun."""
    return tuple(sorted((k, tuple(v)) for k, v in params.items()))


def question_to_url() -> None:
    """The question box's on_change: the asked question into the URL.

    Marked as seen, so the next run does not take the URL for a new link and load its settings over the
    sidebar's."""
    question = " ".join(str(st.session_state.get("inspector_q", "")).split())
    before = st.query_params.get(QUESTION)
    if question:
        st.query_params[QUESTION] = question
    else:
        st.query_params.pop(QUESTION, None)
    if before != st.query_params.get(QUESTION):
        for name in TRACK_PARAMS:
            st.query_params.pop(name, None)
    st.session_state[SEEN] = link_seen(link_params())
