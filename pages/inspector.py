"""Search inspector: every retrieval stage for one question, and why a chunk was or was not found.

Thin: widgets here; retrieval, explanations, tracking, comparison and the probe live in rag/.

Query parameters, so other pages can link "Open in inspector" (parsed by rag.inspect.params):
    ?q=QUESTION&fusion=rrf|dbsf|weighted_rrf|union|dense|sparse&candidates=N&k=N
    &reranker=none|dense-cosine|score-fusion[:w]|sentence-maxsim[:a]|maxsim-fusion[:w]|cross-encoder:<name or path>
    &dense_weight=W&rrf_k=N&min_score=S&prf=1&prf_docs=N&prf_terms=N&prf_weight=W
    &dense_prf=1&dense_prf_docs=N&dense_prf_weight=W&source=NAME&tag=NAME&track=<chunk id>
`source` and `tag` may repeat. A link is applied once when it arrives; later edits are the user's.
Session-state keys start with `inspector_`. Document text is only ever shown escaped (st.markdown of
`escape_markdown` / `highlight_markdown` output) or in dataframes, never rendered as HTML.
"""

import dataclasses
from collections import Counter

import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from ui import forms
from ui.links import empty_collection_notice
from ui.setup import page
from rag.inspect.compare import Comparison, compare, config_label, feedback_notes
from rag.config import RetrievalConfig
from rag.errors import RagError
from rag.inspect.explain import escape_markdown, explain
from rag.documents import document_chunks, list_documents, sentence_vectors_stored
from rag.inspect.params import parse_inspector_params
from rag.inspect.probe import ProbeReport, probe
from rag.retrieve import STAGES, Candidate, RetrievalResult, retrieve
from rag.sentences import sentence_vectors_note
from rag.inspect.track import TrackReport, TrackTarget, find_target, track
from rag.types import ChunkFilter, StoredChunk
from rag.wording import lost_at

components = page("Search inspector")
base = components.settings.retrieval
TRACK_BY = ("chunk id", "source + heading", "pasted text")
RANK = st.column_config.NumberColumn(format="%d", width="small")
SCORE = st.column_config.NumberColumn(format="%.4f", width="small")
ABSENT = "–"  # what a table shows where a stage did not rank a chunk (st.dataframe would print "None")


def set_config_state(config: RetrievalConfig, flt: ChunkFilter | None = None) -> None:
    """Put a config (and optionally a filter) into the settings widgets; also the 'Apply' buttons' callback."""
    forms.set_form_state("inspector", config, base)
    if flt is not None:
        st.session_state["inspector_sources"] = list(flt.sources)
        st.session_state["inspector_tags"] = list(flt.tags)


def apply_link() -> None:
    """Load the URL's query parameters into the widgets once per distinct link (the first visit included)."""
    params = {k: st.query_params.get_all(k) for k in st.query_params}
    seen = tuple(sorted((k, tuple(v)) for k, v in params.items()))
    if st.session_state.get("inspector_link") == seen:
        return
    st.session_state["inspector_link"] = seen
    try:
        request = parse_inspector_params(params, base)
    except RagError as e:
        st.error(f"The link's settings were not applied: {e}")
        request = parse_inspector_params({k: v for k, v in params.items() if k in ("q", "source", "tag", "track")}, base)
    set_config_state(request.config, request.flt)
    st.session_state["inspector_q"] = request.question
    if request.track:
        st.session_state["inspector_track_by"] = TRACK_BY[0]
        st.session_state["inspector_track_id"] = request.track
        st.session_state["inspector_track_auto"] = True


def settings_sidebar() -> RetrievalConfig | None:
    """The stage settings; None (after saying why) when they do not make a valid config."""
    with st.sidebar:
        st.subheader("Stage settings")
        config = forms.retrieval_form("inspector", base)
        if config is not None and "maxsim" in config.reranker and (stored := sentence_vectors_stored(components)) is False:
            st.caption(sentence_vectors_note(stored))
    return config


def filter_inputs() -> ChunkFilter:
    docs = list_documents(components)
    sources = sorted({d.source for d in docs} | set(st.session_state.get("inspector_sources", [])))
    tags = sorted({t for d in docs for t in d.tags} | set(st.session_state.get("inspector_tags", [])))
    with st.expander("Filters (applied inside Qdrant)", expanded=bool(st.session_state.get("inspector_sources") or st.session_state.get("inspector_tags"))):
        left, right = st.columns(2)
        chosen_sources = left.multiselect("Sources", sources, key="inspector_sources")
        chosen_tags = right.multiselect("Tags", tags, key="inspector_tags")
    return ChunkFilter(sources=tuple(chosen_sources), tags=tuple(chosen_tags))


