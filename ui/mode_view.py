"""A retrieval mode's extra steps as stages: each search it ran, with what the mode added to it.

HyDE: the (pseudo-)passage and its dense list. Multi-hop: each hop's query, its lists, the words
carried forward. Corrective: each attempt's grades per chunk, the threshold and the action taken.
Agent: each model turn's text, its tool calls (arguments, hits, errors), tokens and latency.
Shared by the inspector (full tables) and Ask (the same, folded). Model and document text reach the
screen only through st.text, st.json, dataframes or `escape_markdown`, never as HTML.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from rag.inspect.mode_trail import ModeTrail
from rag.modes.options import describe_mode
from rag.modes.result import ModeResult
from rag.retrieval.result import STAGES, RetrievalResult
from rag.text.markdown import escape_markdown
from ui.tables import ABSENT


def show_mode(mr: ModeResult, key: str) -> None:
    """What the mode did, then one expander per search it ran (and, for the agent, per model turn)."""
    claude = mr.backend == "claude"
    st.markdown(f"**Mode: {escape_markdown(describe_mode(mr.mode, claude))}**")
    for note in mr.notes:
        st.caption(escape_markdown(note))
    if mr.reason:
        (st.warning if mr.abstained else st.info)(
            f"{'Abstained' if mr.abstained else 'Stopped'}: {escape_markdown(mr.reason)}"
        )
    if mr.corrective is not None:
        st.caption(f"Corrective action: {escape_markdown(mr.corrective.action)}")
    if mr.agent:
        _agent_turns(mr)
    for i, (label, r) in enumerate(mr.searches()):
        with st.expander(f"{label}: {escape_markdown(r.question)}", expanded=False):
            _stage_extra(mr, label, r)
            st.dataframe(ranks_frame(r), hide_index=True, key=f"{key}_mode_stage_{i}", placeholder=ABSENT)
    if mr.llm_calls:
        tokens_in, tokens_out = mr.tokens
        st.caption(f"Claude calls: {len(mr.llm_calls)} · {tokens_in:,} input + {tokens_out:,} output tokens")
        st.dataframe(pd.DataFrame([c.as_json() for c in mr.llm_calls]), hide_index=True, key=f"{key}_mode_calls")


def ranks_frame(r: RetrievalResult) -> pd.DataFrame:
    """One search's candidates, final top-k first, with each stage's rank and score."""
    order = sorted(r.candidates, key=lambda c: (c.final_rank is None, c.final_rank or 0, c.rerank.rank or 10**9))
    rows = []
    for c in order:
        row = {"final": c.final_rank, "chunk id": c.id[:8], "source > heading": c.chunk.chunk.location}
        for stage in STAGES:
            s = c.stage(stage)
            row[f"{stage} #"], row[stage] = s.rank, s.score
        rows.append(row)
    frame = pd.DataFrame(rows)
    if rows:
        frame = frame.astype({col: "Int64" for col in ["final", *(f"{s} #" for s in STAGES)]})
    return frame


def _stage_extra(mr: ModeResult, label: str, r: RetrievalResult) -> None:
    info = mr.stage_info(label, r)
    if "passage" in info:
        kind = (
            "Pseudo-document (not written)" if info["pseudo_document"] else "Hypothetical passage"
        )  # written_by says where it came from
        st.caption(f"{kind}, by {escape_markdown(info['written_by'])}; searched dense only:")
        st.text(info["passage"])
    if "hop" in info:
        if info["carried"]:
            source = f" from chunk {info['from_chunk'][:8]}" if info["from_chunk"] else ""
            st.caption(f"Carried to the next hop{source}: {escape_markdown(', '.join(info['carried']))}")
        if info["sufficient"] is not None:
            st.caption(f"Claude judged the context {'sufficient' if info['sufficient'] else 'not sufficient'}.")
        if info["judgement"]:
            st.text(info["judgement"])
    if "grades" in info:
        st.caption(
            f"Action: {escape_markdown(info['action'])} · grades by {escape_markdown(info['basis'])}; "
            f"relevant at or above {info['threshold']:g}"
        )
        if info["note"]:
            st.caption(escape_markdown(info["note"]))
        where = {c.id: c.chunk.chunk.location for c in r.candidates}
        grades = [
            {
                "chunk id": g["chunk_id"][:8],
                "source > heading": where.get(g["chunk_id"], ""),
                "grade": g["grade"],
                "relevant": g["relevant"],
            }
            for g in info["grades"]
        ]
        st.dataframe(pd.DataFrame(grades), hide_index=True)
    if "call_id" in info:
        st.caption(
            f"Tool call {escape_markdown(info['call_id'])}; hits shown to Claude as "
            f"{', '.join(info['labels']) or 'none'}"
        )
        st.json(info["arguments"])


def _agent_turns(mr: ModeResult) -> None:
    """Each model turn: its text between calls, the calls it made (errors included), tokens and latency."""
    for n, step in enumerate(mr.agent, 1):
        llm = step.llm
        st.markdown(
            f"**Turn {n}** · stop {escape_markdown(llm.stop_reason)} · {llm.input_tokens:,} in / "
            f"{llm.output_tokens:,} out tokens · {llm.latency_ms:,.0f} ms"
        )
        if step.text:
            st.text(step.text)
        for call in step.calls:
            hits = (
                f"hits {', '.join(call.labels)}"
                if call.labels
                else ("error: " + call.error if call.error else "no hits")
            )
            st.caption(
                f"{escape_markdown(call.name)}({escape_markdown(str(call.arguments))}) → {escape_markdown(hits)}"
            )


def show_trail(trail: ModeTrail) -> None:
    """Where the tracked chunk appeared or was lost among the mode's searches."""
    st.markdown(f"In the **{escape_markdown(trail.mode)}** mode: {escape_markdown(trail.summary)}")
    rows = [
        {"search": s.search, "query": s.query, "final rank": s.final_rank, "what happened": s.note}
        for s in trail.sightings
    ]
    st.dataframe(
        pd.DataFrame(rows).astype({"final rank": "Int64"}),
        hide_index=True,
        key="inspector_mode_trail",
        placeholder=ABSENT,
    )
