"""The dense model on ONNX Runtime: the same weights as the sentence-transformers encoder, without PyTorch.

Ingest's cost is almost all the dense model's forward passes. ONNX Runtime with graph optimisation
runs the same all-MiniLM-L6-v2 weights faster on CPU, and a process that only needs the model never
imports torch, transformers or sentence-transformers (hundreds of MB and seconds of start-up). The
vectors match the PyTorch ones (cosine >= 0.9999 on real chunks, bench/dense_runtime.py), so the two
runtimes share a collection. The graphs it runs are exported once per model folder (rag.encoders.export).
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from rag.encoders.base import SpanVectors
from rag.encoders.export import TORCH_HINT, ModelFolder, ensure_fused, ensure_int8
from rag.errors import EncoderError
from rag.lazy import LazyModel

log = logging.getLogger("rag.encoders")  # the model-load lines the CLI shows on stderr
# Padded tokens per forward pass. Attention's score matrices grow with rows x width^2, and ONNX Runtime
# keeps its peak allocation for the next pass: a token budget bounds peak memory where a row count does
# not (bench/README.md, "dense runtime").
TOKENS_PER_PASS = 1024


@dataclass(frozen=True)
class _Loaded:
    session: Any  # onnxruntime.InferenceSession
    tokenizer: Any  # tokenizers.Tokenizer, truncating to the window, not padding
    inputs: tuple[str, ...]


CUDA = "CUDAExecutionProvider"
CPU = "CPUExecutionProvider"


@dataclass(frozen=True)
class Placement:
    """Where a session runs the model (Settings.device) and with how many CPU threads (0: ONNX Runtime's
    default, one per core); a pool's workers each take their share of the cores (rag/encoders/pool.py)."""

    device: str = "auto"  # as Settings.device's default, so the app and a bare `dense_encoder` share one encoder
    threads: int = 0


# Keyed by the providers a placement resolves to, so "auto" and "cpu" share one session on a machine without a GPU.
_sessions: dict[tuple[Path, ModelFolder, tuple[str, ...], int], _Loaded] = {}
_sessions_lock = threading.Lock()


def _session(folder: ModelFolder, target: Path, name: str, placement: Placement = Placement()) -> _Loaded:
    """One ONNX Runtime session per export file (and model folder, whose tokenizer it holds), providers
    and thread count per process, however many data dirs point at it."""
    import onnxruntime

    providers, fallback = providers_for(placement.device, onnxruntime.get_available_providers())
    # Said by every encoder that asked for a GPU, also when its CPU session is already open.
    if fallback:
        (log.warning if placement.device == "cuda" else log.debug)(fallback)
    key = (target.resolve(), folder, tuple(providers), placement.threads)
    with _sessions_lock:
        if key not in _sessions:
            _sessions[key] = _open_session(folder, target, name, providers, placement)
        return _sessions[key]


def providers_for(device: str, available: Sequence[str]) -> tuple[list[str], str]:
    """The execution providers for `device` given those this onnxruntime has, and what to tell the user
    when a GPU was asked for and cannot be used ("" otherwise). The caller warns for "cuda" only: "auto"
    on a machine without a GPU means CPU, and its every model load saying so would be noise."""
    if device == "cpu":
        return [CPU], ""
    if CUDA in available:
        return [CUDA, CPU], ""
    return [CPU], (
        f"RAGSCOPE_DEVICE={device}: this onnxruntime has no CUDA provider (it has {', '.join(available)}); "
        "the dense model runs on CPU. For a GPU: pip install onnxruntime-gpu, with an NVIDIA driver and CUDA 12"
    )


def _open_session(folder: ModelFolder, target: Path, name: str, providers: list[str], placement: Placement) -> _Loaded:
    import onnxruntime
    from tokenizers import Tokenizer

    log.info("loading dense model %s", name)
    onnxruntime.disable_telemetry_events()  # onnxruntime would otherwise report usage
    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.intra_op_num_threads = placement.threads
    # Idle worker threads sleep instead of spinning: on a shared machine spinning burns CPU time that
    # other processes (and our own tokeniser) need.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    try:
        session = onnxruntime.InferenceSession(str(target), options, providers=providers)
        tokenizer = Tokenizer.from_file(str(folder.path / "tokenizer.json"))
    except Exception as e:  # noqa: BLE001 - a damaged export or tokenizer file
        raise EncoderError(
            f"could not load dense model {name!r} on ONNX Runtime ({type(e).__name__}: {e}); "
            f"delete {target.parent} to export it again, or {TORCH_HINT}"
        ) from None
    if CUDA in providers and CUDA not in session.get_providers():  # the provider is there, its CUDA libraries not
        log.warning(
            "RAGSCOPE_DEVICE=%s: ONNX Runtime could not start CUDA; the dense model runs on CPU", placement.device
        )
    tokenizer.no_padding()  # tokenizer.json may pin a fixed padding length; batches pad to their longest instead
    tokenizer.enable_truncation(max_length=folder.max_seq_length)
    return _Loaded(session, tokenizer, tuple(i.name for i in session.get_inputs()))


