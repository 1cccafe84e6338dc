"""Results a page keeps across reruns, each with what it was computed on, shown only while that still holds.

A panel (a tracking report, a comparison, a health check, an answer) computed on one collection, one
question, one set of settings and one state of the documents must not stay on screen once any of them
changes: the panel beside a fresh stage table would then describe a search that is no longer the one shown.
Each kept value carries its `scope`; a page asks for it with the scope of now and gets it back only when
the two are equal, or learns that it is outdated so it can run it again or say so.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

import streamlit as st

from rag.catalog.documents import list_documents
from rag.components import Components
from rag.retrieval.result import RetrievalResult


@dataclass(frozen=True)
class _Kept:
    value: Any
    scope: Hashable


def keep(key: str, value: Any, scope: Hashable) -> None:  # noqa: ANN401
    st.session_state[key] = _Kept(value, scope)


def kept(key: str, scope: Hashable) -> Any:  # noqa: ANN401
    """The value kept under `key` if it was computed on `scope`, else None."""
    item = st.session_state.get(key)
    return item.value if isinstance(item, _Kept) and item.scope == scope else None


def outdated(key: str, scope: Hashable) -> Any:  # noqa: ANN401
    """The value kept under `key` if it was computed on another scope (to run again or to say so), else None."""
    item = st.session_state.get(key)
    return item.value if isinstance(item, _Kept) and item.scope != scope else None


def retrieval_scope(components: Components, result: RetrievalResult) -> Hashable:
    """A search as the page shows it now: collection, question, settings, filter and every stage's ranking.

    Rankings stand for the documents: a re-ingest, a deletion or another process's write that changes what
    this question retrieves changes them, at no extra query (the page has just run the search).
    """
    ranks = tuple(
        (c.id, c.dense.rank, c.sparse.rank, c.fused.rank, c.rerank.rank, c.final_rank) for c in result.candidates
    )
    return (components.settings.collection, result.question, result.config, result.filter, ranks)


def documents_scope(components: Components) -> Hashable:
    """The collection's documents as they are now (for panels that depend on no single question)."""
    return (
        components.settings.collection,
        tuple((d.source, d.chunks, d.sha256, d.ingested_at) for d in list_documents(components)),
    )
