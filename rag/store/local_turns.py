"""qdrant-client's local mode on a folder, shared by the processes of one machine: a server's stand-in
for several writers (`QDRANT_URL=local:<folder>`, tests and benches only; brute-force Python).

Local mode locks its folder for as long as a client has it open, so two processes cannot both hold
it. Here each call opens it for its turn (rag/store/lease.py, as the embedded engine's shard) and
closes it after: every call is atomic, and nothing spans two calls, which is what writers sharing a
server get. The store's own lock stays in-process (unlike the embedded engine's, which is the turn),
so a document replacement of several calls is excluded from other processes only by its document
lease (rag/store/doc_lease.py): what the two-process tests need to put to the proof.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from qdrant_client import QdrantClient

from rag.store.lease import ShardLease

# The URL prefix that picks this client (ClientStore.connect).
LOCAL_PREFIX = "local:"


class TurnClient:
    """QdrantClient's methods, each call inside a turn on `folder`."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self._client: QdrantClient | None = None
        # No lingering: each call is a turn of its own, so two writers' calls interleave one by one, as on a server.
        self._lease = ShardLease(self.folder / "turn.lock", self._open, self._close, linger_s=0.0)

    def _open(self) -> None:
        self._client = QdrantClient(path=str(self.folder / "local"))

    def _close(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            client.close()

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if not callable(getattr(QdrantClient, name, None)):
            raise AttributeError(name)

        def call(*args: Any, **kwargs: Any) -> Any:  # noqa: ANN401 - QdrantClient's own arguments and results
            with self._lease:
                return getattr(self._client, name)(*args, **kwargs)

        return call

    def close(self) -> None:
        self._lease.close()
