"""The document lease kept in Qdrant (rag/store/doc_lease.py), on both engines' metadata collections:
qdrant-client's local mode and an embedded shard.

One holder at a time, a stale compare-and-swap never applied, a lapsed holder cannot renew nor give
back its successor's lease, and the journal a dead writer left on a server is settled by the next
holder of the document's lease. Two processes and SIGKILL: tests/test_writers_race.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from qdrant_client import QdrantClient

from rag.errors import StoreLockedError
from rag.store.base import CollectionModels, PointData
from rag.store.client import ClientStore
from rag.store.doc_lease import LeaseLost, Leases, lease_key
from rag.store.journal import JournalEntry
from rag.store.meta import Claim, ClientMeta, EdgeMeta, MetaStore
from rag.store.meta_journal import MetaJournal
from rag.types import ChunkFilter, SparseVector


class Clock:
    """Wall time the test moves on, so a lease lapses without waiting for it."""

    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(params=["local", "edge"])
def meta(request: pytest.FixtureRequest, tmp_path: Path) -> MetaStore:
    if request.param == "local":
        store: MetaStore = ClientMeta(QdrantClient(path=str(tmp_path / "local")), "check the folder")
    else:
        store = EdgeMeta(tmp_path / "meta")
    yield store
    store.close()


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
    leases = Leases(ClientMeta(client, "check the folder"), ttl_s=10, clock=clock)
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
