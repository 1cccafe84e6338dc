"""`ragscope doctor`: check the state files under the data dir and repair what can be repaired.

A damaged state file (a truncated models record, a journal entry with the wrong fields) makes every
open of its collection fail, on purpose: guessing would risk mixing vector spaces or leaving a
document half replaced. This is where a person gets it fixed, told exactly what was done.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from rag.catalog.collections import for_collection
from rag.catalog.versions import list_versions
from rag.encoders.export import ONNX_DIR, export_problem, remake
from rag.errors import ConfigError, EncoderError, StoreError, StoreLockedError
from rag.settings.atomic import set_aside
from rag.settings.collection_settings import load_collection_settings, settings_dir
from rag.settings.config import Settings, validate_collection_name
from rag.store import list_collections
from rag.store.base import DENSE, CollectionModels
from rag.store.client import ClientStore
from rag.store.edge import EdgeStore
from rag.store.journal import dead_owner, entry_problem
from rag.store.lease import ShardLease
from rag.text.redact import redact_url


@dataclass(frozen=True)
class Finding:
    """One line of the report. `level`: "ok", "fixed", "note" (nothing to do) or "problem" (still wrong)."""

    level: str
    message: str


def check(settings: Settings, fix: bool = False) -> list[Finding]:
    """Check models records, journal entries, locks, collections, their stored settings and the ONNX graphs
    under `settings.data_dir` (the Eval files: rag.eval.checkup).

    With `fix`, repair what is safe to repair and say what was done. The configured Qdrant server,
    when there is one, is checked for reachability only (its collections are not files here).
    """
    findings: list[Finding] = []
    if url := settings.qdrant_url:
        ClientStore.connect(url, settings.qdrant_api_key.value, settings.collection).close()
        findings.append(Finding("ok", f"Qdrant server at {redact_url(url, raw=url)} is reachable"))
    findings += _journals(settings.data_dir / "journal", fix)
    findings += _cut_short(settings.data_dir, fix)
    findings += _collections(settings, fix)
    findings += _collection_settings(settings, fix)
    findings += _exports(settings, fix)
    return findings


def _collection_settings(settings: Settings, fix: bool) -> list[Finding]:
    """Each collection's stored settings, read by their one reader; --fix sets a damaged file aside (the
    collection then runs with the configured settings, as Reset leaves it), and the settings of a collection
    that is gone (deleted by an older version), which a new collection of its name would start from."""
    data_dir = settings.data_dir
    folder = settings_dir(data_dir)
    out = []
    names = set(list_collections(settings)) | {settings.collection} if folder.is_dir() else set()
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        if path.stem not in names:
            out.append(_orphan(path, fix))
            continue
        try:
            load_collection_settings(data_dir, path.stem)
        except ConfigError as e:
            if not fix:
                out.append(Finding("problem", f"{e}; or `ragscope doctor --fix` sets it aside"))
                continue
            kept = set_aside(path)
            out.append(
                Finding("fixed", f"collection {path.stem!r}: its damaged stored settings are set aside as {kept} "
                        "and it runs with the configured settings")
            )  # fmt: skip
    return out


def _orphan(path: Path, fix: bool) -> Finding:
    what = f"stored settings {path} belong to collection {path.stem!r}, which does not exist"
    if not fix:
        return Finding("problem", f"{what}: a new collection of that name would start from them; "
                       "`ragscope doctor --fix` sets them aside")  # fmt: skip
    return Finding("fixed", f"{what}; set aside as {set_aside(path)}")


def _exports(settings: Settings, fix: bool) -> list[Finding]:
    """Every ONNX graph under the data dir, loaded as the encoder loads it; --fix deletes a damaged one and, for
    the configured dense model, makes it again now."""
    models = settings.data_dir / "models"
    out = []
    for path in sorted((models / ONNX_DIR).glob("*/*.onnx")):
        problem = export_problem(path)
        if not problem:
            out.append(Finding("ok", f"ONNX graph {path} loads"))
        elif not fix:
            out.append(Finding("problem", f"ONNX graph {path} is damaged: {problem}; `ragscope doctor --fix` "
                               "exports it again"))  # fmt: skip
        else:
            out.append(_remade(path, models, settings.dense_model, problem))
    return out


def _remade(path: Path, models: Path, name: str, problem: str) -> Finding:
    try:
        again = remake(path, models, name)
    except EncoderError as e:
        return Finding("problem", f"removed damaged ONNX graph {path} ({problem}) but could not export it again: {e}")
    if again:
        return Finding("fixed", f"ONNX graph {path} was damaged ({problem}); exported it again")
    return Finding("fixed", f"removed damaged ONNX graph {path} ({problem}); it is exported again the next time "
                   "its model is used")  # fmt: skip


def _cut_short(data_dir: Path, fix: bool) -> list[Finding]:
    """What a version take, restore or delete killed part-way left (rag/catalog/versions.py): copies under a
    staging name (`.<name>.taking-*`, `.<name>.restoring-*`) and folders moved aside (`.<name>.replaced-*`,
    `.<name>.deleting-*`); --fix
    removes them, but where the live folder is missing (cut short between a swap's two renames) it puts back the
    one that matches the rest (`_PUT_BACK`). Each is looked at during a turn on its collection
    (rag/store/lease.py), which a take or restore running now holds."""
    found: dict[str, list[Path]] = {}
    for folder in (data_dir / "qdrant", data_dir / "originals"):
        for path in _staged(folder):
            found.setdefault(_staged_name(path)[0], []).append(path)
    for folder in sorted((data_dir / "versions").glob("*")):
        if staged := _staged(folder):
            found.setdefault(folder.name, []).extend(staged)
    out = []
    if found:
        (data_dir / "qdrant").mkdir(parents=True, exist_ok=True)  # where the turns' lock files live
    for collection, paths in sorted(found.items()):
        lease = ShardLease(data_dir / "qdrant" / f"{collection}.lock", lambda: None, lambda: None, linger_s=0)
        try:
            with lease:
                out += [_left(path, fix) for path in sorted(paths) if path.exists()]
        except StoreLockedError:
            out.append(Finding("note", f"collection {collection!r}: in use by another process; its copies left alone"))
        finally:
            lease.close()
    return out


# A restore replaces the shard, then the settings, then the originals. Cut short between the shard's two renames,
# the settings and originals are still the old ones: the old shard goes back. Cut short between the originals'
# renames, the shard and settings are the version's already: the version's originals (complete, as they are
# copied before the live ones move aside) go in.
_PUT_BACK = {"qdrant": "replaced", "originals": "restoring"}


def _staged(folder: Path) -> list[Path]:
    return [p for p in folder.glob(".*.*-*") if p.is_dir() and _staged_name(p)[1]] if folder.is_dir() else []


def _staged_name(path: Path) -> tuple[str, str]:
    """(the name a staging folder stands beside, how it was left: taking, restoring, replaced, deleting or '')."""
    name, _, kind = path.name[1:].rpartition("-")[0].rpartition(".")
    return name, kind if kind in ("taking", "restoring", "replaced", "deleting") else ""


def _left(path: Path, fix: bool) -> Finding:
    name, kind = _staged_name(path)
    live = path.with_name(name)
    back = _PUT_BACK.get(path.parent.name) == kind and not live.exists()
    done = {"taking": "take", "deleting": "delete"}.get(kind, "restore")
    what = f"{path}: left by a version {done} that was cut short"
    if not fix:
        return Finding(
            "problem", f"{what}; `ragscope doctor --fix` {f'moves it back to {live}' if back else 'removes it'}"
        )
    if back:
        os.rename(path, live)
        return Finding("fixed", f"{what}; moved to {live}, whole with the rest of the collection")
    shutil.rmtree(path)
    return Finding("fixed", f"{what}; removed")


def _journals(root: Path, fix: bool) -> list[Finding]:
    out: list[Finding] = []
    if not root.is_dir():
        return out
    for legacy in sorted(root.glob("*.json")):  # the shared layout of earlier versions: collection unknown
        out.append(_damaged(legacy, "from before per-collection journals, so its collection is unknown", fix))
    for collection_dir in sorted(p for p in root.iterdir() if p.is_dir()):
        for lock in sorted(collection_dir.glob("*.lock")):
            with dead_owner(lock) as dead:
                if not dead:
                    out.append(
                        Finding(
                            "note",
                            f"journal {collection_dir.name}/{lock.stem}: in use by a running process; left alone",
                        )
                    )
                    continue
                for path in sorted((collection_dir / lock.stem).glob("*.json")):
                    problem = entry_problem(path)
                    if problem:
                        out.append(_damaged(path, problem, fix))
                    else:
                        out.append(
                            Finding(
                                "note",
                                f"journal entry {path} is replayed on the next open of collection "
                                f"{collection_dir.name!r}",
                            )
                        )
    return out


def _damaged(path: Path, why: str, fix: bool) -> Finding:
    source = _source_in(path)
    redo = f"re-ingest {source!r} so it is whole" if source else "re-ingest the document it was for if you know it"
    if not fix:
        return Finding(
            "problem", f"journal entry {path} is damaged ({why}); `ragscope doctor --fix` removes it, then {redo}"
        )
    path.unlink()
    return Finding("fixed", f"removed damaged journal entry {path}; now {redo}")


def _source_in(path: Path) -> str | None:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return raw.get("source") if isinstance(raw, dict) and isinstance(raw.get("source"), str) else None


def _collections(settings: Settings, fix: bool) -> list[Finding]:
    root = settings.data_dir / "qdrant"
    if not root.is_dir():
        return [Finding("ok", f"no collections under {settings.data_dir} yet")]
    names = sorted(
        {p.name.split(".meta.json")[0] for p in root.glob("*.meta.json")}
        | {p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")}  # dot names: _cut_short
    )
    out = []
    for name in names:
        try:
            validate_collection_name(name)
        except ConfigError:
            out.append(
                Finding("problem", f"{root / name}: not a collection name ragscope uses; move it out of the data dir")
            )
            continue
        try:
            store = EdgeStore(root, name)
        except StoreLockedError:
            out.append(
                Finding(
                    "note",
                    f"collection {name!r}: in use by another process (the app?); stop it to check this collection",
                )
            )
            continue
        except StoreError as e:
            out.append(Finding("problem", f"collection {name!r}: {e}"))
            continue
        try:
            out.append(_collection(store, settings, fix))
        finally:
            store.close()
    return out


def _collection(store: EdgeStore, settings: Settings, fix: bool) -> Finding:
    name = store.collection
    try:
        models = store.collection_models()
    except StoreError as e:
        if not fix:
            return Finding("problem", str(e))
        return _rebuild_models(store, settings)
    if models is None and store.count() > 0:
        if not fix:
            return Finding(
                "problem",
                f"collection {name!r} holds chunks but no record of its models; `ragscope doctor --fix` rebuilds it",
            )
        return _rebuild_models(store, settings)
    return Finding(
        "ok",
        f"collection {name!r}: {store.count()} chunks, built with {models.dense_model if models else 'nothing yet'}",
    )


def _rebuild_models(store: EdgeStore, settings: Settings) -> Finding:
    """Rewrite a lost models record from the configured model names and what the stored vectors show.

    Only for a collection whose one dense vector is the first (`dense`): one with a vector added beside it or
    made the default (`ragscope vectors`), or copied with another model, holds vectors whose models and
    default only the lost record said. Rewriting it from the configured model would drop them from the
    record or name the wrong model for them: such a record comes from a version instead (`_models_from_version`).
    """
    name = store.collection
    shape = store.stored_shape()
    if shape is None:  # nothing stored: the next ingest writes a fresh record
        store.meta_path.unlink(missing_ok=True)
        return Finding(
            "fixed",
            f"collection {name!r}: removed its damaged models record (it holds no chunks; the next ingest "
            "writes a new one)",
        )
    dims, sentences = shape
    if set(dims) != {DENSE}:
        return _models_from_version(store, settings, dims, sentences)
    dim = dims[DENSE]
    store.write_models(CollectionModels.from_settings(settings, dim, sentences))
    return Finding(
        "fixed",
        f"collection {name!r}: rewrote its models record as the configured dense={settings.dense_model} "
        f"({dim} d, read from the stored vectors) on runtime {settings.dense_runtime}, "
        f"sparse={settings.sparse_model}; if it was built with other models "
        "or the other vector space (int8 or float), delete it and re-ingest",
    )


def _models_from_version(store: EdgeStore, settings: Settings, dims: dict[str, int], sentences: bool) -> Finding:
    """The lost record of a collection holding dense vectors beyond the first, rewritten from its newest version
    whose record names exactly those vectors (name and dimension) and sentence vectors; refused, with nothing
    changed, when no version does."""
    name = store.collection
    held = ", ".join(f"{n} ({d} d)" for n, d in sorted(dims.items()))
    for version in list_versions(for_collection(settings, name)):  # newest first
        try:
            models = CollectionModels.from_dict(version.models)
        except ValueError:  # a version of the collection before anything was written, or a damaged manifest
            continue
        if {s.name: s.dim for s in models.spaces} == dims and models.sentence_vectors == sentences:
            store.write_models(models)
            return Finding(
                "fixed",
                f"collection {name!r}: rewrote its lost models record from version {version.name!r} "
                f"({version.created_at}), which holds the same dense vectors {held}, the default "
                f"{models.dense_vector}; if another was made the default since, `ragscope vectors default NAME`",
            )
    return Finding(
        "problem",
        f"collection {name!r}: its models record is lost and it holds the dense vectors {held} (added with "
        "`ragscope vectors` or copied with another model): which model made each, and which is the default, "
        "only the record said, and no version of it holds a record with these vectors, so `ragscope doctor "
        "--fix` leaves it as it is rather than guess. Delete the collection and re-ingest",
    )
