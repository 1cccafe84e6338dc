"""The Ask box's placeholder: a question made from the collection's own documents.

A fixed sample question ("How long does a refund take?") read as a hint on every collection, even one
about ferries; a heading of the collection's first document is about what is there, and an empty
collection gets no hint at all.
"""

from __future__ import annotations

from rag.catalog.documents import document_chunks
from rag.components import Components
from rag.errors import RagError


def question_hint(components: Components) -> str:
    """ "e.g. What does the “Create a workspace” section say?" from the first document's first sub-heading (its
    title when it has none); "" when the collection holds no headed document or cannot be read."""
    try:
        sources = sorted(components.store.sources())
        paths = [c.chunk.heading_path for c in document_chunks(components, sources[0])] if sources else []
    except RagError:  # an unreadable store is reported by the page's own call
        return ""
    paths = [p for p in paths if p]
    if not paths:
        return ""
    title = next((p[-1] for p in paths if len(p) > 1), paths[0][-1])
    return f"e.g. {title}" if title.endswith("?") else f"e.g. What does the “{title}” section say?"
