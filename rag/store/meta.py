"""Small records every writer of a collection must share, kept in Qdrant itself: document leases
(rag/store/doc_lease.py) and, on a server, the crash journal (rag/store/meta_journal.py).

Each record is one payload-only point of the collection `ragscope_meta` beside the others on a server
(and in qdrant-client's local mode), its id derived from its key, written whole. The embedded engine
has none: its writers all share one machine and take turns on the shard (rag/store/lease.py,
rag/store/doc_lease.py's TurnLeases), and its journal is files under the data dir.

`put_if` is the one conditional write the leases are built on: Qdrant's conditional upsert
(`update_filter`) inserts a missing point and replaces an existing one only when its stored payload
matches the filter, as one update operation of the shard holding it. It does not say whether it
wrote: a caller reads the record back (see docs/reliability.md, "Writers on several machines", for
what the engine guarantees).
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from typing import Any, Callable, TypeVar

from rag.errors import RagError, StoreError

# The metadata collection's name on a server; ClientStore.list_collections leaves it out.
META_COLLECTION = "ragscope_meta"
# The first Qdrant with conditional updates (qdrant/qdrant#7006); an older server would not apply the
# condition, and two writers could both take one lease.
CONDITIONAL_SINCE = (1, 16)
# The keyword fields a record may be found by (`find`).
_FOUND_BY = ("kind", "collection", "source")

# How many times `swap` starts again from another writer's change before giving up (each try is three calls).
SWAP_TRIES = 20
# How many of its last swaps a record remembers (see `swap`): more than can land between a write and its read-back.
SWAP_TOKENS = 32

T = TypeVar("T")


@dataclass(frozen=True)
class Claim:
    """When a conditional write applies to a stored record: its `fence` is `fence`, and its `holder` is
    `holder` or its `expires_at` is before `now` (a missing record is always written)."""

    holder: str
    now: float
    fence: int


def point_id(key: str) -> str:
    """A record's point id: Qdrant takes UUIDs or integers, keys are text."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"ragscope-meta:{key}"))


