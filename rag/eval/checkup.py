"""`ragscope doctor`'s half for the files Eval and Ask keep under the data dir: the question sets, the run and
sweep histories and the ask log (rag.catalog.doctor checks the store's files; this sits above it, with them).

Each file is read by its one reader (a set by `load_question_set`, a SQLite file by SQLite's own check);
`--fix` sets a damaged one aside (rag.settings.atomic.set_aside: kept beside it, renamed) so the product starts
it afresh, and says where it went.
"""

from __future__ import annotations

from pathlib import Path

from rag.ask.log import log_path
from rag.catalog.doctor import Finding
from rag.errors import EvalSetError
from rag.eval import runs, tune
from rag.eval.qsets import list_question_sets, load_question_set, sets_dir
from rag.settings.atomic import set_aside
from rag.settings.config import Settings
from rag.settings.strict import sqlite_problem

_SQLITE_SIDES = ("-wal", "-shm")  # a database's write-ahead log and its index: they go where it goes


def check_eval_files(settings: Settings, fix: bool = False) -> list[Finding]:
    """A finding per damaged question set or SQLite file (and one "ok" line for the sound ones)."""
    data_dir = settings.data_dir
    out = [_question_set(data_dir, name, fix) for name in list_question_sets(data_dir)]
    databases = (
        ("eval history", runs.db_path(data_dir)),
        ("sweep history", tune.db_path(data_dir)),
        ("ask log", log_path(settings.data_dir)),
    )
    out += [_database(what, path, fix) for what, path in databases if path.is_file()]
    return [f for f in out if f is not None]


def _question_set(data_dir: Path, name: str, fix: bool) -> Finding | None:
    try:
        load_question_set(data_dir, name)
    except EvalSetError as e:
        path = sets_dir(data_dir) / f"{name}.jsonl"
        if not fix:
            return Finding("problem", f"question set {path} is damaged: {e}; fix it, or `ragscope doctor --fix` "
                           "sets it aside")  # fmt: skip
        return Finding("fixed", f"question set {name!r} was damaged ({e}); set aside as {set_aside(path)}")
    return None


def _database(what: str, path: Path, fix: bool) -> Finding:
    problem = sqlite_problem(path)
    if not problem:
        return Finding("ok", f"{what} {path} passes SQLite's check")
    if not fix:
        return Finding("problem", f"{what} {path} is damaged ({problem}); `ragscope doctor --fix` sets it aside "
                       "and starts a new one")  # fmt: skip
    kept = set_aside(path)
    for side in _SQLITE_SIDES:
        other = path.with_name(path.name + side)
        if other.is_file():
            other.replace(kept.with_name(kept.name + side))
    return Finding("fixed", f"{what} {path} was damaged ({problem}); set aside as {kept}, a new one starts empty")
