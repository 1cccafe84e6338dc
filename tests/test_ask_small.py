"""Issue 38, item 11, on the Ask page through AppTest: an empty ask clears the last answer; "Add to a question
set" does not add a question the set already has without a confirmation."""

from __future__ import annotations

from apptest_pages import open_page
from streamlit.testing.v1 import AppTest

from rag.eval.qsets import load_question_set

QUESTION = "How long does a refund take to reach my card?"


def _ask(at: AppTest, question: str) -> AppTest:
    at.text_input(key="ask_question").input(question)
    next(b for b in at.button if b.label == "Ask").click()
    at.run()
    assert not at.exception, at.exception
    return at


def _add(at: AppTest) -> AppTest:
    next(b for b in at.button if b.label == "Add question").click()
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    return at


def test_an_empty_ask_clears_the_last_answer_and_says_to_type_one(sample_store):
    at = _ask(open_page("pages/ask.py", timeout=120), QUESTION)
    assert any(b.label == "Add question" for b in at.button)  # the answer's own form is on screen
    _ask(at, "   ")
    assert [w.value for w in at.warning if "Type a question" in w.value] == [
        "Type a question first: the box above is empty."
    ]
    assert not any(b.label == "Add question" for b in at.button)  # the old answer is gone


def test_adding_a_question_the_set_has_needs_a_confirmation(sample_store):
    at = _ask(open_page("pages/ask.py", timeout=120), QUESTION)
    at.text_input(key="ask_add_set").input("mine")
    _add(at)
    assert len(load_question_set(sample_store.data_dir, "mine").questions) == 1
    _add(at)  # the same question again: refused, and the confirmation offered
    assert any("Not added: set 'mine' already has this question (as q1)" in w.value.replace("\\", "") for w in at.warning)
    assert len(load_question_set(sample_store.data_dir, "mine").questions) == 1
    at.checkbox(key="ask_add_again").check()
    _add(at)
    assert [q.question for q in load_question_set(sample_store.data_dir, "mine").questions] == [QUESTION, QUESTION]
