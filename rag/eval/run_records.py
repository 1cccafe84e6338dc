"""Eval runs on a server: the rows of `eval.sqlite` (rag/eval/runs.py) as records of the metadata collection,
so every replica lists, compares and marks the same runs (rag/settings/shared_home.py).

A run is two records: its questions, written first, then its header (the row `list_runs` shows), so a run is
listed only once it is whole, as the file's one transaction gives; deleting removes the header first. The
baseline of each question set is a record of its own naming the run, so marking one is one write and no
two replicas can leave two baselines. Rows keep the SQLite columns' values (JSON text where the file holds
JSON text): runs.py turns either home's rows into runs the same way.
"""

from __future__ import annotations

import time
from typing import Any

from rag.settings.shared_home import Records, record_key

_HEADER, _QUESTIONS, _BASELINE = "eval_run", "eval_run_questions", "eval_baseline"


def save(records: Records, row: dict[str, Any], questions: list[str]) -> None:
    """Store a complete run: its questions (each a JSON text), then its header row."""
    rid = str(row["id"])
    records.put(record_key(_QUESTIONS, rid), {"kind": _QUESTIONS, "source": rid, "questions": questions})
    header = {"kind": _HEADER, "source": str(row["set_name"]), "collection": str(row["collection"])}
    # Newest first as the file lists them (created_at, then the order they were written in).
    header |= {"row": {**row, "baseline": 0}, "saved_ns": time.time_ns()}
    records.swap(record_key(_HEADER, rid), lambda _old: header)


def rows(records: Records, set_name: str | None = None) -> list[dict[str, Any]]:
    """Header rows, newest first, each with `baseline` 1 when its set's baseline names it."""
    found = records.find(kind=_HEADER, source=set_name) if set_name else records.find(kind=_HEADER)
    found.sort(key=lambda r: (str(r["row"]["created_at"]), int(r.get("saved_ns", 0))), reverse=True)
    baselines: dict[str, str | None] = {}
    out = []
    for record in found:
        row = dict(record["row"])
        set_ = str(row["set_name"])
        if set_ not in baselines:
            marked = records.get(record_key(_BASELINE, set_))
            baselines[set_] = str(marked["run_id"]) if marked else None
        out.append(row | {"baseline": int(baselines[set_] == row["id"])})
    return out


def row(records: Records, run_id: str) -> dict[str, Any] | None:
    """The run's header row (with its baseline mark), or None when there is no such run."""
    record = records.get(record_key(_HEADER, run_id))
    if record is None:
        return None
    found = dict(record["row"])
    marked = records.get(record_key(_BASELINE, str(found["set_name"])))
    return found | {"baseline": int(bool(marked) and marked["run_id"] == run_id)}


def questions(records: Records, run_id: str) -> list[str]:
    record = records.get(record_key(_QUESTIONS, run_id))
    return [str(q) for q in record["questions"]] if record else []


def delete(records: Records, run_id: str) -> None:
    found = row(records, run_id)
    records.delete(record_key(_HEADER, run_id))
    records.delete(record_key(_QUESTIONS, run_id))
    if found and found["baseline"]:
        records.delete(record_key(_BASELINE, str(found["set_name"])))


def rename(records: Records, run_id: str, name: str) -> bool:
    """Rename the run; False when there is none (another replica may delete it meanwhile: then none either)."""
    if records.get(record_key(_HEADER, run_id)) is None:
        return False

    def renamed(old: dict[str, Any] | None) -> dict[str, Any]:
        if old is None:  # deleted between the two reads: nothing to rename, and nothing to bring back
            raise _Gone
        return old | {"row": {**old["row"], "name": name}}

    try:
        records.swap(record_key(_HEADER, run_id), renamed)
    except _Gone:
        return False
    return True


def set_baseline(records: Records, run_id: str) -> bool:
    """Mark the run as its set's baseline (one write, replacing the previous mark); False when there is no run."""
    found = row(records, run_id)
    if found is None:
        return False
    set_ = str(found["set_name"])
    records.put(record_key(_BASELINE, set_), {"kind": _BASELINE, "source": set_, "run_id": run_id})
    return True


class _Gone(Exception):
    """The record went away between the read and the swap."""
