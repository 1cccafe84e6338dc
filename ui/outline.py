"""The Documents page's outline of one stored document: its heading tree with chunk counts, and its repeats.

Headings and text come from the document, so they reach the screen only through st.text and
st.dataframe (plain text), never Markdown or HTML.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import streamlit as st

from rag.catalog.outline import REPEAT_SCAN_LIMIT, OutlineNode, RepeatedPassage, build_outline, repeated_passages
from rag.components import Components
from rag.errors import RagError
from rag.text.words import plural
from rag.types import StoredChunk
from ui.safe import say

_INDENT = "    "


def document_outline(components: Components, records: Sequence[StoredChunk]) -> None:
    """The heading tree of `records` (one document's chunks), each heading with its chunks and how many of them
    repeat text stored elsewhere; then those repeated passages with where else they are."""
    if not records:
        return
    source = records[0].chunk.source
    passages = _passages(components, source)
    repeated = frozenset(c.id for p in passages for c in p.places if c.source == source)
    outline = build_outline([r.chunk for r in records], repeated)
    with st.expander("Outline: the headings the parser found", expanded=True):
        st.caption(
            "Each heading with its chunks (and those of the headings inside it). A heading that is not one in "
            "the file, or one long section where the file has many, is a wrong parse."
        )
        st.text(outline_text(outline))
        if passages:
            st.caption(
                f"{plural(len(passages), 'passage')} of this document "
                f"{'is' if len(passages) == 1 else 'are'} stored in other places too (RAGSCOPE_DEDUPE ranks "
                "such text once):"
            )
            st.dataframe(_repeat_rows(passages, source), hide_index=True, alt="Repeated passages")


def outline_text(outline: OutlineNode) -> str:
    """The tree as indented lines: "title · 3 chunks (7 in all) · 1 repeated"."""
    lines = [f"(before the first heading) · {plural(outline.chunks, 'chunk')}"] if outline.chunks else []
    for depth, node in outline.walk():
        counts = plural(node.chunks, "chunk")
        if node.children:
            counts += f" ({node.total:,} in all)"
        if node.repeats:
            counts += f" · {node.repeats:,} repeated elsewhere"
        lines.append(f"{_INDENT * depth}{node.title or '(empty title)'} · {counts}")
    return "\n".join(lines)


def _passages(components: Components, source: str) -> list[RepeatedPassage]:
    """The repeated passages with a place in `source`; none (said so) when the collection is too big to scan."""
    try:
        if components.store.count() > REPEAT_SCAN_LIMIT:
            st.caption(f"Repeats are not counted here in a collection of over {REPEAT_SCAN_LIMIT:,} chunks.")
            return []
        return [p for p in repeated_passages(components) if any(c.source == source for c in p.places)]
    except RagError as e:
        say("error", "Repeats could not be counted: {e}", e=e)
        return []


def _repeat_rows(passages: Sequence[RepeatedPassage], source: str) -> pd.DataFrame:
    rows = []
    for p in passages:
        here = [c for c in p.places if c.source == source]
        rows.append(
            {
                "chunk #": ", ".join(str(c.index) for c in here),
                "heading path": here[0].heading,
                "also in": [c.location for c in p.places if c.source != source]
                or [f"{c.location} (chunk #{c.index})" for c in here[1:]],
                "text": p.text,
            }
        )
    return pd.DataFrame(rows)
