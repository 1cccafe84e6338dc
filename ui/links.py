"""Where a page sends a user who cannot go on: an empty collection points to the Documents page."""

from __future__ import annotations

import streamlit as st

from rag.answer.render import md_escape
from rag.components import Components

DOCUMENTS = "pages/documents.py"


def empty_collection_notice(components: Components) -> bool:
    """When the collection holds no chunk, say so and link to the Documents page; True when empty."""
    try:
        empty = components.store.count() == 0
    except Exception:  # noqa: BLE001 - an unreadable store is reported by the page's own call
        return False
    if empty:
        st.info(f"The collection **{md_escape(components.settings.collection)}** has no documents yet. Upload some, or press **Load sample docs**, on the Documents page.")
        st.page_link(DOCUMENTS, label="Go to Documents", icon="📄")
    return empty