def where(c: Candidate) -> str:
    return " > ".join(x for x in (c.chunk.chunk.source, c.chunk.chunk.heading) if x)


def where_labels(chunks: list[StoredChunk]) -> list[str]:
    """`source > heading` per chunk; where a heading repeats in the list, the chunk's number and first words tell them apart."""
    base = [" > ".join(x for x in (c.chunk.source, c.chunk.heading) if x) for c in chunks]
    repeats = Counter(base)
    return [b if repeats[b] == 1 else f"{b} · chunk {c.chunk.index + 1}: {first_words(c.chunk.text)}" for b, c in zip(base, chunks, strict=True)]


def first_words(text: str, n: int = 6) -> str:
    words = text.split()
    return " ".join(words[:n]) + ("…" if len(words) > n else "")


def ran_with(result: RetrievalResult) -> str:
    """The settings in words; the reranker that ran is named apart only when it is not the one asked for."""
    label = config_label(result.config)
    return label if result.reranker == result.config.reranker else f"{label} (reranker ran: {result.reranker})"


def expansion_notes(result: RetrievalResult, where: DeltaGenerator | None = None) -> None:
    """What PRF and dense feedback changed, by stage; expansion words come from documents, so escaped."""
    for stage, note in feedback_notes(result).items():
        (where or st).caption(f"**{stage} stage**: {escape_markdown(note)}")


def stage_table(result: RetrievalResult) -> Candidate | None:
    """The ranked table of every candidate; returns the selected row's candidate (the first by default)."""
    rows = []
    for c, label in zip(result.candidates, where_labels([c.chunk for c in result.candidates]), strict=True):
        row = {"final": c.final_rank, "chunk id": c.id, "source > heading": label}
        for stage in STAGES:
            s = c.stage(stage)
            row[f"{stage} #"], row[stage] = s.rank, s.score
        row["movement"] = c.movement
        rows.append(row)
    frame = pd.DataFrame(rows)
    for col in ["final", *(f"{s} #" for s in STAGES)]:
        frame[col] = frame[col].astype("Int64")
    config = {
        "final": st.column_config.NumberColumn("final", format="%d", width="small", help="Rank in the final top-k"),
        "chunk id": st.column_config.TextColumn("chunk id", width="small"),
        "movement": st.column_config.TextColumn("movement", help="D(ense) S(parse) → F(used) → R(erank) ranks; ▲/▼ places gained/lost by reranking"),
        **{f"{s} #": RANK for s in STAGES},
        **{s: SCORE for s in STAGES},
    }
    event = st.dataframe(frame, key="inspector_table", hide_index=True, column_config=config, on_select="rerun", selection_mode="single-row", placeholder=ABSENT)
    picked = [i for i in (event.selection.rows if event is not None else []) if i < len(result.candidates)]
    return result.candidates[picked[0]] if picked else (result.candidates[0] if result.candidates else None)


def chunk_detail(result: RetrievalResult, candidate: Candidate, expanded: bool) -> None:
    """The chosen chunk's full text, matched terms in bold and the best sentence highlighted, all escaped.

    `expanded`: query expansion changed a stage's query; the explanation uses the expanded query, as the table does.
    """
    st.markdown(f"#### {escape_markdown(where(candidate))}")
    st.caption(f"chunk {candidate.id} · characters {candidate.chunk.chunk.start}–{candidate.chunk.chunk.end} · {candidate.movement}")
    try:
        ex = explain(components, result.question, candidate.id, result)
    except RagError as e:
        st.error(str(e))
        return
    st.markdown(ex.markdown())
    if expanded:
        st.caption("The scores below are for the expanded query the stages ran (see above), as in the table; words PRF added are marked.")
    left, right = st.columns(2)
    with left:
        st.markdown(f"**Sparse (BM25) score {ex.sparse.score:.4f}** = Σ query weight × IDF (applied by Qdrant) × stored term weight")
        if ex.sparse.terms:
            terms = pd.DataFrame(
                [
                    {"term": t.term, "query weight": t.query_weight, "stored tf part": t.doc_weight, "idf": t.idf, "contribution": t.contribution, "chunks with term": t.doc_freq, "in body": t.in_text}
                    for t in ex.sparse.terms
                ]
            )
            st.dataframe(terms, hide_index=True, column_config=TERM_COLUMNS)
        else:
            st.caption("No question term occurs in this chunk.")
        if ex.sparse.missing:
            st.caption("Not in this chunk: " + escape_markdown(", ".join(ex.sparse.missing)))
    with right:
        st.markdown(f"**Dense cosine {ex.dense.score:.4f}** for the whole chunk")
        if ex.dense.best:
            st.markdown(f"Best sentence (cosine {ex.dense.best.cosine:.4f}), highlighted above:")
            st.markdown(f"> {escape_markdown(ex.dense.best.text)}")


