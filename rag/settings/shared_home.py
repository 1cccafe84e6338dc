"""Where the state every replica must share lives: stored collection settings, question sets, eval runs,
tune sweeps and the ask log.

Two homes behind one small interface, `SharedHome`:
- the data dir (the embedded default): each module keeps its own files there, as it always has;
- the metadata collection on a server (`QDRANT_URL`, or `local:<folder>` standing in for one): `records`,
  payload-only points (rag/store/meta.py) beside the document leases, so two app replicas or a CLI on
  another machine, each with its own data dir, see one another's.

`rag.store.shared_home(settings)` picks the home by the store's own rule (rag/store/__init__.py), once; the
modules here only look at what it picked. They take `Path | SharedHome`: a bare data dir is its own files
(what the tests of one folder and `ragscope doctor` look at).

This module imports nothing of ours but the errors: rag/settings, which rag/store imports, stores collection
settings through it, so the records themselves are reached through the `Records` protocol, not by import.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Protocol


class Records(Protocol):
    """Payload records by key (rag.store.meta.MetaStore); every method raises StoreError on an engine error."""

    def get(self, key: str) -> dict[str, Any] | None:
        """The record under `key`, or None."""

    def get_many(self, keys: list[str]) -> list[dict[str, Any] | None]:
        """The records under `keys`, in their order (None where there is none), in one call."""

    def put(self, key: str, payload: dict[str, Any]) -> None:
        """Write the record under `key` whole."""

    def delete(self, key: str) -> None:
        """Remove the record under `key` (nothing when there is none)."""

    def find(self, **match: str) -> list[dict[str, Any]]:
        """Every record whose keyword fields (kind, collection, source) equal these values."""

    def swap(self, key: str, change: Callable[[dict[str, Any] | None], dict[str, Any]]) -> dict[str, Any]:
        """Replace the record under `key` by `change(old)` unless another writer changed it meanwhile, then
        again from theirs: a read-merge-write that loses no concurrent writer's change."""


@dataclass(frozen=True)
class SharedHome:
    """Where shared state lives: files under `data_dir` when `records` is None, else those records.

    Example:
        home = shared_home(settings)  # rag.store
        save_question_set(home, "faq", text)
        load_question_set(home, "faq")
    """

    data_dir: Path
    records: Records | None = None
    # The records' engine in words ("the Qdrant server at http://..."), for messages.
    engine: str = ""

    @property
    def on_server(self) -> bool:
        return self.records is not None

    def describe(self, what: str) -> str:
        """Where `what` is kept, in words, for a message."""
        if self.records is None:
            return f"{what} under {self.data_dir}"
        return f"{what} in the metadata collection of {self.engine or 'the Qdrant server'}"


def home_of(where: Path | SharedHome) -> SharedHome:
    """`where` as a home: a bare data dir is its own files."""
    return where if isinstance(where, SharedHome) else SharedHome(Path(where))


def record_key(kind: str, *parts: str) -> str:
    """A record's key: its kind and what names it within that kind, unambiguous whatever the names hold."""
    return json.dumps([kind, *parts], ensure_ascii=False)
