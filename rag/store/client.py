"""The same store interface on qdrant-client: a Qdrant server or cluster when QDRANT_URL is set.

`:memory:` (qdrant-client's local mode) stands in for the server in tests, and `local:<folder>` for one
shared by several processes (rag/store/local_turns.py); both are brute-force Python and never the
default for real data. Server-only features (snapshots, aliases, replicas, API
keys) live behind this class only.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any, Sequence

from qdrant_client import QdrantClient, models

from rag.errors import InPlaceRefused, StoreError
from rag.settings.atomic import write_atomically
from rag.settings.config import READ_LEVELS, ClusterConfig, validate_collection_name
from rag.store.base import DENSE, SPARSE, CollectionModels, FilterTerms, FusedQuery, PointData, Store, store_call
from rag.store.layout import ClusterStatus, Layout, ShardReplica
from rag.store.local_turns import LOCAL_PREFIX, TurnClient
from rag.store.meta import META_COLLECTION
from rag.text.redact import redact_url
from rag.types import ChunkFilter, SparseVector

# What `copy_to` writes in its folder: the snapshot's name on the server.
SNAPSHOT_NOTE = "snapshot.json"
# Qdrant's quantization per RAGSCOPE_QUANTIZATION (as the embedded engine's, rag/store/edge.py): int8 keeps
# the 0.99 quantile's range; both stay in RAM so that vectors on disk are only read to rescore.
_QUANTIZATION: dict[str, Any] = {
    "scalar": models.ScalarQuantization(
        scalar=models.ScalarQuantizationConfig(type=models.ScalarType.INT8, quantile=0.99, always_ram=True)
    ),
    "binary": models.BinaryQuantization(binary=models.BinaryQuantizationConfig(always_ram=True)),
}
# How Qdrant's collection info names each kind of quantization.
_QUANTIZATION_NAMES = {
    models.ScalarQuantization: "scalar",
    models.BinaryQuantization: "binary",
    models.ProductQuantization: "product",
}


class ClientStore(Store):
    """Store on qdrant-client.

    Example:
        store = ClientStore(QdrantClient(":memory:"), "docs")
        store.ensure_collection(CollectionModels("all-MiniLM-L6-v2", 384, "Qdrant/bm25"))
    """

    backend = "server"
    vectors_in_place = "in place: the Qdrant server adds and deletes a named vector (create_vector_name)"
    # A server applies every cluster setting; local mode (no url) none (see `applied_cluster`).
    _SERVER_APPLIES = frozenset(f.name for f in dataclasses.fields(ClusterConfig))
    filter_terms = FilterTerms(
        any_of=lambda key, values: models.FieldCondition(key=key, match=models.MatchAny(any=values)),
        has_id=lambda ids: models.HasIdCondition(has_id=ids),
        equals=lambda key, value: models.FieldCondition(key=key, match=models.MatchValue(value=value)),
        is_empty=lambda key: models.IsEmptyCondition(is_empty=models.PayloadField(key=key)),
        combine=lambda must, must_not: models.Filter(must=must, must_not=must_not),
    )

    def __init__(
        self,
        client: QdrantClient | TurnClient,
        collection: str,
        url: str = "",
        api_key: str = "",
        cluster: ClusterConfig | None = None,
    ) -> None:
        self.client = client
        # The server's address and key, for the snapshot it fetches back to recover one (`replace_from`);
        # empty in local mode.
        self.url, self._api_key = url, api_key
        super().__init__(
            collection,
            "check that the Qdrant server (QDRANT_URL) is up and reachable and that QDRANT_API_KEY is right",
            cluster,
        )

    @property
    def applied_cluster(self) -> frozenset[str]:
        """A server applies every cluster setting; local mode is brute-force Python in memory and applies none."""
        return self._SERVER_APPLIES if self.url else frozenset()

    @property
    def engine_name(self) -> str:
        """How `cluster_note` names it (the address without its secrets)."""
        if not self.url:
            return "qdrant-client's local mode"
        return f"the Qdrant server at {redact_url(self.url, raw=self.url)}"

    @classmethod
    def connect(cls, url: str, api_key: str, collection: str, cluster: ClusterConfig | None = None) -> "ClientStore":
        validate_collection_name(collection)
        try:
            if url == ":memory:":
                client: Any = QdrantClient(location=":memory:")
            elif url.startswith(LOCAL_PREFIX):
                client = TurnClient(Path(url[len(LOCAL_PREFIX) :]))
            else:
                client = QdrantClient(url=url, api_key=api_key or None, timeout=30)
            client.collection_exists(collection)  # the client connects lazily: find out now, once
        except Exception as e:  # noqa: BLE001 - qdrant-client raises HTTP, gRPC and OS errors alike when it cannot connect
            raise StoreError(
                redact_url(
                    f"could not connect to Qdrant at {url} ({e}); "
                    "check QDRANT_URL, QDRANT_API_KEY and that the server is running",
                    raw=url,
                )
            ) from None
        local = url == ":memory:" or url.startswith(LOCAL_PREFIX)
        return cls(client, collection, "" if local else url, api_key, cluster)

    def _keep_models(self, models_: CollectionModels) -> None:
        """Nothing to write apart: a server collection carries its models as metadata, given when `_create` makes it."""

    def _vector_params(self, dim: int, sentences: bool, cluster: ClusterConfig) -> models.VectorParams:
        on_disk = cluster.on_disk_vectors if self.url else None
        if not sentences:
            return models.VectorParams(size=dim, distance=models.Distance.COSINE, on_disk=on_disk)
        # Only read for candidates by id (MaxSim rescoring), never searched: no HNSW graph (m=0).
        maxsim = models.MultiVectorConfig(comparator=models.MultiVectorComparator.MAX_SIM)
        return models.VectorParams(
            size=dim,
            distance=models.Distance.COSINE,
            on_disk=on_disk,
            multivector_config=maxsim,
            hnsw_config=models.HnswConfigDiff(m=0),
        )

    def _create(self, vectors: dict[str, Any], models_: CollectionModels, cluster: ClusterConfig) -> None:
        sparse = models.SparseVectorParams(modifier=models.Modifier.IDF)
        layout: dict[str, Any] = {}
        if self.url:  # local mode keeps none of them (`applied_cluster`)
            sparse.index = models.SparseIndexParams(on_disk=cluster.on_disk_vectors)
            layout = {
                "shard_number": cluster.shards,
                "replication_factor": cluster.replicas,
                "write_consistency_factor": cluster.write_consistency,
                "on_disk_payload": cluster.on_disk_payload,
                "quantization_config": _QUANTIZATION.get(cluster.quantization),
            }
        self.client.create_collection(
            self.collection,
            vectors_config=vectors,
            sparse_vectors_config={SPARSE: sparse},
            metadata=models_.as_dict(),
            **layout,
        )

    @store_call
    def layout(self) -> Layout | None:
        """As the server reports the collection's config (local mode keeps only some: the others are None)."""
        if not self._exists():
            return None
        config = self.client.get_collection(self.collection).config
        params = config.params
        vectors = params.vectors if isinstance(params.vectors, dict) else {}
        dense = vectors.get(DENSE)
        quantization = config.quantization_config or (dense.quantization_config if dense else None)
        return Layout(
            shards=params.shard_number,
            replicas=params.replication_factor,
            write_consistency=params.write_consistency_factor,
            on_disk_vectors=bool(dense.on_disk) if dense is not None and dense.on_disk is not None else None,
            on_disk_payload=params.on_disk_payload,
            quantization=_QUANTIZATION_NAMES.get(type(quantization), "none") if self.url else None,
        )

    @store_call
    def cluster_status(self) -> ClusterStatus:
        """qdrant-client's collection cluster info: this peer's replicas (with their points) and the others'."""
        if not self.url:
            return ClusterStatus(why="qdrant-client's local mode does not report cluster status")
        if not self._exists():
            return ClusterStatus(why=f"collection {self.collection!r} does not exist yet")
        info = self.client.collection_cluster_info(self.collection)
        here = [ShardReplica(s.shard_id, info.peer_id, str(s.state.value), s.points_count) for s in info.local_shards]
        there = [ShardReplica(s.shard_id, s.peer_id, str(s.state.value)) for s in info.remote_shards]
        return ClusterStatus(
            peer=info.peer_id,
            shard_count=info.shard_count,
            replicas=tuple(sorted(here + there, key=lambda r: (r.shard, r.peer or 0))),
            transfers=len(info.shard_transfers or ()),
        )

    def _search_params(self, using: str) -> models.SearchParams | None:
        """A quantized collection's rescoring, for the dense vectors on a server (a collection without
        quantization ignores it; a sparse search has none; local mode searches by brute force)."""
        if not self.url or using == SPARSE:
            return None
        c = self.cluster
        return models.SearchParams(
            quantization=models.QuantizationSearchParams(rescore=c.rescore, oversampling=c.oversampling)
        )

    def _consistency(self) -> dict[str, Any]:
        """The read consistency a search sends on a server: a number of replicas, or a named level."""
        if not self.url:
            return {}
        level = self.cluster.read_consistency
        return {"consistency": models.ReadConsistencyType(level) if level in READ_LEVELS else int(level)}

    def _create_index(self, name: str, integer: bool) -> None:
        kind = models.PayloadSchemaType.INTEGER if integer else models.PayloadSchemaType.KEYWORD
        self.client.create_payload_index(self.collection, name, kind)

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
                f"the metadata of collection {self.collection!r} on the server (which models built it) is damaged "
                f"({e}); delete the collection and re-ingest, or restore its metadata"
            ) from None

    # The primitives `Store` is written against: one qdrant-client call each.

    def _exists(self) -> bool:
        return bool(self.client.collection_exists(self.collection))

    def _sparse(self, vector: SparseVector) -> models.SparseVector:
        return models.SparseVector(indices=list(vector.indices), values=list(vector.values))

    def _upsert(self, points: Sequence[PointData]) -> None:
        structs = [models.PointStruct(id=p.id, vector=self._point_vectors(p), payload=p.payload) for p in points]
        self.client.upsert(self.collection, structs, wait=True)

    def _set_payload(self, ids: Sequence[str], payload: dict[str, Any]) -> None:
        self.client.set_payload(self.collection, payload=payload, points=list(ids), wait=True)

    def _set_payload_where(self, flt: ChunkFilter, payload: dict[str, Any]) -> None:
        selector = models.FilterSelector(filter=self._filter(flt))
        self.client.set_payload(self.collection, payload=payload, points=selector, wait=True)

    def _delete(self, ids: Sequence[str]) -> None:
        self.client.delete(self.collection, points_selector=models.PointIdsList(points=list(ids)), wait=True)

    def _delete_where(self, flt: ChunkFilter) -> None:
        self.client.delete(self.collection, points_selector=models.FilterSelector(filter=self._filter(flt)), wait=True)

    def _scroll(
        self, flt: ChunkFilter, limit: int, offset: Any, vectors: list[str] | bool  # noqa: ANN401 - a point id or None
    ) -> tuple[list[models.Record], Any]:  # fmt: skip
        return self.client.scroll(
            self.collection,
            scroll_filter=self._filter(flt),
            limit=limit,
            offset=offset,
            with_payload=True,
            with_vectors=vectors,
        )

    def _retrieve(self, ids: Sequence[str], with_payload: bool, vectors: list[str] | bool) -> list[models.Record]:
        return self.client.retrieve(self.collection, ids=list(ids), with_payload=with_payload, with_vectors=vectors)

    def _count(self, flt: ChunkFilter) -> int:
        return int(self.client.count(self.collection, count_filter=self._filter(flt), exact=True).count)

    def _facet(self, key: str) -> dict[str, int]:
        response = self.client.facet(self.collection, key=key, limit=1_000_000, exact=True)
        return {str(h.value): int(h.count) for h in response.hits}

    def _nearest(self, using: str, vector: Any, limit: int, flt: ChunkFilter | None, with_payload: bool) -> list[Any]:  # noqa: ANN401 - a qdrant-client query (a dense list or a SparseVector model)
        qfilter, params = self._filter(flt), self._search_params(using)
        return self._query(
            query=vector,
            using=using,
            limit=limit,
            query_filter=qfilter,
            with_payload=with_payload,
            search_params=params,
        )

    def _fused(self, lists: list[tuple[str, Any]], query: FusedQuery, flt: ChunkFilter | None) -> list[Any]:
        qfilter = self._filter(flt)
        prefetch = [
            models.Prefetch(
                query=vector, using=name, limit=query.prefetch_limit, filter=qfilter, params=self._search_params(name)
            )
            for name, vector in lists
        ]
        if query.fusion == "dbsf":
            fusion: Any = models.FusionQuery(fusion=models.Fusion.DBSF)
        else:
            fusion = models.RrfQuery(rrf=models.Rrf(k=query.rrf_k, weights=query.rrf_weights(len(prefetch))))
        return self._query(prefetch=prefetch, query=fusion, limit=query.limit, query_filter=qfilter, with_payload=True)

    def _query(self, **request: Any) -> list[Any]:  # noqa: ANN401 - qdrant-client's query_points arguments
        """One query of the collection, at the configured read consistency on a server."""
        return self.client.query_points(self.collection, **request, **self._consistency()).points

    @store_call
    def list_collections(self) -> list[str]:
        return sorted(c.name for c in self.client.get_collections().collections if c.name != META_COLLECTION)

    @store_call
    def drop_collection(self) -> None:
        if self._exists():
            self.client.delete_collection(self.collection)

    def ensure_space(self, nbytes: int) -> None:
        """The server keeps its data on its own disks and answers a full one with an error."""

    @store_call
    def copy_to(self, folder: Path) -> int:
        """Take a Qdrant snapshot on the server (points, indexes and the models metadata) and note its name in
        `folder`: the snapshot itself stays in the server's snapshots folder (deleting it there loses the copy)."""
        if not self.url:
            raise StoreError(
                "qdrant-client's local mode keeps no snapshot: versions are kept on the embedded engine "
                "(QDRANT_URL unset) or on a Qdrant server"
            )
        snapshot = self.client.create_snapshot(self.collection, wait=True)
        if snapshot is None:
            raise StoreError(f"the Qdrant server made no snapshot of collection {self.collection!r}; {self.remedy}")
        folder.mkdir(parents=True)
        note = {"collection": self.collection, "snapshot": snapshot.name, "size": snapshot.size}
        write_atomically(folder / SNAPSHOT_NOTE, json.dumps(note))
        return int(snapshot.size or 0)

    @store_call
    def replace_from(self, folder: Path) -> None:
        """Recover the collection from the snapshot `copy_to` noted: the server fetches it from its own
        snapshots URL and replaces the collection only once it is downloaded and unpacked whole, so a
        snapshot that cannot be read leaves the collection as it was."""
        try:
            note = json.loads((folder / SNAPSHOT_NOTE).read_text(encoding="utf-8"))
            location = f"{self.url.rstrip('/')}/collections/{note['collection']}/snapshots/{note['snapshot']}"
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise StoreError(
                f"{folder / SNAPSHOT_NOTE} cannot be read ({e}); collection {self.collection!r} is unchanged"
            ) from None
        self.client.recover_snapshot(self.collection, location, api_key=self._api_key or None, wait=True)

    def _create_dense(self, name: str, dim: int) -> None:
        if name in self._vector_names():
            return
        config = models.DenseVectorNameConfig(dense=models.DenseVectorConfig(size=dim, distance=models.Distance.COSINE))
        try:
            self.client.create_vector_name(self.collection, name, config, wait=True)
        except Exception as e:  # noqa: BLE001 - an older server answers with an HTTP or gRPC error
            raise InPlaceRefused(
                f"the Qdrant server could not add the named vector {name!r} to collection {self.collection!r} in "
                f"place ({type(e).__name__}: {e}); a server from before named vectors could be added cannot. Nothing "
                "was changed"
            ) from None

    def _vector_names(self) -> set[str]:
        vectors = self.client.get_collection(self.collection).config.params.vectors
        return set(vectors) if isinstance(vectors, dict) else set()

    def _delete_dense(self, name: str) -> None:
        if name in self._vector_names():
            self.client.delete_vector_name(self.collection, name, wait=True)

    def _update_vectors(self, name: str, vectors: dict[str, list[float]]) -> None:
        batch = [models.PointVectors(id=i, vector={name: v}) for i, v in vectors.items()]
        self.client.update_vectors(self.collection, batch, wait=True)

    def _lacking(self, name: str, limit: int) -> list[models.Record]:
        return self.client.scroll(
            self.collection, scroll_filter=_lacks(name), limit=limit, with_payload=True, with_vectors=False
        )[0]

    def _count_lacking(self, name: str) -> int:
        return int(self.client.count(self.collection, count_filter=_lacks(name), exact=True).count)

    def _rewrite_models(self, models_: CollectionModels) -> None:
        self.client.update_collection(self.collection, metadata=models_.as_dict())

    def optimize(self) -> None:
        """A server optimises in the background; nothing to do here."""

    def flush(self) -> None:
        """Writes use wait=True, so they are durable when the call returns."""

    @store_call
    def close(self) -> None:
        self.client.close()


def _lacks(name: str) -> models.Filter:
    """Every point without the named vector `name`."""
    return models.Filter(must_not=[models.HasVectorCondition(has_vector=name)])
