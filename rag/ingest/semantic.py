"""Where the topic changes: breakpoints between sentences for the "semantic" chunk strategy.

Greg Kamradt's method, as LangChain's SemanticChunker implements it, with one change: each sentence is
embedded together with `BUFFER` neighbours (one sentence alone says too little), the cosine distance
across each gap between sentences is taken, and a chunk ends wherever that distance is above the
document's `PERCENTILE`th percentile of them. The change: LangChain compares windows centred on the
sentences either side of the gap, which overlap (both hold those two sentences), so a topic change
moves the distance of three gaps a little each and the largest is often one sentence early (on
tests/test_loaders_more.py's two-topic text, all-MiniLM-L6-v2 peaked one gap before the change). Here
the window before a gap is its sentence and the `BUFFER` sentences before it, the window after is the
next sentence and the `BUFFER` after that, so the two never share a sentence and the peak is at the gap.
The vectors come from the collection's own dense model: the breaks are where the model that will search
the chunks sees the text move on.

This module only finds the breaks; rag.ingest.chunker cuts the sections there (never across a
heading, and still within the size limit).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rag.encoders.base import DenseEncoder

PERCENTILE = 95.0  # LangChain's default: about one break in twenty gaps between sentences
BUFFER = 1  # neighbours embedded with the sentence either side of a gap: windows of two sentences


def semantic_breaks(
    sections: Sequence[Sequence[str]], dense: DenseEncoder, percentile: float = PERCENTILE, buffer: int = BUFFER
) -> list[list[int]]:
    """Per section, the indices of the sentences that start a new chunk (never 0).

    Args:
        sections: each section's sentences (or code blocks and tables, which are units of their own), in order.
        dense: the encoder whose vectors decide; windows are encoded as documents, each distinct one once.
        percentile: a gap whose distance is above this percentile of the document's gaps is a break.
        buffer: neighbours embedded with the sentence on each side of a gap (before it, and after it).

    Returns:
        One list per section; empty where a section has fewer than two units or no gap is above the threshold.
    """
    before = [[" ".join(units[max(0, i - buffer) : i + 1]) for i in range(len(units) - 1)] for units in sections]
    after = [[" ".join(units[i + 1 : i + 2 + buffer]) for i in range(len(units) - 1)] for units in sections]
    distinct = sorted({w for side in (before, after) for ws in side for w in ws})
    if not distinct:
        return [[] for _ in sections]
    vectors = np.asarray(dense.encode_documents(distinct), dtype=np.float32)
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    row = {w: i for i, w in enumerate(distinct)}
    gaps = [
        [1.0 - float(vectors[row[a]] @ vectors[row[b]]) for a, b in zip(left, right)]
        for left, right in zip(before, after)
    ]
    threshold = float(np.percentile([d for ds in gaps for d in ds], percentile))
    return [[i + 1 for i, d in enumerate(ds) if d > threshold] for ds in gaps]
