"""Whole-process ingest as a user waits for it: ragscope beside the peer ingest, paired in one run.

Each round runs, in alternating order (A B, then B A), `python -m rag ingest FOLDER` into a fresh data
dir and the peer ingest a LangChain user would write (bench/peer_ingest.py: LangChain + Qdrant hybrid,
same MiniLM and BM25 models, see ../shared/notes/peer.md) into a fresh folder; right after ours, the same
command again on the same data dir, where every file is unchanged (goal: >= 50x faster than the first
ingest, with no model loaded). Each --variant runs ragscope's first ingest once more per round with
some settings changed (RAGSCOPE_DENSE_RUNTIME=torch, RAGSCOPE_SENTENCE_POOLING=late, ...). Every
child is timed on its own: wall time, CPU time (user + system) and peak resident memory, from `os.wait4`. Medians over rounds; CPU-time ratios move less than wall-time
ratios on a shared machine. The load average before and after is printed beside the table.

The peer runs under its own Python (a virtual environment holding langchain-qdrant,
langchain-huggingface and langchain-text-splitters; a bench opponent, never a dependency): pass it with
--peer-python. Without it, or when that Python cannot import the peer's libraries, the peer is skipped
with a message and ragscope's own rows are still measured.

Usage:
    python bench/ingest_process.py [FOLDER] [--limit N] [--rounds R] [--peer-python PATH] [--variant VAR=VALUE[,...]]...

FOLDER defaults to ../shared/data/fastapi_docs/docs/en/docs; --limit N copies the first N Markdown
files by name into a temporary folder that both sides read.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DOCS = REPO.parent / "shared" / "data" / "fastapi_docs" / "docs" / "en" / "docs"
PEER_SCRIPT = REPO / "bench" / "peer_ingest.py"
PEER_IMPORTS = "import langchain_qdrant, langchain_huggingface, langchain_text_splitters"


@dataclass(frozen=True)
class Sample:
    wall: float
    cpu: float
    peak_mb: float


def run(cmd: list[str], env: dict[str, str]) -> Sample:
    """One child process, timed alone; its output goes to a file (shown if it fails)."""
    with tempfile.TemporaryFile() as log:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=REPO)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped by wait4: tell Popen
        if proc.returncode != 0:
            log.seek(0)
            sys.exit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{log.read().decode(errors='replace')[-3000:]}")
    return Sample(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)


def peer_problem(python: str | None) -> str:
    """Why the peer cannot run ("" when it can)."""
    if not python:
        return "no --peer-python given"
    if not Path(python).exists():
        return f"{python} does not exist"
    done = subprocess.run([python, "-c", PEER_IMPORTS], capture_output=True, text=True)
    return "" if done.returncode == 0 else f"{python} cannot import the peer's libraries ({done.stderr.strip().splitlines()[-1]})"


def subset(folder: Path, limit: int, into: Path) -> Path:
    """The first `limit` Markdown files of `folder` (by relative path), copied with their relative paths."""
    for path in sorted(folder.rglob("*.md"), key=lambda p: p.relative_to(folder).as_posix())[:limit]:
        target = into / path.relative_to(folder)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    return into


def variant(text: str) -> dict[str, str]:
    """`VAR=VALUE[,VAR=VALUE...]` (a --variant) as environment variables."""
    pairs = [item.split("=", 1) for item in text.split(",")]
    if not all(len(p) == 2 and p[0].strip() for p in pairs):
        raise argparse.ArgumentTypeError(f"{text!r}: expected VAR=VALUE[,VAR=VALUE...], e.g. RAGSCOPE_DENSE_RUNTIME=torch")
    return {k.strip(): v.strip() for k, v in pairs}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", nargs="?", type=Path, default=DEFAULT_DOCS)
    parser.add_argument("--limit", type=int, default=None, help="only the first N Markdown files")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--peer-python", default=None, help="the peer's Python (a venv with the LangChain + Qdrant packages)")
    parser.add_argument(
        "--variant", type=variant, action="append", default=[], metavar="VAR=VALUE[,...]",
        help="also run ragscope with these settings, e.g. RAGSCOPE_SENTENCE_POOLING=late or RAGSCOPE_DENSE_RUNTIME=torch (repeatable)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    if not args.folder.is_dir():
        parser.error(f"{args.folder} is not a folder")
    problem = peer_problem(args.peer_python)
    if problem:
        print(f"peer skipped: {problem}; measuring ragscope alone", file=sys.stderr)

    first, again, peer, export = "ragscope first ingest", "ragscope unchanged re-ingest", "peer ingest", "ragscope first use (1 file)"
    variants = {"ragscope, " + " ".join(f"{k.removeprefix('RAGSCOPE_')}={v}" for k, v in env.items()): env for env in args.variant}
    samples: dict[str, list[Sample]] = {export: [], first: [], again: [], peer: [], **{name: [] for name in variants}}
    with tempfile.TemporaryDirectory(prefix="ragscope-ingest-process-") as tmp:
        root = Path(tmp)
        folder = subset(args.folder, args.limit, root / "docs") if args.limit else args.folder
        files = sum(1 for _ in folder.rglob("*.md"))
        env = os.environ | {"PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
        ours = [sys.executable, "-m", "rag", "ingest"]
        # A data dir's first use exports the dense model to ONNX (once, under its models folder): timed
        # here on one file, then every fresh data dir below links that folder, as a data dir that has
        # been used before holds it.
        exports = root / "exports" / "models" / "onnx"
        exports.mkdir(parents=True)
        samples[export].append(run([*ours, str(subset(folder, 1, root / "one"))], env | {"RAGSCOPE_DATA_DIR": str(root / "exports")}))

        def data_dir(name: str) -> str:
            (root / name / "models").mkdir(parents=True)
            (root / name / "models" / "onnx").symlink_to(exports, target_is_directory=True)
            return str(root / name)

        load_before = os.getloadavg()
        sides = ["ours", "peer", *variants]
        for r in range(args.rounds):
            for side in sides[r % len(sides) :] + sides[: r % len(sides)]:  # A B (C), then B (C) A, ...
                if side == "ours":
                    data = data_dir(f"ours{r}")
                    samples[first].append(run([*ours, str(folder)], env | {"RAGSCOPE_DATA_DIR": data}))
                    samples[again].append(run([*ours, str(folder)], env | {"RAGSCOPE_DATA_DIR": data}))
                    shutil.rmtree(data)
                elif side in variants:
                    data = data_dir(f"variant{sides.index(side)}-{r}")
                    samples[side].append(run([*ours, str(folder)], env | variants[side] | {"RAGSCOPE_DATA_DIR": data}))
                    shutil.rmtree(data)
                elif not problem:
                    samples[peer].append(run([args.peer_python, str(PEER_SCRIPT), str(folder), "--path", str(root / f"peer{r}")], env))
            print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)
    load_after = os.getloadavg()

    def med(name: str, field: str) -> float:
        return statistics.median(getattr(s, field) for s in samples[name])

    print(f"whole-process ingest of {files} Markdown files ({args.folder}{f', first {args.limit}' if args.limit else ''}), {args.rounds} rounds, medians")
    print(f"load average (1, 5, 15 min): before {' '.join(f'{x:.1f}' for x in load_before)}, after {' '.join(f'{x:.1f}' for x in load_after)}")
    width = max(len(name) for name in samples)
    print(f"{'':<{width}} {'wall s':>8} {'CPU s':>8} {'peak MB':>8}")
    for name, got in samples.items():
        if got:
            print(f"{name:<{width}} {med(name, 'wall'):>8.1f} {med(name, 'cpu'):>8.1f} {max(s.peak_mb for s in got):>8.0f}")
    print(f"first / unchanged re-ingest: wall {med(first, 'wall') / med(again, 'wall'):.0f}x, CPU {med(first, 'cpu') / med(again, 'cpu'):.0f}x (goal >= 50x)")
    for name in variants:
        print(
            f"{name} / {first}: wall {med(name, 'wall') / med(first, 'wall'):.2f}x, CPU {med(name, 'cpu') / med(first, 'cpu'):.2f}x, "
            f"peak memory {max(s.peak_mb for s in samples[name]) / max(s.peak_mb for s in samples[first]):.2f}x"
        )
    for ours_name in (first, *variants) if samples[peer] else ():
        if samples[ours_name]:
            print(
                f"{ours_name} / peer: wall {med(ours_name, 'wall') / med(peer, 'wall'):.2f}x, CPU {med(ours_name, 'cpu') / med(peer, 'cpu'):.2f}x, "
                f"peak memory {max(s.peak_mb for s in samples[ours_name]) / max(s.peak_mb for s in samples[peer]):.2f}x (goal <= 1.0x)"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
