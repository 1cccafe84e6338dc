"""The same store interface on qdrant-client: a Qdrant server or cluster when QDRANT_URL is set.

`:memory:` (qdrant-client's local mode) stands in for the server in tests; it is brute-force Python
and is never the default for real data. Server-only features (snapshots, aliases, replicas, API
keys) live behind this class only.
"""

from __future__ import annotations

import threading
from typing import Any, Sequence

from qdrant_client import QdrantClient, models

from rag.errors import StoreError
from rag.store.base import DENSE, INTEGER_FIELDS, KEYWORD_FIELDS, SENTENCES, SPARSE, CollectionModels, FusedQuery, PointData, check_facet_key, mismatch_error, sentence_rows, store_call, stored_chunk
from rag.types import QUARANTINED
from rag.settings.config import validate_collection_name
from rag.types import ChunkFilter, Hit, SparseVector, StoredChunk

_SCROLL_PAGE = 1000
# What `records(with_vectors=True)` reads: sentence vectors are many per chunk and only MaxSim uses them.
_RECORD_VECTORS = [DENSE, SPARSE]


class ClientStore:
    """Store on qdrant-client.

    Example:
        store = ClientStore(QdrantClient(":memory:"), "docs")
        store.ensure_collection(CollectionModels("all-MiniLM-L6-v2", 384, "Qdrant/bm25"))
    """

    backend = "server"

    def __init__(self, client: QdrantClient, collection: str) -> None:
        self.client = client
        self.collection = validate_collection_name(collection)
        self.lock = threading.RLock()
        self.remedy = "check that the Qdrant server (QDRANT_URL) is up and reachable and that QDRANT_API_KEY is right"
        # Once seen, a collection's sentence vectors stay: it cannot drop a named vector. Not seen yet
        # is asked again (another client may create the collection), one metadata read per query.
        self._has_sentences = False

    @classmethod
    def connect(cls, url: str, api_key: str, collection: str) -> "ClientStore":
        validate_collection_name(collection)
        try:
            client = QdrantClient(location=":memory:") if url == ":memory:" else QdrantClient(url=url, api_key=api_key or None, timeout=30)
            client.collection_exists(collection)  # the client connects lazily: find out now, once
        except Exception as e:
            raise StoreError(f"could not connect to Qdrant at {url} ({e}); check QDRANT_URL, QDRANT_API_KEY and that the server is running") from None
        return cls(client, collection)

    def _exists(self) -> bool:
        return bool(self.client.collection_exists(self.collection))

    @store_call
    def ensure_collection(self, models_: CollectionModels) -> None:
        existing = self.collection_models()
        if existing is not None and not existing.same_models(models_):
            raise mismatch_error(self.collection, existing, models_)
        if self._exists():
            return
        vectors = {DENSE: models.VectorParams(size=models_.dense_dim, distance=models.Distance.COSINE)}
        if models_.sentence_vectors:
            # Only read for candidates by id (MaxSim rescoring), never searched: no HNSW graph (m=0).
            vectors[SENTENCES] = models.VectorParams(
                size=models_.dense_dim,
                distance=models.Distance.COSINE,
                multivector_config=models.MultiVectorConfig(comparator=models.MultiVectorComparator.MAX_SIM),
                hnsw_config=models.HnswConfigDiff(m=0),
            )
        self.client.create_collection(
            self.collection,
            vectors_config=vectors,
            sparse_vectors_config={SPARSE: models.SparseVectorParams(modifier=models.Modifier.IDF)},
            metadata=models_.as_dict(),
        )
        for name in KEYWORD_FIELDS:
            self.client.create_payload_index(self.collection, name, models.PayloadSchemaType.KEYWORD)
        for name in INTEGER_FIELDS:
            self.client.create_payload_index(self.collection, name, models.PayloadSchemaType.INTEGER)

    @store_call
    def collection_models(self) -> CollectionModels | None:
        if not self._exists():
            return None
        meta = self.client.get_collection(self.collection).config.metadata or {}
        if not meta:
            return None
        try:
            return CollectionModels.from_dict(meta)
        except ValueError as e:
            raise StoreError(
                f"the metadata of collection {self.collection!r} on the server (which models built it) is damaged ({e}); "
                "delete the collection and re-ingest, or restore its metadata"
            ) from None

    @store_call
    def upsert(self, points: Sequence[PointData]) -> None:
        if not points:
            return
        structs = [models.PointStruct(id=p.id, vector=_vectors(p), payload=p.payload) for p in points]
        self.client.upsert(self.collection, structs, wait=True)

    @store_call
    def set_payload(self, ids: Sequence[str], payload: dict[str, Any]) -> None:
        if ids:
            self.client.set_payload(self.collection, payload=payload, points=list(ids), wait=True)

    @store_call
    def set_source_payload(self, source: str, payload: dict[str, Any]) -> None:
        self.client.set_payload(self.collection, payload=payload, points=models.FilterSelector(filter=_filter(ChunkFilter(sources=(source,), include_quarantined=True))), wait=True)

    @store_call
    def delete(self, ids: Sequence[str]) -> None:
        if ids and self._exists():  # no collection: nothing to delete (as delete_source)
            self.client.delete(self.collection, points_selector=models.PointIdsList(points=list(ids)), wait=True)

    @store_call
    def delete_source(self, source: str) -> int:
        if not self._exists():
            return 0
        flt = ChunkFilter(sources=(source,), include_quarantined=True)
        n = self.count(flt)
        self.client.delete(self.collection, points_selector=models.FilterSelector(filter=_filter(flt)), wait=True)
        return n

    @store_call
    def records(self, flt: ChunkFilter | None = None, with_vectors: bool = False, limit: int | None = None) -> list[StoredChunk]:
        if not self._exists():
            return []
        flt = flt or ChunkFilter()
        out: list[StoredChunk] = []
        offset = None
        while True:
            page = _SCROLL_PAGE if limit is None else min(_SCROLL_PAGE, limit - len(out))
            recs, offset = self.client.scroll(self.collection, scroll_filter=_filter(flt), limit=page, offset=offset, with_payload=True, with_vectors=_RECORD_VECTORS if with_vectors else False)
            out += [_record(r) for r in recs]
            if offset is None or (limit is not None and len(out) >= limit):
                return out

    @store_call
    def count(self, flt: ChunkFilter | None = None) -> int:
        if not self._exists():
            return 0
        return int(self.client.count(self.collection, count_filter=_filter(flt or ChunkFilter(include_quarantined=True)), exact=True).count)

    def sources(self) -> dict[str, int]:
        return self.facet("source")

    @store_call
    def facet(self, key: str) -> dict[str, int]:
        check_facet_key(key)
        if not self._exists():
            return {}
        response = self.client.facet(self.collection, key=key, limit=1_000_000, exact=True)
        return {str(h.value): int(h.count) for h in response.hits}

    @store_call
    def search_dense(self, vector: Sequence[float], limit: int, flt: ChunkFilter | None = None) -> list[Hit]:
        return self._query(query=[float(x) for x in vector], using=DENSE, limit=limit, query_filter=_filter(flt))

    @store_call
    def search_sparse(self, vector: SparseVector, limit: int, flt: ChunkFilter | None = None) -> list[Hit]:
        if not vector.indices:
            return []
        return self._query(query=models.SparseVector(indices=list(vector.indices), values=list(vector.values)), using=SPARSE, limit=limit, query_filter=_filter(flt))

    @store_call
    def search_fused(self, query: FusedQuery, flt: ChunkFilter | None = None) -> list[Hit]:
        q, qfilter = query, _filter(flt)
        prefetch = [models.Prefetch(query=[float(x) for x in q.dense], using=DENSE, limit=q.prefetch_limit, filter=qfilter)]
        if q.sparse.indices:
            sparse = models.SparseVector(indices=list(q.sparse.indices), values=list(q.sparse.values))
            prefetch.append(models.Prefetch(query=sparse, using=SPARSE, limit=q.prefetch_limit, filter=qfilter))
        if q.fusion == "dbsf":
            fusion: Any = models.FusionQuery(fusion=models.Fusion.DBSF)
        else:
            fusion = models.RrfQuery(rrf=models.Rrf(k=q.rrf_k, weights=q.rrf_weights(len(prefetch))))
        return self._query(prefetch=prefetch, query=fusion, limit=q.limit, query_filter=qfilter)

    def _stores_sentences(self) -> bool:
        """Whether the collection has the sentences vector: a server refuses a query naming a vector it lacks."""
        if not self._has_sentences:
            found = self.collection_models()
            self._has_sentences = bool(found and found.sentence_vectors)
        return self._has_sentences

    @store_call
    def search_sentences(self, vector: Sequence[float], limit: int, flt: ChunkFilter | None = None) -> list[Hit]:
        if not self._stores_sentences():
            return []
        # The question is a one-row multivector: MaxSim then scores each point by its best sentence.
        return self._query(query=[[float(x) for x in vector]], using=SENTENCES, limit=limit, query_filter=_filter(flt), with_payload=False)

    @store_call
    def sentence_vectors(self, chunk_id: str) -> list[list[float]] | None:
        if not self._stores_sentences():
            return None
        found = self.client.retrieve(self.collection, ids=[chunk_id], with_payload=False, with_vectors=[SENTENCES])
        return sentence_rows(found[0].vector if found else None)

    def _query(self, with_payload: bool = True, **kwargs: Any) -> list[Hit]:
        if not self._exists():
            return []
        response = self.client.query_points(self.collection, with_payload=with_payload, **kwargs)
        return [Hit(str(p.id), float(p.score), dict(p.payload or {})) for p in response.points]

    @store_call
    def list_collections(self) -> list[str]:
        return sorted(c.name for c in self.client.get_collections().collections)

    @store_call
    def drop_collection(self) -> None:
        if self._exists():
            self.client.delete_collection(self.collection)
        self._has_sentences = False

    def ensure_space(self, nbytes: int) -> None:
        """The server keeps its data on its own disks and answers a full one with an error."""

    def optimize(self) -> None:
        """A server optimises in the background; nothing to do here."""

    def flush(self) -> None:
        """Writes use wait=True, so they are durable when the call returns."""

    @store_call
    def close(self) -> None:
        self.client.close()


