"""Ingest's encoding in worker processes gives the vectors one process gives, and RAGSCOPE_DEVICE=cuda without
a GPU runs on CPU and says so (rag/encoders/pool.py, rag/encoders/dense_onnx.py)."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest

from rag.components import dense_spec
from rag.encoders.dense_onnx import CPU, CUDA, OnnxEncoder, Placement, providers_for
from rag.encoders.pool import cores, encode_pool, worker_count
from rag.ingest.embed import ENCODE_BATCH, encode_texts
from rag.settings.config import INT8_RUNTIME, Settings

SAMPLE = Path(__file__).resolve().parent.parent / "rag" / "resources" / "sample_docs"


def _real_texts() -> list[str]:
    """The packaged sample docs' lines and runs of three lines: more than one encode batch of real text."""
    lines = [line.strip() for p in sorted(SAMPLE.rglob("*.md")) for line in p.read_text().splitlines()]
    lines = [line for line in lines if len(line) > 30]
    return lines + [" ".join(lines[i : i + 3]) for i in range(0, len(lines), 2)]


@pytest.mark.parametrize("runtime", ["onnx", INT8_RUNTIME])
def test_pool_vectors_equal_one_process(tmp_path: Path, runtime: str) -> None:
    texts = _real_texts()
    assert len(texts) > ENCODE_BATCH  # two batches at least, or the pool is not used
    spec = dense_spec(Settings(data_dir=tmp_path / "data"), runtime)
    here = spec.build()
    alone = encode_texts(here, texts, None)
    pooled = encode_texts(here, texts, None, spec, workers=2)
    assert len(encode_pool(spec, 2)._executor._processes) == 2  # encoded in two other processes
    cosines = np.sum(alone * pooled, axis=1) / (np.linalg.norm(alone, axis=1) * np.linalg.norm(pooled, axis=1))
    assert cosines.min() >= 1 - 1e-6
    assert not np.allclose(alone[0], alone[1])  # real, distinct vectors


def test_workers_zero_means_one_per_core() -> None:
    assert worker_count(0) == cores()
    assert worker_count(3) == 3


def test_providers_for_device() -> None:
    assert providers_for("cpu", [CUDA, CPU]) == ([CPU], "")
    assert providers_for("auto", [CUDA, CPU]) == ([CUDA, CPU], "")
    providers, message = providers_for("cuda", [CPU])
    assert providers == [CPU] and "RAGSCOPE_DEVICE=cuda" in message and "runs on CPU" in message


def test_cuda_without_a_gpu_runs_on_cpu_and_says_so(
    tmp_path: Path, models_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    import onnxruntime

    if CUDA in onnxruntime.get_available_providers():
        pytest.skip("this onnxruntime has a CUDA provider: the fallback is not what runs here")
    name = Settings().dense_model
    with caplog.at_level(logging.WARNING, logger="rag.encoders"):
        on_gpu = OnnxEncoder(name, models_dir, placement=Placement("cuda")).encode_documents(["refunds take five days"])
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("RAGSCOPE_DEVICE=cuda" in m and "runs on CPU" in m for m in warned), warned
    on_cpu = OnnxEncoder(name, models_dir).encode_documents(["refunds take five days"])
    assert float(on_gpu[0] @ on_cpu[0]) >= 1 - 1e-6
