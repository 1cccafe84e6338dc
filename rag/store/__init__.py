"""Qdrant behind one interface: `open_store(settings)` picks the backend from the settings."""

from __future__ import annotations

from rag.config import Settings
from rag.store.base import CollectionModels, PointData, Store, chunk_payload, document_info
from rag.store.client import ClientStore
from rag.store.edge import EdgeStore, edge_collections

__all__ = ["CollectionModels", "PointData", "Store", "chunk_payload", "document_info", "open_store", "list_collections", "ClientStore", "EdgeStore"]


def open_store(settings: Settings) -> Store:
    """Open the configured store: a Qdrant server when QDRANT_URL is set, else the embedded engine under the data dir."""
    if settings.qdrant_url:
        return ClientStore.connect(settings.qdrant_url, settings.qdrant_api_key.value, settings.collection)
    return EdgeStore(settings.data_dir / "qdrant", settings.collection)


def list_collections(settings: Settings) -> list[str]:
    """The collections on the configured backend, without opening (or locking) any of them on the embedded engine."""
    if not settings.qdrant_url:
        return edge_collections(settings.data_dir / "qdrant")
    store = ClientStore.connect(settings.qdrant_url, settings.qdrant_api_key.value, settings.collection)
    try:
        return store.list_collections()
    finally:
        store.close()
