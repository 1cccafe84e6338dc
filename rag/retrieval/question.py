"""A question as the engine takes it: whitespace collapsed, refused when empty or too long.

One home, because the same question arrives from a text box, the CLI, a question set, Claude's
generated sets and the agent's tool calls: a question typed with a tab, a line break or a no-break
space must be searched, stored and compared as the same question typed with plain spaces, and every
entry that searches refuses the same questions with the same words. It lives in retrieval, the lowest stage that
searches a question; every caller (modes, ask, eval, the pages) sits above it.
"""

from __future__ import annotations

from rag.errors import QuestionError

MAX_QUESTION_CHARS = 2000


def clean_question(question: str) -> str:
    """`question` with every run of whitespace (spaces, tabs, line breaks, no-break spaces) one space, and
    none at either end."""
    return " ".join(question.split())


def check_question(question: str) -> str:
    """The question with its whitespace collapsed (`clean_question`), when it can be searched.

    Raises:
        QuestionError: it is empty (or only whitespace), or longer than MAX_QUESTION_CHARS.
    """
    question = clean_question(question)
    if not question:
        raise QuestionError("type a question first")
    if len(question) > MAX_QUESTION_CHARS:
        raise QuestionError(f"the question is {len(question):,} characters long; keep it under {MAX_QUESTION_CHARS:,}")
    return question
