"""Issue 27's two reference-structure settings measured on four documentation sets, each against the defaults.

For each set its documents are ingested with the default settings and run through the product's Eval path
(`rag.eval.runner.run_eval`) with the default retrieval and with `RAGSCOPE_DEDUPE` on (query time: the same
collection). Where `RAGSCOPE_DEFINITION_SECTIONS` changes the chunks (checked by chunking alone, no
embedding: the chunks' heading paths with the setting off and on), the documents are ingested again with
it on and evaluated with the default retrieval. Printed: MRR@10, recall@5 and hit@5 of the last stage per
row, and the paired-bootstrap 95% interval (rag.eval.bootstrap) of each row's MRR@10 and recall@5 gain over
the set's default row; for the two issue-27 sets, the default row's misses by verdict code with examples.

Sets (question set -> documents; where to get them: tests/data/README.md):
    fastapi    tests/data/fastapi_qa.jsonl       ../shared/data/fastapi_docs/docs/en/docs
    starlette  tests/data/starlette_qa.jsonl     --starlette-docs (/tmp/starlette-sdist/starlette-1.10.0/docs)
    diffutils  tests/data/diffutils_manual.jsonl --diffutils-docs (/tmp/diffutils-manual)
    click      tests/data/click_rst.jsonl        --click-docs (/tmp/click-docs)

Usage:
    python bench/structure.py [--sets fastapi,starlette,diffutils,click] [--cache DIR] [--seed-fastapi DIR]

--cache keeps each ingested data dir (DIR/<set>-default, DIR/<set>-definitions) between runs: a second run
re-ingests nothing unchanged. --seed-fastapi copies an already ingested FastAPI data dir (default settings,
collection "docs") into the cache when the cache has none, to save its ingest.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rag.components import build_components  # noqa: E402
from rag.eval.bootstrap import paired_interval  # noqa: E402
from rag.eval.qsets import QuestionSet, read_question_set_file  # noqa: E402
from rag.eval.runner import run_eval  # noqa: E402
from rag.eval.runs import EvalRun  # noqa: E402
from rag.ingest.chunker import chunk_document  # noqa: E402
from rag.ingest.loaders.document import load_document  # noqa: E402
from rag.ingest.pipeline import ingest_files  # noqa: E402
from rag.ingest.walk import collect_paths  # noqa: E402
from rag.settings.config import ChunkConfig, RetrievalConfig, Settings  # noqa: E402

STAGE = "rerank"  # the last stage: what answers are built from
NEW_SETS = ("diffutils", "click")  # issue 27's own sets: their misses are printed
DEFINITIONS = ChunkConfig(definition_sections=True)


@dataclass(frozen=True)
class DocsSet:
    key: str
    questions: Path
    docs: Path


@dataclass(frozen=True)
class Row:
    """One evaluated row of a set: its label, chunk count and run."""

    label: str
    chunks: int
    run: EvalRun

    def scores(self, metric: str) -> dict[str, float]:
        return {q.id: q.scores[STAGE][metric] for q in self.run.questions if q.scored}


def read_files(docs: Path) -> list[tuple[str, bytes]]:
    if not docs.is_dir():
        raise SystemExit(f"{docs} is not a folder: see tests/data/README.md for how to get these docs")
    return [(name, path.read_bytes()) for name, path in collect_paths([docs]).files]


def heading_paths(files: list[tuple[str, bytes]], config: ChunkConfig) -> list[tuple[str, tuple[str, ...]]]:
    """Each chunk's (source, heading path) as `config` chunks `files`: chunking only, nothing embedded."""
    docs = [load_document(name, data) for name, data in files]
    return [(c.source, c.heading_path) for d in docs for c in chunk_document(d, config)]


def ingested(data_dir: Path, files: list[tuple[str, bytes]], chunk: ChunkConfig) -> int:
    """Ingest `files` into `data_dir` (default settings but `chunk`); returns the collection's chunk count."""
    components = build_components(Settings(data_dir=data_dir, chunk=chunk))
    try:
        t0 = time.perf_counter()
        summary = ingest_files(components, files)
        if summary.errors:
            print(f"{data_dir.name}: {len(summary.errors)} files failed: {summary.errors[0].error}", file=sys.stderr)
        count = components.store.count()
        print(
            f"# {data_dir.name}: {count} chunks, ingest {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True
        )
        return count
    finally:
        components.close()


def evaluated(data_dir: Path, chunk: ChunkConfig, qset: QuestionSet, config: RetrievalConfig) -> EvalRun:
    components = build_components(Settings(data_dir=data_dir, chunk=chunk))
    try:
        return run_eval(components, qset, config, save=False)
    finally:
        components.close()