# Short headers so none is cut; the help says what each means.
TERM_COLUMNS = {
    "query weight": st.column_config.NumberColumn("q weight", format="%.4f", width="small", help="The term's weight in the question's BM25 query"),
    "stored tf part": st.column_config.NumberColumn("tf", format="%.4f", width="small", help="The term's stored weight in this chunk: term frequency, length-normalised"),
    "idf": st.column_config.NumberColumn("idf", format="%.4f", width="small", help="Inverse document frequency, applied by Qdrant"),
    "contribution": st.column_config.NumberColumn("adds", format="%.4f", width="small", help="q weight × idf × tf: what this term adds to the sparse score"),
    "chunks with term": st.column_config.NumberColumn("df", format="%d", width="small", help="How many chunks contain the term"),
    "in body": st.column_config.CheckboxColumn("in body", width="small", help="Found in the chunk's text (else only in its source or heading)"),
}


def run_track(question: str, target: TrackTarget, config: RetrievalConfig, flt: ChunkFilter) -> TrackReport | None:
    try:
        with st.spinner("Scoring the chunk in every stage and re-running retrieval with candidate fixes…"):
            report = track(components, question, target, config, flt)
    except RagError as e:
        st.error(str(e))
        report = None
    st.session_state["inspector_track_report"] = report
    return report


def track_section(question: str, config: RetrievalConfig, flt: ChunkFilter) -> None:
    by = st.radio("Pick the expected chunk by", TRACK_BY, key="inspector_track_by", horizontal=True)
    pick: dict[str, str] = {}
    if by == TRACK_BY[0]:
        pick["chunk_id"] = st.text_input("Chunk id", key="inspector_track_id", placeholder="copy it from the table")
    elif by == TRACK_BY[1]:
        sources = sorted(components.store.sources())
        source = st.selectbox("Source", sources, key="inspector_track_source")
        headings = sorted({c.chunk.heading for c in document_chunks(components, source)}) if source else []
        pick = {"source": source or "", "heading": st.selectbox("Heading", headings, key="inspector_track_heading") or ""}
    else:
        pick["text"] = st.text_area("Text the expected chunk should contain", key="inspector_track_text")
    report: TrackReport | None = st.session_state.get("inspector_track_report")
    if st.button("Track", key="inspector_track_button") or st.session_state.pop("inspector_track_auto", False):
        try:
            report = run_track(question, find_target(components, question=question, **pick), config, flt)
        except RagError as e:
            st.error(str(e))
            report = st.session_state["inspector_track_report"] = None
    elif report is not None and (report.result.question, report.result.config, report.result.filter) != (question, config, flt):
        # The question or a setting changed (an applied fix included): follow the same chunk again, never show an old verdict.
        report = run_track(question, report.target, config, flt)
    if report is not None:
        show_track(report)


def show_track(report: TrackReport) -> None:
    chunk = report.target.chunk.chunk
    st.markdown(f"Tracking **{escape_markdown(' > '.join(x for x in (chunk.source, chunk.heading) if x))}** (`{chunk.id}`)")
    if report.target.note:
        st.caption(report.target.note)
    rows = [
        {"stage": s.stage, "rank": s.rank, "would-be rank": s.would_be_rank, "score": s.score, "list size": s.list_size, "note": s.note}
        for s in report.stages
    ]
    frame = pd.DataFrame(rows).astype({"rank": "Int64", "would-be rank": "Int64"})
    st.dataframe(frame, hide_index=True, key="inspector_track_table", column_config={"rank": RANK, "would-be rank": RANK, "score": SCORE}, placeholder=ABSENT)
    if report.found:
        st.success(report.reason)
        return
    st.warning(f"**{lost_at(report.dropped_at)}**: {escape_markdown(report.reason)}")
    if report.no_fix:
        st.info(f"No small change surfaces it: {escape_markdown(report.no_fix)}.")
    for i, s in enumerate(report.suggestions):
        left, right = st.columns([4, 1])
        label = "Smallest change" if i == 0 else "Also works"
        left.markdown(f"{label}: `{s.text}`, verified: final rank {s.final_rank}")
        right.button("Apply", key=f"inspector_apply_{i}", on_click=set_config_state, args=(s.config, s.flt))


def compare_section(question: str, config: RetrievalConfig, flt: ChunkFilter) -> None:
    st.caption(f"A = the settings in the sidebar: {config_label(config)}")
    with st.expander("B: the settings to compare with", expanded=True):
        config_b = forms.retrieval_form("inspector_cmp", dataclasses.replace(config, fusion="dense", reranker="none"), base)
    if st.button("Compare", key="inspector_cmp_button") and config_b is not None:
        try:
            with st.spinner("Running both configs…"):
                st.session_state["inspector_cmp"] = compare(components, question, config, config_b, flt)
        except RagError as e:
            st.error(str(e))
    comparison: Comparison | None = st.session_state.get("inspector_cmp")
    if comparison is not None and comparison.a.question == question:
        show_comparison(comparison)


