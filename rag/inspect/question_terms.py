"""What BM25 saw, for the question as a whole: the terms it searched (after the CJK cut and fastembed's own
tokenizing, stop words and stemming), each with its IDF in this collection, and the words that fell out.

The chunk's side (what each term added to one chunk's score) is rag/inspect/explain.py; this is the question's
side, which says before any chunk is picked why the sparse stage found what it found, or nothing: a question
of stop words, or in a script the tokenizer drops, searches no term at all, and a term no chunk holds cannot
match anywhere. The IDF is read from the engine (`term_idf`), as the chunk's explanation reads it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from rag.components import Components
from rag.inspect.explain import doc_freq, term_idf
from rag.text.cjk import has_cjk
from rag.text.words import plural
from rag.types import ChunkFilter

# Every stored chunk, quarantined and contents pages too: "no chunk holds it" must mean none.
_EVERY = ChunkFilter(include_quarantined=True, include_unranked=True)


@dataclass(frozen=True)
class QuestionTerm:
    """One term the BM25 query searched."""

    word: str  # as the tokenizer cut it, lower-cased (a CJK bigram or jieba word)
    stem: str  # what is hashed into the sparse index
    index: int
    kind: str  # "word", "identifier", "number", "CJK bigram", "CJK word" (jieba) or "CJK run" (whitespace)
    idf: float | None  # Qdrant's IDF in this collection; None when no chunk holds the term
    doc_freq: int | None  # chunks holding it (recovered from the IDF; None when not a whole number)

    @property
    def held(self) -> bool:
        return self.idf is not None


@dataclass(frozen=True)
class QuestionTerms:
    """The question's BM25 query, term by term, and the words it left out."""

    question: str
    tokenizer: str  # how CJK runs were cut (bigram, jieba, whitespace)
    terms: tuple[QuestionTerm, ...]  # in question order, each index once
    dropped: tuple[tuple[str, str], ...]  # (word, why): stop words, punctuation, over-long tokens
    total_chunks: int

    @property
    def absent(self) -> tuple[str, ...]:
        """The terms no chunk of the collection holds."""
        return tuple(t.word for t in self.terms if not t.held)

    @property
    def usable(self) -> bool:
        """Whether BM25 searched any term some chunk holds: else the sparse stage is empty by construction."""
        return any(t.held for t in self.terms)

    @property
    def note(self) -> str:
        """Why the sparse stage finds nothing for this question; "" when it can find something."""
        if not self.terms:
            return empty_note(self.dropped)
        if not self.usable:
            return (
                "The keyword (BM25) search found nothing: no chunk of the collection holds any of the question's "
                f"terms ({', '.join(self.absent)}). Only the dense search ranked chunks."
            )
        return ""

    def as_dict(self) -> dict:
        """The JSON shape (`ragscope search --json`, `track --json`, the failure report)."""
        return {
            "tokenizer": self.tokenizer,
            "terms": [asdict(t) for t in self.terms],
            "dropped": [{"word": w, "why": why} for w, why in self.dropped],
            "absent": list(self.absent),
            "usable": self.usable,
            "total_chunks": self.total_chunks,
            "note": self.note,
        }


def question_terms(components: Components, question: str) -> QuestionTerms:
    """The terms the sparse stage searched for `question` (its own, without PRF's additions), with their IDF."""
    tokens = components.sparse.query_tokens(question)
    total = components.store.count(_EVERY)
    terms: dict[int, QuestionTerm] = {}
    for t in tokens:
        if t.index is None or t.index in terms:
            continue
        idf = term_idf(components.store, t.index, _EVERY)
        found = doc_freq(idf, total) if idf is not None else None
        terms[t.index] = QuestionTerm(t.word, t.stem, t.index, _kind(t.word, components.sparse.tokenizer), idf, found)
    dropped = tuple((t.word, t.dropped) for t in tokens if t.index is None)
    return QuestionTerms(question, components.sparse.tokenizer, tuple(terms.values()), dropped, total)


def no_term_note(components: Components, question: str) -> str:
    """What the Ask and Eval pages say of a question BM25 searches no term of (tokenizing only, no store
    lookup); "" when it searches some."""
    tokens = components.sparse.query_tokens(question)
    if any(t.index is not None for t in tokens):
        return ""
    return empty_note(tuple((t.word, t.dropped) for t in tokens))


def empty_note(dropped: tuple[tuple[str, str], ...]) -> str:
    """The message for a question with no term to search, naming what fell out."""
    said = "; ".join(f"{w} ({why})" for w, why in dropped)
    unread = "it has no word the tokenizer reads (symbols, or a script it drops)"
    why = f"every word fell out: {said}" if dropped else unread
    return (
        f"The keyword (BM25) search had no term to search: {why}. Only the dense search ranks chunks for this "
        "question; name the thing you ask about in words the documents use."
    )


def _kind(word: str, tokenizer: str) -> str:
    if has_cjk(word):
        return {"jieba": "CJK word", "bigram": "CJK bigram"}.get(tokenizer, "CJK run")
    if word.isdigit():
        return "number"
    if "_" in word or (any(c.isdigit() for c in word) and any(c.isalpha() for c in word)):
        return "identifier"
    return "word"


def summary(terms: QuestionTerms) -> str:
    """One line for the CLI: the terms with their IDF, and those no chunk holds."""
    if not terms.terms:
        return terms.note
    shown = ", ".join(f"{t.word} ({t.idf:.2f})" if t.held else f"{t.word} (in no chunk)" for t in terms.terms)
    line = f"BM25 searched {plural(len(terms.terms), 'term')} (IDF): {shown}"
    return f"{line}. {terms.note}" if terms.note else line
