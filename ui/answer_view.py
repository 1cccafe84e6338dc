"""How the Ask page shows an answer: the text with clickable citations, the cited sources, the ranks, recent asks.

The demo view (for stakeholders) is the same answer and cited sources, full width, without the
tables of ranks and scores and the tools around them. Answer and document text reach the screen only
through ui.render (escaped HTML) or st.text.
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
import streamlit as st

from rag.answer.result import Answer
from rag.ask.log import AskRecord
from rag.components import Components
from rag.retrieval.context import span_context
from rag.retrieval.result import Candidate
from rag.settings.config import RetrievalConfig
from rag.settings.parity import parity
from rag.text.words import plural, readable_time
from ui.render import SourcePanel, answer_html, md_escape, sources_html
from ui.safe import say


def show_answer(components: Components, answer: Answer, demo: bool = False) -> None:
    """The answer, each [S1] linking to its cited source below; outside the demo view also the checks' flags."""
    cited = {answer.label_of(c.id): c for c in answer.citations}
    titles = {label: f"{c.source} > {c.heading}" for label, c in cited.items()}
    sent = {answer.label_of(i) for i in answer.sources} | set(answer.sources)
    if not demo:
        searched = "" if answer.retrieval_mode == "plain" else f" after **{answer.retrieval_mode}** retrieval"
        st.caption(
            f"Answered by **{answer.mode}** ({md_escape(answer.model)}) in {answer.latency_ms:,.0f} ms{searched}"
        )
    if answer.mode == "extractive":
        st.caption("Offline answer: sentences quoted from the sources as they are written, not generated text.")
    if answer.abstained:
        st.warning("Abstained: the sources do not answer this question.")
        st.text(answer.reason)
    else:
        st.html(answer_html(answer.text, sent, titles, linked=set(cited)))
    if not demo and answer.invented:
        refs = ", ".join(f"[{r}]" for r in answer.invented)
        say("error", "Invented citations: {refs} name no source that was sent.", refs=refs)
    if not demo and answer.uncited_sentences:
        st.warning(
            f"{plural(len(answer.uncited_sentences), 'sentence')} "
            f"state{'s' if len(answer.uncited_sentences) == 1 else ''} something without a citation:"
        )
        for sentence in answer.uncited_sentences:
            st.text(f"• {sentence}")
    show_citations(components, answer)


def show_citations(components: Components, answer: Answer) -> None:
    """Each cited chunk as a panel that a citation click opens: the cited span highlighted among its neighbours."""
    spans: dict[str, list] = {}
    for c in answer.citations:
        spans.setdefault(c.id, []).append(c)
    panels = []
    for chunk_id, cites in spans.items():
        first = cites[0]
        page = f" · page {first.page}" if first.page else ""
        context = span_context(components, first.source, chunk_id, [(c.start, c.end) for c in cites])
        where = ", ".join(f"{c.start}-{c.end}" for c in cites)
        panels.append(
            SourcePanel(
                first.label,
                f"{first.source} › {first.heading or '(no heading)'}{page}",
                context.pieces if context else None,
                f"characters {where}",
            )
        )
    if panels:
        st.html(sources_html(panels))


def show_sources(answer: Answer, min_score: float) -> None:
    """The final chunks with their scores: which were sent, and the relevance the gate compared; after each, the
    chunks of its section shown and read with it (those it carries, rag/retrieval/collapse.py, and those
    RAGSCOPE_SECTION_READS adds)."""
    cited = {c.id for c in answer.citations}
    result = answer.retrieval
    final = result.final
    kept = {c.id for c in final}
    read = {c.id for c in result.shown} | set(answer.sources)
    with_section = [c for c in result.candidates if c.id in read and c.id not in kept]
    chunks = [
        x
        for c in final
        for x in (c, *sorted((r for r in with_section if r.collapsed_into == c.id), key=lambda r: r.rerank.rank))
    ]
    rows = [
        {
            "sent as": answer.label_of(c.id) or "not sent",
            "read for": _read_for(answer, c) if c.id not in kept else "",
            "cited": c.id in cited,
            "source": c.chunk.chunk.source,
            "heading": c.chunk.chunk.heading,
            answer.relevance_basis or "relevance": answer.relevance.get(c.id),
            "rerank rank": c.rerank.rank,
            "rerank score": c.rerank.score,
            "fused rank": c.fused.rank,
            "dense rank": c.dense.rank,
            "sparse rank": c.sparse.rank,
            "also in": list(c.also_in),  # repeated passages once: where else the same text is
        }
        for c in chunks
    ]
    unused = {"read for"} if not with_section else set()  # no section read beyond its kept chunk: no column
    unused |= set() if any(c.also_in for c in chunks) else {"also in"}
    rows = [{k: v for k, v in row.items() if k not in unused} for row in rows]
    st.subheader("Sources")
    if not rows:
        st.caption("No chunk was retrieved for this question.")
        return
    say(
        "caption",
        "Reranker: {reranker}. A chunk is sent when its {basis} reaches {min_score}.",
        reranker=answer.retrieval.reranker, basis=answer.relevance_basis, min_score=f"{min_score:g}",
    )  # fmt: skip
    ranks = {c: "Int64" for c in ("rerank rank", "fused rank", "dense rank", "sparse rank")}
    st.dataframe(
        pd.DataFrame(rows).astype(ranks), hide_index=True, width="stretch", placeholder="–"
    )  # a stage that did not rank it


def _read_for(answer: Answer, c: Candidate) -> str:
    """Why a chunk that is not a hit of its own is listed: its section's chunk carries it, or reads it."""
    holder = answer.label_of(c.collapsed_into) or "its section's chunk"
    return f"carried with {holder} (outranks the next section)" if c.carried else f"the section of {holder}"


def show_recent(
    records: list[AskRecord],
    again: Callable[[AskRecord], None],
    inspector: str,
    inspector_params: Callable[[AskRecord], dict],
    today: RetrievalConfig,
) -> None:
    """The last asks, newest first, with times in the reader's own time zone, each marked where the settings it
    was answered with differ from what Ask runs `today` (the collection's settings in force)."""
    st.subheader("Recent questions")
    if not records:
        st.caption("No questions asked yet.")
    tz = st.context.timezone
    for r in records:
        flag = " · abstained" if r.abstained else ""
        with st.expander(f"{md_escape(r.question)} — {readable_time(r.asked_at, tz)}{flag}"):
            searched = "" if r.config.mode == "plain" else f" · {r.config.mode} mode"
            st.caption(
                f"{r.mode} ({md_escape(r.model)}) · {r.latency_ms:,.0f} ms · fusion {r.config.fusion}, "
                f"k {r.config.final_k}, reranker {md_escape(r.config.reranker)}{searched}"
            )
            if not (then := parity(r.config, today)).same:
                say("caption", "Answered with settings that differ from today's: {changes}",
                    changes=then.listed("today"))  # fmt: skip
            if r.abstained:
                st.text(f"Abstained: {r.reason}")
            else:
                st.html(answer_html(r.answer, {c["label"] for c in r.citations}))
            cols = st.columns(2)
            cols[0].button("Ask again with these settings", key=f"ask_again_{r.id}", on_click=again, args=(r,))
            with cols[1]:
                st.page_link(inspector, label="Replay in inspector", icon="🔬", query_params=inspector_params(r))
