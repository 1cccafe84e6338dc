"""The SQLite files under the data dir that keep Eval's history: stored runs (rag.eval.runs) and tune sweeps
(rag.eval.tune). One way to open them: a connection per call (pages run in several threads), foreign keys
on, the schema (and any migration) applied, and the `with` block one transaction."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from pathlib import Path

from rag.errors import RagError


@contextmanager
def opened(
    path: Path, schema: str, what: str, migrate: Callable[[sqlite3.Connection], None] | None = None
) -> Iterator[sqlite3.Connection]:
    """A connection to the history at `path` (`what` names it in the error a damaged file gives)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        with closing(sqlite3.connect(path, timeout=30)) as con:
            con.execute("PRAGMA foreign_keys = ON")
            con.executescript(schema)
            if migrate is not None:
                migrate(con)
            with con:
                yield con
    except sqlite3.DatabaseError as e:
        raise RagError(f"{what} at {path} cannot be used ({e}); move the file away to start a new history") from None
