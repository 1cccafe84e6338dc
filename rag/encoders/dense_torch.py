"""The dense model on sentence-transformers (PyTorch): any sentence-transformers name or folder.

The default runtime is ONNX (rag.encoders.dense_onnx), which gives the same vectors without importing
torch; this one serves models the ONNX export does not reproduce, and `RAGSCOPE_DENSE_RUNTIME=torch`.
torch is not in the default install: `pip install -e '.[torch]'` brings it.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from rag.encoders.base import DEFAULT_DENSE, TORCH_EXTRA, SpanVectors, log, offline, resolve_dense_path
from rag.errors import EncoderError
from rag.lazy import LazyModel


class SentenceTransformerEncoder(LazyModel):
    """Dense encoder on sentence-transformers; vectors are L2-normalised so dot == cosine.

    Example:
        enc = SentenceTransformerEncoder("all-MiniLM-L6-v2")
        vecs = enc.encode_documents(["refunds take five days"])
        assert vecs.shape == (1, enc.dim)
    """

    def __init__(self, name: str = DEFAULT_DENSE) -> None:
        super().__init__()
        self.name = name

    def _build(self):  # noqa: ANN202
        return _load_sentence_transformer(self.name)

    @property
    def dim(self) -> int:
        model = self._load()
        getter = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        return int(getter())

    def encode_documents(self, texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return (
            self._load()
            .encode(
                list(texts),
                batch_size=batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
            .astype(np.float32)
        )

    def encode_query(self, text: str) -> np.ndarray:
        return self.encode_documents([text])[0]

    def encode_spans(
        self, texts: Sequence[str], spans: Sequence[Sequence[tuple[int, int]]], batch_size: int = 64
    ) -> SpanVectors:
        """`texts` encoded as by `encode_documents`, plus a vector per (start, end) character span of
        each text, pooled from the same token states (see `SpanVectors`).

        Raises:
            EncoderError: the model's tokenizer gives no character offsets (not a "fast" tokenizer).
        """
        model = self._load()
        texts = list(texts)
        if not texts:
            return SpanVectors(np.zeros((0, self.dim), dtype=np.float32), [], [])
        outputs = model.encode(
            texts, batch_size=batch_size, output_value=None, normalize_embeddings=True, show_progress_bar=False
        )
        try:
            offsets = model.tokenizer(
                texts, truncation=True, max_length=model.max_seq_length, return_offsets_mapping=True
            )["offset_mapping"]
        except (NotImplementedError, ValueError, TypeError) as e:
            raise EncoderError(
                f"dense model {self.name!r}: its tokenizer gives no character offsets for late chunking ({e})"
            ) from None
        vectors = np.zeros((len(texts), self.dim), dtype=np.float32)
        pooled: list[np.ndarray] = []
        beyond: list[tuple[int, int]] = []
        for i, (out, where, wanted) in enumerate(zip(outputs, offsets, spans, strict=True)):
            vectors[i] = out["sentence_embedding"].float().numpy()
            tokens = out["token_embeddings"][: int(out["attention_mask"].sum())].float().numpy()
            if len(where) != len(tokens):
                raise EncoderError(
                    f"dense model {self.name!r}: its tokenizer and its model disagree on {texts[i][:40]!r}; "
                    "late chunking cannot pool"
                )
            starts, ends = np.array(where).T
            real = ends > starts  # [CLS], [SEP] and the like cover no characters
            rows = np.zeros((len(wanted), self.dim), dtype=np.float32)
            for j, (a, b) in enumerate(wanted):
                inside = real & (starts < b) & (ends > a)
                if inside.any():
                    mean = tokens[inside].mean(axis=0)
                    rows[j] = mean / np.linalg.norm(mean)
                else:
                    beyond.append((i, j))
            pooled.append(rows)
        return SpanVectors(vectors, pooled, beyond)


def _load_sentence_transformer(name: str):  # noqa: ANN202
    log.info("loading dense model %s", name)
    try:
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as transformers_logging
    except ImportError:
        raise EncoderError(
            f"dense model {name!r} on the torch runtime needs torch and sentence-transformers: {TORCH_EXTRA}"
        ) from None

    transformers_logging.disable_progress_bar()  # its "Loading weights" bar is noise on every command and app start
    path = resolve_dense_path(name)
    try:
        return SentenceTransformer(path, device="cpu", local_files_only=offline())
    except Exception as e:  # noqa: BLE001 - sentence-transformers and the hub raise many types for a missing or bad model
        raise EncoderError(
            f"could not load dense model {name!r} ({type(e).__name__}: {e}). Without internet, use a local "
            "folder path or the default all-MiniLM-L6-v2."
        ) from None
