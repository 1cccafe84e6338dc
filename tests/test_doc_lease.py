"""The document lease kept in Qdrant (rag/store/doc_lease.py), in the metadata collection of
qdrant-client's local mode (a server's stand-in).

One holder at a time, a stale compare-and-swap never applied, a lapsed holder cannot renew nor give
back its successor's lease, a dead holder on this machine is taken over at once (by one waiter of
two) while one that cannot be checked is waited for until its lease lapses, and the journal a dead
writer left on a server is settled by the next holder of the document's lease. Two processes and
SIGKILL in a loop: tests/test_writers_race.py.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest
from qdrant_client import QdrantClient

from rag.errors import StoreLockedError
from rag.store.base import CollectionModels, PointData
from rag.store.client import ClientStore
from rag.store.doc_lease import Lease, LeaseLost, Leases, _payload, lease_key
from rag.store.holder import Holder, this_process
from rag.store.journal import JournalEntry
from rag.store.local_turns import TurnClient
from rag.store.meta import Claim, MetaStore
from rag.store.meta_journal import MetaJournal
from rag.types import ChunkFilter, SparseVector


class Clock:
    """Wall time the test moves on, so a lease lapses without waiting for it."""

    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def meta(tmp_path: Path) -> MetaStore:
    client = QdrantClient(path=str(tmp_path / "local"))
    yield MetaStore(client, "check the folder")
    client.close()


def test_one_holder_at_a_time_and_the_fence_grows(meta: MetaStore) -> None:
    clock = Clock()
    leases = Leases(meta, ttl_s=10, wait_s=0.2, clock=clock)
    first = leases.take("docs", "guide.md")
    assert first.fence == 1
    assert leases.try_take("docs", "guide.md") is None
    assert leases.try_take("docs", "other.md") is not None  # leases are per document
    assert leases.try_take("other", "guide.md") is not None  # and per collection
    with pytest.raises(StoreLockedError, match="guide.md"):
        leases.take("docs", "guide.md")
    leases.give_back(first)
    second = leases.take("docs", "guide.md")
    assert (second.fence, second.holder != first.holder) == (2, True)


def test_a_stale_compare_and_swap_is_not_applied(meta: MetaStore) -> None:
    """Two takers read fence 1; the first to write wins, the second's write (expecting fence 1) is dropped."""
    clock = Clock()
    leases = Leases(meta, ttl_s=10, clock=clock)
    leases.give_back(leases.take("docs", "guide.md"))  # fence 1, free
    winner = leases.take("docs", "guide.md")
    assert winner.fence == 2
    late = {"kind": "lease", "collection": "docs", "source": "guide.md", "holder": "late", "fence": 2}
    meta.put_if(lease_key("docs", "guide.md"), {**late, "expires_at": clock.now + 10}, Claim("late", clock.now + 99, 1))
    assert meta.get(lease_key("docs", "guide.md"))["holder"] == winner.holder


def test_a_lapsed_holder_cannot_renew_nor_give_back_its_successors_lease(meta: MetaStore) -> None:
    clock = Clock()
    leases = Leases(meta, ttl_s=10, clock=clock)
    dead = leases.take("docs", "guide.md")
    clock.now += 5
    dead = leases.renew(dead)  # renewed in time: still its own for 10 s from now
    clock.now += 9
    assert leases.try_take("docs", "guide.md") is None
    clock.now += 2  # lapsed
    successor = leases.take("docs", "guide.md")
    assert successor.fence == dead.fence + 1
    with pytest.raises(LeaseLost, match="another writer took it"):
        leases.renew(dead)
    leases.give_back(dead)
    assert meta.get(successor.key)["holder"] == successor.holder


def test_a_dead_writers_journal_is_settled_by_the_next_holder_of_the_document(tmp_path: Path) -> None:
    """On a server: a replacement died after writing its new chunk and before deleting the old one."""
    client = QdrantClient(path=str(tmp_path / "local"))
    store = ClientStore(client, "docs")
    store.ensure_collection(CollectionModels("tiny", 2, "Qdrant/bm25"))
    old, new = (PointData(f"00000000-0000-0000-0000-00000000000{i}", [1.0, float(i)], SparseVector((), ()),
                          {"source": "guide.md", "text": name}) for i, name in ((1, "old"), (2, "new")))  # fmt: skip
    store.upsert([old, new])
    clock = Clock()
    leases = Leases(MetaStore(client, "check the folder"), ttl_s=10, clock=clock)
    dead = MetaJournal(leases.meta, leases, "docs")
    held = leases.take("docs", "guide.md")
    dead.write(JournalEntry("guide.md", "apply", added=[new.id], removed=[old.id]))
    live = MetaJournal(leases.meta, leases, "docs")
    assert live.recover(store) == []  # the dead writer's lease has not lapsed: left for later
    assert store.count() == 2
    clock.now += 11
    assert live.recover(store) == ["guide.md"]  # rolled back: the old version alone
    assert [r.chunk.text for r in store.records(ChunkFilter(sources=("guide.md",)))] == ["old"]
    assert leases.meta.find(kind="journal") == []
    assert leases.try_take("docs", "guide.md") is not None  # recovery gave the lease back
    assert held.fence == 1
    store.close()


