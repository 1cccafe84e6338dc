"""The search inspector's own time: AppTest runs of pages/inspector.py, models warm, broken into steps.

Builds (or reuses, with --data-dir) a collection of the FastAPI docs, ingested with the product's
defaults (sentence vectors included), then copied under other source names until it holds --chunks
chunks (default 10,000; the copies reuse the stored vectors, so building costs one ingest). Then, in
one AppTest session, a warm-up run loads the models and each question of tests/data/fastapi_qa.jsonl
is typed into the page (one script run per question, as pressing Enter does); a second pass also
tracks one chunk (the 8th of the final ranking) for each question, as the Track button does.

Each script run is split into exclusive step times by wrapping the functions the page calls:
  encode   the dense and sparse query encoders,
  retrieve rag.retrieval.retrieve.retrieve as the page's run_mode calls it, without its encoding (store searches,
           fusion, rescoring),
  explain  rag.inspect.explain.explain (the chosen chunk's score explanation),
  track    rag.inspect.track.track without its encoding (the tracked chunk in every stage, fixes tried),
  filters  the store's facet queries for the filter's source and tag choices (read on every run),
  render   the rest of the run: the page's own code, widgets and tables, Streamlit itself.
p50 per step and of the whole run (goal <= 300 ms), with the dominant step named.

Usage:
    python bench/inspector.py [--data-dir DIR] [--chunks N] [--questions N] [--docs DIR]
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
DEFAULT_DOCS = REPO.parent / "shared" / "data" / "fastapi_docs" / "docs" / "en" / "docs"
QUESTIONS = REPO / "tests" / "data" / "fastapi_qa.jsonl"
STEPS = ("encode", "retrieve", "explain", "track", "filters", "render")


class Steps:
    """Exclusive time per step: a wrapped call's time minus the wrapped calls it made itself."""

    def __init__(self) -> None:
        self.totals: dict[str, float] = defaultdict(float)
        self._stack: list[float] = []

    def wrap(self, name: str, fn: Callable) -> Callable:
        def timed(*args: object, **kwargs: object) -> object:
            start = time.perf_counter()
            self._stack.append(0.0)
            try:
                return fn(*args, **kwargs)
            finally:
                inner = self._stack.pop()
                spent = time.perf_counter() - start
                self.totals[name] += spent - inner
                if self._stack:
                    self._stack[-1] += spent

        return timed


