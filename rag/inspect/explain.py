"""Why a chunk scored what it did: the BM25 terms behind its sparse score, the sentence behind its dense one.

Sparse: Qdrant stores each chunk's BM25 term-frequency part (fastembed `Qdrant/bm25`) and applies the
IDF itself at query time (`Modifier.IDF`), so a chunk's sparse score is
`sum over shared terms of query weight * idf(term) * stored weight`. We do not re-implement the IDF:
for each shared term we ask Qdrant for the score of a one-term query restricted to the chunk's id,
which is exactly `idf * stored weight`, and divide. The contributions then add up to the score Qdrant
returned (the tests check it). From the IDF and the collection size we also recover how many chunks
contain the term (Qdrant's formula is ln(1 + (N - n + 0.5) / (n + 0.5))).

Dense: the chunk is one vector, so the closest we can get to "why" is the sentence inside it whose own
vector is nearest to the question, with its cosine. The sentences are the ones sentence-level rescoring
compares (`rag.ingest.sentences.sentence_texts`: the heading path counts as one) and their vectors are the
stored ones MaxSim read, so the best cosine shown is the one the reranker used.

`highlight_markdown()` marks both in the chunk's text for display, escaping every character Markdown
or Streamlit would interpret: document text is shown, never rendered.
"""

from __future__ import annotations

import math
import re
import uuid
from dataclasses import asdict, dataclass
from typing import Sequence

import numpy as np

from rag.components import Components
from rag.errors import RagError
from rag.ingest.sentences import sentence_spans
from rag.retrieval.rerank import sentence_cosines
from rag.retrieval.result import RetrievalResult
from rag.store.base import Store
from rag.text.markdown import escape_markdown
from rag.types import ChunkFilter, SparseVector, StoredChunk

_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class TermContribution:
    """One query term found in the chunk and what it added to the sparse score."""

    term: str  # the question's word
    index: int  # its sparse-vector index
    query_weight: float
    doc_weight: float  # the chunk's stored BM25 term-frequency part
    idf: float  # applied by Qdrant at query time
    contribution: float  # query_weight * idf * doc_weight
    doc_freq: int | None  # chunks in the collection holding the term (recovered from the IDF)
    in_text: bool  # False when the term only occurs in the source/heading line the encoders also see


@dataclass(frozen=True)
class SparseExplanation:
    score: float  # Qdrant's sparse score for this chunk (0 when no term is shared)
    terms: tuple[TermContribution, ...]  # biggest contribution first
    missing: tuple[str, ...]  # question terms the chunk does not contain
    total_chunks: int
    spans: tuple[tuple[int, int], ...]  # offsets in chunk.text of words that match a question term

    def as_dict(self) -> dict:
        """The JSON shape (`search --json`, `track --json`): the score and each term's part of it."""
        return {"score": self.score, "terms": [asdict(t) for t in self.terms], "missing": list(self.missing)}


@dataclass(frozen=True)
class SentenceMatch:
    start: int  # offsets in chunk.text; (0, 0) for the heading path, which is not in the text
    end: int
    text: str
    cosine: float
    heading: bool = False  # the chunk's heading path, scored as one more sentence


@dataclass(frozen=True)
class DenseExplanation:
    score: float  # Qdrant's cosine for the whole chunk
    best: SentenceMatch | None
    sentences: tuple[SentenceMatch, ...]  # the heading path first, then the sentences in text order
    stored: bool  # the cosines are the stored sentence vectors' (what MaxSim read), not encoded now


@dataclass(frozen=True)
class Explanation:
    chunk: StoredChunk
    sparse: SparseExplanation
    dense: DenseExplanation

    def markdown(self, start: int = 0, end: int | None = None) -> str:
        """The chunk's text (or text[start:end], a prose part shown between code blocks), escaped, with matched
        words in bold and the best sentence highlighted."""
        text = self.chunk.chunk.text
        end = len(text) if end is None else end
        best = (self.dense.best.start, self.dense.best.end) if self.dense.best and not self.dense.best.heading else None
        if best is not None and best[0] < end and best[1] > start:
            best = (max(best[0], start) - start, min(best[1], end) - start)
        else:
            best = None
        spans = [(a - start, b - start) for a, b in self.sparse.spans if start <= a and b <= end]
        return highlight_markdown(text[start:end], spans, best)


