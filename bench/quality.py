"""Retrieval quality benchmark: every technique of issue 7 against the plain hybrid, in one run.

Each configuration runs the product's Eval path (`rag.eval.runner.run_eval`, which calls `retrieve()`
per question, as the Eval tab does) and is scored on the ranking of its last stage:

- SciFact (BEIR) train: nDCG@10, recall@10, MRR@10 (rag.eval.metrics), and the paired-bootstrap 95%
  interval of the nDCG@10 gain over the plain hybrid (RRF k=60): queries are resampled with
  replacement, the same resample for both configurations, so an interval around 0 is noise.
- hit@5 on the sample help centre questions (rag/resources/sample_qa.jsonl) and on
  tests/data/fastapi_qa.jsonl over ../shared/data/fastapi_docs: a technique must not lower these.
- added query latency: p50 per question minus the baseline's p50 (same run, same machine load, but
  the machine is shared, so read it as a rough figure); added ingest time where a technique needs
  extra work at ingest: BM25 avg_len from the collection, and stored sentence vectors ("sv:" rows,
  run on a copy of each collection that also stores every chunk's sentence vectors, as ingest does
  with RAGSCOPE_SENTENCE_VECTORS=1; the plain collections are built without them).

Every question's dense vector is computed once by the real model, alone as the product encodes a
question, and reused by all configurations on that vector space (`QueryVectors`): the configurations
differ only after encoding. Latency figures therefore exclude query encoding, which every
configuration pays alike.

Usage:
    python bench/quality.py [--scifact DIR] [--data-dir DIR] [--fastapi-data-dir DIR] [--limit N]
                            [--resamples 2000]

--data-dir holds an already ingested SciFact collection (beir-scifact; ingested there if missing,
which takes 10-25 minutes on 2 cores); --fastapi-data-dir caches the FastAPI docs collection.
--limit N evaluates only the first N SciFact queries (quick runs; the corpus stays whole).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Sequence

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np  # noqa: E402
from tqdm import tqdm  # noqa: E402

from rag.eval.bootstrap import interval_of_differences  # noqa: E402
from rag.components import Components, build_components  # noqa: E402
from rag.settings.config import INT8_RUNTIME, ChunkConfig, RetrievalConfig, Settings  # noqa: E402
from rag.encoders.base import DenseEncoder  # noqa: E402
from rag.encoders.factory import dense_encoder  # noqa: E402
from rag.encoders.sparse import FastembedBm25Encoder, collection_avg_len  # noqa: E402
from rag.eval.beir import BeirData, beir_question_set, collection_name, ingest_beir, load_beir  # noqa: E402
from rag.eval.qsets import QuestionSet, read_question_set_file  # noqa: E402
from rag.eval.runner import run_eval  # noqa: E402
from rag.ingest.embed import encode_late, encode_sentences  # noqa: E402
from rag.ingest.pipeline import ingest_files  # noqa: E402
from rag.ingest.walk import collect_paths  # noqa: E402
from rag.catalog.sample import sample_files  # noqa: E402
from rag.store.base import PointData  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
SCIFACT = REPO.parent / "shared" / "data" / "scifact"
FASTAPI_DOCS = REPO.parent / "shared" / "data" / "fastapi_docs" / "docs" / "en" / "docs"
SAMPLE_QA = REPO / "rag" / "resources" / "sample_qa.jsonl"
FASTAPI_QA = REPO / "tests" / "data" / "fastapi_qa.jsonl"
STARLETTE_QA = REPO / "tests" / "data" / "starlette_qa.jsonl"  # docs: see tests/data/README.md
STAGE = "rerank"  # the last stage: what answers are built from

BASE = RetrievalConfig(candidates=30, final_k=10, fusion="rrf", rrf_k=60, reranker="none", collapse=False)
BASELINE = "hybrid RRF k=60"
OLD_DEFAULT = "DBSF 50 + score-fusion"  # the default before sentence vectors: a new default must beat it too


AVG_LEN = "avg_len"  # the collection variant whose BM25 vectors use the collection's own average length
SENTENCES = "sentences"  # the collection variant that also stores each chunk's sentence vectors (rag/ingest/sentences.py)
LATE = "late"  # the same, its sentence vectors pooled from the chunk's own forward pass (rag.ingest.embed.encode_late)
INT8 = "int8"  # sentence vectors encoded on their own by the int8-quantised export (RAGSCOPE_SENTENCE_POOLING=separate-int8)
POOLED = "pooled"  # sentence vectors encoded on their own, and each chunk's vector their mean: no chunk pass
INT8_DENSE = "int8-dense"  # INT8, and the chunk vectors and queries also on the int8 export (RAGSCOPE_DENSE_RUNTIME=onnx-int8)
# How each sentence-vector variant makes them, as RAGSCOPE_SENTENCE_POOLING names it (POOLED: as SENTENCES).
POOLING = {SENTENCES: "separate", POOLED: "separate", LATE: "late", INT8: "separate-int8", INT8_DENSE: "separate-int8"}
# The plain collections every variant copies are float (RAGSCOPE_DENSE_RUNTIME=onnx), whatever the default.
FLOAT_RUNTIME = "onnx"


def configs() -> dict[str, tuple[str, RetrievalConfig]]:
    """Every configuration measured, the plain hybrid first: (collection variant, RetrievalConfig)."""
    def v(**changes: object) -> RetrievalConfig:
        return dataclasses.replace(BASE, **changes)

    plain = {
        BASELINE: BASE,
        "dense only": v(fusion="dense"),
        "sparse (BM25) only": v(fusion="sparse"),
        "hybrid DBSF": v(fusion="dbsf"),
        "weighted RRF dense 0.3": v(fusion="weighted_rrf", dense_weight=0.3),
        "weighted RRF dense 0.7": v(fusion="weighted_rrf", dense_weight=0.7),
        "DBSF + score-fusion": v(fusion="dbsf", reranker="score-fusion"),
        "DBSF + score-fusion:0.3": v(fusion="dbsf", reranker="score-fusion:0.3"),
        "DBSF + score-fusion:0.4": v(fusion="dbsf", reranker="score-fusion:0.4"),
        "DBSF + score-fusion:0.6": v(fusion="dbsf", reranker="score-fusion:0.6"),
        "DBSF + score-fusion:0.7": v(fusion="dbsf", reranker="score-fusion:0.7"),
        "DBSF + dense-cosine": v(fusion="dbsf", reranker="dense-cosine"),
        "DBSF 50 + score-fusion": v(fusion="dbsf", candidates=50, reranker="score-fusion"),
        "DBSF 100 + score-fusion": v(fusion="dbsf", candidates=100, reranker="score-fusion"),
        "union + score-fusion": v(fusion="union", reranker="score-fusion"),
        "sparse + PRF": v(fusion="sparse", prf=True),
        "RRF + PRF": v(prf=True),
        "DBSF + PRF": v(fusion="dbsf", prf=True),
        "DBSF + PRF(5 docs, 0.3)": v(fusion="dbsf", prf=True, prf_docs=5, prf_weight=0.3),
        "DBSF + PRF + score-fusion": v(fusion="dbsf", prf=True, reranker="score-fusion"),
        "DBSF + dense PRF": v(fusion="dbsf", dense_prf=True),
        "DBSF + dense PRF 0.3": v(fusion="dbsf", dense_prf=True, dense_prf_weight=0.3),
        "DBSF 50 + dense PRF + s-f": v(fusion="dbsf", candidates=50, dense_prf=True, reranker="score-fusion"),
    }
    on_avg_len = {
        "avg_len: sparse only": v(fusion="sparse"),
        "avg_len: RRF": BASE,
        "avg_len: DBSF": v(fusion="dbsf"),
        "avg_len: DBSF + score-fusion": v(fusion="dbsf", reranker="score-fusion"),
    }
    on_sentences = {
        "sv: DBSF 50 + sentence-maxsim": v(fusion="dbsf", candidates=50, reranker="sentence-maxsim"),
        "sv: DBSF 50 + maxsim-fusion": v(fusion="dbsf", candidates=50, reranker="maxsim-fusion"),
        "sv: DBSF 50 + maxsim-fusion:0.6": v(fusion="dbsf", candidates=50, reranker="maxsim-fusion:0.6"),
        "sv: DBSF 50 + maxsim-fusion:0.7": v(fusion="dbsf", candidates=50, reranker="maxsim-fusion:0.7"),
        "sv: union + maxsim-fusion:0.6": v(fusion="union", candidates=50, reranker="maxsim-fusion:0.6"),
        "sv: DBSF 100 + maxsim-fusion:0.6": v(fusion="dbsf", candidates=100, reranker="maxsim-fusion:0.6"),
    }
    on_late = {
        "late: DBSF 50 + sentence-maxsim": v(fusion="dbsf", candidates=50, reranker="sentence-maxsim"),
        "late: DBSF 50 + maxsim-fusion": v(fusion="dbsf", candidates=50, reranker="maxsim-fusion"),
        "late: DBSF 50 + maxsim-fusion:0.6": v(fusion="dbsf", candidates=50, reranker="maxsim-fusion:0.6"),
        "late: DBSF 50 + maxsim-fusion:0.7": v(fusion="dbsf", candidates=50, reranker="maxsim-fusion:0.7"),
    }
    on_pooled = {"pooled: DBSF 50 + maxsim-fusion:0.6": v(fusion="dbsf", candidates=50, reranker="maxsim-fusion:0.6")}
    on_int8 = {"sv8: DBSF 50 + maxsim-fusion:0.6": v(fusion="dbsf", candidates=50, reranker="maxsim-fusion:0.6")}
    on_int8_dense = {"q8: DBSF 50 + maxsim-fusion:0.6": v(fusion="dbsf", candidates=50, reranker="maxsim-fusion:0.6")}
    return {
        **{n: ("", c) for n, c in plain.items()},
        **{n: (AVG_LEN, c) for n, c in on_avg_len.items()},
        **{n: (SENTENCES, c) for n, c in on_sentences.items()},
        **{n: (LATE, c) for n, c in on_late.items()},
        **{n: (POOLED, c) for n, c in on_pooled.items()},
        **{n: (INT8, c) for n, c in on_int8.items()},
        **{n: (INT8_DENSE, c) for n, c in on_int8_dense.items()},
    }


class QueryVectors:
    """The real dense encoder, with the questions' vectors computed up front, each alone: an int8
    vector depends on what shares its forward pass, and the product encodes one question per pass."""

    def __init__(self, dense: DenseEncoder, questions: list[str]) -> None:
        self._dense = dense
        self.name = dense.name
        self.dim = dense.dim
        self._vectors = {q: dense.encode_query(q) for q in sorted(set(questions))}

    def encode_documents(self, texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
        return self._dense.encode_documents(texts, batch_size)

    def encode_query(self, text: str) -> np.ndarray:
        vec = self._vectors.get(text)
        return vec if vec is not None else self._dense.encode_query(text)


def with_query_vectors(components: Components, qset: QuestionSet) -> Components:
    return dataclasses.replace(components, dense=QueryVectors(components.dense, [q.question for q in qset.questions]))


@dataclass(frozen=True)
class Measured:
    per_query: dict[str, dict[str, float]]  # qid -> metric -> value
    p50_ms: float

    def mean(self, metric: str) -> float:
        return statistics.fmean(q[metric] for q in self.per_query.values())

    def values(self, metric: str, qids: list[str]) -> np.ndarray:
        return np.array([self.per_query[q][metric] for q in qids])


def measure(components: Components, qset: QuestionSet, config: RetrievalConfig, label: str) -> Measured:
    """One eval run through the product path; per-question latency from the progress callback's clock."""
    stamps: list[float] = []
    bar = tqdm(total=len(qset.questions), desc=label[:40], file=sys.stderr, leave=False)

    def progress(done: int, total: int, message: str) -> None:
        stamps.append(time.perf_counter())
        bar.update(1)

    start = time.perf_counter()
    run = run_eval(components, qset, config, progress=progress, save=False)
    bar.close()
    durations = np.diff([start, *stamps]) * 1000
    per_query = {q.id: dict(q.scores[STAGE]) for q in run.questions if q.scored}
    if run.invalid:  # gold the collection lacks (e.g. a --corpus-limit subset): not scored, as in the product
        print(f"{label}: {len(run.invalid)} questions left out, their gold is not in the collection", file=sys.stderr)
    return Measured(per_query, float(np.median(durations)))


