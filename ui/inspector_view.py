"""The Search inspector's tables and panels: stages, a chunk's explanation, tracking, comparison, probe failures.

Document text reaches the screen only escaped (`escape_markdown` / the explanation's own escaped
Markdown) or inside dataframes, never as HTML.
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from rag.components import Components
from rag.errors import RagError
from rag.inspect.compare import Comparison, feedback_notes
from rag.inspect.explain import explain
from rag.inspect.probe import ProbeReport
from rag.inspect.track import TrackReport
from rag.retrieval.loss import LOSS_TITLES
from rag.retrieval.result import STAGES, Candidate, RetrievalResult
from rag.settings.config import RetrievalConfig
from rag.settings.labels import config_label
from rag.text.markdown import escape_markdown
from rag.types import ChunkFilter
from ui import mode_view
from ui.chunks import chunk_text
from ui.render import without_fences
from ui.safe import safe_text, say
from ui.tables import ABSENT, show_rows
from ui.where import COLUMN_WIDTH, where_labels

RANK = st.column_config.NumberColumn(format="%d", width="small")
SCORE = st.column_config.NumberColumn(format="%.4f", width="small")
WHOLE_PATH = "whole path"
# The cell keeps the path's end (ui/where.py); the whole path is a column of its own and the row detail's title.
WHERE_COLUMNS = {
    "source > heading": st.column_config.TextColumn(
        "source > heading",
        width=COLUMN_WIDTH,
        help="Where the chunk sits: the end of its document > heading path, where sections differ. The whole path: "
        "in the row's detail below (select the row) and in the 'whole path' column",
    ),
    WHOLE_PATH: st.column_config.TextColumn(WHOLE_PATH, width="large", help="The document and its whole heading path"),
}


def where(c: Candidate) -> str:
    return c.chunk.chunk.location


def ran_with(result: RetrievalResult) -> str:
    """The settings in words; the reranker that ran is named apart only when it is not the one asked for."""
    label = config_label(result.config)
    return label if result.reranker == result.config.reranker else f"{label} (reranker ran: {result.reranker})"


def expansion_notes(result: RetrievalResult, where: DeltaGenerator | None = None) -> None:
    """What PRF and dense feedback changed, by stage; expansion words come from documents, so escaped."""
    for stage, note in feedback_notes(result).items():
        (where or st).caption(f"**{stage} stage**: {escape_markdown(note)}")


STAGE_HELP = {
    "dense": "Rank by dense (embedding) similarity: the question's vector against the chunk's",
    "sparse": "Rank by sparse (BM25 keyword) score: the question's words found in the chunk",
    "fused": "Rank after fusing the dense and sparse lists (RRF, DBSF, … as set in the sidebar)",
    "rerank": "Rank after the reranker re-scored the fused list (– no reranker ran, or the chunk was cut before it)",
}
# The compact set fits a 1,280 px window; the toggle adds the chunk id and every stage's score.
COMPACT = ["final", "source > heading", *(f"{s} #" for s in STAGES), "movement"]
DETAILS = [
    "final", "chunk id", "source > heading", *(c for s in STAGES for c in (f"{s} #", s)), "movement", WHOLE_PATH,
]  # fmt: skip
GLOSSARY = """
- **dense #**: the chunk's rank by dense (embedding) cosine similarity to the question.
- **sparse #**: its rank by BM25 keyword score (sparse vectors; Qdrant applies the IDF).
- **fused #**: its rank after fusing the dense and sparse lists.
- **rerank #**: its rank after the reranker re-scored the fused candidates; **final** is the rank in the top-k shown.
  With one hit per section, a section's other chunks that outrank the next section are carried with it: listed
  under it, at its final rank, and read by the answerer.
