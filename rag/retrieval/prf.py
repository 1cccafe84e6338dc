"""Pseudo-relevance feedback (PRF): expand the BM25 query with the terms of its own top hits.

A question and the passage that answers it often use different words ("heart attack" / "myocardial
infarction"). The best BM25 hits usually share the topic, so words that recur in them are likely to
occur in other relevant passages too. This is RM3's idea in its plainest form: each feedback passage
contributes its BM25 term weights, normalised to sum to 1 and weighted by its share of the feedback
scores; the best terms not already in the question are added with at most `weight` (the question's
own terms keep weight 1). Qdrant's IDF modifier still applies at query time, so a common word added
this way adds little.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rag.encoders.base import SparseEncoder
from rag.types import SparseVector


@dataclass(frozen=True)
class Expansion:
    """The expanded sparse query and, for the inspector, the words it added (best first)."""

    vector: SparseVector
    terms: tuple[str, ...]


def expand_query(
    sparse: SparseEncoder,
    query: SparseVector,
    feedback: Sequence[tuple[str, float]],
    n_terms: int,
    weight: float,
) -> Expansion:
    """Add the `n_terms` best feedback terms to `query`.

    Args:
        sparse: the collection's sparse encoder (feedback texts are encoded as documents).
        query: the question's sparse vector.
        feedback: (text, score) of the top hits, best first; scores weight each hit's vote.
        n_terms: how many new terms to add.
        weight: the query weight of the best new term; the others scale with their feedback weight.

    Returns:
        The expanded vector (the question's terms first, unchanged) and the words added.
    """
    if not feedback or n_terms < 1 or weight <= 0.0:
        return Expansion(query, ())
    texts = [t for t, _ in feedback]
    scores = [max(s, 0.0) for _, s in feedback]
    total_score = sum(scores)
    shares = [s / total_score for s in scores] if total_score > 0 else [1.0 / len(scores)] * len(scores)
    votes: dict[int, float] = {}
    for vec, share in zip(sparse.encode_documents(texts), shares, strict=True):
        mass = sum(vec.values)
        for i, v in zip(vec.indices, vec.values, strict=True):
            votes[i] = votes.get(i, 0.0) + share * v / mass
    own = set(query.indices)
    best = sorted((i for i in votes if i not in own), key=lambda i: (-votes[i], i))[:n_terms]
    if not best:
        return Expansion(query, ())
    top = votes[best[0]]
    words: dict[int, str] = {}
    for text in texts:
        for i, word in sparse.query_terms(text).items():
            words.setdefault(i, word)
    vector = SparseVector(
        tuple(query.indices) + tuple(best),
        tuple(query.values) + tuple(weight * votes[i] / top for i in best),
    )
    return Expansion(vector, tuple(words.get(i, f"#{i}") for i in best))


def rocchio(query: np.ndarray, feedback: Sequence[Sequence[float]], weight: float) -> np.ndarray:
    """Dense feedback (Rocchio): move the question's vector toward the mean of its top hits' vectors.

    Returns the unit vector of `query + weight * mean(feedback)`; the question alone when there is no
    feedback. The top hybrid hits are usually on topic, and their centroid carries the vocabulary of
    the collection that a short question lacks.
    """
    q = np.asarray(query, dtype=np.float32)
    if not len(feedback) or weight <= 0.0:
        return q
    moved = q + weight * np.asarray(feedback, dtype=np.float32).mean(axis=0)
    return moved / np.linalg.norm(moved)
