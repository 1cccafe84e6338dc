"""What every page that searches a question says when the keyword (BM25) search has no term of it to search.

A question of stop words, or in a script the tokenizer drops, leaves the sparse stage empty without a word on
the page: the inspector, Ask and Eval's question sets each say so, with the same sentence (rag.inspect.question_terms).
"""

from __future__ import annotations

from collections.abc import Sequence

from rag.components import Components
from rag.errors import RagError
from rag.inspect.question_terms import no_term_note
from ui.safe import say


def no_term_warning(components: Components, question: str) -> None:
    """Warn when BM25 searches no term of `question`."""
    try:
        note = no_term_note(components, question)
    except RagError:  # the model cannot load: the search itself reports it
        return
    if note:
        say("warning", "{note}", note=note)


def no_term_questions(components: Components, questions: Sequence[tuple[str, str]]) -> None:
    """Warn, for a question set, which of its (id, question) pairs BM25 searches no term of."""
    try:
        empty = [qid for qid, q in questions if no_term_note(components, q)]
    except RagError:
        return
    if empty:
        say(
            "warning",
            "The keyword (BM25) search has no term to search for {n} of these questions (all stop words, or a "
            "script the tokenizer drops): {ids}. Only the dense search ranks chunks for them.",
            n=len(empty),
            ids=", ".join(empty),
        )
