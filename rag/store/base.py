"""The store interface every backend implements, and the payload layout they share.

Two real backends sit behind it: the embedded Qdrant engine (qdrant-edge, the default, under the
data dir) and qdrant-client (a server when QDRANT_URL is set; `:memory:` stands in for it in tests).
The same contract tests run on both.
"""

from __future__ import annotations

import functools
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Protocol, Sequence, TypeVar

from rag.settings.config import INT8_RUNTIME
from rag.errors import ModelMismatchError, RagError, StoreError
from rag.types import QUARANTINED as QUARANTINED  # re-exported: the stores' filters match it
from rag.types import Chunk, ChunkFilter, DocumentInfo, Hit, SparseVector, StoredChunk

if TYPE_CHECKING:
    from rag.settings.config import Settings

DENSE = "dense"
SPARSE = "sparse"
# Each chunk's sentence vectors (rag/ingest/sentences.py), a MaxSim multivector used only to rescore candidates.
SENTENCES = "sentences"
# `status` is a keyword ("active" / "quarantined"), not a bool: qdrant-edge 0.9 does not match bool values.
KEYWORD_FIELDS = ("source", "tags", "heading", "flags", "status")
INTEGER_FIELDS = ("start", "end")


@dataclass(frozen=True)
class CollectionModels:
    """What built the vectors of a collection; a mismatch would silently mix vector spaces.

    `sentence_vectors` says whether the collection stores sentence vectors. It is fixed when the
    collection is created (a collection from before the field reads False) and is not a model: asking
    for it on a collection without it is no mismatch (see `same_models`). `sentence_pooling` says how
    they were made, also fixed at creation: "late" (pooled from the chunk's own forward pass,
    `rag.ingest.pipeline.encode_late`), "separate" (each sentence encoded on its own, what collections made
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

    def as_dict(self) -> dict[str, Any]:
        return {
            "dense_model": self.dense_model,
            "dense_dim": self.dense_dim,
            "sparse_model": self.sparse_model,
            "sentence_vectors": self.sentence_vectors,
            "sentence_pooling": self.sentence_pooling,
            "dense_runtime": self.dense_runtime,
        }

    @classmethod
    def from_dict(cls, raw: Any) -> CollectionModels:
        """Read back what `as_dict` wrote, every field checked.

        Raises:
            ValueError: not that shape (a truncated or hand-edited file).
        """
        if not isinstance(raw, dict):
            raise ValueError("not a JSON object")
        kinds = {"dense_model": str, "dense_dim": int, "sparse_model": str, "sentence_vectors": bool, "sentence_pooling": str, "dense_runtime": str}
        missing = {"dense_model", "dense_dim", "sparse_model"} - set(raw)
        wrong = [k for k, v in raw.items() if k not in kinds or type(v) is not kinds[k]]
        if missing or wrong:
            raise ValueError(f"missing {sorted(missing)}, unexpected or mistyped {sorted(wrong)}")
        return cls(**raw)

    @classmethod
    def from_settings(cls, settings: Settings, dense_dim: int, sentence_vectors: bool) -> CollectionModels:
        """The record a collection gets from the configured models; the caller knows the dimension and
        whether sentence vectors are stored (from the encoder, an existing record or the stored vectors)."""
        return cls(settings.dense_model, dense_dim, settings.sparse_model, sentence_vectors, settings.sentence_pooling, settings.dense_runtime)

    def runtime_for(self, configured: str) -> str:
        """The dense runtime that encodes into this collection's space, given the configured one: the
        int8 export for an int8 collection whatever is configured; else the configured runtime, or the
        float ONNX one when int8 is configured (a float collection made before int8 keeps float vectors)."""
        if self.dense_runtime == INT8_RUNTIME:
            return INT8_RUNTIME
        return "onnx" if configured == INT8_RUNTIME else configured

    def same_models(self, other: CollectionModels) -> bool:
        """True when `other` names the same encoders (so their vectors may share this collection)."""
        return (self.dense_model, self.dense_dim, self.sparse_model) == (other.dense_model, other.dense_dim, other.sparse_model)


@dataclass(frozen=True)
class PointData:
    """A chunk ready to write: both vectors plus its payload, and its sentence vectors when the collection stores them."""

    id: str
    dense: Sequence[float]
    sparse: SparseVector
    payload: dict[str, Any]
    sentences: Sequence[Sequence[float]] | None = None



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


class Store(Protocol):
    """What the rest of ragscope may ask of Qdrant. Implementations are thread-safe."""

    backend: str
    remedy: str  # what a person should check when a call fails, ending StoreError messages
    lock: threading.RLock

    def ensure_collection(self, models: CollectionModels) -> None: ...
    def collection_models(self) -> CollectionModels | None: ...
    def upsert(self, points: Sequence[PointData]) -> None: ...
    def set_payload(self, ids: Sequence[str], payload: dict[str, Any]) -> None: ...
    def set_source_payload(self, source: str, payload: dict[str, Any]) -> None: ...
    def delete(self, ids: Sequence[str]) -> None: ...
    def delete_source(self, source: str) -> int: ...
    def records(self, flt: ChunkFilter | None = None, with_vectors: bool = False, limit: int | None = None) -> list[StoredChunk]: ...
    def count(self, flt: ChunkFilter | None = None) -> int: ...
    def sources(self) -> dict[str, int]:
        """Each document's chunk count: `facet("source")`."""
        ...

    def facet(self, key: str) -> dict[str, int]:
        """Each value of keyword field `key` (one of KEYWORD_FIELDS) with its number of chunks, in one query.

        The inspector's source and tag filters read their choices this way on every run: reading one
        record per document instead cost more than the search itself on a collection of many documents.
        """
        ...
    def search_dense(self, vector: Sequence[float], limit: int, flt: ChunkFilter | None = None) -> list[Hit]: ...
    def search_sparse(self, vector: SparseVector, limit: int, flt: ChunkFilter | None = None) -> list[Hit]: ...
    def search_fused(self, query: FusedQuery, flt: ChunkFilter | None = None) -> list[Hit]: ...
    def search_sentences(self, vector: Sequence[float], limit: int, flt: ChunkFilter | None = None) -> list[Hit]:
        """MaxSim of the question vector against each point's sentence vectors: its best sentence cosine.

        Meant for rescoring with an ids filter. Empty when the collection stores no sentence vectors;
        a point stored without them is not among the hits.
        """
        ...
    def sentence_vectors(self, chunk_id: str) -> list[list[float]] | None:
        """The sentence vectors stored for one chunk, one row per `rag.ingest.sentences.sentence_texts` entry.

        The inspector shows the per-sentence cosines the reranker's MaxSim read, not fresh encodings
        (with int8 sentence vectors those differ by the batch they were encoded in). None when the
        collection, or this chunk, stores none.
        """
        ...

    def list_collections(self) -> list[str]:
        """Every collection on this store's backend (the data dir, or the server), sorted by name."""
        ...

    def drop_collection(self) -> None:
        """Delete this store's collection: all its points and its models. The store stays usable: a
        later `ensure_collection` creates the collection afresh."""
        ...

    def ensure_space(self, nbytes: int) -> None:
        """Raise StoreError (nothing written) when writing about `nbytes` more would not fit."""
        ...

    def optimize(self) -> None: ...
    def flush(self) -> None: ...
    def close(self) -> None: ...


