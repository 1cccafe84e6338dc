"""Ask: a reranked, cited answer whose citations open the exact span of the source; Eval beside it."""

import streamlit as st

from rag.answer.result import Answer
from rag.ask.answerer import stream_answer
from rag.ask.log import AskLog, AskRecord
from rag.errors import RagError
from rag.settings.config import RetrievalConfig
from rag.settings.links import collection_param, inspector_params
from ui import add_question, answer_view, forms, kept, mode_view
from ui.links import empty_collection_notice, language_notice
from ui.question_hint import question_hint
from ui.question_notes import no_term_warning
from ui.render import answer_html
from ui.safe import say
from ui.setup import DEMO, page, retrieval_on_page

INSPECTOR = "pages/inspector.py"

components = page("Ask · Eval", bare=st.session_state.get(DEMO, False))  # demo: no sidebar
settings = components.settings
log = AskLog.for_home(components.shared)


def settings_form() -> RetrievalConfig | None:
    """Retrieval settings for this ask (defaults: the configured ones); None after showing why they are invalid.
    The sidebar's retrieval line follows them."""
    with st.expander("Retrieval settings"):
        config = forms.retrieval_form("ask", settings.retrieval, claude=bool(settings.anthropic_api_key))
    retrieval_on_page(config, settings.retrieval, ask=True)
    return config


def run_ask(question: str, config: RetrievalConfig) -> None:
    """Stream the answer into the page, then keep and log the checked Answer."""
    st.session_state.pop("ask_answer", None)
    shown = st.empty()
    text = ""
    try:
        with st.spinner("Retrieving and answering…"):
            for item in stream_answer(components, question, config):
                if isinstance(item, Answer):
                    answer = item
                else:
                    text += item
                    shown.html(answer_html(text, None))
        shown.empty()
        # Kept for this collection only: after a switch, its sources, gold and inspector link would name another.
        kept.keep("ask_answer", answer, settings.collection)
        st.session_state["ask_log_id"] = log.record(answer, settings.collection)
    except RagError as e:
        shown.empty()
        say("error", "{e}", e=e)


def show_answer(answer: Answer, demo: bool) -> None:
    answer_view.show_answer(components, answer, demo)
    if demo:
        return
    if answer.mode_result is not None:
        with st.expander(f"How the {answer.retrieval_mode} mode searched (the sources below are its final list)"):
            mode_view.show_mode(answer.mode_result, "ask")
    answer_view.show_sources(answer, settings.answer.min_rerank_score)
    add_question.add_to_question_set(components.shared, answer)
    st.page_link(
        INSPECTOR,
        label="Open in inspector",
        icon="🔬",
        query_params=inspector_params(answer.question, answer.retrieval.config, settings.retrieval)
        | collection_param(settings.collection),
    )


def ask_again(record: AskRecord) -> None:
    """Callback: put a logged question and its settings back in the form and ask it."""
    forms.set_form_state("ask", record.config, settings.retrieval)
    st.session_state.update(ask_question=record.question, ask_pending=True)


def show_recent() -> None:
    try:
        records = log.recent(10, settings.collection)
    except RagError as e:
        say("error", "{e}", e=e)
        return
    answer_view.show_recent(
        records, ask_again, INSPECTOR, lambda r: r.inspector_params(settings.retrieval), settings.retrieval
    )


# Bound to ?tab=…, so a link (the sidebar's, a README's) can open the Eval tab: /ask?tab=Eval.
ask_tab, eval_tab = st.tabs(["Ask", "Eval"], key="tab", bind="query-params")
with ask_tab:
    if not empty_collection_notice(components):
        language_notice(components)
    demo = st.toggle(
        "Demo view", key=DEMO, help="Full width, only the answer and its cited sources: no scores, ranks or tools"
    )
    config = settings.retrieval if demo else settings_form()
    with st.form("ask_form"):
        question = st.text_input("Question", key="ask_question", placeholder=question_hint(components))
        submitted = st.form_submit_button("Ask", type="primary")
    pending = st.session_state.pop("ask_pending", False)
    if (submitted or pending) and config is not None:
        if question.strip():
            no_term_warning(components, question)
            run_ask(question, config)
        else:  # an empty ask clears the last answer, so no old answer stands under the warning
            kept.keep("ask_answer", None, settings.collection)
            st.warning("Type a question first: the box above is empty.")
    answer = kept.kept("ask_answer", settings.collection)
    if answer is not None:
        show_answer(answer, demo)
    if not demo:
        show_recent()
with eval_tab:
    from ui import eval_view, vectors_view, versions_view

    if demo:  # the demo view is the answer and its sources, nothing to operate
        st.caption("Eval is hidden in the demo view; switch the demo view off to run one.")
    else:
        eval_view.render(components)
        versions_view.render(components)
        vectors_view.render(components)
