"""The inspector's arithmetic: what BM25 searched for the question, how the selected row's fused and rerank
scores were made, and why the chunk just above a tracked target beat it.

The numbers come from rag.inspect.arithmetic and rag.inspect.question_terms (the same values `ragscope search
--json` prints); this module only lays them out. Question words and document sentences are shown escaped or in
dataframes, never rendered.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from rag.components import Components
from rag.errors import RagError
from rag.inspect.arithmetic import RowArithmetic, ScoreArithmetic, score_arithmetic, versus_above
from rag.inspect.question_terms import question_terms
from rag.inspect.track import TrackReport
from rag.retrieval.rerank import ScorePart
from rag.retrieval.result import Candidate, RetrievalResult
from rag.text.words import plural
from ui.render import md_escape, without_fences
from ui.safe import say
from ui.tables import ABSENT, show_rows

NUMBER = st.column_config.NumberColumn(format="%.4f", width="small")
COUNT = st.column_config.NumberColumn(format="%d", width="small")


def question_terms_panel(components: Components, question: str) -> None:
    """The question's BM25 terms with their IDF in this collection, the words that fell out, and a warning
    when the sparse stage cannot find anything."""
    try:
        terms = question_terms(components, question)
    except RagError as e:
        say("error", "{e}", e=e)
        return
    if terms.note:
        say("warning", "{note}", note=terms.note)
    title = f"What BM25 searched for: {plural(len(terms.terms), 'term')}"
    if terms.absent:
        title += f", {len(terms.absent)} in no chunk"
    with st.expander(title, expanded=not terms.usable):
        if terms.terms:
            rows = [
                {"term": t.word, "kind": t.kind, "idf": t.idf, "chunks with it": t.doc_freq, "in no chunk": not t.held}
                for t in terms.terms
            ]
            show_rows(rows, "inspector_question_terms", TERM_COLUMNS, whole=("chunks with it",))
        st.caption(
            f"Cut by the {terms.tokenizer} tokenizer (CJK runs), then stop words removed and words stemmed; the "
            f"IDF is Qdrant's over the collection's {terms.total_chunks:,} chunks, ln(1 + (N - n + 0.5) / (n + 0.5))."
        )
        if terms.dropped:
            say("caption", "Not searched: {words}", words=", ".join(f"{w} ({why})" for w, why in terms.dropped))


TERM_COLUMNS = {
    "term": st.column_config.TextColumn("term", width="small", help="A term the BM25 query searched"),
    "kind": st.column_config.TextColumn("kind", width="small", help="word, identifier, number or a CJK term"),
    "idf": st.column_config.NumberColumn(
        "idf", format="%.4f", width="small", help="Its IDF in this collection: rarer terms weigh more"
    ),
    "chunks with it": st.column_config.NumberColumn(
        "df", format="%d", width="small", help="How many chunks hold it (– when none does, or the count is not exact)"
    ),
    "in no chunk": st.column_config.CheckboxColumn(
        "in no chunk", width="small", help="No chunk holds the term: it cannot match anywhere"
    ),
}


def arithmetic_for(components: Components, result: RetrievalResult) -> ScoreArithmetic | None:
    """The retrieval's arithmetic, or None after saying why it could not be made."""
    try:
        return score_arithmetic(components, result)
    except RagError as e:
        say("error", "{e}", e=e)
        return None


def arithmetic_panel(components: Components, result: RetrievalResult, candidate: Candidate) -> None:
    """How the selected row's fused and rerank scores were made, term by term."""
    arithmetic = arithmetic_for(components, result)
    row = arithmetic.row(candidate.id) if arithmetic else None
    if row is None:
        return
    with st.container(key="inspector_arithmetic", border=True):
        st.markdown("##### Score arithmetic")
        _fused(arithmetic, row, candidate)
        _rerank(row, candidate)


