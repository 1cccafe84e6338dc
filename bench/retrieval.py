"""Retrieval benchmark: quality of every retrieval mode on SciFact train, and retrieve() latency, in one run.

Quality: SciFact (BEIR) train queries against its 5,183 abstracts, ingested through the product's BEIR
import (one abstract = one chunk, title as heading). Every mode runs the real `retrieve()`; for each
query, all modes run back to back (so caches and machine load hit them alike). Printed per mode:
nDCG@10, recall@10, MRR@10 (rag.eval.metrics) and the paired-bootstrap 95% interval of the nDCG@10
gain over the plain hybrid (RRF k=60), so a gain that is noise shows as an interval around 0.

Latency: stores of 10k and 200k chunks, built from the ingested SciFact vectors (copies beyond the
corpus get small Gaussian noise on the dense vector, then are re-normalised; payloads are the real
texts, so rerankers do real work). The same points go into the embedded engine (qdrant-edge,
`optimize()`d after loading, as the app's maintenance action does) and into qdrant-client's local
mode (':memory:'). Printed: p50/p95 of the hybrid query alone (one prefetch + fusion query, vectors
precomputed) and of the whole `retrieve()` (encode + 3 queries + rerank, sentence cache cleared
before each call), and the client/edge ratio. The 200k client side is slow (~9 s per hybrid query),
so it runs only --client-queries queries.

Usage:
    python bench/retrieval.py [--data-dir /tmp/ragscope-bench] [--limit N] [--sizes 10000,200000]
                              [--latency-queries 50] [--client-queries 3] [--skip-quality] [--skip-latency]
                              [--cross-encoder PATH]

--data-dir keeps the ingested collection and the optimised edge stores between runs (ingest takes
tens of minutes on 2 cores; a 200k optimize() several minutes); without it everything goes in a
temporary folder. --limit N uses the first N queries and a corpus slice (quick runs).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Callable, Sequence

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np  # noqa: E402
from qdrant_client import QdrantClient  # noqa: E402
from tqdm import tqdm  # noqa: E402

from rag.settings.labels import config_label  # noqa: E402
from rag.components import Components, build_components  # noqa: E402
from rag.settings.config import RetrievalConfig, Settings  # noqa: E402
from rag.eval.beir import BeirData, collection_name, ingest_beir, load_beir  # noqa: E402
from rag.eval.bootstrap import paired_interval  # noqa: E402
from rag.eval.metrics import evaluate  # noqa: E402
from rag.retrieval.rerank import clear_sentence_cache  # noqa: E402
from rag.retrieval.fusion import QDRANT_FUSIONS  # noqa: E402
from rag.retrieval.retrieve import retrieve  # noqa: E402
from rag.store.base import CollectionModels, FusedQuery, PointData, Store  # noqa: E402
from rag.store.client import ClientStore  # noqa: E402
from rag.store.edge import EdgeStore  # noqa: E402
from rag.types import StoredChunk  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
SCIFACT = REPO.parent / "shared" / "data" / "scifact"
BASELINE = "hybrid rrf k=60"
DEFAULT = "configured default"
METRICS = ("ndcg@10", "recall@10", "mrr@10")


def scifact(limit: int | None) -> BeirData:
    """SciFact train; with `limit`, its first N judged queries over their relevant docs plus 10N others."""
    data = load_beir(SCIFACT, "train")
    ids = {d.id for d in data.corpus}
    judged = [q for q in data.queries if any(g > 0 and d in ids for d, g in data.qrels.get(q, {}).items())]
    if limit:
        judged = judged[:limit]
    queries = {q: data.queries[q] for q in judged}
    qrels = {q: data.qrels[q] for q in judged}
    corpus = data.corpus
    if limit:
        keep = {d for rel in qrels.values() for d in rel} | {d.id for d in corpus[: limit * 10]}
        corpus = tuple(d for d in corpus if d.id in keep)
    return dataclasses.replace(data, corpus=corpus, queries=queries, qrels=qrels)


def open_collection(data: BeirData, data_dir: Path, limit: int | None) -> Components:
    """The corpus ingested through the product's BEIR import (one entry = one chunk); reused when complete."""
    name = collection_name(SCIFACT) + (f"-first{limit}" if limit else "")
    components = build_components(Settings(data_dir=data_dir, collection=name))
    if components.store.count() != len(data.corpus):
        with tqdm(total=len(data.corpus), desc=f"ingest {name}", file=sys.stderr, unit="doc") as bar:
            summary = ingest_beir(components, data, progress=lambda f, _m: bar.update(round(f * len(data.corpus)) - bar.n))
        if summary.errors:
            raise SystemExit(f"ingest failed: {summary.errors[0].error}")
    return components