def gain_table(
    column: str, runs: dict[str, dict[str, dict]], base: str, stages: Sequence[str], metrics: Sequence[str], resamples: int
) -> list[str]:
    """A Markdown table: one row per run (label -> {question id: {stage: {metric: value}}}), each cell a
    stage's metric and, beside every run but `base`, its gain over `base` with the paired interval."""
    qids = sorted(runs[base])
    head = " | ".join(f"{s} {m}" for s in stages for m in metrics)
    lines = [f"| {column} | {head} |", "|---|" + "---|" * len(stages) * len(metrics)]
    for label, per_q in runs.items():
        cells = []
        for stage in stages:
            for metric in metrics:
                values = np.array([per_q[q][stage][metric] for q in qids])
                cell = f"{values.mean():.3f}"
                if label != base:
                    other = np.array([runs[base][q][stage][metric] for q in qids])
                    cell += " (" + interval_of_differences(values - other, resamples).words().strip() + ")"
                cells.append(cell)
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return lines


def open_docs(data_dir: Path, files: list[tuple[str, bytes]], sentence_vectors: bool = False) -> tuple[Components, float]:
    """A collection holding `files` (cached in data_dir: unchanged documents are skipped) and the ingest seconds.

    sentence_vectors=True ingests as the product does by default (each chunk's sentence vectors stored).
    """
    components = build_components(Settings(data_dir=data_dir, sentence_vectors=sentence_vectors, dense_runtime=FLOAT_RUNTIME))
    t0 = time.perf_counter()
    ingest_files(components, files)
    return components, time.perf_counter() - t0