def show_comparison(cmp: Comparison) -> None:
    st.metric("Overlap of the final lists", f"{cmp.overlap} of {len(cmp.changes)} chunks", help=f"Jaccard {cmp.jaccard:.2f}")
    left, right = st.columns(2)
    for col, name, result in ((left, "A", cmp.a), (right, "B", cmp.b)):
        col.markdown(f"**{name}**: {escape_markdown(ran_with(result))}")
        expansion_notes(result, col)
        labels = where_labels([c.chunk for c in result.final])
        frame = pd.DataFrame([{"rank": c.final_rank, "source > heading": label, "score": c.final_score} for c, label in zip(result.final, labels, strict=True)])
        col.dataframe(frame, hide_index=True, key=f"inspector_cmp_{name}", column_config={"rank": RANK, "score": SCORE})
    labels = where_labels([ch.chunk for ch in cmp.changes])
    changes = pd.DataFrame(
        [
            {
                "source > heading": labels[i],
                "rank A": ch.rank_a,
                "rank B": ch.rank_b,
                "change": "" if ch.delta is None else f"▲{ch.delta}" if ch.delta > 0 else f"▼{-ch.delta}" if ch.delta < 0 else "=",
                "in": ch.status,
            }
            for i, ch in enumerate(cmp.changes)
        ]
    ).astype({"rank A": "Int64", "rank B": "Int64"})
    st.dataframe(changes, hide_index=True, key="inspector_cmp_changes", column_config={"rank A": RANK, "rank B": RANK}, placeholder=ABSENT)


def health_section(config: RetrievalConfig, flt: ChunkFilter) -> None:
    st.caption("Searches a sentence lifted from each sampled chunk: a healthy chunk comes back first for its own words.")
    sample = st.number_input("Chunks to probe", 1, 1000, value=20, key="inspector_probe_n")
    if st.button("Run health check", key="inspector_probe_button"):
        bar = st.progress(0.0, text="Probing…")
        try:
            st.session_state["inspector_probe"] = probe(components, int(sample), config, flt, progress=lambda f, m: bar.progress(f, text=m))
        except RagError as e:
            st.error(str(e))
        bar.empty()
    report: ProbeReport | None = st.session_state.get("inspector_probe")
    if report is None:
        return
    st.metric("Own chunk at rank 1", f"{report.share_at_1:.0%}", help=f"{len(report.cases) - len(report.failures)} of {len(report.cases)} probed chunks")
    if report.failures:
        rows = [
            {
                "chunk": " > ".join(x for x in (f.chunk.chunk.source, f.chunk.chunk.heading) if x),
                "lifted sentence": f.sentence,
                "own rank": f.rank,
                "ranked first": " > ".join(x for x in (f.top.chunk.source, f.top.chunk.heading) if x) if f.top else "",
                "duplicate text": f.duplicate,
                "chunk id": f.chunk.chunk.id,
            }
            for f in report.failures
        ]
        st.dataframe(pd.DataFrame(rows).astype({"own rank": "Int64"}), hide_index=True, key="inspector_probe_failures", column_config={"own rank": RANK}, placeholder=ABSENT)


apply_link()
empty_collection_notice(components)
config = settings_sidebar()
flt = filter_inputs()
question = st.text_input("Question", key="inspector_q", placeholder="Type the question that failed")

if config is not None and question.strip():
    try:
        with st.spinner("Retrieving: dense, sparse, fusion, rerank…"):
            result = retrieve(components, question, config, flt)
    except RagError as e:
        st.error(str(e))
        result = None
    if result is not None:
        timings = " · ".join(f"{k} {v:.0f} ms" for k, v in result.timings_ms.items())
        st.caption(f"{escape_markdown(ran_with(result))} · {timings}")
        expansion_notes(result)
        if not result.candidates:
            st.info("No chunk matched. Is the collection empty, or the filter too narrow?")
        chosen = stage_table(result) if result.candidates else None  # an empty table has no columns to format
        if chosen is not None:
            chunk_detail(result, chosen, bool(feedback_notes(result)))
        track_tab, compare_tab, health_tab = st.tabs(["Track an expected chunk", "Compare two configs", "Health check"])
        with track_tab:
            track_section(question, config, flt)
        with compare_tab:
            compare_section(question, config, flt)
        with health_tab:
            health_section(config, flt)
elif config is not None:
    st.info("Type a question to see every retrieval stage. The health check below needs none.")
    with st.expander("Health check", expanded=True):
        health_section(config, flt)
