"""A full disk is a clear StoreError naming the data dir and the space, never a SIGBUS or a half-written document.

qdrant-edge maps preallocated files and dies with SIGBUS when the disk is full (reproduced on a
30 MB tmpfs: `ragscope docs` and `ingest` exited 135 with no message). So the store checks free space
before opening or writing, and a write that fails anyway is undone at once.
"""

from __future__ import annotations

import errno
from collections import namedtuple

import pytest
from click.testing import CliRunner

import rag.store.journal
import rag.store.edge
from rag.cli import main
from rag.components import build_components
from rag.errors import StoreError
from rag.ingest.pipeline import ingest_files
from rag.types import ChunkFilter

GUIDE = b"# Ferry guide\n\n## Tickets\n\nA ticket costs four euros.\n\n## Bikes\n\nBikes ride free.\n"
EDITED = GUIDE.replace(b"four", b"five") + b"\n## Dogs\n\nDogs travel free on a lead.\n"
Usage = namedtuple("Usage", "total used free")
MB = 2**20


def _free(monkeypatch, nbytes: int) -> None:
    monkeypatch.setattr(rag.store.edge.shutil, "disk_usage", lambda path: Usage(10**12, 0, nbytes))


def _texts(components) -> list[str]:
    return sorted(r.chunk.text for r in components.store.records(ChunkFilter(sources=("guide.md",), include_quarantined=True)))


@pytest.fixture
def stored(settings):
    components = build_components(settings)
    assert not ingest_files(components, [("guide.md", GUIDE)]).errors
    texts = _texts(components)
    components.close()
    return settings, texts


def test_too_little_room_to_open_is_one_clean_line_naming_the_space(stored, monkeypatch, tmp_path):
    settings, _ = stored
    _free(monkeypatch, 20 * MB)
    with pytest.raises(StoreError, match=r"has 20 MB free.*needs 64 MB"):
        build_components(settings)
    (tmp_path / "x.md").write_bytes(GUIDE)
    for command in (["docs"], ["ingest", str(tmp_path / "x.md")], ["search", "ticket"]):
        result = CliRunner().invoke(main, command)
        assert result.exit_code == 1 and isinstance(result.exception, SystemExit)
        assert f"Error: the data dir {settings.data_dir / 'qdrant'} has 20 MB free" in result.stderr
    monkeypatch.undo()
    assert CliRunner().invoke(main, ["docs"]).exit_code == 0  # the lock went with the refused open


def test_a_write_that_would_not_fit_is_refused_before_anything_is_written(stored, monkeypatch):
    settings, texts = stored
    components = build_components(settings)
    try:
        _free(monkeypatch, 64 * MB + 1000)  # room to open, not for the new chunks
        summary = ingest_files(components, [("guide.md", EDITED)])
        (failed,) = summary.errors
        assert "MB free" in failed.error and str(settings.data_dir / "qdrant") in failed.error and "nothing was written" in failed.error
        assert _texts(components) == texts
        assert components.journal.entries() == []
    finally:
        components.close()


def test_a_journal_write_failing_with_enospc_changes_nothing(stored, monkeypatch):
    settings, texts = stored
    components = build_components(settings)
    try:
        def full(fd: int) -> None:
            raise OSError(errno.ENOSPC, "No space left on device")

        monkeypatch.setattr(rag.store.journal.os, "fsync", full)
        (failed,) = ingest_files(components, [("guide.md", EDITED)]).errors
        assert "could not write the crash journal" in failed.error and "No space left on device" in failed.error
        monkeypatch.undo()
        assert _texts(components) == texts
        assert components.journal.entries() == [] and not list(components.journal.folder.glob("*.tmp"))
    finally:
        components.close()


def test_a_store_write_failing_midway_is_undone_at_once(stored, monkeypatch):
    settings, texts = stored
    components = build_components(settings)
    try:
        store = components.store
        real = store._shard
        calls = {"n": 0}

        class FailingShard:  # the engine refusing its second update, as with ENOSPC
            def __getattr__(self, name):  # noqa: ANN001, ANN204
                return getattr(real, name)

            def update(self, op):  # noqa: ANN001, ANN202
                calls["n"] += 1
                if calls["n"] == 2:
                    raise OSError(errno.ENOSPC, "No space left on device")
                return real.update(op)

        monkeypatch.setattr(store, "_shard", FailingShard())
        (failed,) = ingest_files(components, [("guide.md", EDITED)]).errors
        assert "No space left on device" in failed.error and "free disk space" in failed.error
        assert _texts(components) == texts  # wholly the old version now, not after a reopen
        assert components.journal.entries() == []
    finally:
        monkeypatch.undo()
        components.close()
