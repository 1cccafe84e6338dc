"""What a collection was made with and how its shards stand, as a backend reports them, and which cluster
settings a backend cannot apply, said in words rather than dropped in silence.

The settings are `ClusterConfig` (rag/settings/config.py); each backend names the fields it applies
(`Store.applied_cluster`), reports its collection's `Layout` and, where its engine can, its `ClusterStatus`.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import dataclass
from typing import Any

from rag.settings.config import ClusterConfig
from rag.settings.spec import knobs


@dataclass(frozen=True)
class Layout:
    """What a collection was made with; a field is None where its engine does not report it."""

    shards: int | None = None
    replicas: int | None = None
    write_consistency: int | None = None
    on_disk_vectors: bool | None = None
    on_disk_payload: bool | None = None
    quantization: str | None = None  # none, scalar, binary, or another kind Qdrant names (product)

    def describe(self) -> str:
        """One line: "6 shards, 2 replicas, write consistency 2, vectors in RAM, payload on disk, no quantization"."""
        parts = []
        if self.shards is not None:
            parts.append(_count(self.shards, "shard"))
        if self.replicas is not None:
            parts.append(_count(self.replicas, "replica"))
        if self.write_consistency is not None:
            parts.append(f"write consistency {self.write_consistency}")
        for what, on_disk in (("vectors", self.on_disk_vectors), ("payload", self.on_disk_payload)):
            if on_disk is not None:
                parts.append(f"{what} {'on disk' if on_disk else 'in RAM'}")
        if self.quantization is not None:
            parts.append("no quantization" if self.quantization == "none" else f"{self.quantization} quantization")
        return ", ".join(parts) or "not reported"

    def as_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class ShardReplica:
    """One replica of one shard: on which peer, in which state (Active, Dead, Partial, Initializing, ...)."""

    shard: int
    peer: int | None
    state: str
    points: int | None = None  # reported for the replicas on the peer that answered only


@dataclass(frozen=True)
class ClusterStatus:
    """A collection's shards and the state of each replica as the server reports them; `why` says why there is
    none to show (the embedded engine and qdrant-client's local mode keep no cluster)."""

    peer: int | None = None  # the peer that answered
    shard_count: int | None = None
    replicas: tuple[ShardReplica, ...] = ()
    transfers: int = 0  # shard transfers under way (a replica being copied or moved)
    why: str = ""

    @property
    def reported(self) -> bool:
        return not self.why

    def describe(self) -> str:
        """One line: "6 shards, 12 replicas on 3 peers: 12 Active", or why it is not reported."""
        if not self.reported:
            return self.why
        peers = {r.peer for r in self.replicas}
        states = Counter(r.state for r in self.replicas)
        text = (
            f"{_count(self.shard_count or 0, 'shard')}, {_count(len(self.replicas), 'replica')} on "
            f"{_count(len(peers), 'peer')}: " + ", ".join(f"{n} {state}" for state, n in sorted(states.items()))
        )
        return text + (f"; {_count(self.transfers, 'transfer')} under way" if self.transfers else "")

    def as_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self) | {"reported": self.reported}


def unapplied_note(cluster: ClusterConfig, applied: frozenset[str], engine: str) -> str:
    """The settings off their defaults that `engine` does not apply, named with their variables in one
    sentence; "" when it applies every one that is set."""
    ignored = [k for k in knobs(ClusterConfig) if k.name not in applied and getattr(cluster, k.name) != k.default]
    if not ignored:
        return ""
    named = ", ".join(f"{k.label.lower()} ({k.env}={_shown(getattr(cluster, k.name))})" for k in ignored)
    verb = "does" if len(ignored) == 1 else "do"
    return f"{named} {verb} not apply on {engine}, only on a Qdrant server (QDRANT_URL)"


def _shown(value: Any) -> str:  # noqa: ANN401 - a ClusterConfig value
    """As the variable would be set."""
    if isinstance(value, bool):
        return "1" if value else "0"
    return f"{value:g}" if isinstance(value, float) else str(value)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"
