"""Ask: a reranked, cited answer whose citations open the exact span of the source; Eval beside it."""

import dataclasses

import pandas as pd
import streamlit as st

from ui.setup import page
from rag.answer import Answer, stream_answer
from rag.answer.context import span_context
from rag.answer.render import answer_html, context_html, md_escape
from rag.asklog import AskLog, AskRecord
from rag.config import FUSION_METHODS, RetrievalConfig
from rag.errors import RagError
from rag.eval.gold import SectionGold, SectionRef
from rag.eval.qsets import append_question, list_question_sets
from rag.inspect.params import inspector_params
from rag.rerank import RERANKERS

INSPECTOR = "pages/inspector.py"

components = page("Ask · Eval")
settings = components.settings
log = AskLog.for_settings(settings)


def settings_form() -> RetrievalConfig | None:
    """Retrieval settings for this ask (defaults: the configured ones); None after showing why they are invalid."""
    base = settings.retrieval
    # Defaults go in through session state (not `value=`) so "Ask again" can set them without a conflict.
    for key, value in (("ask_fusion", base.fusion), ("ask_candidates", base.candidates), ("ask_k", base.final_k), ("ask_reranker", base.reranker)):
        st.session_state.setdefault(key, value)
    with st.expander("Retrieval settings"):
        cols = st.columns(4)
        fusion = cols[0].selectbox("Fusion", FUSION_METHODS, key="ask_fusion")
        candidates = cols[1].number_input("Candidates", 1, 1000, key="ask_candidates")
        final_k = cols[2].number_input("Final k", 1, 100, key="ask_k")
        names = list(dict.fromkeys([base.reranker, st.session_state["ask_reranker"], *RERANKERS]))
        reranker = cols[3].selectbox("Reranker", names, key="ask_reranker")
    try:
        return dataclasses.replace(base, fusion=fusion, candidates=int(candidates), final_k=int(final_k), reranker=reranker)
    except RagError as e:
        st.error(str(e))
        return None


def run_ask(question: str, config: RetrievalConfig) -> None:
    """Stream the answer into the page, then keep and log the checked Answer."""
    st.session_state.pop("ask_answer", None)
    shown = st.empty()
    text = ""
    try:
        with st.spinner("Retrieving and answering…"):
            for item in stream_answer(components, question, config):
                if isinstance(item, Answer):
                    st.session_state["ask_answer"] = item
                else:
                    text += item
                    shown.html(answer_html(text, None))
        shown.empty()
        st.session_state["ask_log_id"] = log.record(st.session_state["ask_answer"], settings.collection)
    except RagError as e:
        shown.empty()
        st.error(str(e))


def show_answer(answer: Answer) -> None:
    labels = {answer.label_of(c.id): c for c in answer.citations}
    titles = {label: f"{c.source} > {c.heading}" for label, c in labels.items()}
    sent = {answer.label_of(i) for i in answer.sources} | set(answer.sources)
    st.caption(f"Answered by **{answer.mode}** ({md_escape(answer.model)}) in {answer.latency_ms:,.0f} ms")
    if answer.abstained:
        st.warning("Abstained: the sources do not answer this question.")
        st.text(answer.reason)
    else:
        st.html(answer_html(answer.text, sent, titles))
    if answer.invented:
        st.error("Invented citations: " + ", ".join(f"[{r}]" for r in answer.invented) + " name no source that was sent.")
    if answer.uncited_sentences:
        st.warning(f"{len(answer.uncited_sentences)} sentence(s) state something without a citation:")
        for sentence in answer.uncited_sentences:
            st.text(f"• {sentence}")
    show_citations(answer)
    show_sources(answer)
    add_to_question_set(answer)
    st.page_link(INSPECTOR, label="Open in inspector", icon="🔬", query_params=inspector_params(answer.question, answer.retrieval.config, settings.retrieval))


def show_citations(answer: Answer) -> None:
    """Each cited chunk in an expander: the cited span highlighted inside its neighbours' text."""
    spans: dict[str, list] = {}
    for c in answer.citations:
        spans.setdefault(c.id, []).append(c)
    for chunk_id, cites in spans.items():
        first = cites[0]
        page = f" · page {first.page}" if first.page else ""
        with st.expander(f"[{first.label}] {md_escape(first.source)} › {md_escape(first.heading)}{page}"):
            context = span_context(components, first.source, chunk_id, [(c.start, c.end) for c in cites])
            if context is None:
                st.info("This chunk is no longer stored (its document was deleted or re-ingested).")
                continue
            st.html(context_html(context.pieces))
            where = ", ".join(f"{c.start}-{c.end}" for c in cites)
            st.caption(f"{md_escape(first.source)} · {md_escape(first.heading or '(no heading)')}{page} · chars {where}")


