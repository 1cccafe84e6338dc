"""The crash journal belongs to one collection and one live owner.

An entry left by a crash is replayed only into its own collection, and only once its owner is gone:
opening another collection (or the same one from a second, live process) leaves it alone. The
SIGKILL version of the same story, across processes, is in tests/test_crash_consistency.py.
"""

from __future__ import annotations

import dataclasses
import json

import pytest

from rag.store import journal
from rag.components import Components, build_components
from rag.errors import StoreError
from rag.ingest.pipeline import ingest_files
from rag.types import ChunkFilter

GUIDE = b"# Ferry guide\n\n## Tickets\n\nA ticket costs four euros.\n\n## Bikes\n\nBikes ride free.\n"


def _ids(components: Components, source: str = "guide.md") -> set[str]:
    return {r.chunk.id for r in components.store.records(ChunkFilter(sources=(source,), include_quarantined=True))}


def _open(settings, collection: str) -> Components:
    return build_components(dataclasses.replace(settings, collection=collection))


def _crash_with_entry(components: Components, entry: journal.JournalEntry) -> None:
    """What a crash between writing a journal entry and clearing it leaves: the entry, and no live owner."""
    components.journal.write(entry)
    components.close()


def test_an_entry_is_replayed_into_its_own_collection_only(settings):
    a, b = _open(settings, "a"), _open(settings, "b")
    for c in (a, b):  # the same document in both collections, so the same chunk ids
        assert not ingest_files(c, [("guide.md", GUIDE)]).errors
    ids = sorted(_ids(a))
    assert sorted(_ids(b)) == ids
    b.close()
    # a's re-ingest committed (its old chunk ids[0] is to go) and crashed before finishing.
    _crash_with_entry(a, journal.JournalEntry("guide.md", "commit", added=[], removed=ids[:1]))

    b = _open(settings, "b")
    try:
        assert sorted(_ids(b)) == ids  # nothing of a's entry applied here
    finally:
        b.close()
    assert len(list((settings.data_dir / "journal" / "a").rglob("*.json"))) == 1  # still there for a

    a = _open(settings, "a")
    try:
        assert sorted(_ids(a)) == ids[1:]  # rolled forward in a
    finally:
        a.close()
    assert sorted((settings.data_dir / "journal").rglob("*")) == [
        settings.data_dir / "journal" / "a",
        settings.data_dir / "journal" / "b",
    ]


def test_a_live_owners_entries_and_temp_files_are_left_alone(settings):
    first = build_components(settings)  # two open stores on one collection, taking turns on it
    try:
        first.journal.write(journal.JournalEntry("guide.md", "apply", added=["x"], removed=[]))
        (first.journal.folder / "0123.tmp").write_text("half written")
        before = sorted(p.name for p in first.journal.folder.iterdir())
        assert len(before) == 2
        second = build_components(settings)
        second.close()
        assert sorted(p.name for p in first.journal.folder.iterdir()) == before
    finally:
        first.close()
    third = build_components(settings)  # the first owner is gone now: its entry is replayed, its folder removed
    third.close()
    assert list((settings.data_dir / "journal" / "docs").iterdir()) == []


def test_replay_is_idempotent(components):
    assert not ingest_files(components, [("guide.md", GUIDE)]).errors
    ids = sorted(_ids(components))
    entry = journal.JournalEntry("guide.md", "commit", added=[], removed=ids[:1])
    components.journal.write(entry)
    assert journal.replay(components.store, components.journal.folder) == ["guide.md"]
    components.journal.write(entry)  # a crash during recovery: the same entry again
    assert journal.replay(components.store, components.journal.folder) == ["guide.md"]
    assert sorted(_ids(components)) == ids[1:]


@pytest.mark.parametrize(
    "content",
    [
        "{not json",
        json.dumps({"source": "guide.md", "phase": "commit", "added": [], "removed": "abc"}),
        json.dumps({"source": 7, "phase": "apply", "added": [], "removed": []}),
        json.dumps({"source": "guide.md", "phase": "done", "added": [], "removed": []}),
        json.dumps({"source": "guide.md", "phase": "apply", "added": [1], "removed": []}),
        json.dumps({"source": "guide.md", "phase": "apply", "added": [], "removed": [], "restore": {"x": 1}}),
        json.dumps(["guide.md", "apply"]),
        json.dumps({"source": "guide.md", "phase": "apply"}),
    ],
)
def test_a_damaged_entry_is_refused_with_its_file_and_the_repair(settings, content):
    components = build_components(settings)
    assert not ingest_files(components, [("guide.md", GUIDE)]).errors
    ids = _ids(components)
    components.journal.folder.mkdir(parents=True, exist_ok=True)
    bad = components.journal.folder / "deadbeef.json"
    bad.write_text(content)
    components.close()
    with pytest.raises(StoreError) as raised:
        build_components(settings)
    message = str(raised.value)
    assert str(bad) in message and "ragscope doctor --fix" in message
    assert bad.exists()  # kept for the repair to look at
    again = build_components(dataclasses.replace(settings, collection="other"))  # other collections still open
    again.close()
    bad.unlink()
    reopened = build_components(settings)  # the lock was released by the failed open
    try:
        assert _ids(reopened) == ids
    finally:
        reopened.close()


def test_after_deleting_its_collection_the_same_components_ingest_again_and_no_old_entry_replays(settings):
    """The app keeps one open Components per collection: deleting the collection must leave its journal
    usable (it failed with FileNotFoundError on the next ingest) and forget the old collection's entries."""
    from rag.catalog.collections import delete_collection

    comps = _open(settings, "docs")
    try:
        assert not ingest_files(comps, [("guide.md", GUIDE)]).errors
        comps.journal.write(journal.JournalEntry("guide.md", "commit", added=[], removed=sorted(_ids(comps))))
        delete_collection(comps, "docs")
        assert comps.journal.entries() == []  # an old entry would delete the new collection's chunks on the next open
        result = ingest_files(comps, [("guide.md", GUIDE)])
        assert not result.errors and result.files[0].written == 2
        ids = _ids(comps)
    finally:
        comps.close()
    again = _open(settings, "docs")
    try:
        assert _ids(again) == ids and len(ids) == 2
    finally:
        again.close()
