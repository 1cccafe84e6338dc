"""The reranking stage, pluggable by name.

`none` keeps the fused order. `cross-encoder:<name or path>` runs a sentence-transformers
CrossEncoder (a user with internet can name `cross-encoder/ms-marco-MiniLM-L-6-v2`; offline, a local
folder). The result of `retrieve()` always says which reranker ran.
"""

from __future__ import annotations

import threading
from functools import lru_cache
from typing import Protocol, Sequence

from rag.errors import ConfigError, EncoderError
from rag.types import StoredChunk


class Reranker(Protocol):
    name: str

    def score(self, question: str, chunks: Sequence[StoredChunk]) -> list[float]: ...


class NoReranker:
    """Keeps the fused order: scores are the negated fused ranks' reciprocals, so order is preserved."""

    name = "none"

    def score(self, question: str, chunks: Sequence[StoredChunk]) -> list[float]:
        return [1.0 / (i + 1) for i in range(len(chunks))]


class CrossEncoderReranker:
    """A sentence-transformers CrossEncoder by hub name or local folder.

    Example:
        rr = CrossEncoderReranker("path/to/ms-marco-MiniLM-L-6-v2")
        rr.score("refund time", chunks)
    """

    def __init__(self, model: str) -> None:
        self.model_name = model
        self.name = f"cross-encoder:{model}"
        self._model = None
        self._lock = threading.Lock()

    def _load(self):  # noqa: ANN202
        if self._model is None:
            with self._lock:
                if self._model is None:
                    from sentence_transformers import CrossEncoder

                    try:
                        self._model = CrossEncoder(self.model_name, device="cpu")
                    except Exception as e:
                        raise EncoderError(f"could not load cross-encoder {self.model_name!r} ({type(e).__name__}: {e})") from None
        return self._model

    def score(self, question: str, chunks: Sequence[StoredChunk]) -> list[float]:
        if not chunks:
            return []
        pairs = [(question, c.chunk.embed_text) for c in chunks]
        return [float(s) for s in self._load().predict(pairs, batch_size=32, show_progress_bar=False)]


RERANKERS = ("none",)


@lru_cache(maxsize=8)
def get_reranker(name: str) -> Reranker:
    """The reranker for a setting value; models are loaded once per process."""
    if name == "none":
        return NoReranker()
    if name.startswith("cross-encoder:"):
        return CrossEncoderReranker(name.split(":", 1)[1])
    raise ConfigError(f"unknown reranker {name!r}; use one of {', '.join(RERANKERS)} or cross-encoder:<model name or path>")