def _held_by(meta: MetaStore, process: Holder, now: float, ttl_s: float = 60.0) -> Lease:
    """A lease on guide.md of collection docs, stored as `process` would have taken it."""
    lease = Lease("docs", "guide.md", "the-holder", 1, now + ttl_s, process)
    meta.put(lease.key, _payload(lease))
    return lease


def test_a_holder_killed_on_this_machine_is_taken_over_at_once(tmp_path: Path) -> None:
    """A real process takes the lease (local mode shared by processes) and is SIGKILLed: the next taker does not
    wait for its 60 s ttl. Still alive, and as a zombie not yet reaped, it keeps / loses it as it should."""
    folder = tmp_path / "server"
    child = (
        "import sys, time\n"
        "from rag.store.doc_lease import Leases\nfrom rag.store.local_turns import TurnClient\n"
        "from rag.store.meta import MetaStore\n"
        "Leases(MetaStore(TurnClient(sys.argv[1]), 'x'), ttl_s=60).take('docs', 'guide.md')\n"
        "print('taken', flush=True)\ntime.sleep(120)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    proc = subprocess.Popen([sys.executable, "-c", child, str(folder)], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout.readline().strip() == "taken"
        meta = MetaStore(TurnClient(folder), "check the folder")
        leases = Leases(meta, ttl_s=60, wait_s=0.2)
        assert leases.try_take("docs", "guide.md") is None  # alive
        os.kill(proc.pid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while Holder(**meta.get(lease_key("docs", "guide.md"))["process"]).gone() is False:
            assert time.monotonic() < deadline, "the killed holder still looks alive"
            time.sleep(0.01)  # a zombie until reaped below: already judged dead
        started = time.monotonic()
        taken = leases.take("docs", "guide.md")
        assert (taken.fence, taken.process) == (2, this_process())
        assert time.monotonic() - started < 5
    finally:
        proc.kill()
        proc.wait()
    meta.client.close()


def test_a_pid_now_another_process_is_a_dead_holder(meta: MetaStore) -> None:
    me = this_process()
    assert not me.gone()
    assert replace(me, started=str(int(me.started) + 1)).gone()  # the pid was reused by a later process
    leases = Leases(meta, ttl_s=60, wait_s=0.2)
    _held_by(meta, replace(me, started="0"), time.time())
    assert leases.take("docs", "guide.md").fence == 2


def test_of_two_waiters_taking_a_dead_holders_lease_one_wins(meta: MetaStore) -> None:
    now = time.time()
    dead = _held_by(meta, replace(this_process(), started="0"), now)
    first = Leases(meta, ttl_s=60).try_take("docs", "guide.md")
    assert first is not None and first.fence == 2
    # The second waiter read the same record (fence 1, the dead holder) and writes as the first did.
    late = replace(first, holder="second-waiter")
    meta.put_if(dead.key, _payload(late), Claim(dead.holder, now, dead.fence))
    assert meta.get(dead.key)["holder"] == first.holder


def test_a_holder_that_cannot_be_checked_is_waited_for_until_its_lease_lapses(meta: MetaStore) -> None:
    """Another machine's holder (or one on a system without /proc): its pid says nothing here, so a taker waits
    past its own wait_s, as long as the lease it saw has left, and then takes it."""
    elsewhere = Holder("another-machine|boot|pid:[1]", os.getpid(), "1")
    assert not elsewhere.gone() and not Holder("", 999_999_999, "").gone()
    _held_by(meta, elsewhere, time.time(), ttl_s=1.0)
    leases = Leases(meta, ttl_s=60, wait_s=0.1)
    started = time.monotonic()
    assert leases.take("docs", "guide.md").fence == 2
    assert time.monotonic() - started >= 0.9
