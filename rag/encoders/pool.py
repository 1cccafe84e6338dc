"""Dense encoding spread over worker processes, each building the same encoder with its share of the cores.

Ingest hands over whole batches, exactly as one process would encode them (`rag.ingest.embed`): a
vector never depends on which worker made it, and the int8 export, whose vectors depend on what
shares a forward pass, gives the same vectors too. A worker's ONNX Runtime gets `cores // workers`
threads, so the pool never asks for more threads than one process would. Whether it is faster than
one process with all the cores is measured in bench/encode_workers.py (bench/README.md, "encode workers").

Workers start by `spawn` (a fork of a process holding ONNX Runtime's thread pool can deadlock) and
live as long as the process, so each loads its model once for every later ingest.
"""

from __future__ import annotations

import atexit
import dataclasses
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from functools import lru_cache
from typing import Iterator, Sequence

import numpy as np

from rag.encoders.base import DenseEncoder
from rag.encoders.factory import DenseSpec

_worker_encoder: DenseEncoder | None = None  # the encoder of this worker process (set by _start)


def cores() -> int:
    """The cores this process may run on (a container's CPU set, not the host's count)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def worker_count(setting: int) -> int:
    """Settings.encode_workers as a number of processes: 0 means one per core."""
    return setting or cores()


class EncodePool:
    """`workers` processes encoding with the encoder `spec` builds.

    Example:
        pool = encode_pool(DenseSpec("all-MiniLM-L6-v2", "onnx", Path("data/models")), 2)
        vectors = list(pool.encode([["a text"], ["another", "two"]], batch_size=64))
    """

    def __init__(self, spec: DenseSpec, workers: int) -> None:
        threads = max(1, cores() // workers)
        self.spec = dataclasses.replace(spec, placement=dataclasses.replace(spec.placement, threads=threads))
        self.workers = workers
        context = multiprocessing.get_context("spawn")
        self._executor = ProcessPoolExecutor(workers, mp_context=context, initializer=_start, initargs=(self.spec,))
        atexit.register(self._executor.shutdown, cancel_futures=True)

    def encode(self, batches: Sequence[Sequence[str]], batch_size: int) -> Iterator[np.ndarray]:
        """Each batch's vectors, in order, as each is done (so the caller can report progress)."""
        return self._executor.map(_encode, [list(b) for b in batches], [batch_size] * len(batches))


@lru_cache(maxsize=4)
def encode_pool(spec: DenseSpec, workers: int) -> EncodePool:
    """One pool per encoder and size per process: its workers keep their models loaded."""
    return EncodePool(spec, workers)


def encode_batches(
    dense: DenseEncoder, batches: Sequence[Sequence[str]], batch_size: int, spec: DenseSpec | None, workers: int
) -> Iterator[np.ndarray]:
    """Each batch encoded by `dense` here, or by a pool of `workers` processes building `spec` when there
    are more than one of each (a single batch gains nothing from a pool); 0 workers: one per core."""
    workers = worker_count(workers)
    if spec is None or workers < 2 or len(batches) < 2:
        return (dense.encode_documents(list(b), batch_size=batch_size) for b in batches)
    return encode_pool(spec, workers).encode(batches, batch_size)


def _start(spec: DenseSpec) -> None:
    """A worker's start: its thread share for libraries that read the environment (torch), then its encoder."""
    global _worker_encoder
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[name] = str(spec.placement.threads)
    _worker_encoder = spec.build()


def _encode(texts: list[str], batch_size: int) -> np.ndarray:
    assert _worker_encoder is not None, "a pool worker encodes only after _start"
    return _worker_encoder.encode_documents(texts, batch_size=batch_size)