- **movement** `D4 S4 → F3 → R1 ▲2`: dense rank 4, sparse rank 4, fused rank 3, reranked rank 1, so reranking lifted
  it 2 places (▼ = lost places, – = not in that stage's list).
- **RRF** (reciprocal rank fusion): each list adds 1 / (rrf_k + rank); ranks count, scores do not.
- **DBSF** (distribution-based score fusion): each list's scores are normalised by their spread, then added.
- **weighted RRF**: RRF with the dense list weighted by dense weight; **union**: every chunk either list found, in
  RRF order, all passed to the reranker.
- **MaxSim** (sentence-maxsim, maxsim-fusion rerankers): a chunk scores by its best-matching sentence (the highest
  question-to-sentence cosine), blended with the whole chunk's cosine; **score-fusion**: a min-max mix of the exact
  dense and BM25 scores.
- **PRF** (pseudo-relevance feedback): words from the top chunks added to the sparse query.
"""


def glossary() -> None:
    """The stage table's column names and the fusion and reranking words, in plain words."""
    with st.expander("What the columns and names mean"):
        st.markdown(GLOSSARY)


def stage_columns() -> dict:
    """Every stage-table column with a tooltip that says what it holds."""
    return {
        "final": st.column_config.NumberColumn(
            "final",
            format="%d",
            width="small",
            help="Rank in the final top-k; a chunk carried with its section (listed under it) shows the section's rank",
        ),  # fmt: skip
        "chunk id": st.column_config.TextColumn("chunk id", width="small", help="The chunk's id (Track it below)"),
        **WHERE_COLUMNS,
        "movement": st.column_config.TextColumn(
            "movement",
            width="medium",
            help="D(ense) S(parse) → F(used) → R(erank) ranks; ▲/▼ places gained/lost by reranking; – not ranked",
        ),
        **{
            f"{s} #": st.column_config.NumberColumn(f"{s} #", format="%d", width="small", help=STAGE_HELP[s])
            for s in STAGES
        },
        **{
            s: st.column_config.NumberColumn(s, format="%.4f", width="small", help=f"The {s} stage's score")
            for s in STAGES
        },
    }


def stage_table(result: RetrievalResult) -> Candidate | None:
    """The ranked table of every candidate; returns the selected row's candidate (the first by default)."""
    rows = []
    for c, (label, whole) in zip(result.candidates, where_labels([c.chunk for c in result.candidates]), strict=True):
        r = c.as_row()  # the same record as the CLI's --json
        # A chunk carried with its section shows under it, at its rank (rag/retrieval/collapse.py).
        row = {"final": c.shown_rank, "chunk id": r["chunk_id"], "source > heading": label, WHOLE_PATH: whole}
        for stage in STAGES:
            row[f"{stage} #"], row[stage] = r[f"{stage}_rank"], r[f"{stage}_score"]
        row["movement"] = c.movement
        rows.append(row)
    frame = pd.DataFrame(rows)
    for col in ["final", *(f"{s} #" for s in STAGES)]:
        frame[col] = frame[col].astype("Int64")
    details = st.toggle("Show chunk ids and scores", key="inspector_table_details")
    event = st.dataframe(
        frame,
        key="inspector_table",
        alt="Stage table",
        hide_index=True,
        column_config=stage_columns(),
        column_order=DETAILS if details else COMPACT,
        on_select="rerun",
        selection_mode="single-row",
        placeholder=ABSENT,
    )
    glossary()
    picked = [i for i in (event.selection.rows if event is not None else []) if i < len(result.candidates)]
    return result.candidates[picked[0]] if picked else (result.candidates[0] if result.candidates else None)


def chunk_detail(components: Components, result: RetrievalResult, candidate: Candidate, expanded: bool) -> None:
    """The chosen chunk's full text, matched terms in bold and the best sentence highlighted, all escaped.

    `expanded`: query expansion changed a stage's query; the explanation uses the expanded query, as the table does.
    """
    st.markdown(f"#### {escape_markdown(where(candidate))}")
    st.caption(
        f"chunk {candidate.id} · characters {candidate.chunk.chunk.start}–{candidate.chunk.chunk.end} · "
        f"{candidate.movement}"
    )
    if candidate.also_in:
        st.caption("The same text is also in: " + escape_markdown("; ".join(candidate.also_in)))
    try:
        ex = explain(components, result.question, candidate.id, result)
    except RagError as e:
        say("error", "{e}", e=e)
        return
    chunk_text(ex.chunk.chunk.text, lambda a, b: st.markdown(ex.markdown(a, b)))  # fenced code as st.code
    if expanded:
        st.caption(
            "The scores below are for the expanded query the stages ran (see above), as in the table; "
            "words PRF added are marked."
        )
    left, right = st.columns(2)
    with left:
        st.markdown(
            f"**Sparse (BM25) score {ex.sparse.score:.4f}** = Σ query weight × IDF (applied by Qdrant) × "
            "stored term weight"
        )
        if ex.sparse.terms:
            terms = pd.DataFrame(
                [
                    {
                        "term": t.term,
                        "query weight": t.query_weight,
                        "stored tf part": t.doc_weight,
                        "idf": t.idf,
                        "contribution": t.contribution,
                        "chunks with term": t.doc_freq,
                        "in body": t.in_text,
                    }
                    for t in ex.sparse.terms
                ]
            )
            st.dataframe(
                terms.astype({"chunks with term": "Int64"}),
                hide_index=True,
                column_config=TERM_COLUMNS,
                placeholder=ABSENT,
            )
        else:
            st.caption("No question term occurs in this chunk.")
        if ex.sparse.missing:
            st.caption("Not in this chunk: " + escape_markdown(", ".join(ex.sparse.missing)))
    with right:
        st.markdown(f"**Dense cosine {ex.dense.score:.4f}** for the whole chunk")
        best = ex.dense.best
        if best:
            shown = "the heading path" if best.heading else "highlighted above"
            st.markdown(f"Best sentence (cosine {best.cosine:.4f}), {shown}:")
            st.markdown(f"> {escape_markdown(without_fences(best.text))}")
            st.caption(
                "From the sentence vectors stored at ingest: the cosines sentence rescoring read."
                if ex.dense.stored
                else "Encoded now: this chunk has no stored sentence vectors, so sentence rescoring encodes them "
                "the same way."
            )


# Short headers so none is cut; the help says what each means.
TERM_COLUMNS = {
    "query weight": st.column_config.NumberColumn(
        "q weight", format="%.4f", width="small", help="The term's weight in the question's BM25 query"
    ),
    "stored tf part": st.column_config.NumberColumn(
        "tf",
        format="%.4f",
        width="small",
        help="The term's stored weight in this chunk: term frequency, length-normalised",
    ),
    "idf": st.column_config.NumberColumn(
        "idf", format="%.4f", width="small", help="Inverse document frequency, applied by Qdrant"
    ),
    "contribution": st.column_config.NumberColumn(
        "adds", format="%.4f", width="small", help="q weight × idf × tf: what this term adds to the sparse score"
    ),
    "chunks with term": st.column_config.NumberColumn(
        "df",
        format="%d",
        width="small",
        help="How many chunks contain the term (– when the index still counts replaced chunks, after a re-ingest)",
    ),
    "in body": st.column_config.CheckboxColumn(
        "in body", width="small", help="Found in the chunk's text (else only in its source or heading)"
    ),
}


def show_track(report: TrackReport, on_apply: Callable[[RetrievalConfig, ChunkFilter], None]) -> None:
    """The tracked chunk in every stage, where it was lost, and the verified fixes (each with an Apply button
    calling `on_apply`)."""
    chunk = report.target.chunk.chunk
    st.markdown(f"Tracking **{escape_markdown(chunk.location)}** (`{chunk.id}`)")
    if report.target.note:
        say("caption", "{note}", note=report.target.note)
    if report.mode is not None:
        mode_view.show_trail(report.mode)
        st.caption(
            "Below: the question's own search, stage by stage, and the setting changes that surface the chunk there."
        )
    rows = [
        {
            "stage": s.stage,
            "rank": s.rank,
            "would-be rank": s.would_be_rank,
            "score": s.score,
            "list size": s.list_size,
            "note": s.note,
        }
        for s in report.stages
    ]
    show_rows(
        rows, "inspector_track_table", {"rank": RANK, "would-be rank": RANK, "score": SCORE},
        whole=("rank", "would-be rank"),
    )  # fmt: skip
    if report.found:
        say("success", "{reason}", reason=report.reason)
        _show_above(report)
        return
    if report.section_found:
        st.info(f"**{LOSS_TITLES[report.dropped_at]}**: {escape_markdown(report.reason)}")
        _show_above(report)
        return
    st.warning(f"**{LOSS_TITLES[report.dropped_at]}**: {escape_markdown(report.reason)}")
    if report.no_fix:
        st.info(f"No small change surfaces it: {escape_markdown(report.no_fix)}.")
    for i, s in enumerate(report.suggestions):
        left, right = st.columns([4, 1])
        label = "Smallest change" if i == 0 else "Also works"
        left.markdown(f"{label}: `{s.text}`, verified: final rank {s.final_rank}")
        right.button("Apply", key=f"inspector_apply_{i}", on_click=on_apply, args=(s.config, s.flt))


def _show_above(report: TrackReport) -> None:
    """Found below rank 1: the chunks ranked above it and why, the "why not first?" that "found" leaves open."""
    if not report.above:
        return
    template = "{rank}. **{where}**, score {score}: {why}"
    lines = [
        safe_text(template, rank=a.rank, where=a.candidate.chunk.chunk.location, score=f"{a.score:.4f}", why=a.why)
        for a in report.above
    ]
    st.markdown("Ranked above it:\n\n" + "\n".join(lines))


def show_comparison(cmp: Comparison) -> None:
    st.metric(
        "Overlap of the final lists", f"{cmp.overlap} of {len(cmp.changes)} chunks", help=f"Jaccard {cmp.jaccard:.2f}"
    )
    left, right = st.columns(2)
    for col, name, result in ((left, "A", cmp.a), (right, "B", cmp.b)):
        col.markdown(f"**{name}**: {escape_markdown(ran_with(result))}")
        expansion_notes(result, col)
        labels = where_labels([c.chunk for c in result.final])
        frame = pd.DataFrame(
            [
                {"rank": c.final_rank, "source > heading": label, "score": c.final_score, WHOLE_PATH: whole}
                for c, (label, whole) in zip(result.final, labels, strict=True)
            ]
        )
        col.dataframe(
            frame, hide_index=True, key=f"inspector_cmp_{name}",
            column_config={"rank": RANK, "score": SCORE, **WHERE_COLUMNS},
        )  # fmt: skip
    labels = where_labels([ch.chunk for ch in cmp.changes])
    changes = pd.DataFrame(
        [
            {
                "source > heading": labels[i][0],
                "rank A": ch.rank_a,
                "rank B": ch.rank_b,
                "change": ""
                if ch.delta is None
                else f"▲{ch.delta}"
                if ch.delta > 0
                else f"▼{-ch.delta}"
                if ch.delta < 0
                else "=",
                "in": ch.status,
                WHOLE_PATH: labels[i][1],
            }
            for i, ch in enumerate(cmp.changes)
        ]
    ).astype({"rank A": "Int64", "rank B": "Int64"})
    st.dataframe(
        changes,
        hide_index=True,
        key="inspector_cmp_changes",
        column_config={"rank A": RANK, "rank B": RANK, **WHERE_COLUMNS},
        placeholder=ABSENT,
    )


def probe_failures(report: ProbeReport) -> None:
    """The probed chunks that did not come back first for their own words."""
    if not report.failures:
        return
    rows = [
        {
            "chunk": f.chunk.chunk.location,
            "lifted sentence": f.sentence,
            "own rank": f.rank,
            "ranked first": f.top.chunk.location if f.top else "",
            "duplicate text": f.duplicate,
            "chunk id": f.chunk.chunk.id,
        }
        for f in report.failures
    ]
    st.dataframe(
        pd.DataFrame(rows).astype({"own rank": "Int64"}),
        hide_index=True,
        key="inspector_probe_failures",
        column_config=PROBE_COLUMNS,
        placeholder=ABSENT,
    )


PROBE_COLUMNS = {
    "chunk": st.column_config.TextColumn("chunk", width="medium", help="The probed chunk: its source > heading"),
    "lifted sentence": st.column_config.TextColumn(
        "lifted sentence", width="medium", help="The sentence taken from the chunk and searched as a question"
    ),
    "own rank": st.column_config.NumberColumn(
        "own rank", format="%d", width="small", help="Where the chunk itself ranked for its own sentence (– not found)"
    ),
    "ranked first": st.column_config.TextColumn(
        "ranked first", width="medium", help="The chunk that came first instead"
    ),
    "duplicate text": st.column_config.CheckboxColumn(
        "duplicate", width="small", help="The chunk that came first holds the same sentence: not a retrieval fault"
    ),
    "chunk id": st.column_config.TextColumn("chunk id", width="small", help="The probed chunk's id"),
}
