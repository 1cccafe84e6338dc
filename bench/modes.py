"""Offline retrieval modes against plain retrieval, on questions that need two sections of the FastAPI docs.

For each question of tests/data/fastapi_multihop.jsonl (34 questions, two gold sections each) and of
tests/data/fastapi_qa.jsonl, every mode runs through `rag.modes.run_mode` (which calls `retrieve()`
for each of its searches) and its final top 10 is scored against the gold sections:
- all-gold recall@10: 1 when every gold section has a chunk in the top 10 (the multi-hop measure);
- recall@10: the share of gold sections with a chunk in the top 10;
- hit@5: some gold section in the top 5 (the measure the single-hop FastAPI set is held to).
Gains over plain come with paired-bootstrap 95% intervals (bench/quality.py's), so an interval
around 0 is noise. Corrective mode may abstain (an empty list): that scores 0, as an abstention
retrieves nothing to answer from.

The collection is built without sentence vectors, so every mode uses the retrieval settings that
need none: DBSF over 50 candidates + score-fusion rescoring, final k 10 (the default before
sentence vectors). Claude modes cannot be measured here (no key); see the README.

Usage:
    python bench/modes.py [--data-dir DIR] [--docs DIR] [--resamples 2000] [--multi-hop-only]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np  # noqa: E402
from quality import FASTAPI_DOCS, FASTAPI_QA, REPO, gain_interval, interval, open_docs  # noqa: E402

from rag.components import Components  # noqa: E402
from rag.config import RetrievalConfig  # noqa: E402
from rag.eval.gold import CollectionIndex  # noqa: E402
from rag.eval.qsets import QuestionSet, read_question_set_file  # noqa: E402
from rag.ingest import collect_paths  # noqa: E402
from rag.modes import ModeOptions, run_mode  # noqa: E402

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
    """Per question: all-gold recall@10, recall@10, hit@5; and the median seconds per question."""
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
        ranks = {key: round(1 / v) for key, v in gold.collapse([c.id for c in result.final]).items()}
        found = [u for u in gold.units if u.key in ranks]
        out[q.id] = {
            "all-gold@10": float(len(found) == len(gold.units)),
            "recall@10": len(found) / len(gold.units),
            "hit@5": float(any(ranks[u.key] <= 5 for u in found)),
        }
    return out, statistics.median(seconds)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=Path("/tmp/ragscope-bench-modes"), help="caches the FastAPI docs collection")
    parser.add_argument("--docs", type=Path, default=FASTAPI_DOCS, help="the FastAPI docs folder (docs/en/docs)")
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument("--multi-hop-only", action="store_true", help="skip the single-hop set (quicker: about a third of the questions)")
    args = parser.parse_args(argv)
    files = [(n, p.read_bytes()) for n, p in collect_paths([args.docs])]
    components, ingest_s = open_docs(args.data_dir, files)
    print(f"# FastAPI docs: {len(files)} files, {components.store.count()} chunks (ingest or cache check {ingest_s:.0f} s)", file=sys.stderr)
    sets = {"multi-hop": read_question_set_file(MULTIHOP)}
    if not args.multi_hop_only:
        sets["single-hop"] = read_question_set_file(FASTAPI_QA)
    results: dict[str, dict[str, tuple[dict, float]]] = {}
    for label, (mode, options) in MODES.items():
        results[label] = {name: score(components, qset, mode, options) for name, qset in sets.items()}
        print(f"# {label} done", file=sys.stderr)
    components.close()
    print(f"retrieval: {CONFIG}")
    print(f"{'mode':<32} {'multi-hop all-gold@10':>22} {'gain vs plain [95% CI]':>26} {'recall@10':>9} {'gain [95% CI]':>26} {'single-hop hit@5':>16} {'gain [95% CI]':>26} {'s/question':>10}")
    plain = results["plain"]
    for label, by_set in results.items():
        cells = []
        for name, metric in (("multi-hop", "all-gold@10"), ("multi-hop", "recall@10"), ("single-hop", "hit@5")):
            if name not in by_set:
                cells += ["not run", ""]
                continue
            per_q, base = by_set[name][0], plain[name][0]
            qids = sorted(per_q)
            a = np.array([per_q[q][metric] for q in qids])
            b = np.array([base[q][metric] for q in qids])
            cells.append(f"{a.mean():.3f}")
            cells.append(interval(*gain_interval(a, b, args.resamples)) if label != "plain" else "")
        secs = by_set["multi-hop"][1]
        print(f"{label:<32} {cells[0]:>22} {cells[1]:>26} {cells[2]:>9} {cells[3]:>26} {cells[4]:>16} {cells[5]:>26} {secs:>10.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