def modes(candidates: int, cross_encoder: str | None) -> dict[str, RetrievalConfig]:
    """Every mode measured: single lists, each fusion, and each reranker over the union of both lists."""
    base = RetrievalConfig(candidates=candidates, final_k=2 * candidates, reranker="none")
    out = {
        "dense only": dataclasses.replace(base, fusion="dense"),
        "sparse only (BM25)": dataclasses.replace(base, fusion="sparse"),
        BASELINE: dataclasses.replace(base, fusion="rrf", rrf_k=60),
        "hybrid dbsf": dataclasses.replace(base, fusion="dbsf"),
        "hybrid weighted_rrf w=0.5": dataclasses.replace(base, fusion="weighted_rrf", dense_weight=0.5),
        "hybrid weighted_rrf w=0.7": dataclasses.replace(base, fusion="weighted_rrf", dense_weight=0.7),
        "union (RRF order)": dataclasses.replace(base, fusion="union"),
    }
    rerankers = ["dense-cosine", "score-fusion:0.3", "score-fusion", "score-fusion:0.7", "sentence-maxsim:1", "sentence-maxsim", "sentence-maxsim:0.3", "maxsim-fusion:0.4", "maxsim-fusion", "maxsim-fusion:0.6"]
    if cross_encoder:
        rerankers.append(f"cross-encoder:{cross_encoder}")
    for name in rerankers:
        out[f"union + {name}"] = dataclasses.replace(base, fusion="union", reranker=name)
    for name in ("score-fusion", "sentence-maxsim", "maxsim-fusion"):
        out[f"dbsf + {name}"] = dataclasses.replace(base, fusion="dbsf", reranker=name)
    wide = dataclasses.replace(base, candidates=50, final_k=100)
    for name in ("score-fusion", "maxsim-fusion:0.6"):
        out[f"dbsf 50 candidates + {name}"] = dataclasses.replace(wide, fusion="dbsf", reranker=name)
    default = RetrievalConfig()
    out[f"{DEFAULT} ({config_label(default)})"] = dataclasses.replace(default, final_k=2 * default.candidates)
    return out


def doc_run(result_final: Sequence, k: int = 10) -> dict[str, float]:
    """Chunk ranking -> document ranking (a document counts once, at its best chunk), as BEIR scores it."""
    run: dict[str, float] = {}
    for c in result_final:
        doc = c.chunk.chunk.source.removesuffix(".md")
        if doc not in run:
            run[doc] = 1.0 / (len(run) + 1)
        if len(run) == k:
            break
    return run


class QueryMemo:
    """An encoder whose `encode_query` remembers the last question: every mode sees the same vectors,
    and the quality loop does not pay for encoding the same question once per mode."""

    def __init__(self, encoder: object) -> None:
        self._encoder = encoder
        self._last: tuple[str, object] | None = None

    def encode_query(self, text: str) -> object:
        if self._last is None or self._last[0] != text:
            self._last = (text, self._encoder.encode_query(text))
        return self._last[1]

    def __getattr__(self, name: str) -> object:
        return getattr(self._encoder, name)


