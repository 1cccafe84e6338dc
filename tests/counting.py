"""A thin counting wrapper around the REAL dense encoder, shared by tests that must show what gets embedded."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


class CountingDense:
    """The real dense encoder, counting what it is asked to embed (the test's witness, not a fake)."""

    def __init__(self, inner) -> None:  # noqa: ANN001
        self.inner = inner
        self.name = inner.name
        self.calls: list[list[str]] = []

    @property
    def dim(self) -> int:
        return self.inner.dim

    def encode_documents(self, texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
        self.calls.append(list(texts))
        return self.inner.encode_documents(texts, batch_size=batch_size)

    def encode_query(self, text: str) -> np.ndarray:
        return self.inner.encode_query(text)

    def encode_spans(self, texts: Sequence[str], spans: Sequence[Sequence[tuple[int, int]]], batch_size: int = 64):  # noqa: ANN201
        self.calls.append(list(texts))
        return self.inner.encode_spans(texts, spans, batch_size=batch_size)
