"""Writing a stored file so that a reader, a second writer or a crash never sees half of it.

Every file the product rewrites (a collection's settings, question sets, the models record, journal
entries, kept originals, the ONNX exports) goes through `write_atomically`: a temporary file with a
name of its own in the same folder (two writers once shared one fixed temp name and tore it from under
each other), fsync, `os.replace` onto the name, fsync of the folder. A kill at any point leaves the old
file or the new one, never a mix. `locked` serialises a read-merge-write across processes and threads:
an flock on `<name>.lock` beside the file (flock locks belong to an open file, so two threads of one
process exclude each other as two processes do). The SQLite files (runs, sweeps, the ask log) get both
from SQLite's own transactions and locks. See docs/reliability.md, "Stored files".
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

TEMP_SUFFIX = ".tmp"  # the temporary names end so: never a stored file's name, whatever a killed writer left


def lock_path(path: Path) -> Path:
    return path.with_name(path.name + ".lock")


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold the exclusive inter-process lock of `path` (blocking) for the block: a read-merge-write inside
    it never interleaves with another. The lock file stays (removing it would let two writers lock two files)."""
    target = lock_path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(target, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


@contextlib.contextmanager
def replacing(path: Path) -> Iterator[Path]:
    """A unique temporary path beside `path` to write to; renamed onto `path` (after an fsync of the file and
    then of the folder) when the block succeeds, removed in any case."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=TEMP_SUFFIX)
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        _fsync(tmp, os.O_RDONLY)
        os.replace(tmp, path)
        _fsync(path.parent, os.O_RDONLY)
    finally:
        tmp.unlink(missing_ok=True)


def write_atomically(path: Path, data: str | bytes) -> None:
    """Replace `path` whole with `data` (text is written as UTF-8)."""
    with replacing(path) as tmp:
        tmp.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)


def set_aside(path: Path) -> Path:
    """Move a damaged file out of the way, under its lock, as `<name>.damaged-<UTC time>` beside it (kept for a
    person to look at; no reader globs that name), so the product starts it afresh; returns the new name."""
    with locked(path):
        kept = path.with_name(f"{path.name}.damaged-{datetime.now(UTC):%Y%m%dT%H%M%S%f}")
        os.replace(path, kept)
    return kept


def _fsync(path: Path, flags: int) -> None:
    fd = os.open(path, flags)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