def show_sources(answer: Answer) -> None:
    """The final chunks with their scores: which were sent, and the relevance the gate compared."""
    cited = {c.id for c in answer.citations}
    rows = []
    for c in answer.retrieval.final:
        rows.append(
            {
                "sent as": answer.label_of(c.id) or "not sent",
                "cited": c.id in cited,
                "source": c.chunk.chunk.source,
                "heading": c.chunk.chunk.heading,
                answer.relevance_basis or "relevance": answer.relevance.get(c.id),
                "rerank rank": c.rerank.rank,
                "rerank score": c.rerank.score,
                "fused rank": c.fused.rank,
                "dense rank": c.dense.rank,
                "sparse rank": c.sparse.rank,
            }
        )
    st.subheader("Sources")
    if not rows:
        st.caption("No chunk was retrieved for this question.")
        return
    st.caption(f"Reranker: {answer.retrieval.reranker}. A chunk is sent when its {answer.relevance_basis} reaches {settings.answer.min_rerank_score:g}.")
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")


def add_to_question_set(answer: Answer) -> None:
    """Turn this ask into an eval question: the chosen sources' sections become its gold (robust to re-chunking)."""
    final = {c.id: c.chunk.chunk for c in answer.retrieval.final}
    cited = [c.id for c in answer.citations if c.id in final]
    with st.expander("Add this question to a question set"):
        with st.form("ask_add_form"):
            existing = list_question_sets(settings.data_dir)
            name = st.text_input("Question set", key="ask_add_set", placeholder="a new or existing set name").strip()
            if existing:
                st.caption("Existing sets: " + ", ".join(md_escape(n) for n in existing))
            chosen = st.multiselect(
                "Gold sources",
                list(final),
                default=list(dict.fromkeys(cited)),
                format_func=lambda i: f"{final[i].source} > {final[i].heading}",
                key="ask_add_gold",
            )
            answerable = st.checkbox("The documents answer this question", value=not answer.abstained, key="ask_add_answerable")
            if st.form_submit_button("Add question"):
                if not name:
                    st.error("Name the question set first.")
                    return
                gold = SectionGold(tuple(SectionRef(final[i].source, final[i].heading) for i in chosen)) if answerable and chosen else None
                try:
                    qset = append_question(settings.data_dir, name, answer.question, gold, answerable)
                except RagError as e:
                    st.error(str(e))
                else:
                    st.success(f"Added to {qset.name} ({len(qset.questions)} questions). Run it in the Eval tab.")


def ask_again(record: AskRecord) -> None:
    """Callback: put a logged question and its settings back in the form and ask it."""
    st.session_state.update(
        ask_question=record.question,
        ask_fusion=record.config.fusion,
        ask_candidates=record.config.candidates,
        ask_k=record.config.final_k,
        ask_reranker=record.config.reranker,
        ask_pending=True,
    )


def show_recent() -> None:
    try:
        records = log.recent(10, settings.collection)
    except RagError as e:
        st.error(str(e))
        return
    st.subheader("Recent questions")
    if not records:
        st.caption("No questions asked yet.")
    for r in records:
        flag = " · abstained" if r.abstained else ""
        with st.expander(f"{md_escape(r.question)} — {r.asked_at}{flag}"):
            st.caption(f"{r.mode} ({md_escape(r.model)}) · {r.latency_ms:,.0f} ms · fusion {r.config.fusion}, k {r.config.final_k}, reranker {md_escape(r.config.reranker)}")
            if r.abstained:
                st.text(f"Abstained: {r.reason}")
            else:
                st.html(answer_html(r.answer, {c["label"] for c in r.citations}))
            cols = st.columns(2)
            cols[0].button("Ask again with these settings", key=f"ask_again_{r.id}", on_click=ask_again, args=(r,))
            with cols[1]:
                st.page_link(INSPECTOR, label="Replay in inspector", icon="🔬", query_params=r.inspector_params(settings.retrieval))


# Bound to ?tab=…, so a link (the sidebar's, a README's) can open the Eval tab: /ask?tab=Eval.
ask_tab, eval_tab = st.tabs(["Ask", "Eval"], key="tab", bind="query-params")
with ask_tab:
    config = settings_form()
    with st.form("ask_form"):
        question = st.text_input("Question", key="ask_question", placeholder="How long does a refund take?")
        submitted = st.form_submit_button("Ask", type="primary")
    pending = st.session_state.pop("ask_pending", False)
    if (submitted or pending) and config is not None:
        if question.strip():
            run_ask(question, config)
        else:
            st.warning("Type a question first.")
    if "ask_answer" in st.session_state:
        show_answer(st.session_state["ask_answer"])
    show_recent()
with eval_tab:
    from ui import eval_view
    eval_view.render(components)
