"""A second dense model added in place against re-ingesting for it, side by side in one run, per 1,000 chunks.

A collection is ingested once with today's defaults (MiniLM, BM25, sentence vectors). Then each round, in
alternating order, times two child processes on fresh copies:

- add: `python -m rag vectors add MODEL` on a copy of that collection (rag/catalog/vectors.py: each chunk's
  stored text encoded by MODEL into a vector of its own; nothing else is read or encoded);
- re-ingest: `python -m rag ingest FOLDER` into a fresh data dir with RAGSCOPE_DENSE_MODEL=MODEL (what a
  collection built with the model costs: parsing, chunking, BM25, sentence vectors and the model's vectors).

Each child is timed on its own (wall, CPU user + system, peak memory, from `os.wait4`); medians over rounds,
then per 1,000 chunks. CPU time moves less than wall time on a shared machine; the load average before and
after is printed. Every data dir links one models folder, so no child pays for an ONNX export.

Usage:
    nice -n 10 python bench/vectors_add.py [FOLDER] [--limit N] [--model M] [--runtime R] [--rounds R]

FOLDER defaults to ../shared/data/fastapi_docs/docs/en/docs; --limit N reads its first N Markdown files.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ingest_process import DEFAULT_DOCS, REPO, Sample, run, subset  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", nargs="?", type=Path, default=DEFAULT_DOCS)
    parser.add_argument("--limit", type=int, default=90, help="only the first N Markdown files")
    parser.add_argument("--model", default="all-MiniLM-L6-v2", help="the second dense model")
    parser.add_argument("--runtime", default="onnx-int8", help="its runtime (onnx-int8: its own vector space)")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args(argv)
    print(f"load average before: {os.getloadavg()}, {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory(prefix="vectors-add-") as tmp:
        root = Path(tmp)
        docs = subset(args.folder, args.limit, root / "docs")
        base_env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
        models = root / "models"
        built = _data_dir(root / "built", models)
        # The first ingest also exports the models (ONNX, int8) into the shared folder: not timed.
        run([sys.executable, "-m", "rag", "ingest", str(docs)], base_env | {"RAGSCOPE_DATA_DIR": str(built)})
        chunks = _chunks(built, base_env)
        add_cmd = [sys.executable, "-m", "rag", "vectors", "add", args.model, "--runtime", args.runtime]
        ingest_env = {"RAGSCOPE_DENSE_MODEL": args.model, "RAGSCOPE_DENSE_RUNTIME": args.runtime}
        samples: dict[str, list[Sample]] = {"add": [], "re-ingest": []}
        for r in range(args.rounds):
            for what in ("add", "re-ingest") if r % 2 == 0 else ("re-ingest", "add"):
                data = root / f"{what}-{r}"
                if what == "add":
                    shutil.copytree(built, data, symlinks=True)
                    samples[what].append(run(add_cmd, base_env | {"RAGSCOPE_DATA_DIR": str(data)}))
                else:
                    env = base_env | ingest_env | {"RAGSCOPE_DATA_DIR": str(_data_dir(data, models))}
                    samples[what].append(run([sys.executable, "-m", "rag", "ingest", str(docs)], env))
    print(f"load average after: {os.getloadavg()}")
    print(f"\n{args.limit} files, {chunks} chunks; second model {args.model} on {args.runtime}; {args.rounds} rounds")
    print("| way | wall (s) | CPU (s) | wall per 1,000 chunks | CPU per 1,000 chunks | peak MB |")
    print("|---|---|---|---|---|---|")
    for what, got in samples.items():
        wall, cpu = statistics.median(s.wall for s in got), statistics.median(s.cpu for s in got)
        peak = max(s.peak_mb for s in got)
        per = 1000 / chunks
        print(f"| {what} | {wall:.1f} | {cpu:.1f} | {wall * per:.1f} s | {cpu * per:.1f} s | {peak:.0f} |")
    return 0


def _data_dir(path: Path, models: Path) -> Path:
    """A fresh data dir whose models folder is the shared one."""
    path.mkdir(parents=True)
    models.mkdir(exist_ok=True)
    (path / "models").symlink_to(models, target_is_directory=True)
    return path


def _chunks(data: Path, env: dict[str, str]) -> int:
    """How many chunks the collection in `data` holds (`ragscope collections --json`)."""
    import json
    import subprocess

    out = subprocess.run(
        [sys.executable, "-m", "rag", "collections", "--json"], env=env | {"RAGSCOPE_DATA_DIR": str(data)},
        capture_output=True, text=True, check=True, cwd=REPO,
    ).stdout  # fmt: skip
    return int(json.loads(out)[0]["chunks"])


if __name__ == "__main__":
    raise SystemExit(main())
