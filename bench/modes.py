"""Offline retrieval modes against plain retrieval: a multi-hop set, SciFact train and the two hit@5 sets.

Every mode runs through `rag.modes.run.run_mode` (which calls `retrieve()` for each of its searches) and
its final top 10 is scored against the gold:
- tests/data/fastapi_multihop.jsonl over the FastAPI docs (34 questions, two gold sections each):
  all-gold recall@10 (1 when every gold section has a chunk in the top 10) and recall@10;
- SciFact (BEIR) train: nDCG@10 (rag.eval.metrics on the gold-collapsed ranking, as `run_eval` does);
- hit@5 on the sample help centre questions (rag/resources/sample_qa.jsonl) and on
  tests/data/fastapi_qa.jsonl: a mode must not lower these.
Gains over plain come with paired-bootstrap 95% intervals (bench/quality.py's), so an interval
around 0 is noise. Corrective mode may abstain (an empty list): that scores 0, as an abstention
retrieves nothing to answer from.

The collections are built without sentence vectors, so every mode uses the retrieval settings that
need none: DBSF over 50 candidates + score-fusion rescoring, final k 10 (the default before
sentence vectors). Claude modes cannot be measured here (no key); see the README.

Usage:
    python bench/modes.py [--data-dir DIR] [--docs DIR] [--scifact DIR] [--scifact-limit N]
                          [--sets multi-hop,sample,fastapi,scifact] [--modes plain,multi_hop,...] [--out FILE.json]
                          [--resamples 2000]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np  # noqa: E402
from quality import FASTAPI_DOCS, FASTAPI_QA, REPO, SAMPLE_QA, SCIFACT, open_docs  # noqa: E402

from rag.eval.bootstrap import interval_of_differences  # noqa: E402
from rag.components import Components, build_components  # noqa: E402
from rag.settings.config import RetrievalConfig, Settings  # noqa: E402
from rag.eval.beir import beir_question_set, collection_name, ingest_beir, load_beir  # noqa: E402
from rag.eval.gold import CollectionIndex  # noqa: E402
from rag.eval.metrics import ndcg_at_k  # noqa: E402
from rag.eval.qsets import QuestionSet, read_question_set_file  # noqa: E402
from rag.ingest.walk import collect_paths  # noqa: E402
from rag.modes.run import run_mode  # noqa: E402
from rag.modes.options import ModeOptions  # noqa: E402
from rag.catalog.sample import sample_files  # noqa: E402

MULTIHOP = REPO / "tests" / "data" / "fastapi_multihop.jsonl"
CONFIG = RetrievalConfig(candidates=50, final_k=10, fusion="dbsf", reranker="score-fusion")
MODES = {
    "plain": ("plain", ModeOptions()),
    "hyde (pseudo-document)": ("hyde", ModeOptions()),
    "multi_hop bridging, rrf": ("multi_hop", ModeOptions()),
    "multi_hop bridging, interleave": ("multi_hop", ModeOptions(hop_fusion="interleave")),
    "corrective": ("corrective", ModeOptions()),
}


def score(components: Components, qset: QuestionSet, mode: str, options: ModeOptions) -> tuple[dict[str, dict[str, float]], float]:
    """Per question: all-gold recall@10, recall@10, hit@5, nDCG@10; and the median seconds per question."""
    index = CollectionIndex.from_components(components)
    out: dict[str, dict[str, float]] = {}
    seconds: list[float] = []
    for q in qset.questions:
        if not q.answerable:
            continue
        t0 = time.perf_counter()
        result = run_mode(components, q.question, mode, CONFIG, options=options).result
        seconds.append(time.perf_counter() - t0)
        gold = index.resolve(q.gold)
        run = gold.collapse([c.id for c in result.final])
        ranks = {key: round(1 / v) for key, v in run.items()}
        found = [u for u in gold.units if u.key in ranks]
        out[q.id] = {
            "all-gold@10": float(len(found) == len(gold.units)),
            "recall@10": len(found) / len(gold.units),
            "hit@5": float(any(ranks[u.key] <= 5 for u in found)),
            "ndcg@10": ndcg_at_k({q.id: run}, {q.id: gold.qrels()}).per_query[q.id],
        }
    return out, statistics.median(seconds)


COLUMNS = (("multi-hop", "all-gold@10"), ("multi-hop", "recall@10"), ("scifact", "ndcg@10"), ("sample", "hit@5"), ("fastapi", "hit@5"))


SETS = ("multi-hop", "sample", "fastapi", "scifact")


def open_sets(args: argparse.Namespace, wanted: list[str]) -> dict[str, tuple[Components, QuestionSet]]:
    """The wanted question sets with their collections (each built, or its cache checked, under --data-dir)."""
    sets: dict[str, tuple[Components, QuestionSet]] = {}
    if {"multi-hop", "fastapi"} & set(wanted):
        files = [(n, p.read_bytes()) for n, p in collect_paths([args.docs]).files]
        fastapi, ingest_s = open_docs(args.data_dir / "fastapi", files)
        print(f"# FastAPI docs: {len(files)} files, {fastapi.store.count()} chunks (ingest or cache check {ingest_s:.0f} s)", file=sys.stderr, flush=True)
        sets |= {"multi-hop": (fastapi, read_question_set_file(MULTIHOP)), "fastapi": (fastapi, read_question_set_file(FASTAPI_QA))}
    if "sample" in wanted:
        sets["sample"] = (open_docs(args.data_dir / "sample", sample_files())[0], read_question_set_file(SAMPLE_QA))
    if "scifact" in wanted:
        data = load_beir(args.scifact, "train")
        sci = build_components(Settings(data_dir=args.data_dir / "scifact", collection=collection_name(args.scifact), sentence_vectors=False))
        t0 = time.perf_counter()
        if sci.store.count() < len(data.corpus):
            ingest_beir(sci, data)
        print(f"# SciFact: {sci.store.count()} chunks (ingest or cache check {time.perf_counter() - t0:.0f} s)", file=sys.stderr, flush=True)
        sets["scifact"] = (sci, beir_question_set(data, args.scifact_limit))
    return {name: sets[name] for name in wanted}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=Path("/tmp/ragscope-bench-modes"), help="caches the collections (one folder each)")
    parser.add_argument("--docs", type=Path, default=FASTAPI_DOCS, help="the FastAPI docs folder (docs/en/docs)")
    parser.add_argument("--scifact", type=Path, default=SCIFACT, help="BEIR SciFact folder")
    parser.add_argument("--scifact-limit", type=int, default=None, help="only the first N SciFact train queries")
    parser.add_argument("--sets", default=",".join(SETS), help=f"comma-separated, run in this order (default: {','.join(SETS)})")
    parser.add_argument("--out", type=Path, default=None, help="also write every question's scores as JSON (rewritten after each set and mode)")
    parser.add_argument("--modes", default="", help="comma-separated modes to run (plain always runs; default: every row)")
    parser.add_argument("--resamples", type=int, default=2000)
    args = parser.parse_args(argv)
    wanted = [n for n in args.sets.split(",") if n]
    chosen = {"plain", *(m for m in args.modes.split(",") if m)}
    rows = {label: row for label, row in MODES.items() if not args.modes or row[0] in chosen}
    if unknown := set(wanted) - set(SETS):
        parser.error(f"unknown sets: {', '.join(sorted(unknown))}; choose from {', '.join(SETS)}")
    sets = open_sets(args, wanted)
    results: dict[str, dict[str, tuple[dict, float]]] = {label: {} for label in rows}
    for name, (components, qset) in sets.items():  # set by set: the first sets' numbers are in even if a later one is cut short
        for label, (mode, options) in rows.items():
            results[label][name] = score(components, qset, mode, options)
            per_q = results[label][name][0]
            means = {m: statistics.fmean(q[m] for q in per_q.values()) for m in ("all-gold@10", "recall@10", "hit@5", "ndcg@10")}
            print(f"# {name} / {label}: {len(per_q)} questions, " + ", ".join(f"{m} {v:.3f}" for m, v in means.items()), file=sys.stderr, flush=True)
            if args.out:
                args.out.write_text(json.dumps({lab: {n: r[0] for n, r in by.items()} for lab, by in results.items()}, indent=1))
    for components in {id(c): c for c, _ in sets.values()}.values():
        components.close()
    counts = ", ".join(f"{name} {len(results['plain'][name][0])}" for name in sets)
    print(f"retrieval: {CONFIG}; questions: {counts}; paired bootstrap 95% intervals ({args.resamples} resamples), * excludes 0")
    columns = [(name, metric) for name, metric in COLUMNS if name in sets]
    print(f"{'mode':<32}" + "".join(f" {f'{name} {metric}':>22} {'gain vs plain [95% CI]':>26}" for name, metric in columns) + f" {'s/question (' + wanted[0] + ')':>24}")
    for label, by_set in results.items():
        cells = []
        for name, metric in columns:
            per_q, base = by_set[name][0], results["plain"][name][0]
            qids = sorted(per_q)
            a = np.array([per_q[q][metric] for q in qids])
            b = np.array([base[q][metric] for q in qids])
            cells += [f"{a.mean():.3f}", interval_of_differences(a - b, args.resamples).words() if label != "plain" else ""]
        print(f"{label:<32}" + "".join(f" {cells[i]:>22} {cells[i + 1]:>26}" for i in range(0, len(cells), 2)) + f" {by_set[wanted[0]][1]:>24.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
