"""Tune sweeps on a server: the rows of `tune.sqlite` (rag/eval/tune.py) as records of the metadata collection,
so a sweep started on one replica is listed, resumed and applied from any other (rag/settings/shared_home.py).

A sweep is its header record (what the `sweeps` row holds) and one record per finished configuration (a
`sweep_results` row), each written whole as it finishes, as the file does; rows keep the SQLite columns'
values, so tune.py turns either home's rows into sweeps the same way.
"""

from __future__ import annotations

from typing import Any

from rag.settings.shared_home import Records, record_key

_SWEEP, _RESULT = "tune_sweep", "tune_result"


def save_sweep(records: Records, row: dict[str, Any]) -> None:
    payload = {"kind": _SWEEP, "source": str(row["id"]), "collection": str(row["collection"]), "row": row}
    records.put(record_key(_SWEEP, str(row["id"])), payload)


def save_result(records: Records, sweep_id: str, row: dict[str, Any]) -> None:
    """Store (or replace) one finished configuration of the sweep."""
    payload = {"kind": _RESULT, "source": sweep_id, "row": row}
    records.put(record_key(_RESULT, sweep_id, str(row["position"])), payload)


def sweep_ids(records: Records, collection: str | None = None) -> list[str]:
    """The sweeps' ids, newest first (optionally of one collection)."""
    found = records.find(kind=_SWEEP, collection=collection) if collection else records.find(kind=_SWEEP)
    found.sort(key=lambda r: str(r["row"]["created_at"]), reverse=True)
    return [str(r["row"]["id"]) for r in found]


def sweep_row(records: Records, sweep_id: str) -> dict[str, Any] | None:
    found = records.get(record_key(_SWEEP, sweep_id))
    return dict(found["row"]) if found else None


def result_rows(records: Records, sweep_id: str) -> list[dict[str, Any]]:
    """The sweep's finished configurations, by position."""
    return sorted((dict(r["row"]) for r in records.find(kind=_RESULT, source=sweep_id)), key=lambda r: r["position"])
