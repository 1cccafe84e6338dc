"""Qdrant behind one interface: `open_store(settings)` picks the backend from the settings.

The backends load on first use (`from rag.store import EdgeStore` still works): qdrant-client pulls
in fastembed and onnxruntime, seconds of start-up that `ragscope --help` should not pay.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rag.settings.config import Settings
from rag.store.base import CollectionModels, FusedQuery, PointData, Store, chunk_payload, document_info

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
    "list_collections",
    "ClientStore",
    "EdgeStore",
]


def __getattr__(name: str) -> Any:  # noqa: ANN401 - PEP 562 lazy attributes
    if name == "ClientStore":
        from rag.store.client import ClientStore

        return ClientStore
    if name == "EdgeStore":
        from rag.store.edge import EdgeStore

        return EdgeStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def open_store(settings: Settings) -> Store:
    """Open the configured store: a Qdrant server when QDRANT_URL is set, else the embedded engine under the
    data dir."""
    if settings.qdrant_url:
        from rag.store.client import ClientStore

        return ClientStore.connect(settings.qdrant_url, settings.qdrant_api_key.value, settings.collection)
    from rag.store.edge import EdgeStore

    return EdgeStore(settings.data_dir / "qdrant", settings.collection)


def list_collections(settings: Settings) -> list[str]:
    """The collections on the configured backend, without opening (or locking) any of them on the embedded engine."""
    if not settings.qdrant_url:
        from rag.store.edge import edge_collections

        return edge_collections(settings.data_dir / "qdrant")
    from rag.store.client import ClientStore

    store = ClientStore.connect(settings.qdrant_url, settings.qdrant_api_key.value, settings.collection)
    try:
        return store.list_collections()
    finally:
        store.close()
