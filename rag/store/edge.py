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
from pathlib import Path
from typing import Any, Sequence

import qdrant_edge as qe

from rag.errors import StoreError, StoreLockedError
from rag.store.base import DENSE, SENTENCES, SPARSE, CollectionModels, FusedQuery, PointData
from rag.store.base import FilterTerms, Store, store_call
from rag.types import ChunkFilter, SparseVector

ENGINE_RESERVE = 64 * 2**20  # see EdgeStore.ensure_space


class EdgeStore(Store):
    """Store on an embedded Qdrant shard at `<root>/<collection>/`.

    Example:
        store = EdgeStore(Path("data/qdrant"), "docs")
        store.ensure_collection(CollectionModels("all-MiniLM-L6-v2", 384, "Qdrant/bm25"))
        store.count()
    """

    backend = "edge"
    filter_terms = FilterTerms(
        any_of=lambda key, values: qe.FieldCondition(key, match=qe.MatchAny(values)),
        has_id=lambda ids: qe.HasIdCondition(set(ids)),
        equals=lambda key, value: qe.FieldCondition(key, match=qe.MatchValue(value)),
        is_empty=lambda key: qe.IsEmptyCondition(key),
        combine=lambda must, must_not: qe.Filter(must=must, must_not=must_not),
    )
    fetches_ids = True

    def __init__(self, root: Path, collection: str) -> None:
        self.root = Path(root)
        remedy = f"check the data dir {self.root} (free disk space, permissions), or run `ragscope doctor`"
        super().__init__(collection, remedy)
        self._path = self.root / collection
        self.meta_path = self.root / f"{collection}.meta.json"
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            self._lock_file = open(self.root / f"{collection}.lock", "a+")  # noqa: SIM115 - held for the store's life
        except OSError as e:
            raise StoreError(
                f"could not open the data dir {self.root} ({e.strerror or e}); check it exists and is writable"
            ) from None
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

    def _keep_models(self, models: CollectionModels) -> None:
        # Written before the shard, so a shard is always created from the metadata it is read with.
        self.write_models(models)

    def _vector_params(self, dim: int, sentences: bool) -> qe.EdgeVectorParams:
        if not sentences:
            return qe.EdgeVectorParams(size=dim, distance=qe.Distance.Cosine)
        # Only read for candidates by id (MaxSim rescoring), never searched: no HNSW graph (m=0).
        no_graph = qe.HnswIndexConfig(m=0, ef_construct=100, full_scan_threshold=10_000)
        maxsim = qe.MultiVectorConfig(qe.MultiVectorComparator.MaxSim)
        return qe.EdgeVectorParams(
            size=dim, distance=qe.Distance.Cosine, multivector_config=maxsim, hnsw_config=no_graph
        )

    def _create(self, vectors: dict[str, Any], models: CollectionModels) -> None:
        sparse = {SPARSE: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)}
        self._shard = qe.EdgeShard.create(str(self._path), qe.EdgeConfig(vectors=vectors, sparse_vectors=sparse))

    def _create_index(self, name: str, integer: bool) -> None:
        kind = qe.PayloadSchemaType.Integer if integer else qe.PayloadSchemaType.Keyword
        self.shard.update(qe.UpdateOperation.create_field_index(name, kind))

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
                f"{need / 2**20:.0f} MB here ({nbytes / 2**20:.1f} MB for this write plus "
                f"{ENGINE_RESERVE // 2**20} MB of working room) or it crashes; nothing was written. "
                "Free disk space, or move RAGSCOPE_DATA_DIR"
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

    # The primitives `Store` is written against: one qdrant-edge call each.

    def _exists(self) -> bool:
        return self._shard is not None

    def _sparse(self, vector: SparseVector) -> qe.SparseVector:
        return qe.SparseVector(list(vector.indices), list(vector.values))

    def _upsert(self, points: Sequence[PointData]) -> None:
        batch = [qe.Point(p.id, self._point_vectors(p), p.payload) for p in points]
        self.shard.update(qe.UpdateOperation.upsert_points(batch))

    def _set_payload(self, ids: Sequence[str], payload: dict[str, Any]) -> None:
        self.shard.update(qe.UpdateOperation.set_payload(list(ids), payload))

    def _set_payload_where(self, flt: ChunkFilter, payload: dict[str, Any]) -> None:
        self.shard.update(qe.UpdateOperation.set_payload_by_filter(self._filter(flt), payload))

    def _delete(self, ids: Sequence[str]) -> None:
        self.shard.update(qe.UpdateOperation.delete_points(list(ids)))

    def _delete_where(self, flt: ChunkFilter) -> None:
        self.shard.update(qe.UpdateOperation.delete_points_by_filter(self._filter(flt)))

    def _scroll(
        self, flt: ChunkFilter, limit: int, offset: Any, vectors: list[str] | bool  # noqa: ANN401 - a point id or None
    ) -> tuple[list[qe.Record], Any]:  # fmt: skip
        edge_filter = self._filter(flt)
        return self.shard.scroll(
            qe.ScrollRequest(offset=offset, limit=limit, filter=edge_filter, with_payload=True, with_vector=vectors)
        )

    def _retrieve(self, ids: Sequence[str], with_payload: bool, vectors: list[str] | bool) -> list[qe.Record]:
        return self.shard.retrieve(list(ids), with_payload=with_payload, with_vector=vectors)

    def _count(self, flt: ChunkFilter) -> int:
        return int(self.shard.count(qe.CountRequest(exact=True, filter=self._filter(flt))))

    def _facet(self, key: str) -> dict[str, int]:
        response = self.shard.facet(qe.FacetRequest(key, limit=1_000_000, exact=True))
        # qdrant-edge 0.9 keeps a deleted value in the facet with count 0 (even after optimize).
        return {str(h.value): int(h.count) for h in response.hits if h.count > 0}

    def _nearest(self, using: str, vector: Any, limit: int, flt: ChunkFilter | None, with_payload: bool) -> list[Any]:  # noqa: ANN401 - a qdrant-edge query (a dense list or a SparseVector)
        query = qe.Query.Nearest(vector, using=using)
        request = qe.QueryRequest(limit=limit, query=query, filter=self._filter(flt), with_payload=with_payload)
        return self.shard.query(request)

    def _fused(self, lists: list[tuple[str, Any]], query: FusedQuery, flt: ChunkFilter | None) -> list[Any]:
        edge_filter = self._filter(flt)
        prefetches = [
            qe.Prefetch(limit=query.prefetch_limit, query=qe.Query.Nearest(vector, using=name), filter=edge_filter)
            for name, vector in lists
        ]
        if query.fusion == "dbsf":
            fusion: Any = qe.Fusion.Dbsf()
        else:
            fusion = qe.Fusion.Rrf(k=query.rrf_k, weights=query.rrf_weights(len(prefetches)))
        request = qe.QueryRequest(
            limit=query.limit, prefetches=prefetches, query=fusion, filter=edge_filter, with_payload=True
        )
        return self.shard.query(request)

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
