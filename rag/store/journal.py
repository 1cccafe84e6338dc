"""Crash-safe document replacement: after a crash, a document is wholly its old or its new version.

A re-ingest writes a journal entry before touching the store and advances it from "apply" to
"commit" once every new chunk is written. On open, `recover` rolls an "apply" entry back (new chunks
deleted, kept chunks' old payload restored) and rolls a "commit" entry forward (old chunks deleted).
Both directions are idempotent, so a crash during recovery is recovered again on the next open.

Each collection has its own journal folder (`<data dir>/journal/<collection>/`), and inside it each
open store (each process) its own owner folder, guarded by an exclusive lock on `<owner>.lock` held
for as long as the store is open. Recovery replays only owners whose lock it can take, that is whose
process is gone: an entry of one collection is never replayed into another (a shared folder once did
exactly that), and a live process's in-progress entries are never touched.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import uuid
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any, Iterator

from rag.errors import StoreError
from rag.settings.atomic import write_atomically
from rag.settings.config import validate_collection_name
from rag.settings.strict import Damage, parse_object, read_object
from rag.store.base import Store

PHASES = ("apply", "commit")


@dataclass
class JournalEntry:
    source: str
    phase: str  # "apply" | "commit"
    added: list[str]
    removed: list[str]
    restore: dict[str, dict[str, Any]] = field(default_factory=dict)  # kept id -> payload fields before


def read_entry(path: Path) -> JournalEntry:
    """An entry as written by `Journal.write`, every field checked.

    Raises:
        StoreError: the file is unreadable or its fields have the wrong types; the message names the
            file and the repair (`ragscope doctor --fix`, then re-ingest the document).
    """
    problem = entry_problem(path)
    if problem:
        raise StoreError(
            f"journal entry {path} is damaged: {problem}. Run `ragscope doctor --fix` to set it aside, "
            "then re-ingest the document it was for"
        )
    return JournalEntry(**parse_object(path.read_text(encoding="utf-8")))


def entry_problem(path: Path) -> str:
    """What is wrong with the entry file at `path`, or "" when it is sound."""
    try:
        raw = read_object(path)
    except Damage as e:
        return str(e)
    return "gone" if raw is None else parsed_entry_problem(raw)


def parsed_entry_problem(raw: Any) -> str:  # noqa: ANN401 - a parsed JSON value, checked here
    """What is wrong with a parsed entry, or "" when it is sound."""
    if not isinstance(raw, dict):
        return "not a JSON object"
    names = {f for f in JournalEntry.__dataclass_fields__}
    if set(raw) - names or {"source", "phase", "added", "removed"} - set(raw):
        return f"fields should be {sorted(names)}, found {sorted(raw)}"
    if not isinstance(raw["source"], str) or raw["phase"] not in PHASES:
        return "source must be text and phase 'apply' or 'commit'"
    if not all(isinstance(v, list) and all(isinstance(i, str) for i in v) for v in (raw["added"], raw["removed"])):
        return "added and removed must be lists of chunk ids"
    restore = raw.get("restore", {})
    if not isinstance(restore, dict) or not all(isinstance(v, dict) for v in restore.values()):
        return "restore must map chunk ids to payload objects"
    return ""


class Journal:
    """One open store's journal for one collection.

    Example:
        journal = Journal.open(settings.data_dir / "journal", settings.collection)
        journal.recover(store)   # what dead owners of this collection left
        ...
        journal.close()
    """

    def __init__(self, root: Path, owner: str, lock_file: IO[str]) -> None:
        self.root = root  # <data dir>/journal/<collection>
        self.owner = owner
        self.folder = root / owner
        self._lock_file = lock_file

    @classmethod
    def open(cls, journals: Path, collection: str) -> "Journal":
        """Take a fresh owner folder under `journals/<collection>/`.

        The lock file is created and locked under a temporary name, then renamed into place: a
        recovering process only ever sees owner locks that are already held.
        """
        root = Path(journals) / validate_collection_name(collection)
        root.mkdir(parents=True, exist_ok=True)
        owner = uuid.uuid4().hex
        tmp = root / f".{owner}.lock.tmp"
        lock_file = open(tmp, "a+")  # noqa: SIM115 - held for the journal's life
        fcntl.flock(lock_file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)  # a brand-new file: never contended
        os.replace(tmp, root / f"{owner}.lock")
        return cls(root, owner, lock_file)

    def _path(self, source: str) -> Path:
        return self.folder / (hashlib.sha256(source.encode()).hexdigest()[:32] + ".json")

    def write(self, entry: JournalEntry) -> Path:
        """Durably write (or advance) an entry, whole (rag.settings.atomic: unique temp, fsync, atomic rename)."""
        self.folder.mkdir(exist_ok=True)
        target = self._path(entry.source)
        try:
            write_atomically(target, json.dumps(asdict(entry)))
        except OSError as e:
            raise StoreError(
                f"could not write the crash journal in {self.folder} ({e.strerror or e}); nothing was changed. "
                "Free disk space or check permissions"
            ) from None
        return target

    def clear(self, source: str) -> None:
        self._path(source).unlink(missing_ok=True)

    def settle_leftover(self, store: Store, source: str) -> list[str]:
        """Nothing to do when a document's lease is taken: what dead owners left is replayed at the start of every
        turn on the embedded engine (`recover`, hooked on `Store.on_turn`), before any write of the turn."""
        return []

    def entries(self) -> list[Path]:
        return sorted(self.folder.glob("*.json")) if self.folder.is_dir() else []

    def recover(self, store: Store) -> list[str]:
        """Finish or undo what every dead owner of this collection left; returns the sources repaired.

        Raises:
            StoreError: an entry is damaged (it is left in place: run `ragscope doctor --fix`).
        """
        repaired: list[str] = []
        for lock_path in sorted(self.root.glob("*.lock")):
            if lock_path.stem == self.owner:
                continue
            with dead_owner(lock_path) as dead:
                if dead:
                    folder = self.root / lock_path.stem
                    repaired += replay(store, folder)
                    shutil.rmtree(folder, ignore_errors=True)
                    lock_path.unlink(missing_ok=True)
        return repaired

    def discard_all(self) -> None:
        """Forget every entry of this collection, which was just deleted, so none is replayed onto a new
        collection of the same name; this owner keeps its lock and folder, so the same open components
        can ingest into the new collection (removing the whole folder left them failing on their next write)."""
        for path in self.root.iterdir():
            if path.name == f"{self.owner}.lock":
                continue
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)

    def close(self) -> None:
        """Release the owner lock; an owner folder with entries left stays for the next open to recover."""
        if self._lock_file.closed:
            return
        if not self.entries():
            shutil.rmtree(self.folder, ignore_errors=True)
            (self.root / f"{self.owner}.lock").unlink(missing_ok=True)
        fcntl.flock(self._lock_file.fileno(), fcntl.LOCK_UN)
        self._lock_file.close()


@contextmanager
def dead_owner(lock_path: Path) -> Iterator[bool]:
    """Yields True, holding `lock_path`'s lock, when its owner is gone (the lock could be taken)."""
    try:
        fd = os.open(lock_path, os.O_RDWR)
    except FileNotFoundError:  # another process recovered it meanwhile
        yield False
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False  # its owner is alive
            return
        yield lock_path.exists()  # still there: not removed by a recovery that finished meanwhile
    finally:
        os.close(fd)


def settle(store: Store, entry: JournalEntry) -> None:
    """Roll an "apply" entry back (new chunks deleted, kept chunks' payload restored) or a "commit"
    entry forward (old chunks deleted), and flush."""
    with store.lock:
        if entry.phase == "apply":
            store.delete(entry.added)
            for point_id, payload in entry.restore.items():
                store.set_payload([point_id], payload)
        else:
            store.delete(entry.removed)
        store.flush()


def replay(store: Store, folder: Path) -> list[str]:
    """Roll back ("apply") or forward ("commit") each entry in `folder`, removing it once done."""
    if not folder.is_dir():
        return []
    repaired = []
    for path in sorted(folder.glob("*.json")):
        entry = read_entry(path)
        settle(store, entry)
        path.unlink()
        repaired.append(entry.source)
    return repaired
