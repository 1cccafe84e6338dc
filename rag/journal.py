"""Crash-safe document replacement: after a crash, a document is wholly its old or its new version.

A re-ingest writes a journal entry before touching the store and advances it from "apply" to
"commit" once every new chunk is written. On open, `recover` rolls an "apply" entry back (new chunks
deleted, kept chunks' old payload restored) and rolls a "commit" entry forward (old chunks deleted).
Both directions are idempotent, so a crash during recovery is recovered again on the next open.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rag.store.base import Store


@dataclass
class JournalEntry:
    source: str
    phase: str  # "apply" | "commit"
    added: list[str]
    removed: list[str]
    restore: dict[str, dict[str, Any]] = field(default_factory=dict)  # kept id -> payload fields before


def _path(folder: Path, source: str) -> Path:
    return folder / (hashlib.sha256(source.encode()).hexdigest()[:32] + ".json")


def write(folder: Path, entry: JournalEntry) -> Path:
    """Durably write (or advance) an entry: temp file, fsync, atomic rename, fsync the folder."""
    folder.mkdir(parents=True, exist_ok=True)
    target = _path(folder, entry.source)
    tmp = target.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(asdict(entry), f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, target)
    dir_fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
    return target


def clear(folder: Path, source: str) -> None:
    _path(folder, source).unlink(missing_ok=True)


def recover(store: Store, folder: Path) -> list[str]:
    """Finish or undo every interrupted replacement; returns the sources repaired."""
    if not folder.is_dir():
        return []
    repaired = []
    for path in sorted(folder.glob("*.json")):
        try:
            entry = JournalEntry(**json.loads(path.read_text(encoding="utf-8")))
        except (ValueError, TypeError):
            path.unlink()  # a torn temp write never reaches *.json; anything else unreadable is ours and stale
            continue
        with store.lock:
            if entry.phase == "apply":
                store.delete(entry.added)
                for point_id, payload in entry.restore.items():
                    store.set_payload([point_id], payload)
            else:
                store.delete(entry.removed)
            store.flush()
        path.unlink()
        repaired.append(entry.source)
    for tmp in folder.glob("*.tmp"):
        tmp.unlink()
    return repaired