T = TypeVar("T")


def store_call(method: Callable[..., T]) -> Callable[..., T]:
    """Every store method goes through here: serialised on the instance's RLock (the engines are not
    safe for concurrent writes), and any backend exception turned into a StoreError.

    qdrant-edge and qdrant-client raise their own exception types (and differently for the same
    mistake); callers catch RagError only, so an untranslated one went past every handler. The
    message names the operation and the store's `remedy` (where to look and what to do).
    """

    @functools.wraps(method)
    def wrapper(self, *args: Any, **kwargs: Any) -> T:  # noqa: ANN001
        with self.lock:
            try:
                return method(self, *args, **kwargs)
            except RagError:
                raise
            except Exception as e:  # noqa: BLE001 - the one place backend errors are translated
                raise StoreError(f"the {self.backend} store failed to {method.__name__.replace('_', ' ')} ({type(e).__name__}: {e}); {self.remedy}") from None

    return wrapper


def check_facet_key(key: str) -> None:
    """Facets are read from the keyword indexes both stores create; any other key is a caller's mistake."""
    if key not in KEYWORD_FIELDS:
        raise ValueError(f"cannot facet on {key!r}: only the indexed keyword fields {', '.join(KEYWORD_FIELDS)}")


def mismatch_error(collection: str, existing: CollectionModels, wanted: CollectionModels) -> ModelMismatchError:
    return ModelMismatchError(
        f"collection {collection!r} was built with dense={existing.dense_model} ({existing.dense_dim} d), "
        f"sparse={existing.sparse_model}, but the settings now say dense={wanted.dense_model} "
        f"({wanted.dense_dim} d), sparse={wanted.sparse_model}. Mixing them would compare vectors from "
        "different spaces: use another collection name (RAGSCOPE_COLLECTION) or re-ingest into a new one."
    )


def chunk_payload(chunk: Chunk, doc_meta: dict[str, Any]) -> dict[str, Any]:
    """The payload stored with each point: the chunk, then its document's metadata."""
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
        **doc_meta,
    }


def sentence_rows(vector: Any) -> list[list[float]] | None:
    """A retrieved point's sentence multivector as plain rows (both backends return a dict of named vectors)."""
    rows = vector.get(SENTENCES) if isinstance(vector, dict) else None
    return [[float(x) for x in row] for row in rows] if rows else None


def stored_chunk(point_id: Any, payload: dict[str, Any], dense: Any = None, sparse: Any = None) -> StoredChunk:
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
    )
    return StoredChunk(
        chunk=chunk,
        tags=tuple(payload.get("tags") or ()),
        quarantined=payload.get("status") == QUARANTINED,
        flags=tuple(payload.get("flags") or ()),
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
    )
