"""Every ask, kept: question, retrieval settings, what each stage ranked, the answer and its citations.

One SQLite file under the data dir (`asks.sqlite`), in WAL mode so the app's sessions (threads) and a
CLI process can write while others read. Each call opens its own short connection: sqlite3
connections must not cross threads, and opening one is cheap next to answering a question.
A logged ask carries its full RetrievalConfig and filter, so it can be replayed in the inspector with
exactly the settings that produced it.

On a server the log is records of its metadata collection instead (rag/settings/shared_home.py), so every replica's asks
are one log: each ask one record under an id counted up by one swapped counter record (`Records.swap`), so
ids stay unique and in order across replicas, as the file's AUTOINCREMENT keeps them on one machine.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
import threading
from contextlib import closing, contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator

from rag.answer.result import Answer
from rag.errors import ConfigError, StoreError
from rag.settings.config import RetrievalConfig, Settings
from rag.settings.links import ASK, collection_param, inspector_params
from rag.settings.shared_home import Records, SharedHome, record_key
from rag.store import shared_home
from rag.types import ChunkFilter

_SCHEMA = """
CREATE TABLE IF NOT EXISTS asks (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    asked_at TEXT NOT NULL,
    collection TEXT NOT NULL,
    question TEXT NOT NULL,
    config TEXT NOT NULL,
    filter TEXT NOT NULL,
    mode TEXT NOT NULL,
    model TEXT NOT NULL,
    answer TEXT NOT NULL,
    abstained INTEGER NOT NULL,
    reason TEXT NOT NULL,
    citations TEXT NOT NULL,
    sources TEXT NOT NULL,
    invented TEXT NOT NULL,
    uncited TEXT NOT NULL,
    retrieved TEXT NOT NULL,
    latency_ms REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS asks_recent ON asks (id DESC);
"""
# The kinds of its records on a server: one per ask, and the counter of their ids.
_ASK, _COUNTER = "ask", "ask_counter"
_COLUMNS = (
    "id, asked_at, collection, question, config, filter, mode, model, answer, abstained, reason, citations, sources, "
    "invented, uncited, retrieved, latency_ms"
)


@dataclass(frozen=True)
class AskRecord:
    """One logged ask, as stored."""

    id: int
    asked_at: str
    collection: str
    question: str
    config: RetrievalConfig
    filter: ChunkFilter
    mode: str
    model: str
    answer: str
    abstained: bool
    reason: str
    citations: tuple[dict[str, Any], ...]
    sources: tuple[str, ...]
    invented: tuple[str, ...]
    uncited: tuple[str, ...]
    retrieved: tuple[dict[str, Any], ...]  # every candidate: id, source, heading, rank and score per stage
    latency_ms: float

    def inspector_params(self, base: RetrievalConfig | None = None) -> dict[str, str]:
        """Query parameters that open this ask in the search inspector with the same settings (`base`: the
        configured ones) on its collection, naming the ask so the inspector can say it replays it."""
        replay = {ASK: str(self.id)}
        return inspector_params(self.question, self.config, base) | replay | collection_param(self.collection)


class AskLog:
    """The persistent log of asks.

    Example:
        log = AskLog.for_settings(settings)
        ask_id = log.record(answer, settings.collection)
        print(log.get(ask_id).inspector_params())
    """

    def __init__(self, path: Path, records: Records | None = None) -> None:
        self.path, self.records = path, records
        self._lock = threading.Lock()
        self._ready = False

    @classmethod
    def for_home(cls, home: SharedHome) -> "AskLog":
        """The log where `home` keeps shared state: `asks.sqlite` under its data dir, or its records on a server."""
        return cls(log_path(home.data_dir), home.records)

    @classmethod
    def for_settings(cls, settings: Settings) -> "AskLog":
        return cls.for_home(shared_home(settings))

    def record(self, answer: Answer, collection: str) -> int:
        """Store one answered (or abstained) ask; returns its id."""
        result = answer.retrieval
        row = (
            datetime.now(timezone.utc).isoformat(timespec="seconds"),
            collection,
            answer.question,
            json.dumps(dataclasses.asdict(result.config)),
            json.dumps(dataclasses.asdict(result.filter)),
            answer.mode,
            answer.model,
            answer.text,
            int(answer.abstained),
            answer.reason,
            json.dumps([c.as_json() for c in answer.citations], ensure_ascii=False),
            json.dumps(list(answer.sources)),
            json.dumps(list(answer.invented), ensure_ascii=False),
            json.dumps(list(answer.uncited_sentences), ensure_ascii=False),
            json.dumps([_retrieved(c, answer) for c in result.candidates], ensure_ascii=False),
            answer.latency_ms,
        )
        if self.records is not None:
            return self._record_on_server(self.records, collection, row)
        with self._connect() as db:
            cur = db.execute(
                f"INSERT INTO asks ({_COLUMNS.split(', ', 1)[1]}) VALUES ({', '.join('?' * len(row))})", row
            )
            return int(cur.lastrowid)

    def recent(self, limit: int = 20, collection: str | None = None) -> list[AskRecord]:
        """The latest asks, newest first (optionally of one collection)."""
        if self.records is not None:
            return self._recent_on_server(self.records, limit, collection)
        where, args = ("WHERE collection = ?", (collection,)) if collection else ("", ())
        with self._connect() as db:
            rows = db.execute(
                f"SELECT {_COLUMNS} FROM asks {where} ORDER BY id DESC LIMIT ?", (*args, limit)
            ).fetchall()
        return [_record(r) for r in rows]

    def get(self, ask_id: int) -> AskRecord | None:
        if self.records is not None:
            found = self.records.get(record_key(_ASK, str(ask_id)))
            return _record(_row(found)) if found else None
        with self._connect() as db:
            row = db.execute(f"SELECT {_COLUMNS} FROM asks WHERE id = ?", (ask_id,)).fetchone()
        return _record(row) if row else None

    def _record_on_server(self, records: Records, collection: str, row: tuple) -> int:
        def counted(old: dict[str, Any] | None) -> dict[str, Any]:
            return {"kind": _COUNTER, "last": int(old["last"]) + 1 if old else 1}

        ask_id = int(records.swap(record_key(_COUNTER), counted)["last"])
        values = dict(zip(_COLUMNS.split(", "), (ask_id, *row), strict=True))
        records.put(record_key(_ASK, str(ask_id)), {"kind": _ASK, "collection": collection, "row": values})
        return ask_id

    def _recent_on_server(self, records: Records, limit: int, collection: str | None) -> list[AskRecord]:
        """Newest first: down from the counter's last id, a batch of ids per call, skipping other collections'."""
        counter = records.get(record_key(_COUNTER))
        top = int(counter["last"]) if counter else 0
        out: list[AskRecord] = []
        while top > 0 and len(out) < limit:
            ids = range(top, max(top - max(limit, 50), 0), -1)
            for found in records.get_many([record_key(_ASK, str(i)) for i in ids]):
                if found and (collection is None or found.get("collection") == collection) and len(out) < limit:
                    out.append(_record(_row(found)))
            top = ids[-1] - 1
        return out

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with closing(sqlite3.connect(self.path, timeout=10)) as db:
                if not self._ready:
                    with self._lock:
                        db.execute("PRAGMA journal_mode=WAL")
                        db.executescript(_SCHEMA)
                        self._ready = True
                with db:  # one transaction: committed on success, rolled back on error
                    yield db
        except sqlite3.Error as e:
            raise StoreError(f"the ask log {self.path} cannot be used ({e}); check the data dir is writable") from None


def log_path(data_dir: Path) -> Path:
    """The ask log's file under a data dir (the embedded default's home)."""
    return data_dir / "asks.sqlite"


def _row(found: dict[str, Any]) -> tuple:
    """A server's record in the file's column order."""
    return tuple(found["row"][c] for c in _COLUMNS.split(", "))


def _retrieved(candidate: Any, answer: Answer) -> dict[str, Any]:  # noqa: ANN401 - a retrieve.Candidate
    c = candidate.chunk.chunk
    row: dict[str, Any] = {"id": c.id, "source": c.source, "heading": c.heading, "final_rank": candidate.final_rank}
    for stage in ("dense", "sparse", "fused", "rerank"):
        s = candidate.stage(stage)
        row[f"{stage}_rank"], row[f"{stage}_score"] = s.rank, s.score
    row["relevance"] = answer.relevance.get(c.id)
    row["sent"] = c.id in answer.sources
    return row


def _record(row: tuple) -> AskRecord:
    (
        ask_id,
        asked_at,
        collection,
        question,
        config,
        flt,
        mode,
        model,
        text,
        abstained,
        reason,
        citations,
        sources,
        invented,
        uncited,
        retrieved,
        latency,
    ) = row
    try:
        cfg = RetrievalConfig.from_record(json.loads(config))
    except ConfigError:
        cfg = (
            RetrievalConfig()
        )  # a value this version no longer accepts (e.g. a removed fusion): show the ask with defaults
    filt = json.loads(flt)
    return AskRecord(
        id=ask_id,
        asked_at=asked_at,
        collection=collection,
        question=question,
        config=cfg,
        filter=ChunkFilter(**{k: tuple(v) if isinstance(v, list) else v for k, v in filt.items()}),
        mode=mode,
        model=model,
        answer=text,
        abstained=bool(abstained),
        reason=reason,
        citations=tuple(json.loads(citations)),
        sources=tuple(json.loads(sources)),
        invented=tuple(json.loads(invented)),
        uncited=tuple(json.loads(uncited)),
        retrieved=tuple(json.loads(retrieved)),
        latency_ms=latency,
    )