def copy_variant(source: Components, data_dir: Path, variant: str) -> tuple[Components, float, str]:
    """A copy of `source`'s collection with one ingest-time technique added, timing only that extra work.

    Dense vectors and payloads are read back, not recomputed. `variant` is AVG_LEN (BM25 vectors
    recomputed with the collection's own average length), SENTENCES (each chunk's sentence vectors
    encoded on their own and stored, as ingest does by default) or LATE (sentence vectors pooled from
    a forward pass over each chunk, as ingest does with RAGSCOPE_SENTENCE_POOLING=late: that pass also
    gives the chunk vectors, already stored here, so timing all of it is an upper bound) or POOLED (the
    sentences encoded on their own as SENTENCES, and each chunk's dense vector replaced by the normalised
    mean of its sentence vectors: an ingest that never encodes the chunk itself, measured here, not offered
    by the product). Returns the copy, the seconds of the extra ingest work and a note on what was measured.
    """
    records = source.store.records(with_vectors=True)
    texts = [r.chunk.embed_text for r in records]
    settings = dataclasses.replace(source.settings, data_dir=data_dir, sentence_vectors=variant in POOLING)
    target = build_components(settings)
    sparse = [r.sparse for r in records]
    dense = [r.dense for r in records]
    sentences: list[np.ndarray | None] = [None] * len(records)
    t0 = time.perf_counter()
    if variant == AVG_LEN:
        avg = collection_avg_len(source.sparse, texts)
        target = dataclasses.replace(target, sparse=FastembedBm25Encoder(settings.sparse_model, cache_dir=data_dir / "models", avg_len=avg))
        sparse = target.sparse.encode_documents(texts)
        note = f"avg_len {avg:.0f}"
    elif variant in (SENTENCES, POOLED, INT8, INT8_DENSE):
        int8 = dense_encoder(settings.dense_model, INT8_RUNTIME, data_dir / "models")
        if variant == INT8_DENSE:
            dense = list(int8.encode_documents(texts))
        sentences = encode_sentences(int8 if variant in (INT8, INT8_DENSE) else target.dense, [r.chunk for r in records])
        note = f"{sum(len(rows) for rows in sentences)} sentences" + (f", {len(texts)} chunks" if variant == INT8_DENSE else "")
        if variant == POOLED:
            means = [rows.mean(axis=0) for rows in sentences]
            dense = [m / max(float(np.linalg.norm(m)), 1e-12) for m in means]
            note += ", chunk vectors their mean"
    else:
        _, sentences = encode_late(target.dense, [r.chunk for r in records])
        note = f"{sum(len(rows) for rows in sentences)} late-pooled sentences"
    extra = time.perf_counter() - t0
    made = source.store.collection_models()
    runtime = INT8_RUNTIME if variant == INT8_DENSE else made.dense_runtime  # the record picks the query encoder
    target.store.ensure_collection(dataclasses.replace(made, sentence_vectors=settings.sentence_vectors, sentence_pooling=POOLING.get(variant, "separate"), dense_runtime=runtime))
    points = [PointData(r.chunk.id, d, sv, r.payload, sentences=s) for r, d, sv, s in zip(records, dense, sparse, sentences, strict=True)]
    for i in range(0, len(points), 512):
        target.store.upsert(points[i : i + 512])
    target.store.flush()
    return target, extra, note


