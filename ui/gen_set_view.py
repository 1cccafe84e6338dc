"""The Eval tab's "write a question set with Claude": choose sections, generate, review each question, save.

Every question shown was checked (rag/eval/generate.py: its gold names a stored section and its answer text
is in it); a person then keeps, edits or drops each in the review table before anything is stored. Without
a key the panel says what a key would do and offers a template to write a set by hand. Generated text is
untrusted (it quotes the documents): it appears only in data editors and dataframes, never as HTML.
"""

from __future__ import annotations

import dataclasses

import pandas as pd
import streamlit as st

from rag.answer.anthropic_client import AnthropicClient
from rag.components import Components
from rag.errors import RagError
from rag.eval.generate import (
    MAX_TOKENS,
    Generated,
    collection_sections,
    generate_questions,
    hand_template,
    pick_sections,
)
from rag.eval.gold import CollectionIndex
from rag.eval.qsets import save_question_set
from ui import kept
from ui.safe import safe_text, say

GENERATED = "gen_generated"  # the last run's Generated, kept for the collection it came from
NO_KEY = (
    "With an Anthropic API key (ANTHROPIC_API_KEY), Claude writes questions from the sections you pick, the way "
    "a user would ask them, each with its section and the sentence that answers as gold, plus near-miss "
    "questions the documents do not answer; every one is checked against the collection, and you review them "
    'before the set is saved. Without a key, write a set by hand: one JSON object per line with "question" and '
    '"gold" (a list of {"source", "heading"}, or the answering sentence), optionally "answer" (the sentence '
    'that answers), or "answerable": false. The template '
    'below names sections of this collection; when it is written, upload it under "Upload a question set '
    '(JSONL)" below this panel.'
)


def render(components: Components) -> None:
    """The whole panel, in an expander under the question sets."""
    if notice := st.session_state.pop("gen_saved", None):
        st.success(notice)
    with st.expander("Write a question set with Claude"):
        try:
            index = CollectionIndex.from_components(components)
            sections = collection_sections(index)
        except RagError as e:
            say("error", "{e}", e=e)
            return
        if not sections:
            st.info("The collection has no documents yet: ingest some, then write questions from them.")
            return
        api = AnthropicClient.from_settings(components.settings)
        if api is None:
            st.info(NO_KEY)
            st.download_button("Download a template (JSONL)", hand_template(sections), "question-set-template.jsonl",
                               mime="application/jsonl", key="gen_template")  # fmt: skip
            return
        _form(components, api, index, sections)
        generated = kept.kept(GENERATED, components.settings.collection)
        if generated is not None:
            _review(components, generated)


def _form(components: Components, api: AnthropicClient, index: CollectionIndex, sections: list) -> None:
    sources = sorted({s.source for s in sections})
    chosen = st.multiselect("Documents (none: all)", sources, key="gen_sources")
    cols = st.columns(3)
    sample = cols[0].number_input(
        "Sections (a sample; 0: all)", 0, len(sections), min(10, len(sections)), key="gen_sample"
    )
    per_section = cols[1].number_input("Questions per section", 1, 10, 2, key="gen_per_section")
    near = cols[2].number_input("Near misses per section", 0, 5, 1, key="gen_near")
    if not st.button("Generate questions", key="gen_start", type="primary"):
        return
    try:
        picked = pick_sections(sections, chosen, int(sample) or None)
        bar = st.progress(0.0, text=f"0/{len(picked)} sections")
        generated = generate_questions(
            api, index, picked, per_section=int(per_section), near_misses=int(near),
            max_tokens=max(components.settings.answer.max_tokens, MAX_TOKENS),
            progress=lambda d, n, m: bar.progress(d / n, text=safe_text("{m}", m=m)),
        )  # fmt: skip
    except RagError as e:
        say("error", "{e}", e=e)
        return
    bar.empty()
    kept.keep(GENERATED, generated, components.settings.collection)


def _review(components: Components, generated: Generated) -> None:
    """Each checked question in an editable table (keep, wording), the dropped ones with reasons, then save."""
    if generated.stopped:
        say("warning", "The run {why}. The questions written before it are below.", why=generated.stopped)
    st.caption(
        f"{len(generated.kept)} questions checked and kept from {generated.sections} sections; "
        f"{len(generated.dropped)} dropped. Untick a question to leave it out, or edit its wording."
    )
    rows = [
        {"keep": True, "id": q.id, "question": q.question,
         "gold": f"{q.section.source} › {q.section.heading}" if q.section else "(none: near miss)",
         "answer": q.answer, "note": q.note}
        for q in generated.kept
    ]  # fmt: skip
    edited = st.data_editor(
        pd.DataFrame(rows, columns=["keep", "id", "question", "gold", "answer", "note"]), hide_index=True,
        width="stretch", key="gen_review", disabled=["id", "gold", "answer", "note"],
    )  # fmt: skip
    if generated.dropped:
        dropped = [{"from": d.where, "question": d.question, "why dropped": d.reason} for d in generated.dropped]
        st.dataframe(pd.DataFrame(dropped), hide_index=True, width="stretch", key="gen_dropped")
    name = st.text_input(
        "Save as question set", key="gen_set_name", placeholder="a new set name",
        help="Each line keeps its section as gold and the sentence that answers as answer-text gold.",
    ).strip()  # fmt: skip
    if not st.button("Save the reviewed set", key="gen_save", disabled=not name):
        return
    wording = {r["id"]: " ".join(str(r["question"]).split()) for r in edited.to_dict("records") if r["keep"]}
    qset = generated.question_set(name, keep=wording)
    lines = tuple(dataclasses.replace(q, question=wording[q.id] or q.question) for q in qset.questions)
    try:
        saved = save_question_set(components.shared, name, dataclasses.replace(qset, questions=lines).to_jsonl())
    except RagError as e:
        say("error", "{e}", e=e)
        return
    kept.keep(GENERATED, None, components.settings.collection)
    st.session_state["eval_set"] = saved.name
    st.session_state["gen_saved"] = safe_text(
        "Saved {n} reviewed questions as “{name}”.", n=len(saved.questions), name=saved.name
    )
    st.rerun()
