"""Several sessions at once: threads share one Components (as Streamlit sessions share the cached one).

Writers re-ingest documents while readers search and list them; nothing may raise, no point may be
lost or left over, and a reader must never see a document half replaced. A second process on the
same data dir takes turns with the first (rag/store/lease.py), and both keep working.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

from rag.ingest.chunker import chunk_document
from rag.components import build_components
from rag.settings.config import Settings
from rag.ingest.pipeline import ingest_files
from rag.ingest.loaders.document import load_document
from rag.retrieval.retrieve import retrieve
from rag.types import ChunkFilter

STOPS = ("harbour", "lighthouse", "market", "castle")


def _version(doc: int, v: int) -> bytes:
    """Document `doc` in version `v`: every version shares one section and changes the others."""
    sections = [f"## Route\n\nFerry line {doc} calls at the {STOPS[doc % len(STOPS)]}."]
    sections += [f"## Notice {v}.{k}\n\nTimetable revision {v} for line {doc}, note {k}: boats run every {10 + v + k} minutes." for k in range(1 + v % 3)]
    return (f"# Line {doc}\n\n" + "\n\n".join(sections) + "\n").encode()


def _ids(components, name: str, data: bytes) -> frozenset[str]:
    doc = load_document(name, data)
    return frozenset(c.id for c in chunk_document(doc, components.settings.chunk))


class _Threads:
    """Runs callables in threads and keeps every exception (a thread's exception is otherwise lost)."""

    def __init__(self) -> None:
        self.errors: list[BaseException] = []
        self.threads: list[threading.Thread] = []

    def start(self, fn, *args) -> None:  # noqa: ANN001
        def run() -> None:
            try:
                fn(*args)
            except BaseException as e:  # noqa: BLE001 - collected and re-raised by the test
                self.errors.append(e)

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        self.threads.append(thread)

    def join(self, timeout: float = 300) -> None:
        deadline = time.monotonic() + timeout
        for thread in self.threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        assert not any(t.is_alive() for t in self.threads), "a thread hung"


def test_sessions_ingesting_and_searching_at_once_lose_nothing(components):
    versions = 4
    names = [f"lines/line{d}.md" for d in range(3)]
    valid = {name: {_ids(components, name, _version(d, v)) for v in range(versions)} for d, name in enumerate(names)}
    assert not ingest_files(components, [(n, _version(d, 0)) for d, n in enumerate(names)]).errors

    done = threading.Event()
    seen = {"reads": 0, "searches": 0}
    threads = _Threads()

    def writer(doc: int) -> None:
        for v in range(1, versions):
            summary = ingest_files(components, [(names[doc], _version(doc, v))])
            assert not summary.errors, summary.errors

    def reader() -> None:
        while not done.is_set():
            for name in names:
                ids = frozenset(r.chunk.id for r in components.store.records(ChunkFilter(sources=(name,))))
                assert ids in valid[name], f"a reader saw {name} half replaced"
                seen["reads"] += 1

    def searcher() -> None:
        while not done.is_set():
            result = retrieve(components, "How often do the boats run?")
            assert result.final, "a search found nothing while documents were being replaced"
            seen["searches"] += 1

    for doc in range(len(names)):
        threads.start(writer, doc)
    threads.start(reader)
    threads.start(searcher)
    for t in threads.threads[: len(names)]:
        t.join(300)
    done.set()
    threads.join()
    if threads.errors:
        raise threads.errors[0]

    final = {name: _ids(components, name, _version(d, versions - 1)) for d, name in enumerate(names)}
    stored = {name: frozenset(r.chunk.id for r in components.store.records(ChunkFilter(sources=(name,)))) for name in names}
    assert stored == final
    assert components.store.count() == sum(len(ids) for ids in final.values())
    assert seen["reads"] > 0 and seen["searches"] > 0


def test_two_sessions_reingesting_the_same_document_leave_one_whole_version(components):
    """Two people save different edits of one document at the same moment: the last write wins whole."""
    name = "shared.md"
    variants = [_version(7, v) for v in range(1, 5)]
    valid = {_ids(components, name, data) for data in variants}
    assert not ingest_files(components, [(name, _version(7, 0))]).errors
    for _ in range(3):
        threads = _Threads()
        barrier = threading.Barrier(len(variants))

        def save(data: bytes) -> None:
            barrier.wait()
            summary = ingest_files(components, [(name, data)])
            assert not summary.errors, summary.errors

        for data in variants:
            threads.start(save, data)
        threads.join()
        if threads.errors:
            raise threads.errors[0]
        ids = frozenset(r.chunk.id for r in components.store.records(ChunkFilter(sources=(name,), include_quarantined=True)))
        assert ids in valid, "concurrent saves of one document left a mix of versions"
        assert components.store.count() == len(ids)


def test_a_second_process_takes_turns_with_the_first_and_both_keep_working(components):
    assert not ingest_files(components, [("first.md", _version(1, 0))]).errors
    env_dir = str(components.settings.data_dir)
    code = (
        "from pathlib import Path\n"
        "from rag.components import build_components\n"
        "from rag.settings.config import Settings\n"
        f"other = build_components(Settings(data_dir=Path({env_dir!r})))\n"
        "print(sorted(other.store.sources()))\n"
        "other.close()\n"
    )
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert other.returncode == 0, other.stderr
    assert "['first.md']" in other.stdout  # what the first process wrote, while it still has the store open

    # The first process is untouched: it can still write, flush and read.
    assert not ingest_files(components, [("second.md", _version(2, 0))]).errors
    components.store.flush()
    assert set(components.store.sources()) == {"first.md", "second.md"}

    cli = subprocess.run([sys.executable, "-m", "rag", "docs"], capture_output=True, text=True, timeout=120, env={**os.environ, "RAGSCOPE_DATA_DIR": env_dir})
    assert cli.returncode == 0, cli.stderr
    assert {line.split("\t")[0] for line in cli.stdout.splitlines()} == {"first.md", "second.md"}

    components.close()
    reopened = build_components(Settings(data_dir=components.settings.data_dir))
    try:
        assert set(reopened.store.sources()) == {"first.md", "second.md"}
    finally:
        reopened.close()