def explain(components: Components, question: str, chunk_id: str, result: RetrievalResult | None = None) -> Explanation:
    """Explain one chunk's dense and sparse scores for `question`.

    Args:
        components: store and encoders.
        question: the question that was searched.
        chunk_id: the chunk to explain (quarantined chunks too: the explanation is read-only).
        result: the retrieval the chunk was picked from; its query vectors are reused (no second
            encoding), so the scores explained are the stage table's, expanded query included.

    Returns:
        The per-term sparse breakdown and the best-matching sentence.

    Raises:
        RagError: the chunk id is not in the collection.
    """
    if result is not None:
        components = components.in_space(result.config.dense_vector)  # the dense vector the stages ran in
    chunk = get_chunk(components, chunk_id, with_vectors=True)
    query = result.query if result is not None else None
    dense = components.dense.encode_query(question) if query is None else query.dense_run
    sparse, words = sparse_query(components, question, result)
    return Explanation(chunk, explain_sparse(components, sparse, words, chunk), explain_dense(components, dense, chunk))


def sparse_query(
    components: Components, question: str, result: RetrievalResult | None = None
) -> tuple[SparseVector, dict[int, str]]:
    """The BM25 query the sparse stage ran (`result`'s, expanded under PRF; else `question` encoded now), and
    the word behind each of its indices, PRF's marked."""
    words = components.sparse.query_terms(question)
    query = result.query if result is not None else None
    if query is None:
        return components.sparse.encode_query(question), words
    added = query.sparse_run.indices[len(query.sparse.indices) :]  # PRF appends its terms after the question's own
    return query.sparse_run, {
        **words,
        **{i: f"{word} (added by PRF)" for i, word in zip(added, result.expansion, strict=False)},
    }


def chunk_terms(components: Components, result: RetrievalResult, ids: Sequence[str]) -> dict[str, SparseExplanation]:
    """The sparse breakdown of each chunk `ids` names, for the query `result`'s sparse stage ran (the CLI's --json)."""
    sparse, words = sparse_query(components, result.question, result)
    found = components.store.records(ChunkFilter(ids=tuple(ids), include_quarantined=True), with_vectors=True)
    return {c.chunk.id: explain_sparse(components, sparse, words, c) for c in found}


def get_chunk(components: Components, chunk_id: str, with_vectors: bool = False) -> StoredChunk:
    """One stored chunk by id (quarantined included).

    Raises:
        RagError: the id is malformed or not in the collection.
    """
    chunk_id = chunk_id.strip()
    try:
        uuid.UUID(chunk_id)
    except ValueError:
        raise RagError(f"{chunk_id!r} is not a chunk id (ids look like 6f0e1f55-2d3c-4b8a-9a43-5a1c0b7d2e10)") from None
    found = components.store.records(ChunkFilter(ids=(chunk_id,), include_quarantined=True), with_vectors=with_vectors)
    if not found:
        raise RagError(f"no chunk with id {chunk_id!r} in collection {components.settings.collection!r}")
    return found[0]


def explain_sparse(
    components: Components, query: SparseVector, words: dict[int, str], chunk: StoredChunk
) -> SparseExplanation:
    """Break the chunk's BM25 score for `query` into per-term contributions, with the IDF Qdrant applied.

    `words` names the query's sparse indices (the question's words, and any PRF added).
    """
    store = components.store
    stored = dict(zip(chunk.sparse.indices, chunk.sparse.values, strict=True)) if chunk.sparse else {}
    only = ChunkFilter(ids=(chunk.chunk.id,), include_quarantined=True)
    total = store.count()
    shared = [(i, q) for i, q in zip(query.indices, query.values, strict=True) if i in stored]
    in_text = _term_spans(components, chunk.chunk.text, {i for i, _ in shared})
    terms = []
    for index, q_weight in shared:
        idf = term_idf(store, index, only, stored[index]) or 0.0
        terms.append(
            TermContribution(
                term=words.get(index, f"#{index}"),
                index=index,
                query_weight=q_weight,
                doc_weight=stored[index],
                idf=idf,
                contribution=q_weight * idf * stored[index],
                doc_freq=doc_freq(idf, total),
                in_text=index in in_text,
            )
        )
    terms.sort(key=lambda t: -t.contribution)
    hits = store.search_sparse(query, 1, only)
    missing = tuple(words.get(i, f"#{i}") for i in query.indices if i not in stored)
    spans = tuple(sorted(span for spans in in_text.values() for span in spans))
    return SparseExplanation(hits[0].score if hits else 0.0, tuple(terms), missing, total, spans)