def build(data_dir: Path, docs: Path, chunks: int) -> str:
    """The collection for the runs (made once per data dir); returns its name."""
    from rag.components import build_components
    from rag.settings.config import Settings
    from rag.ingest.pipeline import ingest_files
    from rag.ingest.walk import collect_paths
    from rag.store.base import PointData
    from rag.store.base import SENTENCES
    from rag.types import Chunk

    components = build_components(Settings(data_dir=data_dir, collection="inspector-bench"))
    try:
        if components.store.count() >= chunks:
            return components.settings.collection
        summary = ingest_files(components, [(n, p.read_bytes()) for n, p in collect_paths([docs]).files])
        originals = components.store.records(with_vectors=True)
        print(f"ingested {summary.chunks_written} chunks; copying up to {chunks}", file=sys.stderr)
        # Sentence vectors are not part of records(): read them from the shard (a bench may; pages never do).
        for copy in range(1, chunks // len(originals) + 1):
            batch = originals[: chunks - len(originals) * copy]
            if not batch:
                break
            sentences = {str(r.id): r.vector[SENTENCES] for r in components.store.shard.retrieve([s.chunk.id for s in batch], with_payload=False, with_vector=[SENTENCES])}
            points = []
            for s in batch:
                source = f"copy{copy}/{s.chunk.source}"
                chunk = dataclasses.replace(s.chunk, source=source, id=Chunk.make_id(source, s.chunk.heading_path, s.chunk.text, s.chunk.index))
                points.append(PointData(chunk.id, s.dense, s.sparse, {**s.payload, "source": source}, sentences[s.chunk.id]))
            for at in range(0, len(points), 512):
                components.store.upsert(points[at : at + 512])
        components.store.flush()
        components.store.optimize()
        return components.settings.collection
    finally:
        components.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, default=None, help="data dir holding (or to receive) the bench collection")
    parser.add_argument("--docs", type=Path, default=DEFAULT_DOCS)
    parser.add_argument("--chunks", type=int, default=10_000)
    parser.add_argument("--questions", type=int, default=20)
    args = parser.parse_args(argv)

    tmp = tempfile.TemporaryDirectory(prefix="ragscope-inspector-bench-")
    data_dir = args.data_dir or Path(tmp.name) / "data"
    collection = build(data_dir, args.docs, args.chunks)
    os.environ["RAGSCOPE_DATA_DIR"] = str(data_dir)
    os.environ["RAGSCOPE_COLLECTION"] = collection

    import rag.inspect.explain
    import rag.modes
    import rag.inspect.track
    import rag.retrieval.retrieve
    import ui.inspector_view
    from rag.components import build_components
    from rag.settings.config import Settings
    from rag.eval.qsets import read_question_set_file
    from streamlit.testing.v1 import AppTest

    questions = [q.question for q in read_question_set_file(QUESTIONS).questions][: args.questions]
    # The chunk each question tracks: the 8th of its final ranking, found before the page runs.
    components = build_components(Settings.from_env())
    try:
        targets = [rag.retrieval.retrieve.retrieve(components, q).ranked("rerank")[7].id for q in questions]
        encoders, store_class = (type(components.dense), type(components.sparse)), type(components.store)
    finally:
        components.close()

    steps = Steps()
    for cls in encoders:  # whichever runtime the settings chose
        cls.encode_query = steps.wrap("encode", cls.encode_query)
    original, timed = rag.retrieval.retrieve.retrieve, steps.wrap("retrieve", rag.retrieval.retrieve.retrieve)
    rag.retrieval.retrieve.retrieve = timed
    for module in [m for name, m in sys.modules.items() if name.startswith("rag.modes")]:  # run_mode's searches
        if getattr(module, "retrieve", None) is original:
            module.retrieve = timed
    rag.inspect.track.track = steps.wrap("track", rag.inspect.track.track)
    ui.inspector_view.explain = steps.wrap("explain", rag.inspect.explain.explain)
    store_class.facet = steps.wrap("filters", store_class.facet)

    load_before = os.getloadavg()
    at = AppTest.from_file(str(REPO / "pages" / "inspector.py"), default_timeout=300)
    at.run()  # warm-up: settings, store, the first model loads
    at.text_input(key="inspector_q").input("warm up the encoders").run()
    runs: dict[str, list[dict[str, float]]] = {"question typed": [], "question + track": []}
    for scenario in runs:
        for question, target in zip(questions, targets, strict=True):
            steps.totals.clear()
            start = time.perf_counter()
            at.text_input(key="inspector_q").input(question)
            if scenario == "question + track":
                at.text_input(key="inspector_track_id").input(target)
                at.button(key="inspector_track_button").click()
            at.run()
            whole = time.perf_counter() - start
            if at.exception:
                sys.exit(f"the page failed: {at.exception}")
            got = {name: steps.totals.get(name, 0.0) for name in STEPS[:-1]}
            runs[scenario].append({**got, "render": whole - sum(got.values()), "whole": whole})
        print(f"done: {scenario}", file=sys.stderr)
    load_after = os.getloadavg()

    print(f"inspector page (AppTest, models warm), collection of {args.chunks:,} chunks, {len(questions)} questions per scenario, p50 ms")
    print(f"load average (1, 5, 15 min): before {' '.join(f'{x:.1f}' for x in load_before)}, after {' '.join(f'{x:.1f}' for x in load_after)}")
    print(f"{'scenario':<18} " + " ".join(f"{s:>9}" for s in (*STEPS, "whole")) + "  dominant step")
    for scenario, rows in runs.items():
        p50 = {k: statistics.median(r[k] for r in rows) * 1000 for k in (*STEPS, "whole")}
        dominant = max(STEPS, key=lambda s: p50[s])
        print(f"{scenario:<18} " + " ".join(f"{p50[s]:>9.0f}" for s in (*STEPS, "whole")) + f"  {dominant} (goal: whole <= 300 ms)")
    tmp.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
