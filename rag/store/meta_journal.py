"""The crash journal on a server: entries kept in the metadata collection, beside the document leases.

The same entries as the file journal (rag/store/journal.py: "apply", then "commit"), one record per
(collection, source, owner), where the owner is one open store. Files under one machine's data dir
cannot tell another machine's writer that a replacement died part-way; a record in Qdrant can.

Who repairs an entry is decided by the document lease (rag/store/doc_lease.py), not by a lock on a
file: an entry is only written under its document's lease, so whoever takes that lease next finds the
entries other owners left for the document and settles them before writing (`settle_leftover`):
the previous holder died, or finished without clearing a committed entry (rolling that forward again
deletes nothing more). `recover`, run when a store opens, does the same for every document of the
collection whose lease it can take now; a lease a dead writer still holds lapses after its ttl, and
its document is repaired by its next writer or the next open after that.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import asdict
from typing import Any

from rag.errors import StoreError
from rag.store.base import Store
from rag.store.doc_lease import Leases
from rag.store.journal import JournalEntry, parsed_entry_problem, settle
from rag.store.meta import MetaStore


class MetaJournal:
    """One open store's journal for one collection, in the metadata collection."""

    def __init__(self, meta: MetaStore, leases: Leases, collection: str) -> None:
        self.meta, self.leases, self.collection = meta, leases, collection
        self.owner = uuid.uuid4().hex

    def _key(self, source: str, owner: str) -> str:
        return json.dumps(["journal", self.collection, source, owner])

    def write(self, entry: JournalEntry) -> None:
        """Write (or advance) this owner's entry for the entry's source, whole."""
        record = {"kind": "journal", "collection": self.collection, "source": entry.source, "owner": self.owner}
        self.meta.put(self._key(entry.source, self.owner), {**record, "entry": asdict(entry)})

    def clear(self, source: str) -> None:
        self.meta.delete(self._key(source, self.owner))

    def settle_leftover(self, store: Store, source: str) -> list[str]:
        """Settle what other owners left for `source`; the caller holds the document's lease."""
        repaired = []
        for record in self.meta.find(kind="journal", collection=self.collection, source=source):
            if record.get("owner") == self.owner:
                continue
            settle(store, _entry(record))
            self.meta.delete(self._key(source, str(record.get("owner"))))
            repaired.append(source)
        return repaired

    def recover(self, store: Store) -> list[str]:
        """Settle the entries other owners left in this collection, for each document whose lease is free now."""
        repaired: list[str] = []
        sources = {str(r.get("source")) for r in self.meta.find(kind="journal", collection=self.collection)}
        for source in sorted(sources):
            lease = self.leases.try_take(self.collection, source)
            if lease is None:  # its writer is alive, or died less than a lease ago: repaired later
                continue
            try:
                repaired += self.settle_leftover(store, source)
            finally:
                self.leases.give_back(lease)
        return repaired

    def discard_all(self) -> None:
        """Forget every entry of this collection, which was just deleted."""
        for record in self.meta.find(kind="journal", collection=self.collection):
            self.meta.delete(self._key(str(record.get("source")), str(record.get("owner"))))

    def close(self) -> None:
        """Entries left stay for the next taker of their document's lease."""


def _entry(record: dict[str, Any]) -> JournalEntry:
    raw = record.get("entry")
    problem = parsed_entry_problem(raw)
    if problem:
        raise StoreError(
            f"the journal entry for {record.get('source')!r} in the metadata collection is damaged ({problem}); "
            "re-ingest the document it was for"
        )
    return JournalEntry(**raw)
