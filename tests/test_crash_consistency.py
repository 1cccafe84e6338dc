"""SIGKILL during a re-ingest never leaves a document half old, half new.

A worker process (tests/crash_worker.py) re-ingests a changed document with the real encoders and
the embedded store, and is killed: just before each write step in turn, at random moments inside
the write phase, and during recovery itself. After every kill this process reopens the data dir
with `build_components` (which runs journal recovery) and checks that each document is exactly its
old or its new version: the same chunk ids, positions and document hash, no orphan chunks, no
journal left behind. The seed is printed so a failure can be replayed.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

from rag.ingest.chunker import chunk_document
from rag.components import build_components
from rag.settings.config import Settings
from rag.ingest.loaders.document import load_document
from rag.retrieval.retrieve import retrieve
from rag.types import ChunkFilter

WORKER = Path(__file__).with_name("crash_worker.py")
SOURCE = "guide/ferry.md"
OLD = """# Ferry guide

## Timetable

The first ferry leaves the harbour at 06:10. Boats then run every forty minutes until 22:30.

## Tickets

A single ticket costs 4 euros. Children under six travel free.

## Bikes

Bikes travel free on every crossing, space permitting.

## Lost property

Ask at the harbour office within thirty days.
"""
# Changed: a new section first (so every kept chunk moves), one section edited, one removed.
NEW = """# Ferry guide

## Storm days

When the wind passes force 8, crossings stop and the harbour office posts updates hourly.

## Timetable

The first ferry leaves the harbour at 06:10. Boats then run every forty minutes until 22:30.

## Tickets

A single ticket costs 5 euros from May. Children under six travel free.

## Lost property

