"""A collection's history of chunk fixes: every edit, disable, enable, and every fix a re-ingest dropped.

One append-only JSON Lines file per collection, `<data_dir>/chunk_fixes/<collection>.jsonl` (collection names
are file-safe), written under the file's lock (rag.settings.atomic.locked) and fsynced, so two writers never
interleave a line and an entry that returned is on disk. Deleting the collection deletes its history (a new
collection of the name starts clean), as it does its stored settings. A line that does not read (a kill
mid-append tears at most the last one) is skipped, not fatal: the others are the record.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rag.ingest.fixes import Fix, FixAction
from rag.settings.atomic import locked
from rag.settings.config import Settings


@dataclass(frozen=True)
class HistoryEntry:
    """One fix made or undone: `action` (a FixAction) on one chunk, by whom and when."""

    action: str
    chunk_id: str
    where: str
    by: str
    at: str = field(default_factory=lambda: now())
    details: dict[str, Any] = field(default_factory=dict)  # an edit's "old" and "new" text, a drop's "fix"

    def as_json(self) -> dict[str, Any]:
        return {"at": self.at, "by": self.by, "action": self.action, "chunk_id": self.chunk_id, "where": self.where}


def dropped_entry(fix: Fix, who: str) -> HistoryEntry:
    """The entry of a fix a re-ingest dropped (its passage changed), allowed by `who`."""
    return HistoryEntry(
        FixAction.DROP, fix.chunk_id, fix.where, who, details={"fix": fix.words, "why": "its passage changed"}
    )


def now() -> str:
    """The time a fix is stamped with: UTC, to the second."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def history_path(settings: Settings) -> Path:
    return settings.data_dir / "chunk_fixes" / f"{settings.collection}.jsonl"


def append(settings: Settings, entries: list[HistoryEntry]) -> None:
    """Add `entries` at the end of the collection's history, on disk when this returns."""
    if not entries:
        return
    path = history_path(settings)
    lines = "".join(json.dumps(e.as_json() | {"details": e.details}, ensure_ascii=False) + "\n" for e in entries)
    with locked(path), open(path, "a", encoding="utf-8") as f:
        f.write(lines)
        f.flush()
        os.fsync(f.fileno())


def read(settings: Settings) -> list[HistoryEntry]:
    """The collection's history, oldest first (empty when no fix was ever made)."""
    path = history_path(settings)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    out = []
    for line in text.splitlines():
        try:
            row = json.loads(line)
            out.append(
                HistoryEntry(row["action"], row["chunk_id"], row["where"], row["by"], row["at"], row.get("details", {}))
            )
        except (ValueError, KeyError, TypeError):
            continue  # a torn last line
    return out


def forget(settings: Settings) -> None:
    """Delete the collection's history (the collection is being deleted)."""
    history_path(settings).unlink(missing_ok=True)