class MetaStore:
    """Records by key in the metadata collection on a qdrant-client (a server, or its local mode), created on
    first use; every method is one engine call or two, any engine error a StoreError.

    Writes wait for the server and use strong ordering (every replica applies them in the order of the
    shard's leader), reads ask every replica (`ReadConsistencyType.ALL`): a lease read back must be the
    one the conditional write left, not a lagging replica's.
    """

    def __init__(self, client: Any, remedy: str) -> None:  # noqa: ANN401 - a QdrantClient, or the turn-taking local one
        from qdrant_client import models

        self.client, self.remedy, self._models = client, remedy, models
        self._ready = False

    def _ensure(self) -> None:
        if self._ready:
            return
        version = str(self.client.info().version)
        if tuple(int(p) for p in version.split(".")[:2] if p.isdigit()) < CONDITIONAL_SINCE:
            raise StoreError(
                f"the Qdrant server is version {version}; ragscope's document leases need conditional updates, "
                f"{'.'.join(map(str, CONDITIONAL_SINCE))} or later: upgrade the server"
            )
        if not self.client.collection_exists(META_COLLECTION):
            try:
                self.client.create_collection(META_COLLECTION, vectors_config={})
            except Exception:  # noqa: BLE001 - another writer created it meanwhile: fine, else raise below
                if not self.client.collection_exists(META_COLLECTION):
                    raise
            for name in _FOUND_BY:
                self.client.create_payload_index(META_COLLECTION, name, self._models.PayloadSchemaType.KEYWORD)
        self._ready = True

    def _get(self, pid: str) -> dict[str, Any] | None:
        self._ensure()
        found = self.client.retrieve(
            META_COLLECTION, [pid], with_payload=True, consistency=self._models.ReadConsistencyType.ALL
        )
        return dict(found[0].payload or {}) if found else None

    def _put(self, pid: str, payload: dict[str, Any], claim: Claim | None) -> None:
        self._ensure()
        m = self._models
        condition = None
        if claim is not None:
            condition = m.Filter(
                must=[m.FieldCondition(key="fence", match=m.MatchValue(value=claim.fence))],
                should=[
                    m.FieldCondition(key="holder", match=m.MatchValue(value=claim.holder)),
                    m.FieldCondition(key="expires_at", range=m.Range(lt=claim.now)),
                ],
            )
        self.client.upsert(
            META_COLLECTION,
            [m.PointStruct(id=pid, vector={}, payload=payload)],
            wait=True,
            ordering=m.WriteOrdering.STRONG,
            update_filter=condition,
        )

    def _delete(self, pid: str) -> None:
        self._ensure()
        m = self._models
        selector = m.PointIdsList(points=[pid])
        self.client.delete(META_COLLECTION, points_selector=selector, wait=True, ordering=m.WriteOrdering.STRONG)

    def _find(self, match: dict[str, str]) -> list[dict[str, Any]]:
        self._ensure()
        m = self._models
        flt = m.Filter(must=[m.FieldCondition(key=k, match=m.MatchValue(value=v)) for k, v in match.items()])
        out: list[dict[str, Any]] = []
        offset = None
        while True:
            records, offset = self.client.scroll(
                META_COLLECTION, scroll_filter=flt, limit=256, offset=offset, with_payload=True,
                consistency=m.ReadConsistencyType.ALL,
            )  # fmt: skip
            out += [dict(r.payload or {}) for r in records]
            if offset is None:
                return out

    def close(self) -> None:
        """The client is the data store's, which closes it."""

    def get(self, key: str) -> dict[str, Any] | None:
        """The record stored under `key`, or None."""
        return self._call("read a record", lambda: self._get(point_id(key)))

    def get_many(self, keys: list[str]) -> list[dict[str, Any] | None]:
        """The records stored under `keys`, in their order (None where there is none), in one call."""
        return self._call("read records", lambda: self._get_many(keys))

    def _get_many(self, keys: list[str]) -> list[dict[str, Any] | None]:
        self._ensure()
        ids = [point_id(k) for k in keys]
        found = self.client.retrieve(
            META_COLLECTION, ids, with_payload=True, consistency=self._models.ReadConsistencyType.ALL
        )
        by_id = {str(r.id): dict(r.payload or {}) for r in found}
        return [by_id.get(i) for i in ids]

    def put(self, key: str, payload: dict[str, Any]) -> None:
        """Write the record under `key` whole, whatever was there."""
        self._call("write a record", lambda: self._put(point_id(key), {**payload, "key": key}, None))

    def put_if(self, key: str, payload: dict[str, Any], claim: Claim) -> None:
        """Write the record under `key` whole when it is missing or `claim` holds for it; else leave it."""
        self._call("write a record", lambda: self._put(point_id(key), {**payload, "key": key}, claim))

    def delete(self, key: str) -> None:
        self._call("delete a record", lambda: self._delete(point_id(key)))

    def swap(self, key: str, change: Callable[[dict[str, Any] | None], dict[str, Any]]) -> dict[str, Any]:
        """Replace the record under `key` by `change(old)` (old None when missing) unless another writer
        changed it meanwhile, then try again from theirs: a read-merge-write that loses no change.

        The record carries a `fence` counted up by every swap, and the write is conditional on the fence
        read (the lease's condition, `put_if`, with no holder and an expiry long past). Whether it landed is
        read back: the record keeps the tokens of its last `SWAP_TOKENS` swaps, and a later writer's swap
        builds on the record it read, so a token still there means this write is in. Records swapped
        under one key must only be written by `swap`.

        Raises:
            StoreError: an engine error, or other writers changed the record `SWAP_TRIES` times in a row.
        """
        for _ in range(SWAP_TRIES):
            old = self.get(key)
            fence = int(old.get("fence", 0)) if old else 0
            new = change(old)
            token = uuid.uuid4().hex
            tokens = [*(old.get("tokens", []) if old else [])][-(SWAP_TOKENS - 1) :] + [token]
            # Claim's condition is "fence matches, and holder matches or expires_at < now": no holder, and an
            # expiry of 0 always before now, leave "fence matches" (a missing record is always written).
            claim = Claim(holder=token, now=time.time(), fence=fence)
            payload = {**new, "fence": fence + 1, "tokens": tokens, "holder": "", "expires_at": 0.0}
            self.put_if(key, payload, claim)
            if token in (self.get(key) or {}).get("tokens", []):
                return new
        raise StoreError(
            f"could not write the record {key} in the metadata collection: other writers changed it "
            f"{SWAP_TRIES} times in a row; try again"
        )

    def find(self, **match: str) -> list[dict[str, Any]]:
        """Every record whose keyword fields (kind, collection, source) equal these values."""
        if set(match) - set(_FOUND_BY):
            raise ValueError(f"records are found by {', '.join(_FOUND_BY)} only, not {sorted(match)}")
        return self._call("read records", lambda: self._find(match))

    def _call(self, what: str, call: Callable[[], T]) -> T:
        try:
            return call()
        except RagError:
            raise
        except Exception as e:  # noqa: BLE001 - qdrant-client's HTTP, gRPC and local-mode errors, translated once here
            raise StoreError(f"could not {what} in the metadata collection ({type(e).__name__}: {e}); {self.remedy}")
