"""Qdrant behind one interface: `open_store(settings)` picks the backend from the settings.

The backends load on first use (`from rag.store import EdgeStore` still works): qdrant-client pulls
in fastembed and onnxruntime, seconds of start-up that `ragscope --help` should not pay.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rag.settings.config import Settings
from rag.settings.extensions import Extension
from rag.settings.shared_home import SharedHome
from rag.store.base import CollectionModels, FusedQuery, PointData, Store, chunk_payload, document_info
from rag.store.doc_lease import DocLeases

if TYPE_CHECKING:
    from rag.store.client import ClientStore
    from rag.store.edge import EdgeStore

__all__ = [
    "CollectionModels",
    "FusedQuery",
    "PointData",
    "Store",
    "chunk_payload",
    "document_info",
    "open_store",
    "open_leases",
    "list_collections",
    "shared_home",
    "ClientStore",
    "EdgeStore",
]


@dataclass(frozen=True)
class Backend(Extension):
    """A store backend: `cls` is its `Store` subclass in `module`, `chosen_when` the setting that picks it."""

    cls: str = ""
    chosen_when: str = ""


# Every store backend, registered once: the lazy attributes below and the docs' list derive from it
# (tests/test_docs_match_registries.py); each must pass tests/test_store_contract.py.
BACKENDS: tuple[Backend, ...] = (
    Backend("edge", "Qdrant's own engine in-process (qdrant-edge-py), under the data dir", "rag.store.edge",
            "EdgeStore", "QDRANT_URL is unset"),
    Backend("client", "qdrant-client: a Qdrant server, or its local mode", "rag.store.client", "ClientStore",
            "QDRANT_URL is set"),
)  # fmt: skip


def __getattr__(name: str) -> Any:  # noqa: ANN401 - PEP 562 lazy attributes
    for backend in BACKENDS:
        if backend.cls == name:
            return getattr(importlib.import_module(backend.module), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def on_server(settings: Settings) -> bool:
    """The store's rule (`Settings.backend`): a Qdrant server (or qdrant-client standing in for one) when
    QDRANT_URL is set, else the embedded engine under the data dir. Every choice here between the two asks this."""
    return settings.backend == "server"


def open_store(settings: Settings) -> Store:
    """Open the configured store: a Qdrant server when QDRANT_URL is set, else the embedded engine under the
    data dir."""
    if on_server(settings):
        from rag.store.client import ClientStore

        return ClientStore.connect(
            settings.qdrant_url, settings.qdrant_api_key.value, settings.collection, settings.cluster
        )
    from rag.store.edge import EdgeStore

    return EdgeStore(settings.data_dir / "qdrant", settings.collection, cluster=settings.cluster)


def open_leases(settings: Settings, store: Store) -> DocLeases:
    """What a document replacement on `store` holds its document by (rag/store/doc_lease.py): a lease in the
    metadata collection of the server `store` talks to, through its client; the store's own turn on the
    embedded engine."""
    from rag.store.doc_lease import Leases, TurnLeases

    if not on_server(settings):  # the embedded engine: qdrant-client stays unimported (tests/test_cli_startup.py)
        return TurnLeases()
    from rag.store.client import ClientStore
    from rag.store.meta import MetaStore

    if isinstance(store, ClientStore):
        return Leases(MetaStore(store.client, store.remedy), settings.lease_ttl_s)
    return TurnLeases()


def shared_home(settings: Settings, store: Store | None = None) -> SharedHome:
    """Where the state every replica must share lives (rag/settings/shared_home.py): the metadata collection of
    the server the store talks to, through `store`'s client when it is given (one connection, and on `local:`
    one folder taker), else a client of its own; files under the data dir on the embedded engine.

    qdrant-client's in-memory mode (`:memory:`) keeps files too: no other process can reach it, and a client of
    its own would start empty.

    Raises:
        StoreError: the server cannot be reached (the message says what to check).
    """
    if not on_server(settings) or settings.qdrant_url == ":memory:":
        return SharedHome(settings.data_dir)
    from rag.store.client import ClientStore
    from rag.store.meta import MetaStore

    client_store = store if isinstance(store, ClientStore) else None
    if client_store is None:
        client_store = ClientStore.connect(settings.qdrant_url, settings.qdrant_api_key.value, settings.collection)
    return SharedHome(settings.data_dir, MetaStore(client_store.client, client_store.remedy), client_store.engine_name)


def list_collections(settings: Settings) -> list[str]:
    """The collections on the configured backend, without opening (or locking) any of them on the embedded engine."""
    if not on_server(settings):
        from rag.store.edge import edge_collections

        return edge_collections(settings.data_dir / "qdrant")
    from rag.store.client import ClientStore

    store = ClientStore.connect(settings.qdrant_url, settings.qdrant_api_key.value, settings.collection)
    try:
        return store.list_collections()
    finally:
        store.close()
