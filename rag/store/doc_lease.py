"""One writer per document at a time, across processes and machines: a lease kept in Qdrant itself.

A document replacement (rag/ingest/write.py) holds the lease of its (collection, source) for its
whole run. The lease is a record in the metadata collection (rag/store/meta.py):
`{holder, fence, expires_at}`. Taking it is a compare-and-swap on the record's `fence`:

1. read the record (missing: fence 0); when it is held and not expired, and its holder is not certainly
   dead (rag/store/holder.py: a process of this machine that is gone), wait and try again;
2. conditionally write `{holder: a fresh token, fence: fence + 1, expires_at: now + ttl, and who holds
   it}`, applied only while the stored fence is still the one read and the lease has expired or still
   names the dead holder read (Qdrant's conditional upsert; a missing record is inserted, and of two
   inserts the second finds the first's fence): of two waiters taking a dead holder's lease, one wins;
3. read it back: the lease is taken when the record holds this token and fence.

The holder renews it (the same compare-and-swap on its own token and fence) before each step that
writes, and gives it back by writing it expired. A holder that dies stops renewing: a waiter on its
machine takes the lease over at once; one elsewhere, which cannot check a pid, waits for it to lapse
after `ttl_s` (the wait is never shorter than the lease it first saw had left), and the next taker
repairs what it left (its journal entry). A holder that finds its lease taken stops without writing
(LeaseLost). What this does not cover (a holder paused longer than the lease between a renewal and
its next write, clocks apart by more than the lease) is in docs/reliability.md, "Writers on several
machines".

On the embedded engine there is no such lease (`TurnLeases`): a replacement runs inside one turn on
the collection's shard (rag/store/lease.py), which no other process can have meanwhile, and a dead
writer's turn ends with its process (the file lock goes with it).
"""

from __future__ import annotations

import json
import time
import uuid
from contextlib import contextmanager
from dataclasses import asdict, dataclass, replace
from typing import Any, Callable, Iterator

from rag.errors import StoreError, StoreLockedError
from rag.store.holder import Holder, this_process
from rag.store.meta import Claim, MetaStore

# How long to wait for another writer's lease before giving up: as the embedded engine's turns (longer
# for a lease whose holder cannot be checked: until it would have lapsed).
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
    process: Holder = Holder("", 0, "")  # the process holding it, for a waiter to check

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
        return self._attempt(collection, source)[0]

    def _attempt(self, collection: str, source: str) -> tuple[Lease | None, float]:
        """The lease or None (`try_take`), and the seconds a live holder's lease has left when that holder
        cannot be checked (0 when it can: it is alive)."""
        key = lease_key(collection, source)
        now = self.clock()
        stored = self.meta.get(key) or {}
        claimed = ""  # the dead holder whose lease this write may replace, unexpired
        if stored.get("holder") and float(stored.get("expires_at", 0)) >= now:
            process = _process(stored)
            if not process.gone():
                return None, (0.0 if process.checkable else float(stored["expires_at"]) - now)
            claimed = str(stored["holder"])
        fence = int(stored.get("fence", 0))
        lease = Lease(collection, source, uuid.uuid4().hex, fence + 1, now + self.ttl_s, this_process())
        self.meta.put_if(key, _payload(lease), Claim(claimed or lease.holder, now, fence))
        return (lease if self._holds(lease) else None), 0.0

    def take(self, collection: str, source: str) -> Lease:
        """The lease, waiting up to `wait_s` for its holder to give it back, die or let it lapse; a holder
        on another machine is waited for at least until the lease first seen would lapse.

        Raises:
            StoreLockedError: another writer kept it longer.
        """
        started = time.monotonic()
        deadline = None
        delay = 0.005
        while True:
            lease, lapses_in = self._attempt(collection, source)
            if lease is not None:
                return lease
            now = time.monotonic()
            deadline = deadline or now + max(self.wait_s, lapses_in + _POLL_S)
            if now >= deadline:
                raise StoreLockedError(
                    f"{source}: another writer (the app or a `ragscope` command, maybe on another machine) is "
                    f"replacing this document in collection {collection!r}, still after {now - started:.0f} s. "
                    f"Try again when it is done; a writer that died lets go within {self.ttl_s:g} s"
                )
            time.sleep(delay)
            delay = min(2 * delay, _POLL_S)

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

    def close(self) -> None:
        self.meta.close()

    def _holds(self, lease: Lease) -> bool:
        stored = self.meta.get(lease.key) or {}
        return stored.get("holder") == lease.holder and stored.get("fence") == lease.fence


class Held:
    """A lease being held: `renew` before each write."""

    def __init__(self, leases: Leases, lease: Lease) -> None:
        self.leases, self.lease = leases, lease

    def renew(self) -> None:
        self.lease = self.leases.renew(self.lease)


class InTurn:
    """A document held by the embedded engine's turn: nothing lapses while the turn lasts."""

    def renew(self) -> None:
        """Nothing to renew: the turn outlasts the replacement."""


class TurnLeases:
    """The embedded engine's document leases: none beyond the replacement's own turn on the collection
    (rag/store/lease.py; rag/ingest/write.py holds the store's lock, which is that turn, for the whole
    replacement). A lease in Qdrant would add nothing there (the turn already excludes every other process
    that can open the shard, all on this machine) and cost a dead writer's successors its ttl; a dead
    writer's journal is replayed at the start of the next turn."""

    @contextmanager
    def holding(self, collection: str, source: str) -> Iterator[InTurn]:
        yield InTurn()

    def close(self) -> None:
        """Nothing to close: the turn is the store's."""


# What a document replacement holds its document by: a lease in Qdrant (a server) or the turn (embedded).
DocLeases = Leases | TurnLeases


def _payload(lease: Lease) -> dict[str, object]:
    return {
        "kind": "lease",
        "collection": lease.collection,
        "source": lease.source,
        "holder": lease.holder,
        "fence": lease.fence,
        "expires_at": lease.expires_at,
        "process": asdict(lease.process),
    }


def _process(stored: dict[str, Any]) -> Holder:
    """The process a stored lease names (an unknown one, never judged dead, when it names none)."""
    raw = stored.get("process")
    if not isinstance(raw, dict):
        return Holder("", 0, "")
    return Holder(str(raw.get("host", "")), int(raw.get("pid", 0)), str(raw.get("started", "")))
