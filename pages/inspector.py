"""Search inspector: every retrieval stage for one question, and why a chunk was or was not found.

Thin: widgets here; retrieval, explanations, tracking, comparison and the probe live in rag/.

Query parameters, so other pages can link "Open in inspector" (parsed by rag.settings.links):
    ?q=QUESTION&fusion=rrf|dbsf|weighted_rrf|union|dense|sparse&candidates=N&k=N
    &reranker=none|dense-cosine|score-fusion[:w]|sentence-maxsim[:a]|maxsim-fusion[:w]|cross-encoder:<name or path>
    &dense_weight=W&rrf_k=N&min_score=S&prf=1&prf_docs=N&prf_terms=N&prf_weight=W
    &dense_prf=1&dense_prf_docs=N&dense_prf_weight=W&mode=plain|hyde|multi_hop|corrective|agent
    &source=NAME&tag=NAME&track=<chunk id>&ask=<ask log id, for a replayed ask>
`source` and `tag` may repeat. A link is applied once when it arrives; later edits are the user's.
Session-state keys start with `inspector_`. Document text is only ever shown escaped (st.markdown of
`escape_markdown` / `highlight_markdown` output) or in dataframes, never rendered as HTML.
"""

import streamlit as st

from rag.catalog.documents import sentence_vectors_stored
from rag.errors import RagError
from rag.ingest.sentences import sentence_vectors_note
from rag.inspect.compare import feedback_notes
from rag.modes.run import run_mode
from rag.settings.config import RetrievalConfig
from rag.settings.links import parse_inspector_params
from rag.settings.rerankers import reads_sentence_vectors
from rag.text.markdown import escape_markdown
from rag.types import ChunkFilter
from ui import (
    forms,
    inspector_arithmetic,
    inspector_link,
    inspector_tools,
    inspector_tracking,
    inspector_view,
    kept,
    mode_view,
)
from ui.links import empty_collection_notice, language_notice
from ui.safe import say
from ui.setup import page, retrieval_on_page

components = page("Search inspector")
base = components.settings.retrieval
CLAUDE = bool(components.settings.anthropic_api_key)
LINK_TARGET = ("q", "source", "tag", "track", "track_source", "track_heading", "ask")  # read even when a setting is bad


def set_config_state(config: RetrievalConfig, flt: ChunkFilter | None = None) -> None:
    """Put a config (and optionally a filter) into the settings widgets; also the 'Apply' buttons' callback."""
    forms.set_form_state("inspector", config, base)
    if flt is not None:
        st.session_state["inspector_sources"] = list(flt.sources)
        st.session_state["inspector_tags"] = list(flt.tags)


def apply_link() -> None:
    """Load the URL's query parameters into the widgets once per distinct link (the first visit included)."""
    params = inspector_link.link_params()
    if st.session_state.get(inspector_link.SEEN) == (seen := inspector_link.link_seen(params)):
        return
    st.session_state[inspector_link.SEEN] = seen
    try:
        request = parse_inspector_params(params, base)
    except RagError as e:
        say("error", "The link's settings were not applied: {e}", e=e)
        request = parse_inspector_params({k: v for k, v in params.items() if k in LINK_TARGET}, base)
    set_config_state(request.config, request.flt)
    inspector_link.keep_replay(components, request.ask)
    st.session_state["inspector_q"] = request.question
    if request.track_source:  # a section, as Eval counted it
        picks = {"by": inspector_tracking.TRACK_BY[1], "source": request.track_source, "heading": request.track_heading}
    else:
        picks = {"by": inspector_tracking.TRACK_BY[0], "id": request.track} if request.track else {}
    if picks:
        st.session_state.update({f"inspector_track_{k}": v for k, v in picks.items()}, inspector_track_auto=True)


def settings_sidebar() -> RetrievalConfig | None:
    """The stage settings; None (after saying why) when they do not make a valid config."""
    with st.sidebar:
        st.subheader("Stage settings")
        config = forms.retrieval_form("inspector", base, claude=CLAUDE)
        if (
            config is not None
            and reads_sentence_vectors(config.reranker)
            and (stored := sentence_vectors_stored(components)) is False
        ):
            st.caption(sentence_vectors_note(stored))
    retrieval_on_page(config, base)
    return config


def filter_inputs() -> ChunkFilter:
    sources = sorted(set(components.store.facet("source")) | set(st.session_state.get("inspector_sources", [])))
    tags = sorted(set(components.store.facet("tags")) | set(st.session_state.get("inspector_tags", [])))
    with st.expander(
        "Filters (applied inside Qdrant)",
        expanded=bool(st.session_state.get("inspector_sources") or st.session_state.get("inspector_tags")),
    ):
        left, right = st.columns(2)
        chosen_sources = left.multiselect("Sources", sources, key="inspector_sources")
        chosen_tags = right.multiselect("Tags", tags, key="inspector_tags")
        unranked = st.checkbox(
            "Also contents and index pages", key="inspector_unranked", help="Stored, but out of ranking by default"
        )
    return ChunkFilter(sources=tuple(chosen_sources), tags=tuple(chosen_tags), include_unranked=unranked)


apply_link()
if not empty_collection_notice(components):
    language_notice(components)
config = settings_sidebar()
flt = filter_inputs()
question = st.text_input(
    "Question", key="inspector_q", placeholder="Type the question that failed", on_change=inspector_link.question_to_url
)

if config is not None and question.strip():
    inspector_link.parity_note(config, base, question)
    try:
        with st.spinner(
            "Retrieving: dense, sparse, fusion, rerank…"
            if config.mode == "plain"
            else f"Running the {config.mode} mode…"
        ):
            mr = st.session_state["inspector_mode_result"] = run_mode(components, question, config=config, flt=flt)
    except RagError as e:
        say("error", "{e}", e=e)
        mr = st.session_state["inspector_mode_result"] = None
    result = mr.result if mr is not None else None
    if result is not None:
        timings = " · ".join(f"{k} {v:.0f} ms" for k, v in result.timings_ms.items())
        st.caption(f"{escape_markdown(inspector_view.ran_with(result))} · {timings}")
        inspector_view.expansion_notes(result)
        if mr.mode != "plain":
            with st.expander(
                f"Mode stages: each search the {mr.mode} mode ran (the table below is its final list)", expanded=True
            ):
                mode_view.show_mode(mr, "inspector")
        if not result.candidates:
            st.info("No chunk matched. Is the collection empty, or the filter too narrow?")
        chosen = inspector_view.stage_table(result) if result.candidates else None  # an empty one has no columns
        inspector_arithmetic.question_terms_panel(components, question)  # what BM25 searched, under the table
        if chosen is not None:
            inspector_view.chunk_detail(components, result, chosen, bool(feedback_notes(result)))
            inspector_arithmetic.arithmetic_panel(components, result, chosen)
        scope = kept.retrieval_scope(components, result)
        track_tab, compare_tab, health_tab = st.tabs(["Track an expected chunk", "Compare two configs", "Health check"])
        with track_tab:
            inspector_tracking.track_section(components, question, config, flt, scope, on_apply=set_config_state)
        with compare_tab:
            inspector_tools.compare_section(components, question, config, flt, scope)
        with health_tab:
            inspector_tools.health_section(components, config, flt)
elif config is not None:
    st.info("Type a question to see every retrieval stage. The health check below needs none.")
    with st.expander("Health check", expanded=True):
        inspector_tools.health_section(components, config, flt)
