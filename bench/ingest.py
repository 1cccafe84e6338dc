"""Ingest throughput, measured side by side in one run.

Ingests a folder of documents into a fresh data dir and prints:
  - the whole pipeline's rate (load, chunk, diff, dense + sparse encode, scan, write) in chunks/s,
    next to the dense model's own encode rate on exactly the same chunk texts (goal: >= 0.9x);
  - an unchanged re-ingest's time as a ratio to the first ingest (goal: >= 50x faster).

The files are split into rounds; each round runs the pipeline and the bare model on that round's
texts, in alternating order (P M, M P, ...), so a change in machine load during the run hits both
sides alike. CPU-time ratios are printed too: on a shared machine they move less than wall time.

Usage:
    python bench/ingest.py [DOCS_DIR] [--limit N] [--rounds R]

DOCS_DIR defaults to ../shared/data/fastapi_docs/docs/en/docs (relative to the repository).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from rag.chunker import chunk_document  # noqa: E402
from rag.components import Components, build_components  # noqa: E402
from rag.config import Settings  # noqa: E402
from rag.errors import RagError  # noqa: E402
from rag.ingest import IngestSummary, collect_paths, ingest_files  # noqa: E402
from rag.loaders import load_document  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DOCS = REPO.parent / "shared" / "data" / "fastapi_docs" / "docs" / "en" / "docs"


class Clock:
    """Wall and process CPU seconds, summed over the timed blocks."""

    def __init__(self) -> None:
        self.wall = 0.0
        self.cpu = 0.0

    def __enter__(self) -> Clock:
        self._wall, self._cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall += time.perf_counter() - self._wall
        self.cpu += time.process_time() - self._cpu


def embed_texts(components: Components, files: list[tuple[str, bytes]]) -> list[str]:
    """What the pipeline will embed for these files on a first ingest (same loader, chunker, settings)."""
    texts = []
    for name, data in files:
        try:
            doc = load_document(name, data, max_bytes=components.settings.max_upload_mb * 1024 * 1024)
        except RagError:
            continue  # the pipeline refuses it too
        texts += [c.embed_text for c in chunk_document(doc, components.settings.chunk)]
    return texts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("docs", nargs="?", type=Path, default=DEFAULT_DOCS, help="folder of documents to ingest")
    parser.add_argument("--limit", type=int, default=None, help="only the first N files (quick runs)")
    parser.add_argument("--rounds", type=int, default=4, help="interleaved pipeline/model rounds")
    args = parser.parse_args(argv)
    if not args.docs.exists():
        parser.error(f"{args.docs} does not exist")

    files = [(name, path.read_bytes()) for name, path in collect_paths([args.docs])][: args.limit]
    rounds = [files[i :: args.rounds] for i in range(args.rounds)]
    pipeline, model, reingest = Clock(), Clock(), Clock()
    results = []
    with tempfile.TemporaryDirectory(prefix="ragscope-bench-") as tmp:
        components = build_components(Settings(data_dir=Path(tmp) / "data"))
        # Load both models before timing anything: loading is a one-off, not throughput.
        components.dense.encode_documents(["warm up"])
        components.sparse.encode_documents(["warm up"])
        n_texts = 0
        for i, part in enumerate(rounds):
            texts = embed_texts(components, part)
            n_texts += len(texts)
            steps = [("pipeline", part), ("model", texts)]
            for step, payload in steps if i % 2 == 0 else reversed(steps):
                if step == "pipeline":
                    with pipeline:
                        results += ingest_files(components, payload).files
                else:
                    with model:
                        components.dense.encode_documents(payload)
            print(f"round {i + 1}/{len(rounds)}: {len(part)} files, {len(texts)} chunks", file=sys.stderr)
        with reingest:
            second = ingest_files(components, files)
        components.close()

    first = IngestSummary(tuple(results))
    for failed in first.errors:
        print(f"error: {failed.error}", file=sys.stderr)
    if first.chunks_written != n_texts:
        print(f"warning: pipeline wrote {first.chunks_written} chunks, model encoded {n_texts}", file=sys.stderr)
    rate = first.chunks_written / pipeline.wall
    model_rate = n_texts / model.wall
    cpu_ratio = (first.chunks_written / pipeline.cpu) / (n_texts / model.cpu)
    rows = [
        ("documents", f"{first.documents}", f"{len(first.errors)} errors, {args.rounds} rounds"),
        ("chunks", f"{first.chunks_written}", "embedded by both sides"),
        ("pipeline, first ingest", f"{rate:.1f} chunks/s", f"{pipeline.wall:.1f} s wall, {pipeline.cpu:.1f} s CPU"),
        ("dense model alone", f"{model_rate:.1f} chunks/s", f"{model.wall:.1f} s wall, {model.cpu:.1f} s CPU"),
        ("pipeline / model (wall)", f"{rate / model_rate:.2f}x", "goal >= 0.9x"),
        ("pipeline / model (CPU)", f"{cpu_ratio:.2f}x", "steadier on a shared machine"),
        ("unchanged re-ingest", f"{reingest.wall:.2f} s", f"{second.chunks_written} chunks re-embedded"),
        ("first / re-ingest", f"{pipeline.wall / reingest.wall:.0f}x faster", "goal >= 50x"),
    ]
    print(f"ingest bench: {args.docs}")
    width = max(len(r[0]) for r in rows)
    for name, value, note in rows:
        print(f"  {name:<{width}}  {value:>17}  {note}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