class OnnxEncoder(LazyModel):
    """Dense encoder on ONNX Runtime, vectors equal to `SentenceTransformerEncoder`'s (L2-normalised).

    Example:
        enc = OnnxEncoder("all-MiniLM-L6-v2", Path("data/models"))
        vecs = enc.encode_documents(["refunds take five days"])
        assert vecs.shape == (1, enc.dim)
    """

    def __init__(self, name: str, models_dir: Path, int8: bool = False, placement: Placement = Placement()) -> None:
        super().__init__()
        self.placement = placement
        self.model = name  # the sentence-transformers name or folder the export is made from
        # What identifies its vectors (caches key on it): int8 ones are another space than the float ones.
        self.name = f"{name} (int8)" if int8 else name
        self._models_dir = models_dir
        self._int8 = int8  # the int8-quantised export (`ensure_int8`)
        self._folder: ModelFolder | None = None

    @property
    def folder(self) -> ModelFolder:
        """The model's folder description: reading it costs a few small files, not the model."""
        if self._folder is None:
            self._folder = ModelFolder.read(self.model)
        return self._folder

    @property
    def dim(self) -> int:
        return self.folder.dim

    def _build(self) -> _Loaded:
        folder = self.folder
        make = ensure_int8 if self._int8 else ensure_fused
        return _session(folder, make(folder, self._models_dir, self.model), self.model, self.placement)

    def _token_states(self, encodings: Sequence[Any]) -> tuple[np.ndarray, np.ndarray]:
        """One forward pass over `encodings` padded to their longest: (token states, attention mask)."""
        loaded = self._load()
        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(encodings), width), dtype=np.int64)
        mask = np.zeros((len(encodings), width), dtype=np.int64)
        types = np.zeros((len(encodings), width), dtype=np.int64)
        for row, e in enumerate(encodings):
            n = len(e.ids)
            ids[row, :n] = e.ids
            mask[row, :n] = e.attention_mask
            types[row, :n] = e.type_ids
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        (states,) = loaded.session.run(["last_hidden_state"], {k: feed[k] for k in loaded.inputs})
        return states, mask

    def _pool(self, states: np.ndarray, mask: np.ndarray) -> np.ndarray:
        if self.folder.pooling == "cls":
            pooled = states[:, 0]
        else:
            weights = mask[:, :, None].astype(np.float32)
            pooled = (states * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        return _unit(pooled)

    def _batches(self, texts: Sequence[str], batch_size: int) -> tuple[list[Any], list[list[int]]]:
        """Every text tokenised once, and batches of indices of similar token length (little padding),
        each at most `batch_size` texts and `TOKENS_PER_PASS` padded tokens."""
        encodings = self._load().tokenizer.encode_batch(list(texts))
        batches: list[list[int]] = [[]]
        for i in sorted(range(len(texts)), key=lambda i: len(encodings[i].ids)):  # ascending: i is its batch's longest
            if batches[-1] and (
                len(batches[-1]) == batch_size or (len(batches[-1]) + 1) * len(encodings[i].ids) > TOKENS_PER_PASS
            ):
                batches.append([])
            batches[-1].append(i)
        return encodings, [b for b in batches if b]

    def encode_documents(self, texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        encodings, batches = self._batches(texts, batch_size)
        for batch in batches:
            out[batch] = self._pool(*self._token_states([encodings[i] for i in batch]))
        return out

    def encode_query(self, text: str) -> np.ndarray:
        return self.encode_documents([text])[0]

    def encode_spans(
        self, texts: Sequence[str], spans: Sequence[Sequence[tuple[int, int]]], batch_size: int = 64
    ) -> SpanVectors:
        """`texts` encoded as by `encode_documents`, plus a vector per (start, end) character span of
        each text, pooled from the same token states: the mean of the states of the (non-special)
        tokens overlapping the span, L2-normalised, as `SentenceTransformerEncoder.encode_spans` does."""
        texts = list(texts)
        vectors = np.zeros((len(texts), self.dim), dtype=np.float32)
        pooled: list[np.ndarray] = [np.zeros((0, self.dim), dtype=np.float32)] * len(texts)
        beyond: list[tuple[int, int]] = []
        if not texts:
            return SpanVectors(vectors, [], [])
        encodings, batches = self._batches(texts, batch_size)
        for batch in batches:
            states, mask = self._token_states([encodings[i] for i in batch])
            vectors[batch] = self._pool(states, mask)
            for row, i in enumerate(batch):
                e = encodings[i]
                starts, ends = np.array(e.offsets, dtype=np.int64).reshape(-1, 2).T
                real = (ends > starts) & (np.array(e.special_tokens_mask) == 0)
                tokens = states[row, : len(e.ids)]
                rows = np.zeros((len(spans[i]), self.dim), dtype=np.float32)
                for j, (a, b) in enumerate(spans[i]):
                    inside = real & (starts < b) & (ends > a)
                    if inside.any():
                        rows[j] = _unit(tokens[inside].mean(axis=0))
                    else:
                        beyond.append((i, j))
                pooled[i] = rows
        return SpanVectors(vectors, pooled, sorted(beyond))


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.clip(np.linalg.norm(x, axis=-1, keepdims=True), 1e-12, None)