def quality(components: Components, data: BeirData, configs: dict[str, RetrievalConfig]) -> dict[str, dict]:
    """Run every mode on every query (modes interleaved per query); return metrics and per-query nDCG."""
    comps = dataclasses.replace(components, dense=QueryMemo(components.dense), sparse=QueryMemo(components.sparse))
    runs: dict[str, dict[str, dict[str, float]]] = {m: {} for m in configs}
    for qid, text in tqdm(data.queries.items(), desc="quality", file=sys.stderr, unit="query"):
        for mode, config in configs.items():
            runs[mode][qid] = doc_run(retrieve(comps, text, config).final)
    out = {}
    for mode, run in runs.items():
        results = evaluate(run, data.qrels, ks=(10,))
        out[mode] = {
            "ndcg@10": results["ndcg@10"].mean,
            "recall@10": results["recall@10"].mean,
            "mrr@10": results["mrr@10"].mean,
            "per_query": dict(results["ndcg@10"].per_query),
        }
    return out


def print_quality(scores: dict[str, dict], n_queries: int, n_docs: int) -> str:
    default = next(m for m in scores if m.startswith(DEFAULT))

    def gain(mode: str, over: str) -> str:
        if mode == over:
            return "—"
        return paired_interval(scores[over]["per_query"], scores[mode]["per_query"]).words()

    lines = [
        f"SciFact train: {n_queries} queries, {n_docs} documents (one chunk each); 30 candidates per stage unless named; every candidate reranked",
        f"| mode | nDCG@10 | recall@10 | MRR@10 | nDCG@10 gain vs {BASELINE} (95% CI) | gain vs {DEFAULT} (95% CI) |",
        "|---|---|---|---|---|---|",
    ]
    for mode, s in scores.items():
        lines.append(f"| {mode} | {s['ndcg@10']:.4f} | {s['recall@10']:.4f} | {s['mrr@10']:.4f} | {gain(mode, BASELINE)} | {gain(mode, default)} |")
    best = max(scores, key=lambda m: scores[m]["ndcg@10"])
    lines.append(f"best nDCG@10: {best} ({scores[best]['ndcg@10']:.4f})")
    return "\n".join(lines)


# ---------------------------------------------------------------- latency


def synthetic_points(base: list[StoredChunk], size: int, seed: int = 0) -> Callable[[int, int], list[PointData]]:
    """Point batches [start, end) of a `size`-point store made from `base`: copies get dense noise."""
    rng = np.random.default_rng(seed)
    dense = np.array([b.dense for b in base], dtype=np.float32)

    def batch(start: int, end: int) -> list[PointData]:
        points = []
        for i in range(start, end):
            src = base[i % len(base)]
            vec = dense[i % len(base)]
            if i >= len(base):
                vec = vec + rng.normal(0, 0.05, vec.shape).astype(np.float32)
                vec /= np.linalg.norm(vec)
            payload = {**src.payload, "source": f"copy{i // len(base)}/{src.chunk.source}", "status": "active"}
            points.append(PointData(str(uuid.UUID(int=i + 1)), vec.tolist(), src.sparse, payload))
        return points

    return batch


def fill(store: Store, models: CollectionModels, batch: Callable[[int, int], list[PointData]], size: int, label: str) -> float:
    """Load `size` points; returns seconds."""
    store.ensure_collection(models)
    t0 = time.perf_counter()
    step = 2000
    for start in tqdm(range(0, size, step), desc=f"load {label}", file=sys.stderr, unit="batch"):
        store.upsert(batch(start, min(size, start + step)))
    store.flush()
    return time.perf_counter() - t0


def edge_store(root: Path, size: int, models: CollectionModels, batch: Callable, keep: bool) -> tuple[EdgeStore, str]:
    """The optimised edge store for `size` points, reused from `root` when a previous run built it."""
    store = EdgeStore(root, f"synthetic{size}")
    done = root / f"synthetic{size}.built.json"
    if keep and done.exists() and store.count() == size:
        built = json.loads(done.read_text())
        return store, f"reused; built by an earlier run: loaded {built['load_s']:.0f} s, optimize() {built['optimize_s']:.0f} s"
    load = fill(store, models, batch, size, f"edge {size}")
    t0 = time.perf_counter()
    store.optimize()
    opt = time.perf_counter() - t0
    done.write_text(json.dumps({"size": size, "load_s": load, "optimize_s": opt}))
    return store, f"loaded {load:.0f} s, optimize() {opt:.0f} s"


