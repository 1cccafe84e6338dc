"""The "sentences" of a chunk that sentence-level rescoring compares with the question.

One definition serves both places that embed them: ingest (stored as a Qdrant multivector when the
collection has sentence vectors) and the rerankers' query-time fallback (collections without them).
Both must see the same texts, or the two paths would give the same question different scores.
"""

from __future__ import annotations

from rag.text.sentences import split_sentences
from rag.types import Chunk


def sentence_texts(chunk: Chunk) -> list[str]:
    """The chunk's heading path (joined with " > ", when it has one), then each of its sentences.

    The heading counts as one more sentence: a question that names the section ("refund policy")
    matches it even when no single sentence of the body repeats those words (measured on SciFact with
    maxsim-fusion, docs/retrieval-quality.md). Never empty: a chunk with no sentence span gives its text.

    Example:
        sentence_texts(chunk)  # ["Billing > Refunds", "Refunds reach your card within five days.", ...]
    """
    text = chunk.embed_text
    return [text[a:b] for a, b in sentence_spans(chunk)]


def sentence_spans(chunk: Chunk) -> list[tuple[int, int]]:
    """Where each of `sentence_texts(chunk)` sits inside `chunk.embed_text`, the text the chunk's own
    vector is encoded from: late chunking pools these spans' token states from that one forward pass.

    `[chunk.embed_text[a:b] for a, b in sentence_spans(chunk)] == sentence_texts(chunk)`, always.
    """
    body = len(chunk.embed_text) - len(chunk.text)  # embed_text is "source > headings\n" + text
    spans = [(body + a, body + b) for a, b in split_sentences(chunk.text)] or [(body, body + len(chunk.text))]
    if not chunk.heading:
        return spans
    heading_start = len(chunk.source) + len(" > ")
    return [(heading_start, heading_start + len(chunk.heading)), *spans]


def sentence_vectors_note(stored: bool | None) -> str:
    """One line for the collection summaries (Documents page, `ragscope docs`): what rescoring costs here.

    Args:
        stored: whether the collection stores sentence vectors; None when there is no collection yet.
    """
    if stored is None:
        return "Sentence vectors: no collection yet; the first ingest creates it (`RAGSCOPE_SENTENCE_VECTORS` decides)."
    if stored:
        return "Sentence vectors: stored; sentence-maxsim and maxsim-fusion rescore from them without encoding."
    return (
        "Sentence vectors: not stored in this collection; sentence-maxsim and maxsim-fusion encode the "
        "candidates' sentences for every new question (slower). Only a new collection can add them: "
        "ingest into another `RAGSCOPE_COLLECTION` with `RAGSCOPE_SENTENCE_VECTORS=1`."
    )