Ask at the harbour office within thirty days.
"""
OTHER = ("guide/cafe.md", "# Café\n\nThe harbour café opens at seven and serves soup all day.\n")


class Worker:
    """The crash worker process: one command in, one JSON reply out."""

    def __init__(self, data_dir: Path) -> None:
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.proc = subprocess.Popen(
            [sys.executable, str(WORKER), str(data_dir)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        assert self._reply()["status"] == "ready"

    def _reply(self) -> dict:
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"crash worker exited ({self.proc.wait()})")
        return json.loads(line)

    def send(self, **command) -> dict:
        self.proc.stdin.write(json.dumps(command) + "\n")
        self.proc.stdin.flush()
        return self._reply()

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def _expected(source: str, text: str) -> dict:
    doc = load_document(source, text.encode())
    chunks = chunk_document(doc, Settings().chunk)
    return {"ids": {c.id for c in chunks}, "sha": doc.sha256, "spans": {c.id: (c.start, c.end, c.index, c.text) for c in chunks}}


def _check_state(data_dir: Path, versions: dict[str, dict]) -> str:
    """Reopen (recovering), check every document is wholly one version, and say which one `SOURCE` is."""
    components = build_components(Settings(data_dir=data_dir))
    try:
        records = components.store.records(ChunkFilter(include_quarantined=True), with_vectors=True)
        assert not list((data_dir / "journal").rglob("*.json")), "recovery left a journal entry behind"
        every = ChunkFilter(ids=tuple(r.chunk.id for r in records), include_quarantined=True)
        with_sentences = {h.id for h in components.store.search_sentences(records[0].dense, len(records), every)}
        assert with_sentences == set(every.ids), "chunks without their sentence vectors"
    finally:
        components.close()
    by_source: dict[str, list] = {}
    for r in records:
        by_source.setdefault(r.chunk.source, []).append(r)
    assert set(by_source) == {SOURCE, OTHER[0]}, f"unexpected sources: {sorted(by_source)}"
    assert {r.chunk.id for r in by_source[OTHER[0]]} == versions["other"]["ids"]
    ids = {r.chunk.id for r in by_source[SOURCE]}
    matches = [name for name in ("old", "new") if versions[name]["ids"] == ids]
    assert matches, f"{SOURCE} is a mix: {len(ids & versions['old']['ids'])} old, {len(ids & versions['new']['ids'])} new, {len(ids - versions['old']['ids'] - versions['new']['ids'])} orphan chunks"
    version = versions[matches[0]]
    assert len(by_source[SOURCE]) == len(ids), "duplicate points"
    for r in by_source[SOURCE]:
        c = r.chunk
        assert (c.start, c.end, c.index, c.text) == version["spans"][c.id], f"chunk {c.index} keeps positions of the other version"
        assert r.payload["doc_sha"] == version["sha"], "document metadata from the other version"
    return matches[0]


def test_sigkill_during_reingest_leaves_each_document_wholly_old_or_new(tmp_path):
    seed = int(os.environ.get("RAGSCOPE_CRASH_SEED", random.randrange(1 << 30)))
    print(f"crash test seed: {seed} (replay with RAGSCOPE_CRASH_SEED={seed})")
    rng = random.Random(seed)
    data_dir = tmp_path / "data"
    texts = {"old": OLD, "new": NEW}
    versions = {name: _expected(SOURCE, text) for name, text in texts.items()}
    versions["other"] = _expected(*OTHER)
    assert versions["old"]["ids"] & versions["new"]["ids"], "the versions should share chunks (kept + moved)"
    assert versions["old"]["ids"] - versions["new"]["ids"] and versions["new"]["ids"] - versions["old"]["ids"]

    worker = Worker(data_dir)
    try:
        assert worker.send(op="ingest", source=OTHER[0], text=OTHER[1])["status"] == "done"
        assert worker.send(op="ingest", source=SOURCE, text=OLD)["status"] == "done"
        # One clean round trip tells how many write steps each direction takes and how long writing lasts.
        steps, window_ms = {}, 0.0
        for target in ("new", "old"):
            reply = worker.send(op="ingest", source=SOURCE, text=texts[target])
            assert reply["status"] == "done", reply
            assert reply["steps"].count("journal.write") == 2, reply["steps"]
            steps[target] = len(reply["steps"])
            window_ms = max(window_ms, reply["write_ms"])
            assert _check_state(data_dir, versions) == target
        state = "old"

        # Every (direction, step) pair once, in random order as the state allows, then timed kills.
        uncovered = {(target, step) for target in ("new", "old") for step in range(1, steps[target] + 1)}
        timed_kills = timed_tries = 0  # timed kills until 4 landed (a kill after the child finished is a miss)
        outcomes = {"rolled back": 0, "rolled forward": 0, "completed": 0}
        killed = recovery_kills = 0
        while uncovered or (timed_kills < 4 and timed_tries < 12):
            target = "old" if state == "new" else "new"
            options = sorted(step for t, step in uncovered if t == target)
            if options:
                kind, kill = "step", {"kill_at_step": rng.choice(options)}
                uncovered.discard((target, kill["kill_at_step"]))
            elif uncovered:  # only the other direction's steps are left: flip cleanly
                assert worker.send(op="ingest", source=SOURCE, text=texts[target])["status"] == "done"
                state = _check_state(data_dir, versions)
                continue
            else:
                timed_tries += 1
                kind, kill = "timed", {"kill_after_ms": round(rng.uniform(0, 0.9 * window_ms), 1)}
            reply = worker.send(op="ingest", source=SOURCE, text=texts[target], **kill)
            assert reply["status"] in ("killed", "done"), reply
            killed += reply["status"] == "killed"
            timed_kills += kind == "timed" and reply["status"] == "killed"
            # A second kill, during the recovery of the first, must be recovered too.
            if reply["status"] == "killed" and rng.random() < 0.3:
                again = worker.send(op="open", kill_at_step=rng.randint(1, 3))
                assert again["status"] in ("killed", "done"), again
                recovery_kills += again["status"] == "killed"
            after = _check_state(data_dir, versions)
            if reply["status"] == "done":
                assert after == target
                outcomes["completed"] += 1
                state = after
                continue
            # The last step listed is the one the child died before (step kills) or maybe inside (timed
            # kills); the commit record is durable once its write returned and the next step began.
            finished, started = reply["steps"][:-1], reply["steps"]
            if finished.count("journal.write") >= 2:
                assert after == target, (kill, started, after)
            elif started.count("journal.write") < 2 or kind == "step":
                assert after == state, (kill, started, after)
            outcomes["rolled forward" if after == target else "rolled back"] += 1
            state = after

        print(f"crash trials: {killed} killed ({recovery_kills} more during recovery), outcomes {outcomes}")
        assert killed >= 20
        assert outcomes["rolled back"] >= 5 and outcomes["rolled forward"] >= 3

        # The store still works normally afterwards: a clean re-ingest, then a search.
        final = "new" if state == "old" else "old"
        assert worker.send(op="ingest", source=SOURCE, text=texts[final])["status"] == "done"
        assert _check_state(data_dir, versions) == final
    finally:
        worker.close()
    components = build_components(Settings(data_dir=data_dir))
    try:
        top = retrieve(components, "What does a single ticket cost?").final[0].chunk.chunk
        assert top.source == SOURCE and "ticket costs" in top.text
    finally:
        components.close()


def _stored(data_dir: Path, collection: str) -> tuple[set[str], set[str]]:
    """Chunk ids and document hashes of `SOURCE` in `collection` (opening it runs its recovery)."""
    components = build_components(Settings(data_dir=data_dir, collection=collection))
    try:
        records = components.store.records(ChunkFilter(sources=(SOURCE,), include_quarantined=True))
    finally:
        components.close()
    return {r.chunk.id for r in records}, {r.payload["doc_sha"] for r in records}


def test_a_crash_in_one_collection_is_repaired_there_and_never_replayed_into_another(tmp_path):
    data_dir = tmp_path / "data"
    old, new = _expected(SOURCE, OLD), _expected(SOURCE, NEW)
    worker = Worker(data_dir)
    try:
        # A clean run tells the step just after the commit record (the old chunks' delete).
        assert worker.send(op="ingest", source=SOURCE, text=NEW, collection="probe")["status"] == "done"
        probe = worker.send(op="ingest", source=SOURCE, text=OLD, collection="probe")
        after_commit = [i for i, step in enumerate(probe["steps"], 1) if step == "journal.write"][1] + 1
        assert probe["steps"][after_commit - 1] == "store.delete", probe["steps"]
        for collection in ("a", "b"):  # the same document, so the same chunk ids, in both
            assert worker.send(op="ingest", source=SOURCE, text=NEW, collection=collection)["status"] == "done"
        # a's re-ingest dies once committed: its entry says "delete the chunks only the new text had".
        killed = worker.send(op="ingest", source=SOURCE, text=OLD, collection="a", kill_at_step=after_commit)
        assert killed["status"] == "killed", killed
        assert worker.send(op="open", collection="b")["status"] == "done"
    finally:
        worker.close()
    assert _stored(data_dir, "b") == (new["ids"], {new["sha"]})  # b untouched by a's entry
    assert list((data_dir / "journal" / "a").rglob("*.json")), "a's entry was consumed by another collection"
    assert _stored(data_dir, "a") == (old["ids"], {old["sha"]})  # a rolled forward on its own open
    assert not list((data_dir / "journal").rglob("*.json"))