def explain_dense(components: Components, query: np.ndarray, chunk: StoredChunk) -> DenseExplanation:
    """Score each of the chunk's sentences (heading path included) against the dense query and keep the best one."""
    hits = components.store.search_dense(query, 1, ChunkFilter(ids=(chunk.chunk.id,), include_quarantined=True))
    cosines, stored = sentence_cosines(components.store, components.dense, query, chunk)
    c = chunk.chunk
    body = len(c.embed_text) - len(c.text)  # embed_text is "source > headings\n" + text
    sentences = tuple(
        SentenceMatch(0, 0, c.embed_text[a:b], cos, heading=True)
        if a < body
        else SentenceMatch(a - body, b - body, c.embed_text[a:b], cos)
        for (a, b), cos in zip(sentence_spans(c), cosines, strict=True)
    )
    best = max(sentences, key=lambda s: s.cosine, default=None)
    return DenseExplanation(hits[0].score if hits else 0.0, best, sentences, stored)


def highlight_markdown(text: str, term_spans: Sequence[tuple[int, int]], sentence: tuple[int, int] | None) -> str:
    """Escaped Markdown of `text`: term spans in bold, the sentence span on a highlighted background.

    Every Markdown/Streamlit-significant character of the document is backslash-escaped and line
    starts keep their indentation as non-breaking spaces, so the text displays literally: no HTML,
    links, images, code blocks or directives can come from the document.
    """
    regions = (
        [(0, sentence[0], False), (sentence[0], sentence[1], True), (sentence[1], len(text), False)]
        if sentence
        else [(0, len(text), False)]
    )
    out = []
    for start, end, highlighted in regions:
        piece = _bold_spans(text, start, end, term_spans)
        if highlighted:
            piece = "\n".join(f":blue-background[{line}]" if line.strip() else line for line in piece.split("\n"))
        out.append(piece)
    return _line_breaks("".join(out))


def _bold_spans(text: str, start: int, end: int, spans: Sequence[tuple[int, int]]) -> str:
    out, cursor = [], start
    for a, b in sorted(spans):
        if a < cursor or b > end:
            continue
        out += [escape_markdown(text[cursor:a]), f"**{escape_markdown(text[a:b])}**"]
        cursor = b
    out.append(escape_markdown(text[cursor:end]))
    return "".join(out)


def _term_spans(components: Components, text: str, indices: set[int]) -> dict[int, list[tuple[int, int]]]:
    """Where in `text` each wanted sparse index occurs (words stemmed the way the encoder does)."""
    found: dict[int, list[tuple[int, int]]] = {}
    seen: dict[str, set[int]] = {}
    for m in _WORD.finditer(text):
        word = m.group().lower()
        if word not in seen:
            seen[word] = set(components.sparse.query_terms(word)) & indices
        for index in seen[word]:
            found.setdefault(index, []).append(m.span())
    return found


def term_idf(store: Store, index: int, where: ChunkFilter, weight: float | None = None) -> float | None:
    """The IDF Qdrant applies to one sparse index: a one-term query's score for the first chunk `where` lets
    through (idf x that chunk's stored weight) divided by the weight (`weight`, or read from the chunk);
    None when no chunk there holds the term.

    Read from the engine, never re-implemented: it is the factor that multiplied the chunk's term.
    """
    hits = store.search_sparse(SparseVector((index,), (1.0,)), 1, where)
    if not hits:
        return None
    if weight is None:
        found = store.records(ChunkFilter(ids=(hits[0].id,), include_quarantined=True), with_vectors=True)
        vector = found[0].sparse if found else None
        weight = dict(zip(vector.indices, vector.values, strict=True)).get(index) if vector else None
    return hits[0].score / weight if weight else None


def doc_freq(idf: float, total: int) -> int | None:
    """Invert Qdrant's IDF, ln(1 + (N - n + 0.5) / (n + 0.5)), for n; None if it is not a whole number."""
    if idf <= 0 or total <= 0:
        return None
    e = math.exp(idf)
    n = (total + 1 - 0.5 * e) / e
    return round(n) if abs(n - round(n)) < 0.05 and round(n) >= 1 else None


def _line_breaks(markdown: str) -> str:
    """Keep the text's line structure: hard breaks, and indentation as non-breaking spaces (no code blocks)."""
    lines = []
    for line in markdown.split("\n"):
        stripped = line.lstrip(" \t")
        lines.append("\u00a0" * (len(line) - len(stripped)) + stripped)
    return "  \n".join(lines)