def _vectors(point: PointData) -> dict[str, Any]:
    vectors: dict[str, Any] = {
        DENSE: [float(x) for x in point.dense],
        SPARSE: models.SparseVector(indices=list(point.sparse.indices), values=list(point.sparse.values)),
    }
    if point.sentences is not None:
        vectors[SENTENCES] = [[float(x) for x in row] for row in point.sentences]
    return vectors


def _record(record: models.Record) -> StoredChunk:
    vector = record.vector if isinstance(record.vector, dict) else {}
    raw = vector.get(SPARSE)
    sparse = SparseVector(tuple(raw.indices), tuple(raw.values)) if raw is not None else None
    return stored_chunk(record.id, dict(record.payload or {}), vector.get(DENSE), sparse)


def _filter(flt: ChunkFilter | None) -> models.Filter | None:
    flt = flt or ChunkFilter()
    must: list[Any] = []
    if flt.sources:
        must.append(models.FieldCondition(key="source", match=models.MatchAny(any=list(flt.sources))))
    if flt.tags:
        must.append(models.FieldCondition(key="tags", match=models.MatchAny(any=list(flt.tags))))
    if flt.ids:
        must.append(models.HasIdCondition(has_id=list(flt.ids)))
    must_not: list[Any] = [] if flt.include_quarantined else [models.FieldCondition(key="status", match=models.MatchValue(value=QUARANTINED))]
    if flt.flagged_only:
        must_not.append(models.IsEmptyCondition(is_empty=models.PayloadField(key="flags")))
    if not must and not must_not:
        return None
    return models.Filter(must=must or None, must_not=must_not or None)
