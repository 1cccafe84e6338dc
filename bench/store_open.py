"""What taking turns on the embedded shard costs a search: a held turn against a fresh open and close.

The CLI works beside the app because each process holds the shard only for its turn
(rag/store/lease.py). A turn lingers after its last call, so a search in a burst finds the shard open;
when another process is busy on the same data dir, a search may instead start a fresh turn (open the
shard, then flush and close it). Same process, same collection (the sample help centre) and the same
questions (its question set), in rotating order, with the default retrieval settings:

- held: every search inside one turn (the shard stays open);
- open+close per search: each search is one turn of its own;
- open+close per call: no lingering at all, every store call its own turn (the worst case).

Usage:
    python bench/store_open.py [--repeats N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from rag.catalog.sample import sample_files  # noqa: E402
from rag.components import CollectionDense, CollectionSparse, Components, build_components  # noqa: E402
from rag.ingest.pipeline import ingest_files  # noqa: E402
from rag.retrieval.retrieve import retrieve  # noqa: E402
from rag.settings.config import Settings  # noqa: E402
from rag.store.edge import EdgeStore  # noqa: E402
from rag.store.doc_lease import TurnLeases  # noqa: E402
from rag.store.journal import Journal  # noqa: E402

QUESTIONS = Path(__file__).resolve().parent.parent / "rag" / "resources" / "sample_qa.jsonl"


def components_lingering(settings: Settings, linger_s: float) -> Components:
    """The app's components (as build_components makes them), on a store whose turns linger `linger_s`."""
    store = EdgeStore(settings.data_dir / "qdrant", settings.collection, linger_s=linger_s)
    journal = Journal.open(settings.data_dir / "journal", settings.collection)
    leases = TurnLeases()
    dense, sparse = CollectionDense(settings, store), CollectionSparse(settings, store)
    return Components(settings, store, dense, sparse, journal, leases)


def timed(searches: list[str], search: Callable[[str], None]) -> list[float]:
    """Milliseconds of each search."""
    out = []
    for question in searches:
        start = time.perf_counter()
        search(question)
        out.append((time.perf_counter() - start) * 1000)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    lines = QUESTIONS.read_text(encoding="utf-8").splitlines()
    questions = [json.loads(line)["question"] for line in lines if line.strip()]
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="ragscope-store-open-") as tmp:
        settings = Settings(data_dir=Path(tmp) / "data")
        first = build_components(settings)
        assert not ingest_files(first, sample_files()).errors
        retrieve(first, questions[0])  # every model loaded before timing
        first.close()
        components = components_lingering(settings, 0.0)  # a turn ends with its last call

        def held(batch: list[str]) -> list[float]:
            with components.store.lock:  # the turn (the shard opened) starts before the clock does
                return timed(batch, lambda q: retrieve(components, q))

        modes: dict[str, Callable[[list[str]], list[float]]] = {
            "held": held,
            "open+close per search": lambda batch: timed(batch, lambda q: _in_turn(components, q)),
            "open+close per call": lambda batch: timed(batch, lambda q: retrieve(components, q)),
        }
        samples: dict[str, list[float]] = {name: [] for name in modes}
        names = list(modes)
        for r in range(args.repeats):
            for name in names[r % len(names) :] + names[: r % len(names)]:
                samples[name] += modes[name](questions)
        components.close()
    load_after = os.getloadavg()
    base = statistics.median(samples["held"])
    print(
        f"search with the shard held vs opened per turn: {len(questions)} sample questions x {args.repeats} repeats, "
        f"medians; load average (1, 5, 15 min): before {' '.join(f'{x:.1f}' for x in load_before)}, "
        f"after {' '.join(f'{x:.1f}' for x in load_after)}"
    )
    print(f"{'mode':<24} {'ms/search':>9} {'ratio':>6}")
    for name, got in samples.items():
        ms = statistics.median(got)
        print(f"{name:<24} {ms:>9.1f} {ms / base:>5.2f}x")
    return 0


def _in_turn(components: Components, question: str) -> None:
    with components.store.lock:
        retrieve(components, question)


if __name__ == "__main__":
    raise SystemExit(main())