def measure_set(s: DocsSet, cache: Path) -> list[Row]:
    """The set's rows: defaults, dedupe on, and (where it changes the chunks) definition sections on."""
    files, qset = read_files(s.docs), read_question_set_file(s.questions)
    default_dir = cache / f"{s.key}-default"
    count = ingested(default_dir, files, ChunkConfig())
    rows = [
        Row("defaults", count, evaluated(default_dir, ChunkConfig(), qset, RetrievalConfig())),
        Row("dedupe on", count, evaluated(default_dir, ChunkConfig(), qset, RetrievalConfig(dedupe=True))),
    ]
    off, on = heading_paths(files, ChunkConfig()), heading_paths(files, DEFINITIONS)
    if off == on:
        print(f"# {s.key}: definition sections change no chunk; row skipped", file=sys.stderr, flush=True)
        return rows
    print(
        f"# {s.key}: definition sections: {len(off)} -> {len(on)} chunks, {len(set(on) - set(off))} new heading paths",
        file=sys.stderr,
        flush=True,
    )
    defs_dir = cache / f"{s.key}-definitions"
    count = ingested(defs_dir, files, DEFINITIONS)
    rows.append(Row("definition sections on", count, evaluated(defs_dir, DEFINITIONS, qset, RetrievalConfig())))
    return rows


def table(results: dict[str, list[Row]], resamples: int) -> str:
    lines = [
        "| set | row | chunks | MRR@10 | recall@5 | hit@5 | MRR@10 gain [95% CI] | recall@5 gain [95% CI] |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for key, rows in results.items():
        base = rows[0]
        for row in rows:
            means = [sum(v := list(row.scores(m).values())) / len(v) for m in ("mrr@10", "recall@5", "hit@5")]
            gains = (
                ["(baseline)", ""]
                if row is base
                else [paired_interval(base.scores(m), row.scores(m), resamples).words() for m in ("mrr@10", "recall@5")]
            )
            n = len(row.scores("mrr@10"))
            lines.append(
                f"| {key} ({n} q) | {row.label} | {row.chunks:,} | "
                + " | ".join(f"{x:.3f}" for x in means)
                + " | "
                + " | ".join(gains)
                + " |"
            )
    return "\n".join(lines)


def misses(key: str, run: EvalRun, examples: int = 2) -> str:
    """The run's failed questions by verdict code, with the first `examples` of the commonest codes."""
    failed = [q for q in run.questions if q.failed]
    counts = Counter(q.verdict.code for q in failed)
    out = [
        f"{key}: {len(failed)} of {len(run.questions)} questions missed: "
        + ", ".join(f"{c} {n}" for c, n in counts.most_common())
    ]
    for code, _ in counts.most_common(examples):
        q = next(q for q in failed if q.verdict.code == code)
        out.append(f"    {code}: {q.id} {q.question[:90]!r} -> {q.verdict.detail[:160]}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", default="fastapi,starlette,diffutils,click")
    parser.add_argument("--cache", type=Path, default=None, help="folder keeping the ingested data dirs between runs")
    parser.add_argument(
        "--fastapi-docs", type=Path, default=ROOT.parent / "shared" / "data" / "fastapi_docs" / "docs" / "en" / "docs"
    )
    parser.add_argument("--starlette-docs", type=Path, default=Path("/tmp/starlette-sdist/starlette-1.10.0/docs"))
    parser.add_argument("--diffutils-docs", type=Path, default=Path("/tmp/diffutils-manual"))
    parser.add_argument("--click-docs", type=Path, default=Path("/tmp/click-docs"))
    parser.add_argument(
        "--seed-fastapi", type=Path, default=None, help="an ingested FastAPI data dir to copy into the cache"
    )
    parser.add_argument("--resamples", type=int, default=2000)
    args = parser.parse_args(argv)
    data = ROOT / "tests" / "data"
    known = {
        "fastapi": DocsSet("fastapi", data / "fastapi_qa.jsonl", args.fastapi_docs),
        "starlette": DocsSet("starlette", data / "starlette_qa.jsonl", args.starlette_docs),
        "diffutils": DocsSet("diffutils", data / "diffutils_manual.jsonl", args.diffutils_docs),
        "click": DocsSet("click", data / "click_rst.jsonl", args.click_docs),
    }
    wanted = args.sets.split(",")
    if unknown := [k for k in wanted if k not in known]:
        raise SystemExit(f"unknown set(s) {unknown}; choose from {sorted(known)}")
    cache = args.cache or Path(tempfile.mkdtemp(prefix="structure-bench-"))
    if args.seed_fastapi and not (cache / "fastapi-default").exists():
        shutil.copytree(args.seed_fastapi, cache / "fastapi-default")
    t0 = time.perf_counter()
    results: dict[str, list[Row]] = {}
    for key in wanted:
        results[key] = measure_set(known[key], cache)
        print(f"# {key} done, {time.perf_counter() - t0:.0f} s so far", file=sys.stderr, flush=True)
    print(
        f"Last stage ({STAGE}); gains vs each set's defaults, paired bootstrap ({args.resamples} resamples), "
        "* excludes 0."
    )
    print(table(results, args.resamples))
    for key in (k for k in NEW_SETS if k in results):
        print(misses(key, results[key][0].run))
    return 0


if __name__ == "__main__":
    sys.exit(main())
