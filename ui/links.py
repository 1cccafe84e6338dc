"""Links between pages that keep the session's collection, and where a user who cannot go on is sent.

Plain relative Markdown links to the pages' stable URL paths: `st.page_link` fails when a page runs
without app.py's navigation (a first visit straight to a page URL), and a followed link starts a new
session, so the collection travels in the link itself.
"""

from __future__ import annotations

from urllib.parse import urlencode

import streamlit as st

from rag.catalog.language import dense_language_note
from rag.components import Components
from rag.errors import RagError
from rag.settings.links import collection_param
from ui.render import md_escape


def page_url(path: str, components: Components, **params: str) -> str:
    """A relative URL of the page at `path` (its url_path in app.py) on the components' collection."""
    return f"{path}?{urlencode(params | collection_param(components.settings.collection))}"


def empty_collection_notice(components: Components) -> bool:
    """When the collection holds no chunk, say so and link to the Documents page; True when empty."""
    try:
        empty = components.store.count() == 0
    except RagError:  # an unreadable store is reported by the page's own call
        return False
    if empty:
        st.info(
            f"The collection **{md_escape(components.settings.collection)}** has no documents yet. "
            "Upload some, or press **Load sample docs**, on the Documents page."
        )
        st.markdown(f"📄 [Go to Documents]({page_url('documents', components)})")
    return empty


def language_notice(components: Components) -> None:
    """Warn when the collection's text is in a script its dense model was not trained on (rag.catalog.language)."""
    s = components.settings
    try:
        note = _language_note(str(s.data_dir), s.collection, s.dense_model, components.store.count(), components)
    except RagError:  # an unreadable store is reported by the page's own call
        return
    if note:
        st.warning(md_escape(note))


@st.cache_data(max_entries=32, show_spinner=False)
def _language_note(data_dir: str, collection: str, model: str, chunks: int, _components: Components) -> str:
    """The note, judged once per collection, model and data version: it reads 200 chunks, and every rerun of
    the inspector and Ask (each typed question) showed it. The chunk count stands in for the data version
    (the store keeps none): a script's share changes with what is ingested or deleted, which changes it."""
    return dense_language_note(_components)