def _fused(arithmetic: ScoreArithmetic, row: RowArithmetic, candidate: Candidate) -> None:
    fused = row.fused
    fusion = arithmetic.fusion
    got = (
        f"**Fused score {candidate.fused.score:.4f}**"
        if candidate.fused.score is not None
        else f"**Not in the fused list** (fusion cut it; it would have scored {fused.computed:.4f})"
    )
    how = {
        "rrf": f"RRF, k {fusion.rrf_k}: each list adds 1/(k + rank - 1)",
        "union": f"union, RRF order with k {fusion.rrf_k}: each list adds 1/(k + rank - 1)",
        "weighted_rrf": f"weighted RRF, k {fusion.rrf_k}, weights dense {fusion.weights[0]:g} / sparse "
        f"{fusion.weights[1]:g}: each list adds 1/(k + rank/weight - 1)",
        "dbsf": "DBSF: each list's score normalised by its mean ± 3 sd, then added",
        "dense": "the dense list alone",
        "sparse": "the sparse list alone",
    }[fused.fusion]
    st.markdown(f"{got} = {md_escape(fused.text())}  \n{md_escape(how)}")
    rows = [
        {"list": t.stage, "rank": t.rank, "score": t.score, "arithmetic": t.formula, "adds": t.value}
        for t in fused.terms
    ]
    show_rows(rows, "inspector_arithmetic_fused", {"rank": COUNT, "score": NUMBER, "adds": NUMBER}, whole=("rank",))
    for n in fusion.norms:
        st.caption(
            f"{n.stage}: {n.size} scores, mean {n.mean:.4f}, sd {n.sd:.4f}, so {n.low:.4f} maps to 0 and "
            f"{n.high:.4f} to 1" + (" (one score, or all equal: each gets 0.5)" if n.flat else "")
        )
    if not fused.matches:
        st.warning(
            f"These terms add up to {fused.computed:.4f}, not the {fused.recorded:.4f} Qdrant returned: the engine's "
            "prefetch ordered tied scores differently. The table's score is Qdrant's, the one that ranked the chunk."
        )


def _rerank(row: RowArithmetic, candidate: Candidate) -> None:
    rerank = row.rerank
    if rerank is None:
        st.caption("Not reranked: fusion cut it before the reranker.")
        return
    score = f"**Rerank score {candidate.rerank.score:.4f}** ({md_escape(rerank.reranker)})"
    st.markdown(f"{score} = {md_escape(rerank.text())}")
    if rerank.parts:
        st.dataframe(
            pd.DataFrame([_part_row(p) for p in _flat(rerank.parts)]),
            hide_index=True,
            key="inspector_arithmetic_rerank",
            column_config={
                "measured": NUMBER,
                "lowest": NUMBER,
                "highest": NUMBER,
                "mixed value": NUMBER,
                "weight": st.column_config.NumberColumn(format="%.2f", width="small"),
                "adds": NUMBER,
            },
            placeholder=ABSENT,
        )
        if not rerank.matches:
            st.warning(
                f"These parts add up to {rerank.computed:.4f}, not the {rerank.recorded:.4f} the stage ranked by: "
                "the reranker was given another list than the fused one shown (a retrieval mode's stage)."
            )
        if any(p.low is not None for p in rerank.parts):
            st.caption("Min-max normalised over the reranked candidates: the lowest maps to 0, the highest to 1.")
    if rerank.sentence:
        st.markdown("Best-matching sentence (MaxSim):")
        say("markdown", "> {text}", text=without_fences(rerank.sentence))


def _flat(parts: tuple[ScorePart, ...], depth: int = 0) -> list[tuple[ScorePart, int]]:
    """Each part, followed by the parts its measured value was made of (maxsim-fusion's sentence-maxsim side)."""
    out = []
    for p in parts:
        out.append((p, depth))
        out += _flat(p.parts, depth + 1)
    return out


def _part_row(item: tuple[ScorePart, int]) -> dict:
    p, depth = item
    return {
        "part": ("↳ " * depth) + p.name,
        "measured": p.raw,
        "lowest": p.low,
        "highest": p.high,
        "mixed value": p.value,
        "weight": p.weight,
        "adds": p.term,
    }


def versus_panel(components: Components, report: TrackReport) -> None:
    """For a tracked target: the chunk ranked just above it, and the term that decided."""
    arithmetic = arithmetic_for(components, report.result)
    versus = versus_above(report.result, arithmetic, report.target.id) if arithmetic else None
    if versus is None:
        return
    above = report.result.get(versus.above_id)
    with st.container(key="inspector_versus", border=True):
        say(
            "markdown",
            "**Why the chunk just above it won** ({where}, {stage} rank {rank}): {text}",
            where=above.chunk.chunk.location,
            stage=versus.stage,
            rank=versus.above_rank,
            text=versus.text,
        )
        frame = pd.DataFrame(
            [{"term": g.name, "above": g.above, "tracked": g.target, "gap": g.gap} for g in versus.gaps]
        )
        if not frame.empty:
            st.dataframe(
                frame,
                hide_index=True,
                key="inspector_versus_terms",
                column_config={"above": NUMBER, "tracked": NUMBER, "gap": NUMBER},
            )
