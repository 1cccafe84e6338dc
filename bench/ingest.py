"""Ingest throughput, measured side by side in one run.

Ingests a folder of documents into a fresh data dir and prints:
  - the whole pipeline's rate (load, chunk, diff, dense + sparse encode, scan, write) in chunks/s,
    next to the dense model's own encode rate on exactly the same chunk texts (goal: >= 0.9x);
  - an unchanged re-ingest's time as a ratio to the first ingest (goal: >= 50x faster).

Usage:
    python bench/ingest.py [DOCS_DIR] [--limit N]

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

from rag.components import build_components  # noqa: E402
from rag.config import Settings  # noqa: E402
from rag.ingest import collect_paths, document_chunks, ingest_files  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DOCS = REPO.parent / "shared" / "data" / "fastapi_docs" / "docs" / "en" / "docs"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("docs", nargs="?", type=Path, default=DEFAULT_DOCS, help="folder of documents to ingest")
    parser.add_argument("--limit", type=int, default=None, help="only the first N files (quick runs)")
    args = parser.parse_args(argv)
    if not args.docs.exists():
        parser.error(f"{args.docs} does not exist")

    files = [(name, path.read_bytes()) for name, path in collect_paths([args.docs])][: args.limit]
    with tempfile.TemporaryDirectory(prefix="ragscope-bench-") as tmp:
        components = build_components(Settings(data_dir=Path(tmp) / "data"))
        # Load both models before timing anything: loading is a one-off, not throughput.
        components.dense.encode_documents(["warm up"])
        components.sparse.encode_documents(["warm up"])

        start, cpu = time.perf_counter(), time.process_time()
        first = ingest_files(components, files)
        first_s, first_cpu = time.perf_counter() - start, time.process_time() - cpu
        if first.errors:
            for f in first.errors:
                print(f"error: {f.error}", file=sys.stderr)

        # The exact texts the pipeline embedded, read back from the store.
        texts = [r.chunk.embed_text for source in sorted(components.store.sources()) for r in document_chunks(components, source)]
        start, cpu = time.perf_counter(), time.process_time()
        components.dense.encode_documents(texts)
        model_s, model_cpu = time.perf_counter() - start, time.process_time() - cpu

        start = time.perf_counter()
        second = ingest_files(components, files)
        second_s = time.perf_counter() - start
        components.close()

    pipeline_rate = first.chunks_written / first_s
    model_rate = len(texts) / model_s
    rows = [
        ("documents", f"{first.documents}", f"{len(first.errors)} errors"),
        ("chunks written", f"{first.chunks_written}", f"{len(texts)} stored"),
        ("pipeline (first ingest)", f"{pipeline_rate:.1f} chunks/s", f"{first_s:.1f} s"),
        ("dense model alone, same texts", f"{model_rate:.1f} chunks/s", f"{model_s:.1f} s"),
        ("pipeline / model", f"{pipeline_rate / model_rate:.2f}x", "goal >= 0.9x"),
        ("same, by CPU time", f"{(first.chunks_written / first_cpu) / (len(texts) / model_cpu):.2f}x", "steadier on a shared machine"),
        ("unchanged re-ingest", f"{second_s:.2f} s", f"{second.chunks_written} re-embedded"),
        ("first / re-ingest", f"{first_s / second_s:.0f}x faster", "goal >= 50x"),
    ]
    print(f"ingest bench: {args.docs}")
    width = max(len(r[0]) for r in rows)
    for name, value, note in rows:
        print(f"  {name:<{width}}  {value:>18}  {note}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
