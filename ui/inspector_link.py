"""The inspector's URL: what a link asks for, and the question written back as soon as it is asked.

A link is applied once per distinct set of parameters (pages/inspector.py apply_link); the question typed
afterwards goes into the URL at once, so a reload or a copied address shows the question on screen,
not the one the page was opened with (issue 38, item 4).
"""

from __future__ import annotations

import streamlit as st

from rag.ask.log import AskLog, AskRecord
from rag.components import Components
from rag.errors import RagError
from rag.settings.config import RetrievalConfig
from rag.settings.links import COLLECTION
from rag.settings.parity import parity
from rag.text.words import readable_time
from ui.safe import say

QUESTION = "q"
# A tracked chunk in the URL belongs to the question it came with: a new question drops it.
TRACK_PARAMS = ("track", "track_source", "track_heading")
SEEN = "inspector_link"  # the link last applied, as link_seen() gives it
REPLAY = "inspector_replay"  # the logged ask (AskRecord) the last link replays, or None


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


def keep_replay(components: Components, ask_id: int | None) -> None:
    """Keep the logged ask a link replays (`?ask=`), to say which settings it was answered with; a link naming
    none clears it."""
    record = None
    if ask_id is not None:
        try:
            record = AskLog.for_home(components.shared).get(ask_id)
        except RagError as e:
            say("error", "{e}", e=e)
        if record is None or record.collection != components.settings.collection:
            say("warning", "Ask {id} is not in this collection's ask log: the link's settings are shown as given.",
                id=ask_id)  # fmt: skip
            record = None
    st.session_state[REPLAY] = record


def parity_note(config: RetrievalConfig, base: RetrievalConfig, question: str) -> None:
    """At a glance, above the stages: whether they run what Ask and Eval run for this collection (`base`), and,
    replaying a logged ask, whether the settings it was answered with still hold."""
    record: AskRecord | None = st.session_state.get(REPLAY)
    if record is not None and record.question == " ".join(question.split()):
        then = parity(record.config, base)
        say(
            "info",
            "Replaying the ask of {when} with the settings it was answered with: {today}",
            when=readable_time(record.asked_at, st.context.timezone),
            today="today's stored settings are the same"
            if then.same
            else f"today's stored settings differ in: {then.listed('today')}",
        )  # fmt: skip
        if config == record.config:
            return
        say("caption", "The stage settings have changed since that ask: {changes}",
            changes=parity(config, record.config).listed("the ask"))  # fmt: skip
    now = parity(config, base)
    if now.same:
        say("caption", "✓ This page {words}", words=now.words())
    else:
        say("info", "This page {words}", words=now.words())
