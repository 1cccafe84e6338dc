"""Parse quality on the Documents page and on Eval: documents by their flagged chunks per parse signal, the
flagged chunks' text, and the failed questions whose gold sits in such chunks (rag.catalog.parse).

Chunk text and names are untrusted: they reach the screen through st.dataframe (plain text) and ui.safe.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import streamlit as st

from rag.catalog.parse import DocumentParse, parse_overview
from rag.components import Components
from rag.errors import RagError
from rag.eval.runs import EvalRun, QuestionResult
from rag.ingest.parse_signals import SIGNALS, flag_titles
from rag.text.words import plural
from ui.chunks import CHUNK_COLUMNS
from ui.safe import say

ANY = "any signal"
HELP = "Measured at ingest for each chunk: docs/retrieval-quality.md#parse-signals says what and from which value"


def parse_section(components: Components) -> None:
    """Documents by their flagged chunks per signal (the table sorts by any column), then one document's
    flagged chunks, for the signal picked."""
    st.subheader("Parse quality", help=HELP)
    try:
        docs = sorted(parse_overview(components), key=lambda d: (-d.total, d.source))
    except RagError as e:
        say("error", "{e}", e=e)
        return
    if not docs:
        return
    st.dataframe(
        pd.DataFrame([_document_row(d) for d in docs]),
        hide_index=True,
        key="documents_parse_table",
        alt="Documents by parse signals",
        column_config={name: st.column_config.NumberColumn(s.title, width="small") for name, s in SIGNALS.items()},
    )
    flagged = [d for d in docs if d.total]
    if not flagged:
        st.caption(
            "No signal flags any chunk: no index lines, furniture, broken table, near-empty page or boilerplate."
        )
        return
    cols = st.columns([3, 2])
    source = cols[0].selectbox("Flagged chunks of", [d.source for d in flagged], key="documents_parse_source")
    signal = cols[1].selectbox(
        "Signal",
        [ANY, *SIGNALS],
        format_func=lambda s: SIGNALS[s].title if s in SIGNALS else s,
        key="documents_parse_signal",
    )
    doc = next(d for d in flagged if d.source == source)
    _flagged_chunks(doc, signal)


def _document_row(d: DocumentParse) -> dict:
    measured = f"{d.measured_now} now (stored before the signals)" if d.measured_now else "at ingest"
    return {"source": d.source, "chunks": d.chunks, "flagged": d.total, **d.counts, "measured": measured}


def _flagged_chunks(doc: DocumentParse, signal: str) -> None:
    shown = [p for p in doc.flagged if signal == ANY or signal in p.flags]
    if not shown:
        st.caption("This signal flags none of its chunks.")
        return
    rows = [
        {
            "index": p.record.chunk.index,
            "heading path": p.record.chunk.heading,
            "page": p.record.chunk.page,
            "flagged for": flag_titles(p.flags),
            "text per page": "not measured" if p.signals.page_chars is None else f"{p.signals.page_chars:,} chars",
            "text": p.record.chunk.text,
        }
        for p in shown
    ]
    st.dataframe(
        pd.DataFrame(rows),
        hide_index=True,
        key="documents_parse_chunks",
        column_config=CHUNK_COLUMNS,
        alt="Chunks with parse problems",
    )


def eval_note(run: EvalRun) -> None:
    """The failed questions whose gold sits in chunks a parse signal flags, each with the signals."""
    if any(q.failed and q.parse_flags is None for q in run.questions):
        st.caption("Parse signals: not measured for this run (stored before they were).")
        return
    flagged = run.parse_flagged
    if not flagged:
        return
    say(
        "warning",
        "{n} with gold in chunks with parse problems: fix the parsing before the ranking (the Documents page lists "
        "them under Parse quality).",
        n=plural(len(flagged), "failed question"),
    )
    st.dataframe(pd.DataFrame(_question_rows(flagged)), hide_index=True, key="eval_parse_table", width="stretch")


def _question_rows(questions: Sequence[QuestionResult]) -> list[dict]:
    return [
        {"id": q.id, "question": q.question, "verdict": q.verdict.title, "parse problems": q.parse_note}
        for q in questions
    ]