def percentiles(ms: list[float]) -> tuple[float, float]:
    if len(ms) == 1:
        return ms[0], ms[0]
    q = statistics.quantiles(ms, n=100, method="inclusive")
    return statistics.median(ms), q[94]


def time_retrieve(comps: Components, questions: list[str], config: RetrievalConfig) -> dict[str, tuple[float, float]]:
    """retrieve() per question with a cold sentence cache, then again warm; p50/p95 of each, and of the rerank part."""
    cold, warm, rerank = [], [], []
    for q in questions:
        clear_sentence_cache()
        t0 = time.perf_counter()
        result = retrieve(comps, q, config)
        cold.append(1000 * (time.perf_counter() - t0))
        rerank.append(result.timings_ms["rerank"])
        t0 = time.perf_counter()
        retrieve(comps, q, config)
        warm.append(1000 * (time.perf_counter() - t0))
    return {"cold": percentiles(cold), "warm": percentiles(warm), "rerank": percentiles(rerank)}


def time_hybrid(store: Store, vectors: list, config: RetrievalConfig) -> tuple[float, float]:
    """p50/p95 of the hybrid query alone: one dense + sparse prefetch and Qdrant's fusion, vectors precomputed."""
    fusion = config.fusion if config.fusion in QDRANT_FUSIONS else "rrf"
    times = []
    for d, s in vectors:
        t0 = time.perf_counter()
        store.search_fused(FusedQuery(d, s, config.candidates, config.candidates, fusion, config.rrf_k, (config.dense_weight, 1 - config.dense_weight)))
        times.append(1000 * (time.perf_counter() - t0))
    return percentiles(times)


