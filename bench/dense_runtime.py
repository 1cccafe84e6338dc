"""The dense model's runtimes side by side: PyTorch (sentence-transformers) against ONNX Runtime on the same weights.

Encodes the same real texts with each runtime: the chunk texts of the first N Markdown files of a
folder (the product's loader and chunker) and their distinct sentences (what ingest encodes for
sentence vectors), interleaved A B, then B A, over rounds. Prints, per runtime, CPU and wall seconds,
texts per second and the CPU-time and wall-time ratios to PyTorch; then how close the vectors are:
cosine mean and min to PyTorch's for chunks, sentences and late-pooled sentence spans (`encode_spans`).
The load average before and after is printed beside the table: on a shared machine, read the CPU ratios.

"onnx" runs what the product runs: the export with ONNX Runtime's BERT fusions (`ensure_fused`).
With --unfused the export as torch wrote it is measured beside it (what the float runtime ran before
the fusions); with --int8, the int8-quantised export (RAGSCOPE_DENSE_RUNTIME=onnx-int8, and the default
sentence vectors).

Usage:
    python bench/dense_runtime.py [FOLDER] [--limit N] [--rounds R] [--models-dir DIR] [--unfused] [--int8]

FOLDER defaults to ../shared/data/fastapi_docs/docs/en/docs/tutorial; the ONNX export is made once
into --models-dir (default data/models, the default data dir's, so the app finds it too).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np  # noqa: E402

from rag.ingest.chunker import chunk_document  # noqa: E402
from rag.settings.config import INT8_RUNTIME, ChunkConfig, Settings  # noqa: E402
from rag.encoders.base import DenseEncoder  # noqa: E402
from rag.encoders.factory import dense_encoder  # noqa: E402
from rag.ingest.loaders.document import load_document  # noqa: E402
from rag.encoders.dense_onnx import OnnxEncoder, _Loaded, _session  # noqa: E402
from rag.encoders.export import ensure_export  # noqa: E402
from rag.ingest.sentences import sentence_spans, sentence_texts  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DOCS = REPO.parent / "shared" / "data" / "fastapi_docs" / "docs" / "en" / "docs" / "tutorial"


class UnfusedEncoder(OnnxEncoder):
    """The ONNX export as torch wrote it, without the fusions the product's float runtime runs: for measuring only."""

    def _build(self) -> _Loaded:
        return _session(self.folder, ensure_export(self.folder, self._models_dir, self.name), self.name)


@dataclass
class Tally:
    """CPU and wall seconds summed over rounds, per kind of text."""

    cpu: dict[str, float]
    wall: dict[str, float]


def timed(encoder: DenseEncoder, texts: list[str]) -> tuple[np.ndarray, float, float]:
    cpu, wall = time.process_time(), time.perf_counter()
    vectors = encoder.encode_documents(texts)
    return vectors, time.process_time() - cpu, time.perf_counter() - wall


def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", nargs="?", type=Path, default=DEFAULT_DOCS)
    parser.add_argument("--limit", type=int, default=40, help="the first N Markdown files by name")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--models-dir", type=Path, default=Path("data") / "models")
    parser.add_argument("--unfused", action="store_true", help="also measure the ONNX export without the BERT fusions")
    parser.add_argument("--int8", action="store_true", help="also measure the int8-quantised ONNX export")
    args = parser.parse_args(argv)
    if not args.folder.is_dir():
        parser.error(f"{args.folder} is not a folder")

    paths = sorted(args.folder.rglob("*.md"), key=lambda p: p.relative_to(args.folder).as_posix())[: args.limit]
    chunks = [c for p in paths for c in chunk_document(load_document(p.name, p.read_bytes()), ChunkConfig())]
    texts = {"chunks": [c.embed_text for c in chunks], "sentences": list(dict.fromkeys(t for c in chunks for t in sentence_texts(c)))}
    name = Settings().dense_model
    encoders: dict[str, DenseEncoder] = {"torch": dense_encoder(name, "torch", args.models_dir), "onnx": dense_encoder(name, "onnx", args.models_dir)}
    if args.unfused:
        encoders["unfused"] = UnfusedEncoder(name, args.models_dir)
    if args.int8:
        encoders["onnx int8"] = dense_encoder(name, INT8_RUNTIME, args.models_dir)
    for label, encoder in encoders.items():
        start = time.perf_counter()
        encoder.encode_query("warm up")  # loads (and for onnx exports, once) outside the timed rounds
        print(f"{label}: loaded in {time.perf_counter() - start:.1f} s", file=sys.stderr)

    load_before = os.getloadavg()
    tallies = {label: Tally({k: 0.0 for k in texts}, {k: 0.0 for k in texts}) for label in encoders}
    vectors: dict[str, dict[str, np.ndarray]] = {label: {} for label in encoders}
    order = list(encoders)
    for r in range(args.rounds):
        for label in order[r % len(order) :] + order[: r % len(order)]:  # A B (C), then B (C) A, ...
            for kind, batch in texts.items():
                vectors[label][kind], cpu, wall = timed(encoders[label], batch)
                tallies[label].cpu[kind] += cpu
                tallies[label].wall[kind] += wall
        print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)
    load_after = os.getloadavg()
    spans = [sentence_spans(c) for c in chunks]
    late = {label: encoders[label].encode_spans(texts["chunks"], spans) for label in encoders}

    total = {k: len(v) for k, v in texts.items()}
    print(f"dense runtimes on {len(paths)} Markdown files of {args.folder}: {total['chunks']} chunks, {total['sentences']} distinct sentences, {args.rounds} rounds")
    print(f"load average (1, 5, 15 min): before {' '.join(f'{x:.1f}' for x in load_before)}, after {' '.join(f'{x:.1f}' for x in load_after)}")
    print(f"{'':<10} {'texts':<10} {'CPU s':>8} {'wall s':>8} {'texts/s':>8} {'CPU vs torch':>13} {'wall vs torch':>14}")
    base = tallies["torch"]
    for label, tally in tallies.items():
        for kind in texts:
            rate = total[kind] * args.rounds / tally.wall[kind]
            print(
                f"{label:<10} {kind:<10} {tally.cpu[kind]:>8.1f} {tally.wall[kind]:>8.1f} {rate:>8.1f} "
                f"{tally.cpu[kind] / base.cpu[kind]:>12.2f}x {tally.wall[kind] / base.wall[kind]:>13.2f}x"
            )
    if "unfused" in tallies:
        fused, plain = tallies["onnx"], tallies["unfused"]
        shown = [f"{kind} CPU {fused.cpu[kind] / plain.cpu[kind]:.2f}x, wall {fused.wall[kind] / plain.wall[kind]:.2f}x" for kind in texts]
        print(f"onnx (fused) against the unfused export: {'; '.join(shown)}")
    print("cosine to torch's vectors (mean, min):")
    beyond = set(late["torch"].beyond)  # spans past the window have no pooled vector (ingest encodes them alone)
    pooled = np.array([(i, j) not in beyond for i, rows in enumerate(late["torch"].spans) for j in range(len(rows))])
    for label in list(encoders)[1:]:
        shown = [f"{kind} {c.mean():.6f}, {c.min():.6f}" for kind in texts for c in [cosines(vectors[label][kind], vectors["torch"][kind])]]
        late_cos = cosines(np.concatenate(late[label].spans)[pooled], np.concatenate(late["torch"].spans)[pooled])
        print(f"  {label}: {'; '.join(shown)}; late-pooled spans {late_cos.mean():.6f}, {late_cos.min():.6f} ({int(pooled.sum())} spans)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
