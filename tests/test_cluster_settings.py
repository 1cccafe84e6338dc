"""Cluster settings for new collections (issue 39, item 1): what a Qdrant server receives, and what the
collections view shows.

The server side is the real qdrant-client (`QdrantClient(url=...)`, through `open_store`) talking HTTP to
tests/qdrant_server.py, which records each request and answers in Qdrant 1.20's shapes: the assertions are
on the JSON a server would receive. The embedded engine and qdrant-client's local mode are real, and must
say which settings they do not apply.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from qdrant_server import PEERS, RecordedQdrant

from rag.cli import main
from rag.errors import ConfigError
from rag.settings.config import ClusterConfig, Settings
from rag.store import open_store
from rag.store.base import CollectionModels, FusedQuery, PointData
from rag.store.client import ClientStore
from rag.store.edge import EdgeStore
from rag.types import SparseVector

MODELS = CollectionModels("all-MiniLM-L6-v2", 4, "Qdrant/bm25", sentence_vectors=True)
LAYOUT_ENV = {
    "RAGSCOPE_SHARDS": "6",
    "RAGSCOPE_REPLICAS": "2",
    "RAGSCOPE_WRITE_CONSISTENCY": "2",
    "RAGSCOPE_ON_DISK_VECTORS": "1",
    "RAGSCOPE_ON_DISK_PAYLOAD": "0",
    "RAGSCOPE_QUANTIZATION": "scalar",
}
QUERY = "/collections/docs/points/query"


@pytest.fixture
def server():
    with RecordedQdrant() as recorded:
        yield recorded


def _settings(server: RecordedQdrant, tmp_path: Path, **env: str) -> Settings:
    return Settings.from_env(
        {"QDRANT_URL": server.url, "RAGSCOPE_DATA_DIR": str(tmp_path / "data"), **env},
        secrets_path=tmp_path / "none.toml",
    )


def _created(server: RecordedQdrant, tmp_path: Path, **env: str) -> dict:
    store = open_store(_settings(server, tmp_path, **env))
    try:
        store.ensure_collection(MODELS)
    finally:
        store.close()
    (create,) = server.requests_to("PUT", "/collections/docs")
    return create.body


def test_a_new_collection_is_created_on_the_server_with_exactly_the_configured_layout(server, tmp_path):
    body = _created(server, tmp_path, **LAYOUT_ENV)
    assert (body["shard_number"], body["replication_factor"], body["write_consistency_factor"]) == (6, 2, 2)
    assert body["on_disk_payload"] is False
    assert {name: v["on_disk"] for name, v in body["vectors"].items()} == {"dense": True, "sentences": True}
    assert body["sparse_vectors"]["sparse"]["index"] == {"on_disk": True}
    assert body["quantization_config"] == {"scalar": {"type": "int8", "quantile": 0.99, "always_ram": True}}
    assert body["metadata"]["dense_model"] == "all-MiniLM-L6-v2"  # the models record travels beside the layout


def test_unset_cluster_settings_leave_the_servers_defaults(server, tmp_path):
    body = _created(server, tmp_path)
    assert not {"shard_number", "replication_factor", "write_consistency_factor", "quantization_config"} & set(body)
    assert body["on_disk_payload"] is True  # Qdrant's own default, sent as such
    assert body["vectors"]["dense"]["on_disk"] is False


def test_binary_quantization_is_what_the_server_is_asked_for(server, tmp_path):
    body = _created(server, tmp_path, RAGSCOPE_QUANTIZATION="binary")
    assert body["quantization_config"] == {"binary": {"always_ram": True}}


def test_every_search_carries_the_read_consistency_and_dense_ones_the_rescoring(server, tmp_path):
    env = {"RAGSCOPE_READ_CONSISTENCY": "majority", "RAGSCOPE_RESCORE": "0", "RAGSCOPE_OVERSAMPLING": "2.5"}
    store = open_store(_settings(server, tmp_path, **env))
    store.ensure_collection(MODELS)
    dense, sparse = [1.0, 0.0, 0.0, 0.0], SparseVector((7,), (1.0,))
    store.search_dense(dense, 3)
    store.search_sparse(sparse, 3)
    store.search_fused(FusedQuery(dense, sparse, prefetch_limit=20, limit=5, fusion="rrf"))
    store.search_sentences(dense, 3)
    store.close()
    queries = server.requests_to("POST", QUERY)
    assert len(queries) == 4
    assert [q.query["consistency"] for q in queries] == [["majority"]] * 4
    rescoring = {"quantization": {"rescore": False, "oversampling": 2.5}}
    plain_dense, plain_sparse, fused, sentences = (q.body for q in queries)
    assert plain_dense["params"] == rescoring and sentences["params"] == rescoring
    assert "params" not in plain_sparse  # sparse vectors are never quantized
    assert [p.get("params") for p in fused["prefetch"]] == [rescoring, None]


def test_a_read_consistency_of_replicas_is_sent_as_a_number(server, tmp_path):
    store = open_store(_settings(server, tmp_path, RAGSCOPE_READ_CONSISTENCY="2"))
    store.ensure_collection(MODELS)
    store.search_dense([1.0, 0.0, 0.0, 0.0], 3)
    store.close()
    (query,) = server.requests_to("POST", QUERY)
    assert query.query["consistency"] == ["2"]


def test_the_collections_command_shows_the_layout_and_each_shards_replicas(server, tmp_path, monkeypatch):
    env = {**LAYOUT_ENV, "QDRANT_URL": server.url, "RAGSCOPE_DATA_DIR": str(tmp_path / "data")}
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    _created(server, tmp_path, **LAYOUT_ENV)
    runner = CliRunner()

    out = runner.invoke(main, ["collections"])
    assert out.exit_code == 0, out.output
    docs_line, *shard_lines = out.stdout.splitlines()
    assert docs_line.startswith("* docs\t0 documents\t0 chunks\tdense all-MiniLM-L6-v2")
    assert docs_line.split("\t")[-2:] == [
        "made with 6 shards, 2 replicas, write consistency 2, vectors on disk, payload in RAM, scalar quantization",
        "cluster: 6 shards, 12 replicas on 3 peers: 12 Active",
    ]
    assert shard_lines[0] == f"      shard 0: Active on peer {PEERS[0]} (0 points), Active on peer {PEERS[1]}"
    assert len(shard_lines) == 6 and all(line.startswith("      shard ") for line in shard_lines)
    assert "Note:" not in out.stderr and "Cluster status" not in out.stderr  # a server applies and reports all

    shown = json.loads(runner.invoke(main, ["collections", "--json"]).stdout)
    (docs,) = shown
    assert {k: docs["layout"][k] for k in ("shards", "replicas", "write_consistency")} == {
        "shards": 6,
        "replicas": 2,
        "write_consistency": 2,
    }
    assert docs["cluster"]["reported"] and docs["cluster"]["shard_count"] == 6
    assert len(docs["cluster"]["replicas"]) == 12 and {r["state"] for r in docs["cluster"]["replicas"]} == {"Active"}


def _point() -> PointData:
    return PointData(
        "00000000-0000-0000-0000-000000000001",
        [1.0, 0.0, 0.0, 0.0],
        SparseVector((7,), (1.0,)),
        {"source": "a.md", "text": "a"},
        [[1.0, 0.0, 0.0, 0.0]],
    )


def test_the_embedded_engine_applies_on_disk_and_quantization_and_names_what_it_cannot(tmp_path):
    cluster = ClusterConfig(shards=6, replicas=2, on_disk_vectors=True, quantization="binary", oversampling=2.0)
    store = EdgeStore(tmp_path / "qdrant", "docs", cluster=cluster)
    store.ensure_collection(MODELS)
    store.upsert([_point()])
    assert [h.id for h in store.search_dense([1.0, 0.0, 0.0, 0.0], 3)] == [_point().id]  # quantized, rescored
    layout = store.layout()
    assert (layout.on_disk_vectors, layout.on_disk_payload, layout.quantization) == (True, True, "binary")
    assert (layout.shards, layout.replicas) == (1, 1)
    assert store.cluster_note() == (
        "shards (RAGSCOPE_SHARDS=6), replicas (RAGSCOPE_REPLICAS=2) do not apply on the embedded engine "
        "(one shard in this process), only on a Qdrant server (QDRANT_URL)"
    )
    assert not store.cluster_status().reported
    assert "does not report cluster status" in store.cluster_status().describe()
    store.close()


def test_an_embedded_collection_made_with_defaults_says_so_and_has_nothing_to_note(tmp_path):
    store = EdgeStore(tmp_path / "qdrant", "docs")
    assert store.layout() is None  # no collection yet
    store.ensure_collection(MODELS)
    assert store.layout().describe() == "1 shard, 1 replica, vectors in RAM, payload on disk, no quantization"
    assert store.cluster_note() == ""
    store.close()


def test_local_mode_applies_none_and_says_which_were_set(tmp_path):
    store = ClientStore.connect(":memory:", "", "docs", ClusterConfig(shards=3, quantization="scalar"))
    store.ensure_collection(MODELS)
    store.upsert([_point()])
    assert [h.id for h in store.search_dense([1.0, 0.0, 0.0, 0.0], 3)] == [_point().id]
    assert store.cluster_note() == (
        "shards (RAGSCOPE_SHARDS=3), quantization (RAGSCOPE_QUANTIZATION=scalar) do not apply on qdrant-client's "
        "local mode, only on a Qdrant server (QDRANT_URL)"
    )
    assert store.cluster_status().describe() == "qdrant-client's local mode does not report cluster status"
    store.close()


def test_write_consistency_above_the_replicas_is_refused():
    with pytest.raises(ConfigError, match=r"write consistency \(3\) must be at most the replicas \(2\)"):
        Settings.from_env({"RAGSCOPE_REPLICAS": "2", "RAGSCOPE_WRITE_CONSISTENCY": "3"})
    with pytest.raises(ConfigError, match="RAGSCOPE_READ_CONSISTENCY: read consistency must be .*; got 'some'"):
        Settings.from_env({"RAGSCOPE_READ_CONSISTENCY": "some"})


def test_ingest_takes_the_cluster_options_and_says_what_the_embedded_engine_cannot_apply(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGSCOPE_DATA_DIR", str(tmp_path / "data"))
    doc = tmp_path / "a.md"
    doc.write_text("# Title\n\nSome text about shards and replicas.\n")
    runner = CliRunner()
    out = runner.invoke(main, ["ingest", str(doc), "--shards", "6", "--quantization", "scalar"])
    assert out.exit_code == 0, out.output
    assert "note: shards (RAGSCOPE_SHARDS=6) does not apply on the embedded engine" in out.stderr
    shown = json.loads(runner.invoke(main, ["collections", "--json"]).stdout)
    assert shown[0]["layout"]["quantization"] == "scalar" and shown[0]["layout"]["shards"] == 1
    listed = runner.invoke(main, ["collections"])
    assert "made with 1 shard, 1 replica, vectors in RAM, payload on disk, scalar quantization" in listed.stdout
    assert "Cluster status: the embedded engine does not report cluster status" in listed.stderr
    again = runner.invoke(main, ["ingest", str(doc), "--quantization", "binary"])
    assert again.exit_code == 0 and "keeps the layout it was made with" in again.stderr
    bad = runner.invoke(main, ["ingest", str(doc), "--replicas", "2", "--write-consistency", "3"])
    assert bad.exit_code == 1 and "write consistency (3) must be at most the replicas (2)" in bad.output


def test_the_embedded_engine_searches_the_quantized_vectors_with_the_configured_oversampling(tmp_path):
    """Binary quantization on random unit vectors (its worst case) misses most of the exact top 10; fetching more
    candidates with the quantized vectors and rescoring them with the full ones finds more: the setting reaches
    the engine's search, not just its config."""
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(3000, 128))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    questions = rng.normal(size=(60, 128))
    exact = [set(np.argsort(-(vectors @ q))[:10]) for q in questions]
    store = EdgeStore(tmp_path / "qdrant", "docs", cluster=ClusterConfig(quantization="binary"))
    store.ensure_collection(CollectionModels("m", 128, "Qdrant/bm25"))
    store.upsert(
        [
            PointData(str(uuid.UUID(int=i + 1)), v.tolist(), SparseVector((7,), (1.0,)), {})
            for i, v in enumerate(vectors)
        ]
    )
    store.optimize()  # builds the index and the quantized vectors
    store.close()

    def recall(oversampling: float) -> float:
        reader = EdgeStore(
            tmp_path / "qdrant", "docs", cluster=ClusterConfig(quantization="binary", oversampling=oversampling)
        )
        found = [{uuid.UUID(h.id).int - 1 for h in reader.search_dense(q.tolist(), 10)} for q in questions]
        reader.close()
        return float(np.mean([len(f & e) / 10 for f, e in zip(found, exact)]))

    once, eightfold = recall(1.0), recall(8.0)
    assert once < 0.6 and eightfold > once + 0.15, (once, eightfold)
