"""Collections as a first-class thing: list, describe, create and delete them.

A collection is one set of documents embedded by one pair of models. The sample help centre gets its
own (`sample`), so its fictional answers never come up for a user's real documents; BEIR folders get
theirs (`beir-<folder>`). RAGSCOPE_COLLECTION names the default one.
"""

from __future__ import annotations

import dataclasses
import difflib
import shutil
from dataclasses import dataclass
from typing import Any

from rag.components import Components, build_components
from rag.errors import ConfigError, RagError
from rag.ingest import fix_history
from rag.settings.collection_settings import reset_collection_settings
from rag.settings.config import ClusterConfig, Settings, validate_collection_name
from rag.store import list_collections
from rag.store.base import CollectionModels
from rag.store.layout import ClusterStatus, Layout

SAMPLE_COLLECTION = "sample"


@dataclass(frozen=True)
class CollectionInfo:
    """One collection as the pickers and `ragscope collections` list it.

    `models` is None until something is written; `chunks` and `documents` are None and `error` says
    why when the collection could not be opened (on the embedded engine: another process holds it).
    `layout` is what it was made with (shards, replicas, on-disk storage, quantization) and `cluster` its
    shards' state, or why the engine does not report it; `note` names the configured cluster settings
    this backend does not apply.
    """

    name: str
    models: CollectionModels | None
    chunks: int | None
    documents: int | None
    error: str = ""
    layout: Layout | None = None
    cluster: ClusterStatus | None = None
    note: str = ""

    @property
    def sentence_vectors(self) -> bool | None:
        return self.models.sentence_vectors if self.models else None

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "dense_model": self.models.dense_model if self.models else None,
            "dense_runtime": self.models.dense_runtime if self.models else None,
            "sparse_model": self.models.sparse_model if self.models else None,
            "sentence_vectors": self.sentence_vectors,
            "dense_vectors": [s.name for s in self.models.spaces] if self.models else [],
            "chunks": self.chunks,
            "documents": self.documents,
            "layout": self.layout.as_json() if self.layout else None,
            "cluster": self.cluster.as_json() if self.cluster else None,
            "error": self.error or None,
        }


def for_collection(settings: Settings, name: str) -> Settings:
    """`settings` on another collection (same data dir, backend and models).

    Raises:
        ConfigError: the name is not a valid collection name.
    """
    return dataclasses.replace(settings, collection=validate_collection_name(name))


def require_collection(settings: Settings, default: str) -> None:
    """Refuse to read a collection that does not exist: reading it would answer an empty table and exit 0,
    and nothing would tell a mistyped `--collection` or `?collection=` from an empty collection. The
    configured `default` counts as existing, empty, before anything is written to it (as
    `collection_names` lists it).

    Checked before the store is opened, so a missing name leaves no lock or journal folder behind.

    Raises:
        ConfigError: `settings.collection` is not on the backend nor the default; the message offers the
            close names (difflib) and lists them all.
    """
    names = collection_names(for_collection(settings, default))
    if settings.collection not in names:
        raise ConfigError(missing_collection_message(settings.collection, names))


def missing_collection_message(name: str, names: list[str]) -> str:
    """What to say about collection `name` missing among `names`: the close ones first, then all of them."""
    close = difflib.get_close_matches(name, names, n=3)
    hint = f" Did you mean {' or '.join(repr(n) for n in close)}?" if close else ""
    return (
        f"collection {name!r} does not exist.{hint} The collections are: {', '.join(names)} "
        "(`ragscope collections` describes them); ingesting into a new name creates it "
        "(`ragscope ingest --collection NAME PATH`, or Manage collections in the app)."
    )


def collection_names(settings: Settings) -> list[str]:
    """The collections on the configured backend, and the configured default even before anything is written to it."""
    return sorted({*list_collections(settings), settings.collection})


def describe_collection(components: Components) -> CollectionInfo:
    """Models, chunk and document counts, layout and cluster status of an open collection (cheap: metadata, a
    count, a facet and the server's cluster info)."""
    store = components.store
    try:
        cluster = store.cluster_status()
    except RagError as e:  # the collection itself answered: say why its shards did not, and show the rest
        cluster = ClusterStatus(why=f"the server did not report its cluster status: {e}")
    return CollectionInfo(
        components.settings.collection,
        store.collection_models(),
        store.count(),
        len(store.sources()),
        layout=store.layout(),
        cluster=cluster,
        note=store.cluster_note(),
    )


def describe_collections(settings: Settings) -> list[CollectionInfo]:
    """Every collection, each opened in turn and closed again (the CLI's view; the app reuses its open ones)."""
    out = []
    for name in collection_names(settings):
        try:
            components = build_components(for_collection(settings, name))
        except RagError as e:
            out.append(CollectionInfo(name, None, None, None, str(e)))
            continue
        try:
            out.append(describe_collection(components))
        finally:
            components.close()
    return out


def create_collection(components: Components, cluster: ClusterConfig | None = None) -> CollectionInfo:
    """Create the components' collection for their models (loads the dense model for its dimension), laid out
    as `cluster` says (default: the configured layout); a no-op if it exists.

    Raises:
        ModelMismatchError: it exists already, built with other models.
    """
    components.ensure_collection(cluster)
    return describe_collection(components)


def delete_collection(components: Components, typed_name: str) -> None:
    """Delete the components' collection with every chunk in it, once its name was typed to confirm.

    Whatever is keyed by its name goes with it (its journal, kept originals, stored settings and fix history), so a new
    collection of the same name starts clean. Question sets, eval runs and the ask log stay: they name the
    collection they ran on.

    Raises:
        RagError: `typed_name` is not the collection's name.
    """
    name = components.settings.collection
    if typed_name.strip() != name:
        raise RagError(f"type the collection's name ({name}) to delete it")
    components.store.drop_collection()
    components.journal.discard_all()
    shutil.rmtree(components.settings.originals_dir, ignore_errors=True)
    reset_collection_settings(components.shared, name)
    fix_history.forget(components.settings)
