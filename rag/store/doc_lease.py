"""One writer per document at a time, across processes and machines: a lease kept in Qdrant itself.

A document replacement (rag/ingest/write.py) holds the lease of its (collection, source) for its
whole run. The lease is a record in the metadata collection (rag/store/meta.py):
`{holder, fence, expires_at}`. Taking it is a compare-and-swap on the record's `fence`:

1. read the record (missing: fence 0); when it is held and not expired, wait and try again;
2. conditionally write `{holder: a fresh token, fence: fence + 1, expires_at: now + ttl}`, applied only
   while the stored fence is still the one read and the lease has expired (Qdrant's conditional
   upsert; a missing record is inserted, and of two inserts the second finds the first's fence);
3. read it back: the lease is taken when the record holds this token and fence.

The holder renews it (the same compare-and-swap on its own token and fence) before each step that
writes, and gives it back by writing it expired. A holder that dies stops renewing: its lease lapses
after `ttl_s`, and the next taker repairs what it left (its journal entry). A holder that finds its
lease taken stops without writing (LeaseLost). What this does not cover (a holder paused longer than
the lease between a renewal and its next write, clocks apart by more than the lease) is in
docs/reliability.md, "Writers on several machines".
"""

from __future__ import annotations

import json
import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Callable, Iterator

from rag.errors import StoreError, StoreLockedError
from rag.store.meta import Claim, MetaStore

# How long to wait for another writer's lease before giving up: as the embedded engine's turns.
LEASE_WAIT_S = 30.0
# The longest sleep between two tries.
_POLL_S = 0.05


class LeaseLost(StoreError):
    """This writer's lease lapsed and another took it: nothing more may be written under it."""


@dataclass(frozen=True)
class Lease:
    """A lease as its holder knows it."""

    collection: str
    source: str
    holder: str
    fence: int  # grows by one with each taking: which holder came later
    expires_at: float

    @property
    def key(self) -> str:
        return lease_key(self.collection, self.source)


def lease_key(collection: str, source: str) -> str:
    return json.dumps(["lease", collection, source])


class Leases:
    """Takes, renews and gives back document leases in one metadata collection.

    Example:
        leases = Leases(meta, ttl_s=60)
        with leases.holding("docs", "guide.md") as held:
            ...
            held.renew()  # before each write: raises LeaseLost when another writer took it meanwhile
    """

    def __init__(
        self,
        meta: MetaStore,
        ttl_s: float,
        wait_s: float = LEASE_WAIT_S,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.meta, self.ttl_s, self.wait_s, self.clock = meta, ttl_s, wait_s, clock

    def try_take(self, collection: str, source: str) -> Lease | None:
        """The lease, when no live holder has it; None when one has."""
        key = lease_key(collection, source)
        now = self.clock()
        stored = self.meta.get(key) or {}
        if stored.get("holder") and float(stored.get("expires_at", 0)) >= now:
            return None
        fence = int(stored.get("fence", 0))
        lease = Lease(collection, source, uuid.uuid4().hex, fence + 1, now + self.ttl_s)
        self.meta.put_if(key, _payload(lease), Claim(lease.holder, now, fence))
        return lease if self._holds(lease) else None

    def take(self, collection: str, source: str) -> Lease:
        """The lease, waiting up to `wait_s` for its holder to give it back or for it to lapse.

        Raises:
            StoreLockedError: another writer kept it longer.
        """
        deadline = time.monotonic() + self.wait_s
        delay = 0.005
        while (lease := self.try_take(collection, source)) is None:
            if time.monotonic() >= deadline:
                raise StoreLockedError(
                    f"{source}: another writer (the app or a `ragscope` command, maybe on another machine) is "
                    f"replacing this document in collection {collection!r}, still after {self.wait_s:g} s. "
                    f"Try again when it is done; a writer that died lets go within {self.ttl_s:g} s"
                )
            time.sleep(delay)
            delay = min(2 * delay, _POLL_S)
        return lease

    def renew(self, lease: Lease) -> Lease:
        """The lease extended by `ttl_s` from now.

        Raises:
            LeaseLost: another writer took it (this one lapsed meanwhile): stop writing.
        """
        now = self.clock()
        renewed = replace(lease, expires_at=now + self.ttl_s)
        self.meta.put_if(lease.key, _payload(renewed), Claim(lease.holder, now, lease.fence))
        if not self._holds(renewed):
            raise LeaseLost(
                f"{lease.source}: this writer's lease on the document lapsed and another writer took it; "
                "nothing more was written. Re-ingest the document if it is not what you expect"
            )
        return renewed

    def give_back(self, lease: Lease) -> None:
        """Let the next writer in now (written expired, keeping the fence); a lease lost meanwhile is left alone."""
        released = replace(lease, holder="", expires_at=0.0)
        self.meta.put_if(lease.key, _payload(released), Claim(lease.holder, self.clock(), lease.fence))

    @contextmanager
    def holding(self, collection: str, source: str) -> Iterator[Held]:
        """The document's lease for the block (`take`), given back after it whatever happens."""
        held = Held(self, self.take(collection, source))
        try:
            yield held
        finally:
            try:
                self.give_back(held.lease)
            except StoreError:  # not given back: it lapses after ttl_s
                pass

    def _holds(self, lease: Lease) -> bool:
        stored = self.meta.get(lease.key) or {}
        return stored.get("holder") == lease.holder and stored.get("fence") == lease.fence


class Held:
    """A lease being held: `renew` before each write."""

    def __init__(self, leases: Leases, lease: Lease) -> None:
        self.leases, self.lease = leases, lease

    def renew(self) -> None:
        self.lease = self.leases.renew(self.lease)


def _payload(lease: Lease) -> dict[str, object]:
    return {
        "kind": "lease",
        "collection": lease.collection,
        "source": lease.source,
        "holder": lease.holder,
        "fence": lease.fence,
        "expires_at": lease.expires_at,
    }
