"""Cold start of each command, as a ratio to `python -c pass` measured beside it in the same run.

Every repeat runs, in rotating order, `python -c pass` and `python -m rag` with `--help`, `docs`,
`search QUESTION` and `ask QUESTION` (offline answerer) on a small collection ingested once up front,
each a fresh process timed alone (wall and CPU from `os.wait4`, peak memory). Medians over repeats;
the ratio column divides by `python -c pass` of the same run. `--help` and `docs` must load no model;
`search` and `ask` load both (their cost is the models' load, not the command's own work).

Usage:
    python bench/cold_start.py [--repeats N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ingest_process import REPO, Sample, run  # noqa: E402

GUIDE = "# Ferry guide\n\n## Timetable\n\nThe first ferry leaves at seven. The last one leaves at eleven at night.\n"
QUESTION = "When does the first ferry leave?"
COMMANDS = {
    "python -c pass": ["-c", "pass"],
    "ragscope --help": ["-m", "rag", "--help"],
    "ragscope docs": ["-m", "rag", "docs"],
    "ragscope search": ["-m", "rag", "search", QUESTION],
    "ragscope ask": ["-m", "rag", "ask", QUESTION],
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    load_before = os.getloadavg()
    samples: dict[str, list[Sample]] = {name: [] for name in COMMANDS}
    with tempfile.TemporaryDirectory(prefix="ragscope-cold-start-") as tmp:
        guide = Path(tmp) / "guide.md"
        guide.write_text(GUIDE, encoding="utf-8")
        env = os.environ | {"PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "RAGSCOPE_DATA_DIR": str(Path(tmp) / "data")}
        run([sys.executable, "-m", "rag", "ingest", str(guide)], env)
        names = list(COMMANDS)
        for r in range(args.repeats):
            for name in names[r % len(names) :] + names[: r % len(names)]:
                samples[name].append(run([sys.executable, *COMMANDS[name]], env))
            print(f"repeat {r + 1}/{args.repeats} done", file=sys.stderr)
    load_after = os.getloadavg()

    base_wall = statistics.median(s.wall for s in samples["python -c pass"])
    base_cpu = statistics.median(s.cpu for s in samples["python -c pass"])
    print(f"cold start, {args.repeats} repeats, medians; load average (1, 5, 15 min): before {' '.join(f'{x:.1f}' for x in load_before)}, after {' '.join(f'{x:.1f}' for x in load_after)}")
    print(f"{'command':<18} {'wall s':>7} {'CPU s':>7} {'wall ratio':>10} {'CPU ratio':>9} {'peak MB':>8}")
    for name, got in samples.items():
        wall, cpu = statistics.median(s.wall for s in got), statistics.median(s.cpu for s in got)
        print(f"{name:<18} {wall:>7.2f} {cpu:>7.2f} {wall / base_wall:>9.1f}x {cpu / base_cpu:>8.1f}x {max(s.peak_mb for s in got):>8.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
