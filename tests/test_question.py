"""The one question clean-up (rag/retrieval/question.py): what a pasted question becomes, and what is refused."""

from __future__ import annotations

import pytest
from anthropic_mock import MockedMessages
from modes_corpus import two_hop  # noqa: F401 (fixture)

from rag.errors import QuestionError
from rag.modes.run import run_mode
from rag.retrieval.question import MAX_QUESTION_CHARS, check_question, clean_question
from rag.settings.config import RetrievalConfig


@pytest.mark.parametrize(
    "typed",
    [
        "How do I\treset my password?",  # a tab from a spreadsheet cell
        "How do I\nreset my\r\npassword?",  # line breaks from a pasted paragraph (Unix and Windows)
        "How do I\u00a0reset my\u00a0password?",  # no-break spaces from a web page or a word processor
        "  How do I   reset my password?\u3000",  # padding, a run of spaces, an ideographic space
    ],
    ids=["tab", "newlines", "nbsp", "padding"],
)
def test_every_kind_of_whitespace_becomes_one_space(typed):
    assert clean_question(typed) == "How do I reset my password?"
    assert check_question(typed) == "How do I reset my password?"


def test_clean_question_keeps_everything_but_whitespace():
    typed = "Was kostet «Pro» pro Jahr? 年费是多少？ <b>a&b</b>"
    assert clean_question(typed) == typed


@pytest.mark.parametrize("typed", ["", " ", "\t\n\r\n", "\u00a0\u2003\u3000"], ids=["empty", "space", "breaks", "nbsp"])
def test_a_question_of_only_whitespace_is_refused(typed):
    assert clean_question(typed) == ""
    with pytest.raises(QuestionError, match="^type a question first$"):
        check_question(typed)


def test_the_length_limit_counts_the_cleaned_question():
    at_limit = "a" * MAX_QUESTION_CHARS
    assert check_question(at_limit) == at_limit
    # Whitespace a paste added does not count: 2,000 characters once its runs of spaces collapse.
    padded = "\n\n".join(["a" * 999, "b" * 1000]) + "\t" * 5000
    assert check_question(padded) == "a" * 999 + " " + "b" * 1000
    with pytest.raises(QuestionError) as refused:
        check_question("a" * (MAX_QUESTION_CHARS + 1))
    assert str(refused.value) == "the question is 2,001 characters long; keep it under 2,000"


def test_every_mode_refuses_an_over_long_question_before_calling_claude(two_hop):
    """run_mode checks the question as Ask does: the agent, which never searches the question itself,
    refuses it too, and no Claude call is spent on it."""
    api = MockedMessages.replying([])
    long_question = "How long is the warranty? " * 100
    with pytest.raises(QuestionError, match="^the question is 2,599 characters long; keep it under 2,000$"):
        run_mode(two_hop, long_question, "agent", RetrievalConfig(final_k=3), client=api.client())
    assert api.requests == []
