"""The default store: Qdrant's Rust engine in-process (qdrant-edge), one shard under the data dir.

Hazard we guard against: a second open of the same shard directory breaks the process that already
holds it (its next flush fails). So the shard is open only during this process's turn on it, taken
under an exclusive fcntl lock on a sidecar file (rag/store/lease.py): the app and `ragscope` commands
on the same data dir take turns, each waiting for the other's current operation.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
from pathlib import Path
from typing import Any, Callable, Sequence

import qdrant_edge as qe

from rag.errors import StoreError
from rag.settings.atomic import write_atomically
from rag.settings.config import ClusterConfig
from rag.settings.strict import read_object
from rag.store.base import (
    DENSE,
    SENTENCES,
    SPARSE,
    CollectionModels,
    FilterTerms,
    FusedQuery,
    PointData,
    Store,
    copy_tree_sparse,
    folder_bytes,
    store_call,
    unlocked_store_call,
)
from rag.store.layout import ClusterStatus, Layout
from rag.store.lease import LINGER_S, WAIT_S, ShardLease
from rag.types import ChunkFilter, SparseVector

ENGINE_RESERVE = 64 * 2**20  # see EdgeStore.ensure_space
# What `copy_to` writes in its folder: the shard's own folder, and the models record.
SHARD_COPY, MODELS_COPY = "shard", "models.json"
# The file qdrant-edge writes in a shard's folder when it creates it: the config it was made with.
ENGINE_CONFIG = "edge_config.json"
# qdrant-edge's own quantization settings, per RAGSCOPE_QUANTIZATION: int8 keeps the 0.99 quantile's range
# (Qdrant's advice against outliers); both stay in RAM so that vectors on disk are only read to rescore.
_QUANTIZATION: dict[str, Callable[[], Any]] = {
    "scalar": lambda: qe.ScalarQuantizationConfig(qe.ScalarType.Int8, quantile=0.99, always_ram=True),
    "binary": lambda: qe.BinaryQuantizationConfig(always_ram=True),
}


class EdgeStore(Store):
    """Store on an embedded Qdrant shard at `<root>/<collection>/`.

    Example:
        store = EdgeStore(Path("data/qdrant"), "docs")
        store.ensure_collection(CollectionModels("all-MiniLM-L6-v2", 384, "Qdrant/bm25"))
        store.count()
    """

    backend = "edge"
    vectors_in_place = "in place: the embedded engine (qdrant-edge) adds and deletes a named vector on its shard"
    # One shard in this process: no shards, replicas or consistency to choose.
    applied_cluster = frozenset({"on_disk_vectors", "on_disk_payload", "quantization", "rescore", "oversampling"})
    engine_name = "the embedded engine (one shard in this process)"
    filter_terms = FilterTerms(
        any_of=lambda key, values: qe.FieldCondition(key, match=qe.MatchAny(values)),
        has_id=lambda ids: qe.HasIdCondition(set(ids)),
        equals=lambda key, value: qe.FieldCondition(key, match=qe.MatchValue(value)),
        is_empty=lambda key: qe.IsEmptyCondition(key),
        combine=lambda must, must_not: qe.Filter(must=must, must_not=must_not),
    )
    fetches_ids = True

    def __init__(
        self,
        root: Path,
        collection: str,
        wait_s: float = WAIT_S,
        linger_s: float = LINGER_S,
        cluster: ClusterConfig | None = None,
    ) -> None:
        """Open the store, with a first turn on the shard: one that cannot be opened (a full disk,
        damaged files) fails here, and a process that holds it for longer than `wait_s` too.

        Raises:
            StoreLockedError: another process kept its turn for longer than `wait_s`.
            StoreError: the data dir or the shard cannot be opened.
        """
        self.root = Path(root)
        remedy = f"check the data dir {self.root} (free disk space, permissions), or run `ragscope doctor`"
        super().__init__(collection, remedy, cluster)
        self._path = self.root / collection
        self.meta_path = self.root / f"{collection}.meta.json"
        self._shard: qe.EdgeShard | None = None
        # The models record as last read, with the (inode, mtime, size) of the file it was read from.
        self._models: tuple[tuple[int, int, int], CollectionModels] | None = None
        self._turn_hooks: list[Callable[[], None]] = []
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            lease = ShardLease(self.root / f"{collection}.lock", self._begin_turn, self._end_turn, wait_s, linger_s)
        except OSError as e:
            raise StoreError(
                f"could not open the data dir {self.root} ({e.strerror or e}); check it exists and is writable"
            ) from None
        self.lock = lease
        try:
            with lease:
                pass
        except BaseException:
            lease.close()
            raise

    def on_turn(self, hook: Callable[[], None]) -> None:
        self._turn_hooks.append(hook)

    def _begin_turn(self) -> None:
        """Open the shard for this turn, as the other processes left it, then run the turn hooks."""
        self._load_shard()
        for hook in self._turn_hooks:
            hook()

    def _load_shard(self) -> None:
        """Open the shard on disk, when there is one."""
        if self._path.is_dir() and any(self._path.iterdir()):
            self.ensure_space(0)
            try:
                self._shard = qe.EdgeShard.load(str(self._path))
            except Exception as e:  # noqa: BLE001 - whatever the engine raises
                raise StoreError(f"could not open the Qdrant data in {self._path} ({e}); {self.remedy}") from None

    def _end_turn(self) -> None:
        """Flush and close the shard, so the next process to take a turn opens all this one wrote."""
        shard, self._shard = self._shard, None
        if shard is None:
            return
        try:
            shard.flush()
            shard.close()
        except Exception as e:  # noqa: BLE001 - whatever the engine raises
            raise StoreError(
                f"the {self.backend} store failed to close ({type(e).__name__}: {e}); {self.remedy}"
            ) from None

    @property
    def shard(self) -> qe.EdgeShard:
        if self._shard is None:
            raise StoreError(f"collection {self.collection!r} does not exist yet; ingest a document first")
        return self._shard

    def _keep_models(self, models: CollectionModels) -> None:
        # Written before the shard, so a shard is always created from the metadata it is read with.
        self.write_models(models)

    def _vector_params(self, dim: int, sentences: bool, cluster: ClusterConfig) -> qe.EdgeVectorParams:
        on_disk = cluster.on_disk_vectors
        if not sentences:
            return qe.EdgeVectorParams(size=dim, distance=qe.Distance.Cosine, on_disk=on_disk)
        # Only read for candidates by id (MaxSim rescoring), never searched: no HNSW graph (m=0).
        no_graph = qe.HnswIndexConfig(m=0, ef_construct=100, full_scan_threshold=10_000)
        maxsim = qe.MultiVectorConfig(qe.MultiVectorComparator.MaxSim)
        return qe.EdgeVectorParams(
            size=dim, distance=qe.Distance.Cosine, on_disk=on_disk, multivector_config=maxsim, hnsw_config=no_graph
        )

    def _create(self, vectors: dict[str, Any], models: CollectionModels, cluster: ClusterConfig) -> None:
        sparse = {SPARSE: qe.EdgeSparseVectorParams(on_disk=cluster.on_disk_vectors, modifier=qe.Modifier.Idf)}
        quantization = _QUANTIZATION[cluster.quantization]() if cluster.quantization in _QUANTIZATION else None
        config = qe.EdgeConfig(
            vectors=vectors,
            sparse_vectors=sparse,
            on_disk_payload=cluster.on_disk_payload,
            quantization_config=quantization,
        )
        self._shard = qe.EdgeShard.create(str(self._path), config)

    @unlocked_store_call
    def layout(self) -> Layout | None:
        """Read from the config qdrant-edge wrote when it made the shard (written once, so read without a turn);
        a setting a shard made before ragscope set it does not record is None."""
        try:
            raw = json.loads((self._path / ENGINE_CONFIG).read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as e:
            raise StoreError(f"{self._path / ENGINE_CONFIG} cannot be read ({e}); {self.remedy}") from None
        dense = (raw.get("vectors") or {}).get(DENSE) or {}
        quantization = raw.get("quantization_config")
        return Layout(
            shards=1,
            replicas=1,
            on_disk_vectors=bool(dense.get("on_disk", False)),
            on_disk_payload=raw.get("on_disk_payload"),
            quantization=next(iter(quantization), "none") if isinstance(quantization, dict) else "none",
        )

    def cluster_status(self) -> ClusterStatus:
        return ClusterStatus(why="the embedded engine does not report cluster status: it is one shard in this process")

    def _search_params(self, using: str) -> qe.SearchParams | None:
        """A quantized collection's rescoring, for the dense vectors (a sparse search has no quantization)."""
        if using == SPARSE:
            return None
        rescoring = qe.QuantizationSearchParams(rescore=self.cluster.rescore, oversampling=self.cluster.oversampling)
        return qe.SearchParams(quantization=rescoring)

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
        """Durably (re)write the record of which models built the collection, whole (rag.settings.atomic)."""
        write_atomically(self.meta_path, json.dumps(models.as_dict()))
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

    @unlocked_store_call
    def collection_models(self) -> CollectionModels | None:
        # Read without a turn (the record is replaced atomically, by write_models), and read again
        # whenever its file changed: another process may have written it since.
        try:
            stat = self.meta_path.stat()
        except FileNotFoundError:
            return None
        key = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
        cached = self._models
        if cached is not None and cached[0] == key:
            return cached[1]
        try:
            raw = read_object(self.meta_path)
            if raw is None:  # dropped meanwhile
                return None
            models = CollectionModels.from_dict(raw)
        except ValueError as e:  # a Damage (cut short, a key given twice) or a field of the wrong type
            raise StoreError(
                f"{self.meta_path} (which models built collection {self.collection!r}) is damaged ({e}); "
                "run `ragscope doctor --fix` to rebuild it"
            ) from None
        self._models = (key, models)
        return models

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
        request = qe.QueryRequest(
            limit=limit,
            query=query,
            filter=self._filter(flt),
            with_payload=with_payload,
            params=self._search_params(using),
        )
        return self.shard.query(request)

    def _fused(self, lists: list[tuple[str, Any]], query: FusedQuery, flt: ChunkFilter | None) -> list[Any]:
        edge_filter = self._filter(flt)
        prefetches = [
            qe.Prefetch(
                limit=query.prefetch_limit,
                query=qe.Query.Nearest(vector, using=name),
                filter=edge_filter,
                params=self._search_params(name),
            )
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

    def _create_dense(self, name: str, dim: int) -> None:
        # qdrant-edge adds a named vector to a live shard (points lack it until written) and keeps it on
        # reload; creating one that is there changes nothing.
        self.shard.update(qe.UpdateOperation.create_dense_vector(name, dim, qe.Distance.Cosine))

    def _delete_dense(self, name: str) -> None:
        self.shard.update(qe.UpdateOperation.delete_vector_name(name))

    def _update_vectors(self, name: str, vectors: dict[str, list[float]]) -> None:
        batch = [qe.PointVectors(i, {name: v}) for i, v in vectors.items()]
        self.shard.update(qe.UpdateOperation.update_vectors(batch))

    def _lacking(self, name: str, limit: int) -> list[qe.Record]:
        request = qe.ScrollRequest(limit=limit, filter=_lacks(name), with_payload=True, with_vector=False)
        return self.shard.scroll(request)[0]

    def _count_lacking(self, name: str) -> int:
        return int(self.shard.count(qe.CountRequest(exact=True, filter=_lacks(name))))

    def _rewrite_models(self, models: CollectionModels) -> None:
        self.write_models(models)

    @unlocked_store_call
    def list_collections(self) -> list[str]:
        return edge_collections(self.root)

    @store_call
    def drop_collection(self) -> None:
        # This is the process's turn: no other process has the shard open.
        if self._shard is not None:
            self._shard.close()
            self._shard = None
        shutil.rmtree(self._path, ignore_errors=True)
        self.meta_path.unlink(missing_ok=True)
        self._models = None

    @store_call
    def copy_to(self, folder: Path) -> int:
        """Copy the shard's folder and the models record into `folder`, within this process's turn (no other
        process writes meanwhile), the shard closed for the copy (its files then hold all it wrote and no
        engine thread changes them) and opened again after."""
        has_shard = self._shard is not None
        self.ensure_space(folder_bytes(self._path) if has_shard else 0)
        folder.mkdir(parents=True)
        if self.meta_path.is_file():
            shutil.copy2(self.meta_path, folder / MODELS_COPY)
        if has_shard:
            self._end_turn()
            try:
                copy_tree_sparse(self._path, folder / SHARD_COPY)
            finally:
                self._load_shard()
        return folder_bytes(folder)

    @store_call
    def replace_from(self, folder: Path) -> None:
        """Copy the kept shard beside the live one under a staging name and open it there; only a copy that
        opens takes the collection's name (two renames), the live shard moved aside until the new one is open
        and put back if it does not open. A crash between the two renames leaves the old shard under its
        staging name (`.<collection>.replaced-*`), which ragscope never lists nor opens."""
        token = secrets.token_hex(4)
        staged, aside = (
            self.root / f".{self.collection}.restoring-{token}",
            self.root / f".{self.collection}.replaced-{token}",
        )
        shard_copy = folder / SHARD_COPY
        try:
            if shard_copy.is_dir():
                self.ensure_space(folder_bytes(shard_copy))
                copy_tree_sparse(shard_copy, staged)
                _check_opens(staged)
        except Exception as e:  # noqa: BLE001 - whatever copying or the engine raises
            shutil.rmtree(staged, ignore_errors=True)
            raise StoreError(
                f"the copy in {folder} could not be opened ({type(e).__name__}: {e}); collection "
                f"{self.collection!r} is unchanged"
            ) from None
        self._end_turn()
        try:
            if self._path.exists():
                os.rename(self._path, aside)
            if staged.is_dir():
                os.rename(staged, self._path)
            self._load_shard()
        except BaseException:
            if aside.exists():  # the live shard was moved aside: put it back
                shutil.rmtree(self._path, ignore_errors=True)
                os.rename(aside, self._path)
            shutil.rmtree(staged, ignore_errors=True)
            self._load_shard()
            raise
        models_copy = folder / MODELS_COPY
        if models_copy.is_file():
            write_atomically(self.meta_path, models_copy.read_bytes())
        else:
            self.meta_path.unlink(missing_ok=True)
        self._models = None
        shutil.rmtree(aside, ignore_errors=True)

    @store_call
    def optimize(self) -> None:
        """Merge segments and build indexes. Holds the GIL for its whole run: never call it on a request path."""
        if self._shard is not None:
            self._shard.optimize()

    @store_call
    def flush(self) -> None:
        if self._shard is not None:
            self._shard.flush()

    def close(self) -> None:
        """End the turn (flush and close the shard); the directory lock is released even when that fails."""
        self.lock.close()


def edge_collections(root: Path) -> list[str]:
    """The collections under an embedded data root, read from the files alone (no collection is opened or locked).

    A collection is its metadata file (written before its shard) or a non-empty shard folder; a bare
    `.lock` file is left by a store opened on a name never written to, and is not one.
    """
    if not root.is_dir():
        return []
    names = {p.name[: -len(".meta.json")] for p in root.glob("*.meta.json")}
    names |= {p.name for p in root.iterdir() if p.is_dir() and any(p.iterdir())}
    return sorted(n for n in names if not n.startswith("."))  # a shard being replaced (replace_from) is no collection


def _lacks(name: str) -> qe.Filter:
    """Every point without the named vector `name`."""
    return qe.Filter(must_not=[qe.HasVectorCondition(name)])


def _check_opens(shard_dir: Path) -> None:
    """Open a shard copy and close it again: a damaged copy fails here, before it replaces anything."""
    qe.EdgeShard.load(str(shard_dir)).close()
