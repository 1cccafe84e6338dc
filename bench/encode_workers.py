"""Ingest's dense encoding in one process against a pool of worker processes, on the same real chunks.

Times `rag.ingest.embed.encode_texts` (what ingest runs for chunk and sentence vectors) over the same
texts in every arrangement, in alternating rounds so that a change of machine load hits them all:

- one process, ONNX Runtime's own threads (one per core: what RAGSCOPE_ENCODE_WORKERS=1 runs);
- one process, one thread (what one pool worker gets on two cores);
- N worker processes (RAGSCOPE_ENCODE_WORKERS=N), each with cores // N threads.

A pool's start (spawning its workers, each loading the model) is timed apart: the app and the CLI keep a
pool for the process's life. Prints each arrangement's median seconds, chunks/s and its ratio to the
first, the largest 1 - cosine between its vectors and the first's, and the load average.

    nice -n 10 python bench/encode_workers.py --chunks 512 --workers 2 3
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DEFAULT_CORPUS = ROOT.parent / "shared" / "data" / "scifact" / "corpus.jsonl"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="BEIR corpus.jsonl (title + text)")
    parser.add_argument("--chunks", type=int, default=256, help="passages encoded per timing")
    parser.add_argument("--workers", type=int, nargs="+", default=[2], help="pool sizes to time")
    parser.add_argument("--rounds", type=int, default=2, help="alternating rounds (the median is reported)")
    parser.add_argument("--runtime", default="onnx", help="dense runtime: onnx or onnx-int8")
    parser.add_argument("--data-dir", type=Path, default=Path("/tmp/ragscope-encode-workers"), help="its models/")
    args = parser.parse_args()

    from rag.components import dense_spec
    from rag.encoders.dense_onnx import Placement
    from rag.encoders.pool import cores, encode_pool
    from rag.ingest.embed import encode_texts
    from rag.settings.config import Settings

    texts = passages(args.corpus, args.chunks)
    settings = Settings(data_dir=args.data_dir)  # its models folder keeps the ONNX export between runs
    spec = dense_spec(settings, args.runtime)
    one_thread = dataclasses.replace(spec, placement=Placement(spec.placement.device, 1))
    here, single = spec.build(), one_thread.build()
    here.encode_documents(["warm up"])
    single.encode_documents(["warm up"])
    arrangements = {f"1 process, {cores()} threads": lambda: encode_texts(here, texts, None)}
    arrangements["1 process, 1 thread"] = lambda: encode_texts(single, texts, None)
    starts = {}
    for n in args.workers:
        t0 = time.perf_counter()
        pool = encode_pool(spec, n)
        list(pool.encode([["warm up"]] * n, 64))  # every worker has loaded its model
        starts[n] = time.perf_counter() - t0
        arrangements[f"{n} workers x {pool.spec.placement.threads} thread(s)"] = lambda n=n: encode_texts(
            here, texts, None, spec, n
        )
    times: dict[str, list[float]] = {name: [] for name in arrangements}
    vectors: dict[str, np.ndarray] = {}
    load_start = os.getloadavg()
    for _ in range(args.rounds):
        for name, run in arrangements.items():
            t0 = time.perf_counter()
            vectors[name] = run()
            times[name].append(time.perf_counter() - t0)
    load_end = os.getloadavg()
    first = next(iter(arrangements))
    rows = []
    for name in arrangements:
        median = statistics.median(times[name])
        cos = np.sum(vectors[name] * vectors[first], axis=1)
        rows.append(
            {
                "arrangement": name,
                "median_s": round(median, 2),
                "chunks_per_s": round(len(texts) / median, 1),
                "speedup_vs_first": round(statistics.median(times[first]) / median, 2),
                "max_1_minus_cos": float(1 - cos.min()),
            }
        )
    result = {"chunks": len(texts), "runtime": args.runtime, "cores": cores(), "rounds": args.rounds}
    result |= {"pool_start_s": {n: round(s, 1) for n, s in starts.items()}, "load": [load_start, load_end]}
    print(json.dumps(result | {"rows": rows}, indent=1))


def passages(corpus: Path, n: int) -> list[str]:
    """The first `n` passages of a BEIR corpus, title and text as ingest embeds them."""
    out = []
    with corpus.open() as f:
        for line in f:
            doc = json.loads(line)
            out.append(f"{doc.get('title', '')}\n{doc['text']}".strip())
            if len(out) == n:
                break
    return out


if __name__ == "__main__":
    main()
