"""A button's outcome shown at the top of the next run.

A button's action runs in its callback (or just before `st.rerun()`), before the page is drawn again, so
what it did is kept in the session under a key of the part that drew the button and said once, where that
part starts, on the next run. Every message goes through `ui.safe.say`: an engine error names values a
person typed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from rag.errors import RagError
from ui.safe import say


def keep(key: str, kind: str, message: str) -> None:
    """Keep `message` ("success" or "error") for the next run's `show(key)`."""
    st.session_state[key] = (kind, message)


def act(key: str, action: Callable[[], Any], success: Callable[[Any], str]) -> None:
    """Run `action`; keep `success(its result)`, or the RagError it raised, for the next run."""
    try:
        result = action()
    except RagError as e:
        keep(key, "error", str(e))
    else:
        keep(key, "success", success(result))


def show(key: str) -> None:
    """Say the outcome kept under `key`, once."""
    shown = st.session_state.pop(key, None)
    if shown:
        say("success" if shown[0] == "success" else "error", "{message}", message=shown[1])


def heading(title: str, caption: str, key: str) -> None:
    """A part's heading and what it is for, then the outcome of its last button (kept under `key`)."""
    st.subheader(title)
    st.caption(caption)
    show(key)
