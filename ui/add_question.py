"""The Ask page's "Add this question to a question set": the chosen sources' sections become its gold.

A question the set already asks is not added twice without a confirmation (issue 38, item 11): a second copy
would count twice in every mean of the set's runs.
"""

from __future__ import annotations

import streamlit as st

from rag.answer.result import Answer
from rag.errors import RagError
from rag.eval.gold import SectionGold, SectionRef
from rag.eval.qsets import DuplicateQuestion, append_question, list_question_sets, question_in_set
from rag.settings.shared_home import SharedHome
from ui.render import md_escape
from ui.safe import say


def add_to_question_set(home: SharedHome, answer: Answer) -> None:
    """The form; gold from the sections of the cited sources (robust to re-chunking)."""
    final = {c.id: c.chunk.chunk for c in answer.retrieval.final}
    cited = [c.id for c in answer.citations if c.id in final]
    with st.expander("Add this question to a question set"):
        with st.form("ask_add_form"):
            existing = list_question_sets(home)
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
            answerable = st.checkbox(
                "The documents answer this question", value=not answer.abstained, key="ask_add_answerable"
            )
            again = False
            if name and (same := question_in_set(home, name, answer.question)):
                again = st.checkbox(f"Add it again: the set already has it (as {same})", key="ask_add_again")
            if st.form_submit_button("Add question"):
                if not name:
                    st.error("Name the question set first.")
                    return
                gold = (
                    SectionGold(tuple(SectionRef(final[i].source, final[i].heading) for i in chosen))
                    if answerable and chosen
                    else None
                )
                try:
                    qset = append_question(home, name, answer.question, gold, answerable, again=again)
                except DuplicateQuestion as e:
                    say("warning", "Not added: {e}. Tick “Add it again” to add a second copy.", e=e)
                except RagError as e:
                    say("error", "{e}", e=e)
                else:
                    n = len(qset.questions)
                    say("success", "Added to {name} ({n} questions). Run it in the Eval tab.", name=qset.name, n=n)
