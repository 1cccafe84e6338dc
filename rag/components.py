"""The engine's parts built once from Settings: store and encoders. Pages cache one per process."""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from rag.encoders.base import DenseEncoder, QueryToken, SpanVectors, SparseEncoder
from rag.encoders.dense_onnx import Placement
from rag.encoders.factory import DenseSpec, sparse_encoder
from rag.encoders.sparse import FastembedBm25Encoder
from rag.errors import ConfigError, ModelMismatchError
from rag.lazy import LazyModel
from rag.settings.collection_settings import with_collection_settings
from rag.settings.config import ClusterConfig, Settings
from rag.settings.shared_home import SharedHome
from rag.store import open_leases, open_store, shared_home
from rag.store.base import CollectionModels, DenseSpace, FusedQuery, Store
from rag.store.doc_lease import DocLeases, Leases
from rag.store.journal import Journal
from rag.store.meta_journal import MetaJournal
from rag.types import ChunkFilter, Hit, SparseVector, StoredChunk


class CollectionDense:
    """The dense encoder of the vector space the collection holds, looked up from its record at each use.

    The float runtimes (torch, onnx) share one space and the int8 export is another, so the record,
    not the settings, says which encodes: a float collection made before int8 was configured keeps
    float chunks and queries (`CollectionModels.runtime_for`); with no collection yet, the configured
    runtime makes the first. Looked up per use because the collection may be deleted and made again
    while the process lives, or made by another process on a server.
    """

    def __init__(self, settings: Settings, store: Store, space: str = "") -> None:
        self._settings, self._store = settings, store
        self.space = space  # the collection's dense vector it encodes for ("" its default; rag/catalog/vectors.py)

    @property
    def name(self) -> str:
        """The current encoder's name, which tells the int8 space from the float one (caches key on it)."""
        return self.encoder.name

    @property
    def spec(self) -> DenseSpec:
        """What builds the current encoder (a worker process builds the same one: rag/encoders/pool.py)."""
        record = self._store.collection_models()
        if record is None:
            return dense_spec(self._settings, self._settings.dense_runtime)
        return space_spec(self._settings, record.space(self.space))

    @property
    def encoder(self) -> DenseEncoder:
        return self.spec.build()

    @property
    def dim(self) -> int:
        return self.encoder.dim

    @property
    def loaded(self) -> bool:
        """False while the model behind the current space has not loaded (rag.retrieval.retrieve times
        loading apart)."""
        return getattr(self.encoder, "loaded", True)

    def load(self) -> None:
        encoder = self.encoder
        if isinstance(encoder, LazyModel):
            encoder.load()

    def encode_documents(self, texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
        return self.encoder.encode_documents(texts, batch_size)

    def encode_query(self, text: str) -> np.ndarray:
        return self.encoder.encode_query(text)

    def encode_spans(
        self, texts: Sequence[str], spans: Sequence[Sequence[tuple[int, int]]], batch_size: int = 64
    ) -> SpanVectors:
        return self.encoder.encode_spans(texts, spans, batch_size)


def dense_spec(settings: Settings, runtime: str, model: str = "") -> DenseSpec:
    """The dense `model` (default: the configured one) on `runtime`, placed on the configured device."""
    return DenseSpec(model or settings.dense_model, runtime, settings.data_dir / "models", Placement(settings.device))


def space_spec(settings: Settings, space: DenseSpace) -> DenseSpec:
    """What encodes into one of a collection's dense vectors: its model, on the runtime of its space."""
    return dense_spec(settings, space.runtime_for(settings.dense_runtime), space.model)


class SpaceStore:
    """The store with one of the collection's dense vectors, not the default, in place of the default for
    every read retrieval makes (dense search, fusion, stored vectors, sentence vectors): what
    `Components.in_space` hands retrieval, so no stage can read one space and query another."""

    def __init__(self, store: Store, space: str) -> None:
        self._store, self.space = store, space

    def __getattr__(self, name: str) -> Any:  # noqa: ANN401 - every other Store attribute, as it is
        return getattr(self._store, name)

    def dense_name(self, space: str = "") -> str:
        return self._store.dense_name(space or self.space)

    def search_dense(self, vector: Sequence[float], limit: int, flt: ChunkFilter | None = None) -> list[Hit]:
        return self._store.search_dense(vector, limit, flt, space=self.space)

    def search_fused(self, query: FusedQuery, flt: ChunkFilter | None = None) -> list[Hit]:
        return self._store.search_fused(query, flt, space=self.space)

    def search_sentences(self, vector: Sequence[float], limit: int, flt: ChunkFilter | None = None) -> list[Hit]:
        return self._store.search_sentences(vector, limit, flt, space=self.space)

    def sentence_vectors(self, chunk_id: str) -> list[list[float]] | None:
        return self._store.sentence_vectors(chunk_id, space=self.space)

    def records(
        self, flt: ChunkFilter | None = None, with_vectors: bool = False, limit: int | None = None
    ) -> list[StoredChunk]:
        return self._store.records(flt, with_vectors, limit, space=self.space)


class CollectionSparse:
    """The BM25 encoder that cuts text as the collection's record says (`CollectionModels.sparse_tokenizer`),
    looked up at each use like `CollectionDense`: a collection made before CJK tokenizing keeps its
    whitespace terms, so its stored vectors and its questions never disagree; with no collection yet,
    the configured tokenizer makes the first."""

    def __init__(self, settings: Settings, store: Store) -> None:
        self._settings, self._store = settings, store
        self.name = settings.sparse_model

    @property
    def encoder(self) -> FastembedBm25Encoder:
        record = self._store.collection_models()
        tokenizer = record.sparse_tokenizer if record else self._settings.sparse_tokenizer
        return sparse_encoder(self._settings.sparse_model, self._settings.data_dir / "models", tokenizer)

    @property
    def loaded(self) -> bool:
        return self.encoder.loaded

    def load(self) -> None:
        self.encoder.load()

    def encode_documents(self, texts: Sequence[str]) -> list[SparseVector]:
        return self.encoder.encode_documents(texts)

    def encode_query(self, text: str) -> SparseVector:
        return self.encoder.encode_query(text)

    def query_terms(self, text: str) -> dict[int, str]:
        return self.encoder.query_terms(text)

    def query_tokens(self, text: str) -> tuple[QueryToken, ...]:
        return self.encoder.query_tokens(text)

    @property
    def tokenizer(self) -> str:
        """How this collection's CJK runs are cut (bigram, jieba, whitespace)."""
        return self.encoder.tokenizer


@dataclass
class Components:
    """Everything a pipeline step needs. Shared across threads: never mutate it after building."""

    settings: Settings
    store: Store
    dense: DenseEncoder
    sparse: SparseEncoder
    journal: Journal | MetaJournal
    # Document leases (rag/store/doc_lease.py): one writer per document across processes and machines.
    leases: DocLeases

    @functools.cached_property
    def shared(self) -> SharedHome:
        """Where the state every replica shares lives (rag/settings/shared_home.py), reached through this store's
        client; made on first use (a page run asks it several times: one metadata-collection check, not one each)."""
        store = self.store._store if isinstance(self.store, SpaceStore) else self.store
        return shared_home(self.settings, store)

    def with_stored_settings(self) -> Components:
        """These components with the collection's stored retrieval settings in force over the configured ones
        (rag.settings.collection_settings): what the CLI, the pages and a version diff each run with.

        Raises:
            ConfigError: the collection's settings file is damaged (the message names the reset).
        """
        return dataclasses.replace(self, settings=with_collection_settings(self.settings, self.shared))

    def in_space(self, space: str) -> Components:
        """These components searching the collection's dense vector `space` ("" or the default's name: these
        very components): its stored vectors, and questions encoded by its model.

        Raises:
            ConfigError: the collection holds no dense vector `space`, or one whose add has not finished.
        """
        record = self.store.collection_models()
        if not space or record is None or space == record.dense_vector:
            if space and record is None:
                raise ConfigError(f"collection {self.settings.collection!r} has no dense vector {space!r} yet")
            return self
        found = record.space(space)
        if not found.filled:
            raise ConfigError(
                f"dense vector {space!r} of collection {self.settings.collection!r} is still being added; run "
                f"`ragscope vectors add {found.model} --name {space}` again to finish it"
            )
        store: Any = SpaceStore(self.store, space)
        return dataclasses.replace(self, store=store, dense=CollectionDense(self.settings, self.store, space))

    def ensure_collection(self, cluster: ClusterConfig | None = None) -> None:
        """Create the collection for the configured models, laid out as `cluster` says (default: the configured
        layout), or refuse if it was built with others.

        A new collection stores sentence vectors when the settings say so, pooled as they say; an
        existing one keeps what it was created with. For an existing collection built with
        the configured dense model, its record gives the dimension: asking the encoder would load the
        model (seconds, hundreds of MB) on a re-ingest that may have nothing to embed.
        """
        existing = self.store.collection_models()
        same_dense = existing is not None and (
            existing.follows_record or existing.dense_model == self.settings.dense_model
        )
        dim = existing.dense_dim if same_dense else self.dense.dim
        models = CollectionModels.from_settings(self.settings, dim, self.settings.sentence_vectors)
        self.store.ensure_collection(models, cluster)

    def check_models(self) -> None:
        """Refuse to query a collection whose vectors came from other models (cheap: names only). A collection
        whose dense vectors were changed in place (`CollectionModels.follows_record`) is encoded as its record
        says, whatever RAGSCOPE_DENSE_MODEL names; its sparse model must still agree."""
        existing = self.store.collection_models()
        dense = existing.dense_model if existing and not existing.follows_record else self.settings.dense_model
        if existing and (dense, existing.sparse_model) != (self.settings.dense_model, self.settings.sparse_model):
            raise ModelMismatchError(
                f"collection {self.settings.collection!r} was built with dense={existing.dense_model}, "
                f"sparse={existing.sparse_model}; the settings say dense={self.settings.dense_model}, "
                f"sparse={self.settings.sparse_model}. Use another collection or re-ingest."
            )

    def close(self) -> None:
        self.store.close()
        self.journal.close()
        self.leases.close()


def build_components(settings: Settings) -> Components:
    """Open the store (finishing any re-ingest a crash interrupted) and set up the encoders (loaded lazily)."""
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    store = open_store(settings)
    leases: DocLeases | None = None
    journal: Journal | MetaJournal | None = None
    try:
        leases = open_leases(settings, store)
        journal = open_journal(settings, leases)
        # Replayed only for what dead writers left, and again at the start of every later turn on the embedded
        # engine: a process on the same data dir may die part-way through a write while this one lives.
        journal.recover(store)
        store.on_turn(lambda: journal.recover(store))
        store.collection_models()  # a damaged models record stops here, once, with its file named
    except BaseException:
        if journal is not None:
            journal.close()
        if leases is not None:
            leases.close()
        store.close()
        raise
    return Components(
        settings=settings,
        store=store,
        dense=CollectionDense(settings, store),
        sparse=CollectionSparse(settings, store),
        journal=journal,
        leases=leases,
    )


def open_journal(settings: Settings, leases: DocLeases) -> Journal | MetaJournal:
    """The crash journal: in the metadata collection on a server, where every writer can see it; in files under the
    data dir on the embedded engine, whose writers all share that machine (each of its entries is replayed
    within one turn on the data: no other process writes meanwhile).
    """
    if isinstance(leases, Leases):
        return MetaJournal(leases.meta, leases, settings.collection)
    return Journal.open(settings.data_dir / "journal", settings.collection)
