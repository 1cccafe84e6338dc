"""Chunk strategies side by side on the FastAPI docs question set: the default ("heading") against others.

Each strategy's chunks of ../shared/data/fastapi_docs (docs/en/docs) go into their own collection of one
data dir (one ONNX export for all): chunked by the product's chunker with the collection's own dense model
(which the "semantic" strategy cuts with), ingested as the Documents page ingests a preview, and evaluated
through the product's Eval path (`run_eval`) on tests/data/fastapi_qa.jsonl. Retrieval is the default
but for the reranker, "none" (the fused order is final): the default maxsim-fusion reads sentence vectors,
whose encoding would triple each collection's ingest here and is the same for every strategy. Printed per
stage (dense, sparse, fused): MRR@10 and recall@5, and each strategy's gain over "heading" with its
paired-bootstrap 95% interval (questions resampled with replacement, the same resample for both; bench/quality.py).
Gold is sections (source + heading path), so it resolves under any strategy: none crosses a heading.

Usage:
    python bench/chunkers.py [--strategies heading,semantic,code] [--size 800] [--cache DIR] [--resamples 2000]
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np  # noqa: E402
from cjk import fastapi_set  # noqa: E402
from quality import CachedDense, gain_table  # noqa: E402

from rag.components import build_components  # noqa: E402
from rag.eval.qsets import QuestionSet  # noqa: E402
from rag.eval.runner import run_eval  # noqa: E402
from rag.ingest.chunker import chunk_document  # noqa: E402
from rag.ingest.loaders.document import load_document  # noqa: E402
from rag.ingest.pipeline import ingest_files  # noqa: E402
from rag.ingest.results import Prepared  # noqa: E402
from rag.settings.config import ChunkConfig, RetrievalConfig, Settings  # noqa: E402

STAGES = ("dense", "sparse", "fused")
METRICS = ("mrr@10", "recall@5")
BASE = "heading"


def scores(
    data_dir: Path,
    strategy: str,
    size: int,
    files: list[tuple[str, bytes]],
    qset: QuestionSet,
    cache: dict[str, np.ndarray],
) -> tuple[dict[str, dict], str]:
    """qid -> stage -> metric for `strategy`'s collection of `files`, and a note of its chunks and chunking time.

    `cache` holds every text the run has encoded (chunks, semantic windows): most "code" chunks are
    "heading" chunks too, so each distinct text is encoded once (bench/quality.py's CachedDense)."""
    config = ChunkConfig(strategy=strategy, size=size)
    settings = Settings(data_dir=data_dir, collection=f"chunks-{strategy}-{size}", chunk=config, sentence_vectors=False)
    components = build_components(settings)
    components = dataclasses.replace(components, dense=CachedDense(components.dense, cache))
    try:
        started = time.perf_counter()
        docs = [load_document(name, data) for name, data in files]
        items = [Prepared(d, tuple(chunk_document(d, config, components.dense))) for d in docs]
        chunking = time.perf_counter() - started
        summary = ingest_files(components, items)
        if summary.errors:
            print(f"{len(summary.errors)} files failed: {summary.errors[0].error}", file=sys.stderr)
        run = run_eval(components, qset, RetrievalConfig(reranker="none"), save=False)
        for r in components.store.records(with_vectors=True):  # an earlier run's vectors count as encoded too
            cache.setdefault(r.chunk.embed_text, np.asarray(r.dense, dtype=np.float32))
    finally:
        components.close()
    chunks = [c for item in items for c in item.chunks]
    mean = np.mean([len(c.text) for c in chunks])
    note = f"{len(chunks):,} chunks, mean {mean:.0f} chars, chunked in {chunking:.0f} s"
    return {q.id: q.scores for q in run.questions if q.scored}, note


def table(by_strategy: dict[str, dict[str, dict]], resamples: int) -> str:
    lines = gain_table("strategy", by_strategy, BASE, STAGES, METRICS, resamples)
    return f"FastAPI docs: {len(by_strategy[BASE])} answerable questions, gains vs {BASE}\n" + "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--strategies", default="heading,semantic,code", help=f"comma-separated; {BASE} is always run")
    parser.add_argument("--size", type=int, default=ChunkConfig().size)
    parser.add_argument("--cache", type=Path, default=None, help="data dir keeping the collections between runs")
    parser.add_argument("--resamples", type=int, default=2000)
    args = parser.parse_args(argv)
    files, qset = fastapi_set()
    root = args.cache or Path(tempfile.mkdtemp(prefix="chunkers-bench-"))
    strategies = [BASE] + [s for s in args.strategies.split(",") if s != BASE]
    by_strategy, cache = {}, {}
    for strategy in strategies:
        by_strategy[strategy], note = scores(root, strategy, args.size, files, qset, cache)
        print(f"{strategy}: {note}", flush=True)
    print(table(by_strategy, args.resamples))
    return 0


if __name__ == "__main__":
    sys.exit(main())