# --- Issue 16: documentation answers (chunk sizes, section collapsing, small-to-big, heading weight) ------
WHOLE = 100_000  # a chunk size no documentation section reaches: one chunk per section
SIZES = (800, 1500, 3000, WHOLE)
# The issue-16 rows rank with the pre-sentence-vector default (DBSF over 50, score-fusion), which reads
# only what ingest stores without sentence vectors; encoding every sentence of every size variant would
# take hours on 2 cores. A row differs from "800 (today)" in one thing, named in its label.
DOCS_BASE = dataclasses.replace(BASE, fusion="dbsf", candidates=50, reranker="score-fusion")
DOCS_BASELINE = "chunks 800 (today)"


def size_label(size: int) -> str:
    return "whole sections" if size == WHOLE else f"chunks {size}"


class CachedDense:
    """The real dense encoder behind a text -> vector cache shared by every collection variant of a run.

    Sections that fit 800 characters are the same chunk at every size, so each distinct text is encoded
    once however many variants hold it (the cache only skips repeated work; vectors are the model's).
    """

    def __init__(self, dense: DenseEncoder, cache: dict[str, np.ndarray]) -> None:
        self._dense, self._cache = dense, cache
        self.name, self.dim = dense.name, dense.dim

    def encode_documents(self, texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
        missing = sorted({t for t in texts if t not in self._cache})
        if missing:
            self._cache.update(zip(missing, self._dense.encode_documents(missing, batch_size), strict=True))
        return np.array([self._cache[t] for t in texts])

    def encode_query(self, text: str) -> np.ndarray:
        return self._dense.encode_query(text)

    def __getattr__(self, item: str) -> object:
        return getattr(self._dense, item)


def open_sized(data_dir: Path, files: list[tuple[str, bytes]], size: int, cache: dict[str, np.ndarray]) -> Components:
    """A collection of `files` chunked by headings at `size` characters (cached in data_dir)."""
    config = ChunkConfig("heading", size, 0)
    components = build_components(Settings(data_dir=data_dir, sentence_vectors=False, chunk=config, dense_runtime=FLOAT_RUNTIME))
    components = dataclasses.replace(components, dense=CachedDense(components.dense, cache))
    ingest_files(components, files, config)
    for r in components.store.records(with_vectors=True):  # an earlier run's vectors count as encoded too
        cache.setdefault(r.chunk.embed_text, np.asarray(r.dense, dtype=np.float32))
    return components


def copy_heading_weighted(source: Components, data_dir: Path, weight: int, dense_too: bool, cache: dict[str, np.ndarray]) -> Components:
    """A copy of `source`'s collection whose BM25 vectors (and dense ones if `dense_too`) see the heading `weight` times."""
    target = build_components(dataclasses.replace(source.settings, data_dir=data_dir))
    if target.store.count() == 0:
        records = source.store.records(with_vectors=True)
        texts = [dataclasses.replace(r.chunk, heading_weight=weight).embed_text for r in records]
        sparse = target.sparse.encode_documents(texts)
        dense = CachedDense(target.dense, cache).encode_documents(texts) if dense_too else [r.dense for r in records]
        target.ensure_collection()
        points = [PointData(r.chunk.id, d, sv, r.payload) for r, d, sv in zip(records, dense, sparse, strict=True)]
        for i in range(0, len(points), 512):
            target.store.upsert(points[i : i + 512])
        target.store.flush()
    return target


def context_chars(components: Components, qset: QuestionSet, config: RetrievalConfig) -> float:
    """Mean characters handed to the answerer per question (the final chunks, or their sections under small-to-big)."""
    from rag.retrieval.retrieve import retrieve

    sizes = [sum(len(c.answer_chunk.text) for c in retrieve(components, q.question, config).final) for q in qset.questions if q.answerable]
    return statistics.fmean(sizes)


def size_rows(with_default: bool) -> list[tuple[str, str, RetrievalConfig]]:
    """The chunk-size, collapse, small-to-big and heading rows: (label, collection variant, config), ranked with DOCS_BASE."""
    rows: list[tuple[str, str, RetrievalConfig]] = []
    for size in SIZES:
        rows.append((DOCS_BASELINE if size == 800 else size_label(size), f"size{size}", DOCS_BASE))
        rows.append((f"{size_label(size)} + collapse", f"size{size}", dataclasses.replace(DOCS_BASE, collapse=True)))
    rows += [
        ("chunks 800 + small-to-big", "size800", dataclasses.replace(DOCS_BASE, context="section")),
        ("chunks 800 + collapse + small-to-big", "size800", dataclasses.replace(DOCS_BASE, collapse=True, context="section")),
        ("chunks 800, heading x0 (BM25+dense)", "h0", DOCS_BASE),
        ("chunks 800, heading x3 in BM25", "h3sparse", DOCS_BASE),
        ("chunks 800, heading x3 (BM25+dense)", "h3", DOCS_BASE),
    ]
    if with_default:
        # The product's default ranking needs each chunk's sentence vectors (an "sv" copy of chunks 800).
        default = dataclasses.replace(RetrievalConfig(), collapse=False)
        rows += [
            ("default (sv, maxsim-fusion:0.6), chunks 800", "sv800", default),
            ("default + collapse", "sv800", dataclasses.replace(default, collapse=True)),
        ]
    return rows


def size_collections(key: str, files: list[tuple[str, bytes]], cache_root: Path, dense_cache: dict[str, np.ndarray], with_default: bool) -> dict[tuple[str, str], Components]:
    """One docs set's collection variants for `size_rows`, keyed (set, variant)."""
    collections: dict[tuple[str, str], Components] = {}
    for size in SIZES:
        collections[(key, f"size{size}")] = open_sized(cache_root / f"{key}-{size}", files, size, dense_cache)
    base = collections[(key, "size800")]
    collections[(key, "h3sparse")] = copy_heading_weighted(base, cache_root / f"{key}-h3sparse", 3, False, dense_cache)
    collections[(key, "h0")] = copy_heading_weighted(base, cache_root / f"{key}-h0", 0, True, dense_cache)
    collections[(key, "h3")] = copy_heading_weighted(base, cache_root / f"{key}-h3", 3, True, dense_cache)
    if with_default:  # sentence vectors made as the product's default makes them
        made_as = next(v for v in (SENTENCES, LATE, INT8) if POOLING[v] == Settings().sentence_pooling)
        collections[(key, "sv800")] = copy_variant(base, cache_root / f"{key}-sv800-{time.time_ns()}", made_as)[0]
    return collections


# --levers: issue 16's retrieval levers, each against the real default (Settings() and RetrievalConfig()
# defaults: sentence vectors stored at ingest, DBSF 50, maxsim-fusion:0.6, one hit per section).
LEVERS_BASELINE = "default"


def lever_rows() -> list[tuple[str, str, RetrievalConfig]]:
    """The default and each lever on it: (label, collection variant, config); every row reads the default collection."""
    default = RetrievalConfig()
    return [
        (LEVERS_BASELINE, "default", default),
        # The same chunks as "chunks 800 (today)" of the size rows (heading chunking ignores overlap), ranked as
        # that row is: the default is also compared with it, as in the size table.
        (DOCS_BASELINE, "default", DOCS_BASE),
        ("default + PRF (BM25, RM3-style)", "default", dataclasses.replace(default, prf=True)),
        ("default + dense PRF (Rocchio)", "default", dataclasses.replace(default, dense_prf=True)),
        # Chosen from the Starlette misses (the gold was ahead on the dense side more often than on BM25's):
        # a weight picked from analysed questions, so read it as a diagnostic, not an unseen gain.
        ("default, maxsim-fusion:0.8", "default", dataclasses.replace(default, reranker="maxsim-fusion:0.8")),
    ]


def print_misses(components: Components, qset: QuestionSet, config: RetrievalConfig, key: str) -> None:
    """Each question whose first gold section is not at rank 1, or with a gold section outside the top 5: the
    rank of each gold section in every stage (chunks of other sections counted, as the metrics count them), the
    Eval verdict, and what ranked above the first gold, so that a miss can be read without the app."""
    from rag.eval.gold import CollectionIndex
    from rag.retrieval.result import STAGES
    from rag.retrieval.retrieve import retrieve

    index = CollectionIndex.from_components(components)
    print(f"\n## {key}: misses of {config_label_text(config)}")
    for q, row in zip(qset.questions, run_eval(components, qset, config, save=False).questions, strict=True):
        scores = row.scores.get(STAGE, {})
        if not row.scored or (scores["mrr@10"] >= 1.0 and scores["recall@5"] >= 1.0):
            continue
        gold = index.resolve(q.gold)
        result = retrieve(components, q.question, config)
        runs = {stage: gold.collapse([c.id for c in result.ranked(stage)]) for stage in STAGES}
        ranks = "; ".join(f"{u.label}: " + "/".join(str(round(1 / runs[s][u.key])) if u.key in runs[s] else "-" for s in STAGES) for u in gold.units)
        verdict = row.verdict.code if row.verdict else "-"
        print(f"{q.id} MRR {scores['mrr@10']:.2f} R@5 {scores['recall@5']:.2f} verdict {verdict} | {q.question}")
        print(f"    gold rank dense/BM25/fused/rerank: {ranks}")
        ranked = result.ranked(STAGE)
        first = next((i for i, c in enumerate(ranked) if c.id in gold.chunk_ids), len(ranked))
        pages = {index.by_id[i].source for u in gold.units for i in u.chunk_ids}
        for c in ranked[: min(first, 5)]:
            chunk = c.chunk.chunk
            where = "same page" if chunk.source in pages else "other page"
            print(f"    above ({where}, dense {c.dense.rank or '-'}, BM25 {c.sparse.rank or '-'}): {chunk.location} :: {' '.join(chunk.text.split())[:90]}")


def sections_main(args: argparse.Namespace) -> int:
    """Issue 16's rows: every chunk size, collapsing, small-to-big and heading weight on both docs sets,
    SciFact train and the sample set, each against "chunks 800 (today)" with paired 95% intervals."""
    if not args.starlette_docs or not Path(args.starlette_docs).is_dir():
        raise SystemExit("--starlette-docs DIR (or RAGSCOPE_STARLETTE_DOCS) must name the Starlette 1.10.0 docs folder: see tests/data/README.md")
    cache_root = args.docs_cache or Path(tempfile.mkdtemp(prefix="ragscope-sections-"))
    dense_cache: dict[str, np.ndarray] = {}
    wanted = args.sets.split(",")
    sources = {
        "fastapi": lambda: ([(n, p.read_bytes()) for n, p in collect_paths([args.fastapi_docs]).files], read_question_set_file(FASTAPI_QA)),
        "starlette": lambda: ([(n, p.read_bytes()) for n, p in collect_paths([Path(args.starlette_docs)]).files], read_question_set_file(STARLETTE_QA)),
        "sample": lambda: (sample_files(), read_question_set_file(SAMPLE_QA)),
    }
    docs = {key: sources[key]() for key in wanted if key in sources}
    # (row label, collection variant per set, RetrievalConfig); variant "" on SciFact is its one collection.
    baseline = LEVERS_BASELINE if args.levers else DOCS_BASELINE
    rows: list[tuple[str, str, RetrievalConfig]] = lever_rows() if args.levers else size_rows(args.with_default)
    t0 = time.perf_counter()
    collections: dict[tuple[str, str], Components] = {}
    for key, (files, _) in docs.items():
        if args.levers:
            collections[(key, "default")] = open_docs(cache_root / f"{key}-default", files, sentence_vectors=True)[0]
        else:
            collections.update(size_collections(key, files, cache_root, dense_cache, args.with_default))
        print(f"# {key}: collections ready ({time.perf_counter() - t0:.0f} s so far, {len(dense_cache)} texts encoded)", file=sys.stderr, flush=True)
    sets = {k: q for k, (_, q) in docs.items()}
    if "scifact" in wanted:
        data = load_beir(args.scifact, "train")
        # The lever rows rank with the default reranker, which reads sentence vectors stored at ingest.
        sci = build_components(Settings(data_dir=args.data_dir or cache_root / "scifact", collection=collection_name(args.scifact), sentence_vectors=args.levers))
        if sci.store.count() < len(data.corpus):
            ingest_beir(sci, data)
        sets["scifact"] = beir_question_set(data, args.limit)
        # SciFact: one chunk per abstract at any size (ingest_beir sizes chunks to the longest entry), so the
        # size and collapse rows are its one collection by construction; heading x3 in BM25 is re-encoded
        # (BM25 only: re-encoding 5,183 abstracts' dense vectors is ~10 minutes here per variant).
        collections[("scifact", "")] = sci
        if not args.levers:
            collections[("scifact", "h3sparse")] = copy_heading_weighted(sci, cache_root / "scifact-h3sparse", 3, False, dense_cache)
    sci_variant = {"default": ""} if args.levers else {"h3sparse": "h3sparse"}

    results: dict[str, dict[str, Measured]] = {}
    ctx: dict[str, dict[str, float]] = {}
    for label, variant, config in rows:
        results[label], ctx[label] = {}, {}
        for key, qset in sets.items():
            if key == "scifact":
                if variant not in ("size800", *sci_variant) or config.context == "section":
                    continue  # the same ranking as "chunks 800 (today)" by construction (see above)
                comp = collections[("scifact", sci_variant.get(variant, ""))]
            elif (key, variant) in collections:
                comp = collections[(key, variant)]
            else:
                continue
            comp = with_query_vectors(comp, qset)
            results[label][key] = measure(comp, qset, config, f"{key}: {label}")
            if key in ("fastapi", "starlette") and variant == "size800" and not config.collapse:
                ctx[label][key] = context_chars(comp, qset, config)
        print(f"done: {label}", file=sys.stderr, flush=True)

    base = results[baseline]
    ranking = config_label_text(RetrievalConfig()) if args.levers else config_label_text(DOCS_BASE)
    print(f"Issue 16 rows, sets {args.sets}; ranking: {ranking} unless named; gains vs '{baseline}', paired bootstrap 95% intervals ({args.resamples} resamples), * excludes 0.")
    print("Questions scored: " + ", ".join(f"{key} {len(m.per_query)}" for key, m in base.items()))
    header = f"{'row':<38} | {'fastapi MRR@10':>14} {'R@5':>5} {'gain MRR [95% CI]':>26} {'gain R@5 [95% CI]':>26} | {'starlette MRR@10':>16} {'R@5':>5} {'gain MRR [95% CI]':>26} {'gain R@5 [95% CI]':>26} | {'sample h@5':>10} | {'SciFact nDCG@10':>15} {'gain [95% CI]':>26} | {'ctx chars fa/st':>15}"
    print(header)
    print("-" * len(header))
    # SciFact is one chunk per abstract at any size, so the size, collapse and small-to-big rows rank it as
    # "chunks 800 (today)" does; the heading and default rows change it and are run only where listed above.
    same_on_scifact = {label for label, variant, config in rows if variant.startswith("size") or config.context == "section"}
    for label, r in results.items():
        cells = [f"{label:<38}"]
        for key in ("fastapi", "starlette"):
            if key not in r:
                cells.append(f"{'not run':>14} {'':>5} {'':>26} {'':>26}")
                continue
            m = r[key]
            ids = sorted(base[key].per_query)
            g = "(baseline)" if label == baseline else interval_of_differences(m.values("mrr@10", ids) - base[key].values("mrr@10", ids), args.resamples).words()
            gr = "" if label == baseline else interval_of_differences(m.values("recall@5", ids) - base[key].values("recall@5", ids), args.resamples).words()
            cells.append(f"{m.mean('mrr@10'):>{14 if key == 'fastapi' else 16}.3f} {m.mean('recall@5'):>5.3f} {g:>26} {gr:>26}")
        cells.append(f"{r['sample'].mean('hit@5'):>10.3f}" if "sample" in r else f"{'not run':>10}")
        if "scifact" in r:
            ids = sorted(base["scifact"].per_query)
            sf = r["scifact"]
            g = "(baseline)" if label == baseline else interval_of_differences(sf.values("ndcg@10", ids) - base["scifact"].values("ndcg@10", ids), args.resamples).words()
            cells.append(f"{sf.mean('ndcg@10'):>15.3f} {g:>26}")
        elif "scifact" in base and label in same_on_scifact:
            cells.append(f"{'= today':>15} {'(same ranking)':>26}")
        else:
            cells.append(f"{'not run':>15} {'':>26}")
        c = ctx.get(label, {})
        cells.append("/".join(f"{c[k]:.0f}" if k in c else "-" for k in ("fastapi", "starlette")) if c else "")
        print(" | ".join(cells))
    if args.levers:
        for key in (k for k in ("fastapi", "starlette") if k in base):
            ids, today = sorted(base[key].per_query), results[DOCS_BASELINE][key]
            gains = [interval_of_differences(base[key].values(metric, ids) - today.values(metric, ids), args.resamples).words() for metric in ("mrr@10", "recall@5")]
            print(f"{key}: {baseline} vs '{DOCS_BASELINE}': MRR@10 {gains[0]}, R@5 {gains[1]}")
    if args.misses:
        variant, config = next((v, c) for label, v, c in rows if label == baseline)
        for key, qset in sets.items():
            if key != "scifact":
                print_misses(with_query_vectors(collections[(key, variant)], qset), qset, config, key)
    return 0


def config_label_text(config: RetrievalConfig) -> str:
    from rag.settings.labels import config_label

    return config_label(config)


def corpus_subset(data: BeirData, queries: int | None, size: int) -> BeirData:
    """A smaller corpus for a quick screen (a shared machine may not afford the whole one): every
    document judged relevant for the first `queries` judged queries, then the others in file order
    up to `size` documents. Rankings get easier with fewer distractors: compare rows of one run only."""
    keep = {doc for q in beir_question_set(data, queries).questions for doc, grade in data.qrels[q.id].items() if grade > 0}
    for doc in data.corpus:
        if len(keep) >= size:
            break
        keep.add(doc.id)
    return dataclasses.replace(data, corpus=tuple(d for d in data.corpus if d.id in keep))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scifact", type=Path, default=SCIFACT, help="BEIR SciFact folder")
    parser.add_argument("--data-dir", type=Path, default=None, help="data dir holding (or to receive) the SciFact collection")
    parser.add_argument("--fastapi-docs", type=Path, default=FASTAPI_DOCS, help="the FastAPI docs folder (docs/en/docs)")
    parser.add_argument("--fastapi-data-dir", type=Path, default=None, help="data dir caching the FastAPI docs collection")
    parser.add_argument("--limit", type=int, default=None, help="only the first N SciFact queries")
    parser.add_argument("--corpus-limit", type=int, default=None, help="a screen: only N abstracts, every one judged for the evaluated queries kept (use another --data-dir)")
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument("--only", default="", help="comma-separated configuration names (default: all)")
    parser.add_argument("--sections", action="store_true", help="issue 16's rows instead: chunk sizes, collapsing, small-to-big, heading weight")
    parser.add_argument("--starlette-docs", type=Path, default=os.environ.get("RAGSCOPE_STARLETTE_DOCS"), help="the Starlette 1.10.0 docs folder (tests/data/README.md)")
    parser.add_argument("--sets", default="starlette,sample,fastapi,scifact", help="--sections: which sets, in this order")
    parser.add_argument("--with-default", action="store_true", help="--sections: also the default ranking (encodes every chunk's sentences: slow)")
    parser.add_argument("--docs-cache", type=Path, default=None, help="folder caching the docs collections of --sections")
    parser.add_argument("--misses", action="store_true", help="--sections: then list every docs-set miss of the baseline row, with its gold's rank per stage and what ranked above it")
    parser.add_argument("--levers", action="store_true", help="--sections: instead of the size rows, the default ranking and each lever on it (default-ingested collections, sentence vectors included)")
    args = parser.parse_args(argv)
    if args.sections:
        return sections_main(args)

    tmp = tempfile.TemporaryDirectory(prefix="ragscope-quality-")
    root = Path(tmp.name)
    data = load_beir(args.scifact, "train")
    if args.corpus_limit:
        data = corpus_subset(data, args.limit, args.corpus_limit)
    sci_dir = args.data_dir or root / "scifact"
    sci = build_components(Settings(data_dir=sci_dir, collection=collection_name(args.scifact), sentence_vectors=False, dense_runtime=FLOAT_RUNTIME))
    t0 = time.perf_counter()
    if sci.store.count() < len(data.corpus):
        ingest_beir(sci, data)
    sci_ingest = time.perf_counter() - t0
    sci_set = beir_question_set(data, args.limit)
    sample, sample_ingest = open_docs(root / "sample", sample_files())
    fa_files = [(n, p.read_bytes()) for n, p in collect_paths([args.fastapi_docs]).files]
    fastapi, fa_ingest = open_docs(args.fastapi_data_dir or root / "fastapi", fa_files)
    print(f"# ingest (or cache check) s: scifact {sci_ingest:.0f}, sample {sample_ingest:.0f}, fastapi {fa_ingest:.0f}", file=sys.stderr)
    sets = [
        ("scifact", sci, sci_set),
        ("sample", sample, read_question_set_file(SAMPLE_QA)),
        ("fastapi", fastapi, read_question_set_file(FASTAPI_QA)),
    ]
    wanted = [n for n in args.only.split(",") if n]
    todo = {n: c for n, c in configs().items() if not wanted or n in (*wanted, BASELINE, OLD_DEFAULT)}
    variants: dict[str, list] = {"": [(key, with_query_vectors(comp, qset), qset) for key, comp, qset in sets]}
    extra_ingest: dict[str, dict[str, float]] = {"": {key: 0.0 for key, _, _ in sets}}
    for variant in dict.fromkeys(v for v, _ in todo.values() if v):  # only the copies some configuration reads
        notes, extra_ingest[variant], variants[variant] = [], {}, []
        for (key, comp, qset), (_, cached, _) in zip(sets, variants[""], strict=True):
            copy, extra, note = copy_variant(comp, root / f"{variant}-{key}", variant)
            extra_ingest[variant][key] = extra
            notes.append(f"{key}: {note}, {extra:.0f} s")
            own_space = variant == INT8_DENSE  # its queries come from the int8 export, not the plain collection's
            variants[variant].append((key, with_query_vectors(copy, qset) if own_space else dataclasses.replace(copy, dense=cached.dense), qset))
        print(f"# {variant} variant (extra ingest work): {'; '.join(notes)}", file=sys.stderr)

    results: dict[str, dict[str, Measured]] = {}
    for name, (variant, config) in todo.items():
        results[name] = {key: measure(comp, qset, config, f"{key}: {name}") for key, comp, qset in variants[variant]}
        print(f"done: {name}", file=sys.stderr, flush=True)

    base = results[BASELINE]
    qids = sorted(base["scifact"].per_query)
    n_sample, n_fa = len(base["sample"].per_query), len(base["fastapi"].per_query)
    print(f"SciFact train: {len(qids)} queries, {len(data.corpus)} abstracts; hit@5 sets: sample {n_sample}, fastapi {n_fa} questions.")
    print(f"Last-stage ranking, candidates={BASE.candidates} unless named; gain = nDCG@10 - {BASELINE}; vs default = nDCG@10 - {OLD_DEFAULT} (the default before sentence vectors); paired bootstrap 95% intervals ({args.resamples} resamples).")
    print(f"+ingest: extra ingest work on SciFact's {len(data.corpus)} abstracts (avg_len: measuring every chunk's BM25 length; sv: encoding every chunk's sentence vectors; the others: none). sv: rows run on the collection that stores sentence vectors.")
    header = f"{'configuration':<34} {'nDCG@10':>7} {'gain [95% CI]':>26} {'vs default [95% CI]':>26} {'R@10':>6} {'MRR@10':>6} {'+p50 ms':>8} {'+ingest':>7} {'sample h@5':>10} {'fastapi h@5':>11}"
    print(header)
    print("-" * len(header))
    for name, r in results.items():
        sf = r["scifact"]
        gain = "(baseline)" if name == BASELINE else interval_of_differences(sf.values("ndcg@10", qids) - base["scifact"].values("ndcg@10", qids), args.resamples).words()
        vs_old = "" if name == OLD_DEFAULT else interval_of_differences(sf.values("ndcg@10", qids) - results[OLD_DEFAULT]["scifact"].values("ndcg@10", qids), args.resamples).words()
        added = sf.p50_ms - base["scifact"].p50_ms
        print(
            f"{name:<34} {sf.mean('ndcg@10'):>7.3f} {gain:>26} {vs_old:>26} {sf.mean('recall@10'):>6.3f} {sf.mean('mrr@10'):>6.3f} "
            f"{added:>+8.1f} {extra_ingest[todo[name][0]]['scifact']:>6.1f}s {r['sample'].mean('hit@5'):>10.3f} {r['fastapi'].mean('hit@5'):>11.3f}"
        )
    print("* interval excludes 0. p50: SciFact per-question wall time through run_eval (shared 2-core machine: rough).")
    # The same configuration on late-pooled or int8 sentence vectors, or on chunk vectors pooled from the
    # sentences, against float sentence vectors encoded on their own under the chunk's own vector.
    # The whole model on int8 (q8) is also set against int8 sentences alone (sv8).
    pairs = [(n, "sv:" + n.split(":", 1)[1]) for n in results if n.startswith(("late:", "pooled:", "sv8:", "q8:"))]
    pairs += [(n, "sv8:" + n.split(":", 1)[1]) for n in results if n.startswith("q8:")]
    for late, separate in (p for p in pairs if p[1] in results):
        diff = interval_of_differences(results[late]["scifact"].values("ndcg@10", qids) - results[separate]["scifact"].values("ndcg@10", qids), args.resamples).words()
        hits = ", ".join(f"{key} hit@5 {results[late][key].mean('hit@5'):.3f} vs {results[separate][key].mean('hit@5'):.3f}" for key in ("sample", "fastapi"))
        fa_ids = sorted(results[separate]["fastapi"].per_query)
        mrr = interval_of_differences(results[late]["fastapi"].values("mrr@10", fa_ids) - results[separate]["fastapi"].values("mrr@10", fa_ids), args.resamples).words()
        print(f"{late} - {separate}: nDCG@10 {diff}; {hits}; fastapi MRR@10 {mrr}")
    tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