def latency(components: Components, questions: list[str], sizes: Sequence[int], n_queries: int, client_queries: int, root: Path, keep: bool) -> str:
    # The synthetic points carry no sentence vectors (at 200k chunks they would take gigabytes), so the
    # stores are compared on the default fusion with score-fusion rescoring, which needs none; the
    # default maxsim-fusion then reads one more MaxSim query (its cost: bench/quality.py's +p50 column).
    default = dataclasses.replace(components.settings.retrieval, reranker="score-fusion")
    variants = {
        f"default fusion + score-fusion: {config_label(default)}": default,
        "the same without reranker": dataclasses.replace(default, reranker="none"),
        "union + maxsim-fusion:0.6, 30 candidates, no stored sentence vectors (per-question encoding)": dataclasses.replace(default, fusion="union", candidates=30, reranker="maxsim-fusion:0.6"),
    }
    base = components.store.records(with_vectors=True)
    models = components.store.collection_models()
    vectors = [(components.dense.encode_query(q), components.sparse.encode_query(q)) for q in questions[:n_queries]]
    stores = [
        f"Hybrid query alone ({default.fusion if default.fusion in QDRANT_FUSIONS else 'rrf'}, {default.candidates} per prefetch) and "
        f"retrieve() with the default config ({config_label(default)}), sentence cache cleared before each call",
        "| chunks | store | queries | hybrid p50 ms | hybrid p95 ms | retrieve() p50 ms | retrieve() p95 ms | build |",
        "|---|---|---|---|---|---|---|---|",
    ]
    per_config = [
        "retrieve() on qdrant-edge per config (the default over all latency questions, the others over 15): cold = sentence cache cleared first (a new question), warm = the same question again",
        "| chunks | config | cold p50 ms | cold p95 ms | warm p50 ms | rerank part, cold p50 ms |",
        "|---|---|---|---|---|---|",
    ]
    ratios = []
    for size in sizes:
        batch = synthetic_points(base, size)
        edge, how = edge_store(root, size, models, batch, keep)
        edge_comps = dataclasses.replace(components, store=edge)
        # Warm-up: a reopened shard pages its vectors in on first use, and first calls load code paths;
        # neither is per-query latency. One untimed pass over the same queries, then the timed one.
        retrieve(edge_comps, questions[0], default)
        time_hybrid(edge, vectors, default)
        edge_hybrid = time_hybrid(edge, vectors, default)
        # The synthetic points carry no sentence vectors, so maxsim-fusion here takes its fallback path: a cold
        # question encodes its candidates' sentences (seconds), so the variants get fewer questions than the default.
        edge_timed = {name: time_retrieve(edge_comps, questions[: n_queries if i == 0 else min(n_queries, 15)], config) for i, (name, config) in enumerate(variants.items())}
        edge.close()
        client = ClientStore(QdrantClient(":memory:"), "synthetic")
        load = fill(client, models, batch, size, f"client {size}")
        nq = n_queries if size <= 20_000 else client_queries
        client_comps = dataclasses.replace(components, store=client)
        time_hybrid(client, vectors[:1], default)  # in memory: nothing to page in; one call loads code paths
        client_hybrid = time_hybrid(client, vectors[:nq], default)
        client_timed = time_retrieve(client_comps, questions[:nq], default)
        client.close()
        first = next(iter(variants))
        for name, hybrid, timed, n, built in (
            ("qdrant-edge (optimized)", edge_hybrid, edge_timed[first], n_queries, how),
            ("qdrant-client local :memory:", client_hybrid, client_timed, nq, f"loaded {load:.0f} s"),
        ):
            stores.append(f"| {size:,} | {name} | {n} | {hybrid[0]:.1f} | {hybrid[1]:.1f} | {timed['cold'][0]:.0f} | {timed['cold'][1]:.0f} | {built} |")
        for name, timed in edge_timed.items():
            per_config.append(f"| {size:,} | {name} | {timed['cold'][0]:.0f} | {timed['cold'][1]:.0f} | {timed['warm'][0]:.0f} | {timed['rerank'][0]:.0f} |")
        ratios.append(
            f"{size:,} chunks: hybrid p50 edge {edge_hybrid[0]:.1f} ms vs client {client_hybrid[0]:.0f} ms (client / edge = {client_hybrid[0] / edge_hybrid[0]:.0f}x); "
            f"retrieve() p50 edge {edge_timed[first]['cold'][0]:.0f} ms vs client {client_timed['cold'][0]:.0f} ms ({client_timed['cold'][0] / edge_timed[first]['cold'][0]:.1f}x)"
            + (f"; goal hybrid p50 <= 10 ms at 200k: {'met' if edge_hybrid[0] <= 10 else 'NOT met'}" if size >= 200_000 else "")
        )
    return "\n".join([*stores, *ratios, "", *per_config])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, default=None, help="keep the ingested collection and built stores here between runs")
    parser.add_argument("--limit", type=int, default=None, help="first N judged queries and a corpus slice (quick runs)")
    parser.add_argument("--candidates", type=int, default=30, help="candidates per stage (quality part)")
    parser.add_argument("--sizes", default="10000,200000", help="store sizes for the latency part")
    parser.add_argument("--latency-queries", type=int, default=50)
    parser.add_argument("--client-queries", type=int, default=3, help="queries on the 200k qdrant-client store (~9 s each)")
    parser.add_argument("--cross-encoder", default=None, help="also measure a CrossEncoder (local folder or hub name)")
    parser.add_argument("--skip-quality", action="store_true")
    parser.add_argument("--skip-latency", action="store_true")
    args = parser.parse_args(argv)

    tmp = None if args.data_dir else tempfile.TemporaryDirectory(prefix="ragscope-bench-")
    root = args.data_dir or Path(tmp.name)
    data = scifact(args.limit)
    components = open_collection(data, root, args.limit)
    questions = list(data.queries.values())
    random.Random(0).shuffle(questions)
    try:
        if not args.skip_quality:
            scores = quality(components, data, modes(args.candidates, args.cross_encoder))
            print(print_quality(scores, len(data.queries), len(data.corpus)), flush=True)
        if not args.skip_latency:
            sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
            print(latency(components, questions, sizes, args.latency_queries, args.client_queries, root / "synthetic", keep=args.data_dir is not None), flush=True)
    finally:
        components.close()
        if tmp:
            tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
