"""How the store's costs grow with the number of chunks: write, optimize, search per stage, memory, disk.

Writes N synthetic chunks through the product's store (`rag.components.build_components`: the embedded
engine under a data dir in /tmp, or a server when QDRANT_URL is set) with precomputed vectors of the
real sizes: a 384-d dense vector, a BM25-like sparse vector (~50 terms, Zipf-distributed term ids), and
`--sentences` 384-d sentence vectors per chunk (the MaxSim multivector), plus the payload ingest writes
(`chunk_payload` of a ~800-character chunk). Then optimizes and times, over `--queries` questions:
each stage's store query (dense, sparse, the engine-fused pair, sentence MaxSim over the fused
candidates, as the default reranker reads them) and the whole hybrid query through `retrieve()` with
the question's vectors precomputed (no encoder runs).

The vectors are random (dense: unit vectors, each query a noisy copy of a stored one, so it has near
neighbours); that is fine for timing, not for quality, and HNSW on random vectors is a harder case
than on real embeddings. Each size runs in its own process, so its peak RSS is its own.

    nice -n 15 python bench/scale.py                      # a quick run: 2,000 and 10,000 chunks
    nice -n 15 python bench/scale.py --sizes 100000 300000 --plot bench/scale.png
    QDRANT_URL=http://localhost:6333 python bench/scale.py --sizes 100000   # a server: same store writes

Results and the plot: bench/README.md, "scale".
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
import uuid
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

DIM = 384
VOCAB = 30_000  # distinct BM25 term ids drawn from (Zipf): a large documentation set's order
TERMS_PER_CHUNK = 50  # BM25 terms per ~800-character passage (../shared/notes/models.md)
TERMS_PER_QUERY = 6
BATCH = 256  # points per upsert: ingest's encode group (rag.ingest.embed.ENCODE_GROUP)
WORDS = "the a of to and in is for on with as by at from that this be are or an it not can when which".split()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[2000, 10_000], help="chunk counts, one run each")
    parser.add_argument("--sentences", type=int, default=6, help="sentence vectors per chunk (0: none stored)")
    parser.add_argument("--queries", type=int, default=100, help="questions timed per size")
    parser.add_argument("--root", type=Path, default=Path("/tmp/ragscope-scale"), help="data dirs (deleted after)")
    parser.add_argument("--keep", action="store_true", help="keep each size's data dir")
    parser.add_argument("--out", type=Path, help="append one JSON line per size here")
    parser.add_argument("--plot", type=Path, help="draw cost against size from --out's lines into this PNG")
    parser.add_argument("--plot-only", action="store_true", help="only draw --out's lines into --plot")
    parser.add_argument(
        "--skip-optimize", action="store_true",
        help="time every stage and retrieve() on the segments as written, and never optimize (a size whose "
        "optimize outlasts the run: the searches are then brute force over unindexed segments)",
    )  # fmt: skip
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # the child process for one size
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_size(args.one, args)), flush=True)
        return
    for n in [] if args.plot_only else args.sizes:
        child = [sys.executable, __file__, "--one", str(n), "--sentences", str(args.sentences)]
        child += ["--queries", str(args.queries), "--root", str(args.root)] + (["--keep"] if args.keep else [])
        child += ["--skip-optimize"] if args.skip_optimize else []
        done = subprocess.run(child, capture_output=True, text=True)
        sys.stderr.write(done.stderr[-3000:])
        if done.returncode != 0:
            sys.exit(f"size {n} failed (exit {done.returncode})")
        line = done.stdout.strip().splitlines()[-1]
        print(line, flush=True)
        if args.out:
            with args.out.open("a") as f:
                f.write(line + "\n")
    if args.plot and args.out:
        plot(args.out, args.plot)


def run_size(n: int, args: argparse.Namespace) -> dict:
    from rag.components import build_components
    from rag.settings.config import Settings
    from rag.store.base import CollectionModels

    data_dir = args.root / f"n{n}"
    shutil.rmtree(data_dir, ignore_errors=True)
    settings = replace(Settings.from_env(), data_dir=data_dir, collection=f"scale{n}")
    components = build_components(settings)
    store = components.store
    if settings.qdrant_url:
        store.drop_collection()
    store.ensure_collection(CollectionModels.from_settings(settings, DIM, args.sentences > 0))
    rng = np.random.default_rng(n)
    load = os.getloadavg()
    out: dict = {"chunks": n, "backend": settings.backend, "sentences_per_chunk": args.sentences, "load_start": load}
    # One turn on the shard for the whole run (rag/store/lease.py): no reopen between calls.
    with store.lock:
        t0 = time.perf_counter()
        for start in range(0, n, BATCH):
            store.upsert(synthetic_points(rng, start, min(BATCH, n - start), args.sentences))
            if start // BATCH % 100 == 0:
                rate = (start + BATCH) / (time.perf_counter() - t0)
                sys.stderr.write(f"{n}: {start + BATCH:,} written, {rate:,.0f}/s\n")
        store.flush()
        out["write_s"] = time.perf_counter() - t0
        out["write_per_s"] = n / out["write_s"]
        out["rss_after_write_mb"] = rss_mb()
        queries = [query_vectors(rng, store, n) for _ in range(args.queries)]
        # retrieve() gets questions of its own: on the stages' vectors it would read what they just cached.
        questions = [query_vectors(rng, store, n) for _ in range(args.queries)]
        if args.skip_optimize:
            out["before_optimize"] = time_stages(components, queries, questions)
            out["optimize_s"] = out["after_optimize"] = None
        else:
            out["before_optimize"] = time_stages(components, queries[: max(10, args.queries // 5)], [])
            t0 = time.perf_counter()
            store.optimize()
            out["optimize_s"] = time.perf_counter() - t0
            out["rss_after_optimize_mb"] = rss_mb()
            out["after_optimize"] = time_stages(components, queries, questions)
        store.flush()
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out["rss_end_mb"] = rss_mb()
    # Most of the RSS is the engine's memory-mapped segment files (page cache the kernel can drop), not heap.
    out["rss_anon_mb"], out["rss_file_mb"] = rss_mb("RssAnon:"), rss_mb("RssFile:")
    qdrant_dir = data_dir / "qdrant"
    out["disk_mb"] = None if settings.qdrant_url else du_mb(qdrant_dir)
    out["load_end"] = os.getloadavg()
    components.close()
    if not args.keep:
        shutil.rmtree(data_dir, ignore_errors=True)
    return out


def synthetic_points(rng: np.random.Generator, start: int, count: int, sentences: int) -> list:
    """`count` chunks as ingest would write them, with random vectors of the real shapes."""
    from rag.store.base import PointData, chunk_payload
    from rag.types import Chunk, SparseVector

    dense = unit(rng.standard_normal((count, DIM), dtype=np.float32))
    rows = unit(rng.standard_normal((count, sentences, DIM), dtype=np.float32)) if sentences else None
    points = []
    for k in range(count):
        i = start + k
        source = f"docs/page-{i // 20:06d}.md"  # 20 chunks a page
        text = " ".join(rng.choice(WORDS, 140)) + f" item{i}"
        chunk = Chunk(chunk_id(i), source, ("Guide", f"Section {i % 20}"), 0, len(text), text, i % 20)
        meta = {"doc_sha": f"{i // 20:064x}", "doc_size": 16_000, "doc_kind": "markdown", "tags": ["synthetic"]}
        payload = {**chunk_payload(chunk, meta), "flags": [], "status": "active"}
        vec = sparse_vector(rng, TERMS_PER_CHUNK, SparseVector)
        points.append(PointData(chunk.id, dense[k], vec, payload, rows[k] if rows is not None else None))
    return points


def sparse_vector(rng: np.random.Generator, terms: int, kind: type) -> object:
    """`terms` distinct Zipf-drawn term ids with BM25-like weights (common terms are in most chunks)."""
    ids = np.unique(np.minimum(rng.zipf(1.3, terms * 2), VOCAB))[:terms]
    weights = rng.uniform(0.8, 2.2, len(ids))
    return kind(tuple(int(x) for x in ids), tuple(float(x) for x in weights))


def query_vectors(rng: np.random.Generator, store: object, n: int) -> object:
    """A question's precomputed vectors: a stored chunk's dense vector plus noise, and a short sparse query."""
    from rag.retrieval.result import QueryVectors
    from rag.types import SparseVector

    target = store.records(_ids_filter([chunk_id(int(rng.integers(n)))]), with_vectors=True)[0]
    dense = unit(np.asarray(target.dense, dtype=np.float32) + 0.05 * rng.standard_normal(DIM, dtype=np.float32))
    sparse = sparse_vector(rng, TERMS_PER_QUERY, SparseVector)
    return QueryVectors(dense, sparse, dense, sparse)


def time_stages(components: object, queries: list, questions: list) -> dict:
    """p50 and p95 in ms of each stage's store query over `queries`, and of the whole retrieve() over
    `questions` (when there are any)."""
    from rag.retrieval.retrieve import retrieve
    from rag.store.base import FusedQuery

    store, config = components.store, components.settings.retrieval
    n = config.candidates
    times: dict[str, list[float]] = {"dense": [], "sparse": [], "fused": [], "sentences": []}
    for q in queries:
        times["dense"].append(_ms(lambda: store.search_dense(q.dense, n)))
        times["sparse"].append(_ms(lambda: store.search_sparse(q.sparse, n)))
        fused = FusedQuery(q.dense, q.sparse, n, n, config.fusion, config.rrf_k)
        hits: list = []
        times["fused"].append(_ms(lambda: hits.extend(store.search_fused(fused))))
        ids = _ids_filter([h.id for h in hits])
        times["sentences"].append(_ms(lambda: store.search_sentences(q.dense, len(hits), ids)))
    if questions:
        times["retrieve"] = [
            _ms(lambda: retrieve(components, "synthetic question", config, encoded=q)) for q in questions
        ]
    return {k: {"p50": float(np.percentile(v, 50)), "p95": float(np.percentile(v, 95))} for k, v in times.items()}


def plot(lines: Path, png: Path) -> None:
    """Write throughput, optimize time, search p50 per stage, RSS and disk against the chunk count."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = sorted((json.loads(x) for x in lines.read_text().splitlines() if x.strip()), key=lambda r: r["chunks"])
    fig, axes = plt.subplots(1, 4, figsize=(19, 4.4))
    # One series per shape: with sentence vectors (what ingest stores by default) and without them.
    # A size run with --skip-optimize has search times on unindexed segments only: drawn apart (x markers).
    for sentences in sorted({r["sentences_per_chunk"] for r in rows}, reverse=True):
        group = [r for r in rows if r["sentences_per_chunk"] == sentences and r["optimize_s"] is not None]
        unindexed = [r for r in rows if r["sentences_per_chunk"] == sentences and r["optimize_s"] is None]
        sizes = [r["chunks"] for r in group]
        tag = f"{sentences} sentence vectors" if sentences else "no sentence vectors"
        for stage in ("dense", "sparse", "fused", "retrieve"):
            marks = [(r["chunks"], r["before_optimize"][stage]["p50"]) for r in unindexed]
            if marks:
                axes[2].plot(*zip(*marks), "x", markersize=9, label=f"{stage} p50 before optimize, {tag}")
        for r in unindexed:
            axes[0].plot([r["chunks"]], [r["write_per_s"]], "x", markersize=9, label=f"{tag} (not optimized)")
            axes[3].plot([r["chunks"]], [r["peak_rss_mb"]], "x", markersize=9, label=f"peak RSS, {tag} (not optimized)")
        style = "o-" if sentences else "s--"
        axes[0].plot(sizes, [r["write_per_s"] for r in group], style, label=tag)
        axes[1].plot(sizes, [r["optimize_s"] for r in group], style, label=tag)
        for stage in ("dense", "sparse", "fused", "sentences", "retrieve"):
            if sentences or stage != "sentences":
                p50 = [r["after_optimize"][stage]["p50"] for r in group]
                axes[2].plot(sizes, p50, style, label=f"{stage} p50, {tag}")
        axes[3].plot(sizes, [r["peak_rss_mb"] for r in group], style, label=f"peak RSS, {tag}")
        heap = [(r["chunks"], r["rss_anon_mb"]) for r in group if "rss_anon_mb" in r]
        axes[3].plot([n for n, _ in heap], [m for _, m in heap], style, label=f"heap RSS at the end, {tag}")
        axes[3].plot(sizes, [r["disk_mb"] or 0 for r in group], style, label=f"disk, {tag}")
    axes[0].set_title("write throughput (points/s)")
    axes[1].set_title("optimize (s)")
    axes[2].set_title("search p50 (ms): after optimize; x: before it")
    axes[2].set_yscale("log")
    axes[3].set_title("memory (RSS: heap + mapped segment files) and disk (MB)")
    for ax in axes:
        ax.legend(fontsize=6)
    for ax in axes:
        ax.set_xscale("log")
        ax.set_xlabel("chunks")
        ax.grid(alpha=0.3)
    fig.suptitle("embedded engine (qdrant-edge), synthetic chunks, 2 shared cores")
    fig.tight_layout()
    fig.savefig(png, dpi=90)


def chunk_id(i: int) -> str:
    return str(uuid.UUID(int=i + 1))


def _ids_filter(ids: list[str]) -> object:
    from rag.types import ChunkFilter

    return ChunkFilter(ids=tuple(ids))


def unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def rss_mb(field: str = "VmRSS:") -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field):
            return int(line.split()[1]) / 1024
    return float("nan")


def du_mb(path: Path) -> float:
    return sum(p.stat().st_blocks * 512 for p in path.rglob("*") if p.is_file()) / 2**20  # allocated, not apparent


def _ms(call: object) -> float:
    t0 = time.perf_counter()
    call()
    return (time.perf_counter() - t0) * 1000


if __name__ == "__main__":
    main()
