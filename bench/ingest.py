"""Ingest throughput, measured side by side in one run.

Ingests a folder of documents into two fresh collections, one storing sentence vectors (the default
for new collections) and one without, and prints:
  - each pipeline's rate (load, chunk, diff, dense + sparse encode, sentence encode when on, scan,
    write) in chunks/s, next to the dense model's own encode rate on exactly the texts that pipeline
    embeds: the chunk texts, plus the distinct sentence texts when sentence vectors are on
    (goal: >= 0.9x);
  - the cost of sentence vectors: the pipeline's wall and CPU time with them on vs off;
  - an unchanged re-ingest's time as a ratio to the first ingest (goal: >= 50x faster).

The files are split into rounds; each round runs both pipelines and the bare model on that round's
texts, in rotating order, so a change in machine load during the run hits every side alike. CPU-time
ratios are printed too: on a shared machine they move less than wall time.

Usage:
    python bench/ingest.py [DOCS_DIR] [--limit N] [--rounds R]

DOCS_DIR defaults to ../shared/data/fastapi_docs/docs/en/docs (relative to the repository).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from rag.ingest.chunker import chunk_document  # noqa: E402
from rag.components import Components, build_components  # noqa: E402
from rag.settings.config import Settings  # noqa: E402
from rag.errors import RagError  # noqa: E402
from rag.ingest.pipeline import ingest_files  # noqa: E402
from rag.ingest.results import IngestSummary  # noqa: E402
from rag.ingest.walk import collect_paths  # noqa: E402
from rag.ingest.loaders.document import load_document  # noqa: E402
from rag.ingest.sentences import sentence_texts  # noqa: E402
from rag.types import Chunk  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DOCS = REPO.parent / "shared" / "data" / "fastapi_docs" / "docs" / "en" / "docs"


class Clock:
    """Wall and process CPU seconds, summed over the timed blocks."""

    def __init__(self) -> None:
        self.wall = 0.0
        self.cpu = 0.0

    def __enter__(self) -> Clock:
        self._wall, self._cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall += time.perf_counter() - self._wall
        self.cpu += time.process_time() - self._cpu


def new_chunks(components: Components, files: list[tuple[str, bytes]]) -> list[Chunk]:
    """The chunks the pipeline will embed for these files on a first ingest (same loader, chunker, settings)."""
    chunks: list[Chunk] = []
    for name, data in files:
        try:
            doc = load_document(name, data, max_bytes=components.settings.max_upload_mb * 1024 * 1024)
        except RagError:
            continue  # the pipeline refuses it too
        chunks += chunk_document(doc, components.settings.chunk)
    return chunks


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("docs", nargs="?", type=Path, default=DEFAULT_DOCS, help="folder of documents to ingest")
    parser.add_argument("--limit", type=int, default=None, help="only the first N files (quick runs)")
    parser.add_argument("--rounds", type=int, default=4, help="interleaved pipeline/model rounds")
    args = parser.parse_args(argv)
    if not args.docs.exists():
        parser.error(f"{args.docs} does not exist")

    files = [(name, path.read_bytes()) for name, path in collect_paths([args.docs]).files][: args.limit]
    rounds = [files[i :: args.rounds] for i in range(args.rounds)]
    clocks = {name: Clock() for name in ("with sentences", "without", "model: chunks", "model: sentences")}
    results: dict[str, list] = {"with sentences": [], "without": []}
    reingest = Clock()
    n_chunks = n_sentences = 0
    with tempfile.TemporaryDirectory(prefix="ragscope-bench-") as tmp:
        settings = Settings(data_dir=Path(tmp) / "data")
        pipelines = {
            "with sentences": build_components(dataclasses.replace(settings, collection="with_sentences", sentence_vectors=True)),
            "without": build_components(dataclasses.replace(settings, collection="without", sentence_vectors=False)),
        }
        dense = pipelines["without"].dense
        # Load both models before timing anything: loading is a one-off, not throughput.
        dense.encode_documents(["warm up"])
        pipelines["without"].sparse.encode_documents(["warm up"])
        for i, part in enumerate(rounds):
            chunks = new_chunks(pipelines["without"], part)
            texts = [c.embed_text for c in chunks]
            sentences = list(dict.fromkeys(t for c in chunks for t in sentence_texts(c)))  # distinct, as ingest encodes them
            n_chunks, n_sentences = n_chunks + len(texts), n_sentences + len(sentences)
            steps = ["with sentences", "without", "model"]
            for step in steps[i % 3 :] + steps[: i % 3]:
                if step == "model":
                    with clocks["model: chunks"]:
                        dense.encode_documents(texts)
                    with clocks["model: sentences"]:
                        dense.encode_documents(sentences)
                else:
                    with clocks[step]:
                        results[step] += ingest_files(pipelines[step], part).files
            print(f"round {i + 1}/{len(rounds)}: {len(part)} files, {len(texts)} chunks, {len(sentences)} sentences", file=sys.stderr)
        with reingest:
            second = ingest_files(pipelines["with sentences"], files)
        for components in pipelines.values():
            components.close()

    on, off = (IngestSummary(tuple(results[k])) for k in ("with sentences", "without"))
    for failed in on.errors + off.errors:
        print(f"error: {failed.error}", file=sys.stderr)
    for summary in (on, off):
        if summary.chunks_written != n_chunks:
            print(f"warning: a pipeline wrote {summary.chunks_written} chunks, the model encoded {n_chunks}", file=sys.stderr)
    p_on, p_off, m_chunks, m_sent = (clocks[k] for k in ("with sentences", "without", "model: chunks", "model: sentences"))
    m_on_wall, m_on_cpu = m_chunks.wall + m_sent.wall, m_chunks.cpu + m_sent.cpu

    def ratio(written: int, pipeline: float, model: float) -> str:
        """Pipeline rate over the model's rate on the same texts."""
        return f"{(written / pipeline) / (n_chunks / model):.2f}x"

    rows = [
        ("documents", f"{on.documents}", f"{len(on.errors)} errors, {args.rounds} rounds"),
        ("chunks", f"{on.chunks_written}", f"{n_sentences} distinct sentence texts (heading paths included)"),
        ("pipeline with sentence vectors", f"{on.chunks_written / p_on.wall:.1f} chunks/s", f"{p_on.wall:.1f} s wall, {p_on.cpu:.1f} s CPU"),
        ("model alone: chunks + sentences", f"{n_chunks / m_on_wall:.1f} chunks/s", f"{m_on_wall:.1f} s wall, {m_on_cpu:.1f} s CPU"),
        ("  pipeline / model (wall)", ratio(on.chunks_written, p_on.wall, m_on_wall), "goal >= 0.9x"),
        ("  pipeline / model (CPU)", ratio(on.chunks_written, p_on.cpu, m_on_cpu), "steadier on a shared machine"),
        ("pipeline without", f"{off.chunks_written / p_off.wall:.1f} chunks/s", f"{p_off.wall:.1f} s wall, {p_off.cpu:.1f} s CPU"),
        ("model alone: chunks", f"{n_chunks / m_chunks.wall:.1f} chunks/s", f"{m_chunks.wall:.1f} s wall, {m_chunks.cpu:.1f} s CPU"),
        ("  pipeline / model (wall)", ratio(off.chunks_written, p_off.wall, m_chunks.wall), "goal >= 0.9x"),
        ("  pipeline / model (CPU)", ratio(off.chunks_written, p_off.cpu, m_chunks.cpu), "steadier on a shared machine"),
        ("sentence vectors on / off (wall)", f"{p_on.wall / p_off.wall:.2f}x", "ingest time with them vs without"),
        ("sentence vectors on / off (CPU)", f"{p_on.cpu / p_off.cpu:.2f}x", ""),
        ("unchanged re-ingest", f"{reingest.wall:.2f} s", f"{second.chunks_written} chunks re-embedded (with sentences)"),
        ("first / re-ingest", f"{p_on.wall / reingest.wall:.0f}x faster", "goal >= 50x"),
    ]
    print(f"ingest bench: {args.docs}")
    width = max(len(r[0]) for r in rows)
    for name, value, note in rows:
        print(f"  {name:<{width}}  {value:>17}  {note}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
