"""The default store: Qdrant's Rust engine in-process (qdrant-edge), one shard under the data dir.

Hazard we guard against: a second open of the same shard directory breaks the process that already
holds it (its next flush fails). So before opening, take an exclusive fcntl lock on a sidecar file;
a second process gets a clear StoreLockedError and the first is untouched.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import threading
from pathlib import Path
from typing import Any, Sequence

import qdrant_edge as qe

from rag.errors import StoreError, StoreLockedError
from rag.store.base import DENSE, INTEGER_FIELDS, KEYWORD_FIELDS, SENTENCES, SPARSE, CollectionModels, FusedQuery, PointData, check_facet_key, mismatch_error, sentence_rows, store_call, stored_chunk
from rag.types import QUARANTINED
from rag.settings.config import validate_collection_name
from rag.types import ChunkFilter, Hit, SparseVector, StoredChunk

_SCROLL_PAGE = 1000
ENGINE_RESERVE = 64 * 2**20  # see EdgeStore.ensure_space
# What `records(with_vectors=True)` reads: sentence vectors are many per chunk and only MaxSim uses them.
_RECORD_VECTORS = [DENSE, SPARSE]


class EdgeStore:
    """Store on an embedded Qdrant shard at `<root>/<collection>/`.

    Example:
        store = EdgeStore(Path("data/qdrant"), "docs")
        store.ensure_collection(CollectionModels("all-MiniLM-L6-v2", 384, "Qdrant/bm25"))
        store.count()
    """

    backend = "edge"

    def __init__(self, root: Path, collection: str) -> None:
        self.root = Path(root)
        self.collection = validate_collection_name(collection)
        self.lock = threading.RLock()
        self.remedy = f"check the data dir {self.root} (free disk space, permissions), or run `ragscope doctor`"
        self._path = self.root / collection
        self.meta_path = self.root / f"{collection}.meta.json"
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            self._lock_file = open(self.root / f"{collection}.lock", "a+")  # noqa: SIM115 - held for the store's life
        except OSError as e:
            raise StoreError(f"could not open the data dir {self.root} ({e.strerror or e}); check it exists and is writable") from None
        try:
            fcntl.flock(self._lock_file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._lock_file.close()
            raise StoreLockedError(
                f"the data directory {self.root} is in use by another process (is the app or another "
                "`ragscope` command running?). Stop it, or point RAGSCOPE_DATA_DIR elsewhere."
            ) from None
        self._shard: qe.EdgeShard | None = None
        self._models: CollectionModels | None = None
        if self._path.is_dir() and any(self._path.iterdir()):
            try:
                self.ensure_space(0)
            except StoreError:
                self._release()
                raise
            try:
                self._shard = qe.EdgeShard.load(str(self._path))
            except Exception as e:  # noqa: BLE001 - whatever the engine raises
                self._release()
                raise StoreError(f"could not open the Qdrant data in {self._path} ({e}); {self.remedy}") from None

    @property
    def shard(self) -> qe.EdgeShard:
        if self._shard is None:
            raise StoreError(f"collection {self.collection!r} does not exist yet; ingest a document first")
        return self._shard

    @store_call
    def ensure_collection(self, models: CollectionModels) -> None:
        existing = self.collection_models()
        if existing is not None and not existing.same_models(models):
            raise mismatch_error(self.collection, existing, models)
        if existing is None:
            # Written before the shard, so a shard is always created from the metadata it is read with.
            self.write_models(models)
        created = existing or models
        if self._shard is None:
            self.ensure_space(0)
            vectors = {DENSE: qe.EdgeVectorParams(size=created.dense_dim, distance=qe.Distance.Cosine)}
            if created.sentence_vectors:
                # Only read for candidates by id (MaxSim rescoring), never searched: no HNSW graph (m=0).
                vectors[SENTENCES] = qe.EdgeVectorParams(
                    size=created.dense_dim,
                    distance=qe.Distance.Cosine,
                    multivector_config=qe.MultiVectorConfig(qe.MultiVectorComparator.MaxSim),
                    hnsw_config=qe.HnswIndexConfig(m=0, ef_construct=100, full_scan_threshold=10_000),
                )
            config = qe.EdgeConfig(vectors=vectors, sparse_vectors={SPARSE: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)})
            self._shard = qe.EdgeShard.create(str(self._path), config)
            for name in KEYWORD_FIELDS:
                self._shard.update(qe.UpdateOperation.create_field_index(name, qe.PayloadSchemaType.Keyword))
            for name in INTEGER_FIELDS:
                self._shard.update(qe.UpdateOperation.create_field_index(name, qe.PayloadSchemaType.Integer))
                self._shard.flush()

    def ensure_space(self, nbytes: int) -> None:
        """Refuse, with a clear StoreError, to open or write when the data dir's disk lacks room.

        qdrant-edge preallocates 32 MB write-ahead-log segments and maps them: on a full disk it dies
        with SIGBUS (no exception, no message), even just opening a collection to read it. Measured on
        a tmpfs: opening failed with 40 MB free and worked with 56 MB, so opening needs ENGINE_RESERVE.
        """
        need = ENGINE_RESERVE + nbytes
        free = shutil.disk_usage(self.root).free
        if free < need:
            raise StoreError(
                f"the data dir {self.root} has {free / 2**20:.0f} MB free, and the embedded Qdrant engine needs "
                f"{need / 2**20:.0f} MB here ({nbytes / 2**20:.1f} MB for this write plus {ENGINE_RESERVE // 2**20} MB of "
                "working room) or it crashes; nothing was written. Free disk space, or move RAGSCOPE_DATA_DIR"
            )

    @store_call
    def write_models(self, models: CollectionModels) -> None:
        """Durably (re)write the record of which models built the collection: temp file, fsync, rename."""
        tmp = self.meta_path.with_suffix(".tmp")
        try:
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump(models.as_dict(), f)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.meta_path)
        finally:
            tmp.unlink(missing_ok=True)
        self._models = None

    @store_call
    def stored_shape(self) -> tuple[int, bool] | None:
        """(dense dimension, whether sentence vectors are stored) read from one stored point; None when
        there is none. What `ragscope doctor` can still learn when the models record is lost."""
        if self._shard is None:
            return None
        recs, _ = self.shard.scroll(qe.ScrollRequest(limit=1, with_payload=False, with_vector=True))
        if not recs or not isinstance(recs[0].vector, dict) or DENSE not in recs[0].vector:
            return None
        return len(recs[0].vector[DENSE]), SENTENCES in recs[0].vector

    @store_call
    def collection_models(self) -> CollectionModels | None:
        # Only this process writes the metadata (it holds the directory's lock), so it is read once.
        if self._models is None and self.meta_path.exists():
            try:
                self._models = CollectionModels.from_dict(json.loads(self.meta_path.read_text(encoding="utf-8")))
            except (UnicodeDecodeError, ValueError) as e:
                raise StoreError(
                    f"{self.meta_path} (which models built collection {self.collection!r}) is damaged ({e}); "
                    "run `ragscope doctor --fix` to rebuild it"
                ) from None
        return self._models

    @store_call
    def upsert(self, points: Sequence[PointData]) -> None:
        if not points:
            return
        batch = [qe.Point(p.id, _vectors(p), p.payload) for p in points]
        self.shard.update(qe.UpdateOperation.upsert_points(batch))

    @store_call
    def set_payload(self, ids: Sequence[str], payload: dict[str, Any]) -> None:
        if ids:
            self.shard.update(qe.UpdateOperation.set_payload(list(ids), payload))

    @store_call
    def set_source_payload(self, source: str, payload: dict[str, Any]) -> None:
        self.shard.update(qe.UpdateOperation.set_payload_by_filter(_filter(ChunkFilter(sources=(source,), include_quarantined=True)), payload))

    @store_call
    def delete(self, ids: Sequence[str]) -> None:
        if ids and self._shard is not None:  # no collection: nothing to delete (as delete_source)
            self.shard.update(qe.UpdateOperation.delete_points(list(ids)))

    @store_call
    def delete_source(self, source: str) -> int:
        if self._shard is None:
            return 0
        flt = ChunkFilter(sources=(source,), include_quarantined=True)
        n = self.count(flt)
        self.shard.update(qe.UpdateOperation.delete_points_by_filter(_filter(flt)))
        return n

    @store_call
    def records(self, flt: ChunkFilter | None = None, with_vectors: bool = False, limit: int | None = None) -> list[StoredChunk]:
        if self._shard is None:
            return []
        flt = flt or ChunkFilter()
        if flt.ids:
            recs = self.shard.retrieve(list(flt.ids), with_payload=True, with_vector=_RECORD_VECTORS if with_vectors else False)
            wanted = ChunkFilter(sources=flt.sources, tags=flt.tags, include_quarantined=flt.include_quarantined, flagged_only=flt.flagged_only)
            return [_record(r) for r in recs if wanted.matches(r.payload or {})]
        out: list[StoredChunk] = []
        offset = None
        while True:
            page = _SCROLL_PAGE if limit is None else min(_SCROLL_PAGE, limit - len(out))
            recs, offset = self.shard.scroll(qe.ScrollRequest(offset=offset, limit=page, filter=_filter(flt), with_payload=True, with_vector=_RECORD_VECTORS if with_vectors else False))
            out += [_record(r) for r in recs]
            if offset is None or (limit is not None and len(out) >= limit):
                return out

    @store_call
    def count(self, flt: ChunkFilter | None = None) -> int:
        if self._shard is None:
            return 0
        return int(self.shard.count(qe.CountRequest(exact=True, filter=_filter(flt or ChunkFilter(include_quarantined=True)))))

    def sources(self) -> dict[str, int]:
        return self.facet("source")

    @store_call
    def facet(self, key: str) -> dict[str, int]:
        check_facet_key(key)
        if self._shard is None:
            return {}
        response = self.shard.facet(qe.FacetRequest(key, limit=1_000_000, exact=True))
        # qdrant-edge 0.9 keeps a deleted value in the facet with count 0 (even after optimize).
        return {str(h.value): int(h.count) for h in response.hits if h.count > 0}

    @store_call
    def search_dense(self, vector: Sequence[float], limit: int, flt: ChunkFilter | None = None) -> list[Hit]:
        return self._query(qe.QueryRequest(limit=limit, query=qe.Query.Nearest([float(x) for x in vector], using=DENSE), filter=_filter(flt), with_payload=True))

    @store_call
    def search_sparse(self, vector: SparseVector, limit: int, flt: ChunkFilter | None = None) -> list[Hit]:
        if not vector.indices:
            return []
        query = qe.Query.Nearest(qe.SparseVector(list(vector.indices), list(vector.values)), using=SPARSE)
        return self._query(qe.QueryRequest(limit=limit, query=query, filter=_filter(flt), with_payload=True))

    @store_call
    def search_fused(self, query: FusedQuery, flt: ChunkFilter | None = None) -> list[Hit]:
        q, edge_filter = query, _filter(flt)
        prefetches = [qe.Prefetch(limit=q.prefetch_limit, query=qe.Query.Nearest([float(x) for x in q.dense], using=DENSE), filter=edge_filter)]
        if q.sparse.indices:
            sparse = qe.SparseVector(list(q.sparse.indices), list(q.sparse.values))
            prefetches.append(qe.Prefetch(limit=q.prefetch_limit, query=qe.Query.Nearest(sparse, using=SPARSE), filter=edge_filter))
        fusion: Any = qe.Fusion.Dbsf() if q.fusion == "dbsf" else qe.Fusion.Rrf(k=q.rrf_k, weights=q.rrf_weights(len(prefetches)))
        return self._query(qe.QueryRequest(limit=q.limit, prefetches=prefetches, query=fusion, filter=edge_filter, with_payload=True))

    @store_call
    def search_sentences(self, vector: Sequence[float], limit: int, flt: ChunkFilter | None = None) -> list[Hit]:
        models = self.collection_models()
        if models is None or not models.sentence_vectors:
            return []
        # The question is a one-row multivector: MaxSim then scores each point by its best sentence.
        query = qe.Query.Nearest([[float(x) for x in vector]], using=SENTENCES)
        return self._query(qe.QueryRequest(limit=limit, query=query, filter=_filter(flt), with_payload=False))

    @store_call
    def sentence_vectors(self, chunk_id: str) -> list[list[float]] | None:
        models = self.collection_models()
        if models is None or not models.sentence_vectors:
            return None
        found = self.shard.retrieve([chunk_id], with_payload=False, with_vector=[SENTENCES])
        return sentence_rows(found[0].vector if found else None)

    def _query(self, request: qe.QueryRequest) -> list[Hit]:
        if self._shard is None:
            return []
        points = self.shard.query(request)
        return [Hit(str(p.id), float(p.score), dict(p.payload or {})) for p in points]

    @store_call
    def list_collections(self) -> list[str]:
        return edge_collections(self.root)

    @store_call
    def drop_collection(self) -> None:
        # This instance holds the collection's lock, so no other process has the shard open.
        if self._shard is not None:
            self._shard.close()
            self._shard = None
        shutil.rmtree(self._path, ignore_errors=True)
        self.meta_path.unlink(missing_ok=True)
        self._models = None

    @store_call
    def optimize(self) -> None:
        """Merge segments and build indexes. Holds the GIL for its whole run: never call it on a request path."""
        if self._shard is not None:
            self._shard.optimize()

    @store_call
    def flush(self) -> None:
        if self._shard is not None:
            self._shard.flush()

    @store_call
    def close(self) -> None:
        """Flush and close the shard; the directory lock is released even when that fails."""
        try:
            if self._shard is not None:
                shard, self._shard = self._shard, None
                shard.flush()
                shard.close()
        finally:
            self._release()

    def _release(self) -> None:
        if not self._lock_file.closed:
            fcntl.flock(self._lock_file.fileno(), fcntl.LOCK_UN)
            self._lock_file.close()


def edge_collections(root: Path) -> list[str]:
    """The collections under an embedded data root, read from the files alone (no collection is opened or locked).

    A collection is its metadata file (written before its shard) or a non-empty shard folder; a bare
    `.lock` file is left by a store opened on a name never written to, and is not one.
    """
    if not root.is_dir():
        return []
    names = {p.name[: -len(".meta.json")] for p in root.glob("*.meta.json")}
    names |= {p.name for p in root.iterdir() if p.is_dir() and any(p.iterdir())}
    return sorted(names)


def _vectors(point: PointData) -> dict[str, Any]:
    vectors: dict[str, Any] = {
        DENSE: [float(x) for x in point.dense],
        SPARSE: qe.SparseVector(list(point.sparse.indices), list(point.sparse.values)),
    }
    if point.sentences is not None:
        vectors[SENTENCES] = [[float(x) for x in row] for row in point.sentences]
    return vectors


def _record(record: qe.Record) -> StoredChunk:
    payload = dict(record.payload or {})
    dense = sparse = None
    vector = record.vector
    if isinstance(vector, dict):
        dense = vector.get(DENSE)
        raw = vector.get(SPARSE)
        if raw is not None:
            sparse = SparseVector(tuple(int(i) for i in raw.indices), tuple(float(v) for v in raw.values))
    return stored_chunk(record.id, payload, dense, sparse)


def _filter(flt: ChunkFilter | None) -> qe.Filter | None:
    flt = flt or ChunkFilter()
    must: list[Any] = []
    if flt.sources:
        must.append(qe.FieldCondition("source", match=qe.MatchAny(list(flt.sources))))
    if flt.tags:
        must.append(qe.FieldCondition("tags", match=qe.MatchAny(list(flt.tags))))
    if flt.ids:
        must.append(qe.HasIdCondition(set(flt.ids)))
    must_not = [] if flt.include_quarantined else [qe.FieldCondition("status", match=qe.MatchValue(QUARANTINED))]
    if flt.flagged_only:
        must_not.append(qe.IsEmptyCondition("flags"))
    if not must and not must_not:
        return None
    return qe.Filter(must=must or None, must_not=must_not or None)
