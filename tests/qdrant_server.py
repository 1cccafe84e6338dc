"""A Qdrant REST server in the test process, for the real qdrant-client (`QdrantClient(url=...)`) to talk to.

No Qdrant runs here, so this answers the REST calls ragscope makes with responses of Qdrant 1.20's shapes
(its OpenAPI schema; the client parses each into its own models, so a wrong shape fails the test) and
records every request: a test asserts on what a server would have received. The collections hold no
points (searches, scrolls and counts answer empty). It keeps only what those answers need: the collections created, with the bodies they were created with, which it reports back as
a server does (params, quantization, metadata), their shards spread over three peers for the cluster info.

Example:
    with RecordedQdrant() as server:
        store = ClientStore.connect(server.url, "", "docs")
        ...
        create = server.requests_to("PUT", "/collections/docs")[0]
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

# The three nodes of docker-compose.yml's cluster profile, as peer ids; the server answers as the first.
PEERS = (4417238361592731, 7709313958164452, 1271040912330785)
_OK = {"status": "ok", "time": 0.000112}


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    query: dict[str, list[str]]
    body: Any  # the parsed JSON body, None without one


class RecordedQdrant:
    """A server on 127.0.0.1 (a free port) answering as Qdrant 1.20 would; `requests` holds what it received."""

    def __init__(self) -> None:
        self.requests: list[Request] = []
        self.collections: dict[str, dict[str, Any]] = {}  # name -> the body it was created with
        self._http = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self._http.server_port}"
        self._thread = threading.Thread(target=self._http.serve_forever, daemon=True)
        # qdrant-client asks a server's version from a thread of its own, which can come after the test's
        # last call: the server waits for it before closing, or the client warns that it got no answer.
        self._asked_version = threading.Event()

    def __enter__(self) -> RecordedQdrant:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.requests:
            self._asked_version.wait(timeout=10)
        self._http.shutdown()
        self._http.server_close()

    def requests_to(self, method: str, path: str) -> list[Request]:
        return [r for r in self.requests if r.method == method and r.path == path]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                """Quiet: the requests are recorded instead."""

            def _answer(self) -> None:
                parts = urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length)) if length else None
                request = Request(self.command, parts.path, parse_qs(parts.query), body)
                server.requests.append(request)
                status, answer = server.answer(request)
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_PUT = do_POST = do_DELETE = do_PATCH = _answer

        return Handler

    def answer(self, request: Request) -> tuple[int, Any]:
        """(HTTP status, JSON) for one request, as Qdrant answers it."""
        parts = request.path.strip("/").split("/")
        if request.path == "/":
            self._asked_version.set()
            return 200, {"title": "qdrant - vector search engine", "version": "1.20.0", "commit": "0" * 40}
        if parts == ["collections"]:
            return 200, {"result": {"collections": [{"name": n} for n in self.collections]}, **_OK}
        name, rest = parts[1], parts[2:]
        if request.method == "PUT" and not rest:
            self.collections[name] = request.body
            return 200, {"result": True, **_OK}
        if rest == ["exists"]:
            return 200, {"result": {"exists": name in self.collections}, **_OK}
        if name not in self.collections:
            return 404, {"status": {"error": f"Not found: Collection `{name}` doesn't exist!"}, "time": 0.00001}
        if request.method == "DELETE" and not rest:
            del self.collections[name]
            return 200, {"result": True, **_OK}
        made = self.collections[name]
        answers = {
            ("GET", ()): lambda: _collection_info(made),
            ("PUT", ("index",)): lambda: {"operation_id": len(self.requests), "status": "completed"},
            ("GET", ("cluster",)): lambda: _cluster_info(made),
            ("POST", ("points", "query")): lambda: {"points": []},
            ("POST", ("points", "count")): lambda: {"count": 0},
            ("POST", ("points", "scroll")): lambda: {"points": [], "next_page_offset": None},
            ("POST", ("points",)): lambda: [],
            ("POST", ("facet",)): lambda: {"hits": []},
        }
        found = answers.get((request.method, tuple(rest)))
        if found is None:
            return 404, {"status": {"error": f"no recorded answer for {request.method} {request.path}"}, "time": 0}
        return 200, {"result": found(), **_OK}


def _collection_info(made: dict[str, Any]) -> dict[str, Any]:
    """GET /collections/{name}: what it was created with, the server's defaults where the request left them."""
    params = {
        "vectors": made["vectors"],
        "shard_number": made.get("shard_number") or 1,
        "replication_factor": made.get("replication_factor") or 1,
        "write_consistency_factor": made.get("write_consistency_factor") or 1,
        "on_disk_payload": made.get("on_disk_payload", True),
        "sparse_vectors": made.get("sparse_vectors") or {},
    }
    return {
        "status": "green",
        "optimizer_status": "ok",
        "indexed_vectors_count": 0,
        "points_count": 0,
        "segments_count": 2 * params["shard_number"],
        "config": {
            "params": params,
            "hnsw_config": {"m": 16, "ef_construct": 100, "full_scan_threshold": 10000, "max_indexing_threads": 0},
            "optimizer_config": {
                "deleted_threshold": 0.2,
                "vacuum_min_vector_number": 1000,
                "default_segment_number": 0,
                "max_segment_size": None,
                "memmap_threshold": None,
                "indexing_threshold": 10000,
                "flush_interval_sec": 5,
                "max_optimization_threads": None,
            },
            "wal_config": {"wal_capacity_mb": 32, "wal_segments_ahead": 0},
            "quantization_config": made.get("quantization_config"),
            "metadata": made.get("metadata") or {},
        },
        "payload_schema": {},
    }


def _cluster_info(made: dict[str, Any]) -> dict[str, Any]:
    """GET /collections/{name}/cluster, answered by PEERS[0]: shard s's replicas on the peers after s."""
    shards, replicas = made.get("shard_number") or 1, made.get("replication_factor") or 1
    placed = [(s, PEERS[(s + r) % len(PEERS)]) for s in range(shards) for r in range(replicas)]
    return {
        "peer_id": PEERS[0],
        "shard_count": shards,
        "local_shards": [{"shard_id": s, "points_count": 0, "state": "Active"} for s, p in placed if p == PEERS[0]],
        "remote_shards": [{"shard_id": s, "peer_id": p, "state": "Active"} for s, p in placed if p != PEERS[0]],
        "shard_transfers": [],
    }
