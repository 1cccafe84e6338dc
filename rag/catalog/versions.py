"""Versions of a collection: a named copy of everything that decides what it answers, to go back to or compare.

A version is a folder `<data_dir>/versions/<collection>/<name>/`: the store's own copy of the points
(`Store.copy_to`: the embedded engine's shard folder, or a Qdrant snapshot on a server), the collection's
stored settings, the documents list, the kept originals, and `manifest.json` (name, time, size, chunk and
document counts, models, the state it holds), written last. It is made under a staging name and renamed
whole, so a folder with a manifest is a whole version, and a take that fails leaves none.

Restoring first takes an automatic version of the collection as it is (`before-restore-<time>`), then
replaces points (whole or not at all, `Store.replace_from`), settings and originals; so a restore that
fails, even half-way, loses nothing: the message names the version that holds the collection as it was.

Deleting a version renames its folder aside (a dot name, which `list_versions` skips), then removes it: the
version is gone whole at the rename, and what a delete cut short leaves is for `ragscope doctor --fix`.

Which version the collection is at: `current.json` beside the versions names the one last taken or
restored with the state it held (its chunks, their quarantine marks, the stored settings). An eval run
records `version_label`: that name while the state is unchanged, "unversioned changes since <name>" once
the collection changed after it, "" for a collection never versioned.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import re
import secrets
import shutil
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rag.catalog.collections import for_collection
from rag.catalog.documents import list_documents
from rag.components import Components, build_components
from rag.errors import ConfigError, RagError, StoreError
from rag.settings.atomic import write_atomically
from rag.settings.collection_settings import (
    copy_of_collection_settings,
    load_collection_settings,
    put_back_collection_settings,
)
from rag.settings.config import Settings
from rag.settings.strict import Damage, read_object
from rag.store.base import folder_bytes
from rag.types import ChunkFilter

MANIFEST, STORE_COPY, SETTINGS_COPY, DOCUMENTS_LIST, ORIGINALS_COPY = (
    "manifest.json", "store", "settings.json", "documents.json", "originals",
)  # fmt: skip
CURRENT = "current.json"
BEFORE_RESTORE = "before-restore"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


@dataclass(frozen=True)
class Version:
    """One kept version of a collection, as its manifest says."""

    name: str
    collection: str
    created_at: str
    size_bytes: int
    chunks: int
    documents: int
    models: dict[str, Any] | None  # CollectionModels.as_dict(), None for a collection never written
    settings: dict[str, Any]  # the collection's stored retrieval settings ({} when it had none)
    state: str  # `state_key` when taken
    backend: str
    note: str = ""

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


def versions_dir(settings: Settings) -> Path:
    return settings.data_dir / "versions" / settings.collection


def check_version_name(name: str) -> str:
    """`name` when it can name a version folder.

    Raises:
        ConfigError: anything but 1-64 ASCII letters, digits, `-`, `_` and `.` (not first).
    """
    if not _NAME.fullmatch(name):
        raise ConfigError(
            f"version name {name!r} is not allowed: use 1-64 letters, digits, '-', '_' or '.' (not first), e.g. 'v3'"
        )
    return name


def list_versions(settings: Settings) -> list[Version]:
    """The collection's versions, newest first; a folder without a readable manifest (a take cut short) is none."""
    folder = versions_dir(settings)
    if not folder.is_dir():
        return []
    found = [
        (v.created_at, (p / MANIFEST).stat().st_mtime_ns, v)
        for p in folder.iterdir()
        if p.is_dir() and not p.name.startswith(".") and (v := _read(p)) is not None
    ]  # two taken within one second (a restore's automatic one): the manifest written last is the newer
    return [v for *_, v in sorted(found, key=lambda t: t[:2], reverse=True)]


def load_version(settings: Settings, name: str) -> Version:
    """The version called `name`.

    Raises:
        RagError: there is none; the message lists those there are.
    """
    version = _read(versions_dir(settings) / check_version_name(name))
    if version is None:
        names = [v.name for v in list_versions(settings)]
        close = difflib.get_close_matches(name, names, n=3)
        hint = f". Did you mean {' or '.join(repr(n) for n in close)}?" if close else ""
        listed = ", ".join(names) or "none yet (`ragscope versions take NAME`)"
        raise RagError(f"collection {settings.collection!r} has no version {name!r}; its versions: {listed}{hint}")
    return version


def delete_version(components: Components, name: str) -> Version:
    """Drop version `name` and nothing else (the collection, its other versions and which one it is at stay):
    its folder is renamed aside, so it goes whole, then removed. Within a turn on the store, as a take or
    restore (and `ragscope doctor`'s look at leftovers), so none of them reads the folder as it goes.

    Raises:
        RagError: there is no such version (the message offers close names and lists them all).
    """
    settings = components.settings
    with components.store.lock:
        version = load_version(settings, name)
        folder = versions_dir(settings) / name
        aside = folder.with_name(f".{name}.deleting-{secrets.token_hex(4)}")
        os.rename(folder, aside)
        shutil.rmtree(aside, ignore_errors=True)
    return version


def take_version(components: Components, name: str, note: str = "") -> Version:
    """Keep the collection as it is now as version `name`, within one turn on the store (no other writer
    interleaves); the folder appears whole or not at all.

    Raises:
        RagError: the name is taken or not allowed.
        StoreError: the backend keeps no copies (qdrant-client's local mode), or copying failed.
    """
    settings, store = components.settings, components.store
    target = versions_dir(settings) / check_version_name(name)
    if target.exists():
        raise RagError(f"collection {settings.collection!r} has a version {name!r} already: pick another name")
    staged = target.with_name(f".{name}.taking-{secrets.token_hex(4)}")
    staged.parent.mkdir(parents=True, exist_ok=True)
    try:
        with store.lock:
            size = store.copy_to(staged / STORE_COPY)
            home = components.shared
            stored = load_collection_settings(home, settings.collection)
            values = dict(stored.values) if stored else {}
            copy = copy_of_collection_settings(home, settings.collection)  # read (and so checked): copied as it is
            if copy is not None:
                write_atomically(staged / SETTINGS_COPY, copy)
            docs = list_documents(components)
            write_atomically(staged / DOCUMENTS_LIST, json.dumps([asdict(d) for d in docs], ensure_ascii=False))
            if settings.originals_dir.is_dir():
                shutil.copytree(settings.originals_dir, staged / ORIGINALS_COPY)
                size += folder_bytes(staged / ORIGINALS_COPY)
            models = store.collection_models()
            version = Version(
                name, settings.collection, datetime.now(UTC).isoformat(timespec="seconds"), size, store.count(),
                len(docs), models.as_dict() if models else None, values, state_key(components), settings.backend, note,
            )  # fmt: skip
            write_atomically(staged / MANIFEST, json.dumps(version.as_json(), indent=2, ensure_ascii=False) + "\n")
            os.rename(staged, target)
    finally:
        shutil.rmtree(staged, ignore_errors=True)
    _mark_current(settings, version)
    return version


def restore_version(components: Components, name: str) -> tuple[Version, Version]:
    """Bring the collection back to version `name`: exactly its chunks, settings and originals. Returns the
    version restored and the automatic one taken just before, which holds the collection as it was.

    Raises:
        RagError: no such version, or restoring failed (the message says the collection is unchanged, or
            which version holds it as it was).
    """
    settings, store = components.settings, components.store
    version = load_version(settings, name)
    folder = versions_dir(settings) / name
    with store.lock:  # one turn: no other writer between the automatic version and the restore
        kept = take_version(
            components, f"{BEFORE_RESTORE}-{datetime.now(UTC):%Y%m%dT%H%M%S%f}", f"before restoring {name}"
        )
        try:
            store.replace_from(folder / STORE_COPY)
        except StoreError as e:
            raise StoreError(f"restoring version {name!r} failed: {e}") from None
        try:
            _put_back_settings(components, folder / SETTINGS_COPY)
            _put_back_originals(settings, folder / ORIGINALS_COPY)
        except (OSError, RagError) as e:
            raise RagError(
                f"restoring version {name!r} brought its chunks back but not all of its settings and originals "
                f"({e}); version {kept.name!r} holds the collection as it was before"
            ) from None
    _mark_current(settings, version)
    return version, kept


def open_version(settings: Settings, name: str) -> Settings:
    """Version `name` of `settings.collection` as a collection of its own, `<collection>--<name>` (its points,
    settings and originals, restored afresh), for the version diff's eval and the inspector links it gives;
    returns its settings. It is an ordinary collection: delete it as any other.

    Raises:
        RagError: no such version, the two names are too long for a collection name, or restoring failed.
    """
    load_version(settings, name)
    folder = versions_dir(settings) / name
    try:
        view = for_collection(settings, f"{settings.collection}--{name}")
    except ConfigError:
        raise RagError(
            f"collection {settings.collection!r} and version {name!r} are too long together to name the version's "
            "own collection (64 characters at most): take the version again under a shorter name"
        ) from None
    components = build_components(view)
    try:
        with components.store.lock:
            components.store.replace_from(folder / STORE_COPY)
            _put_back_settings(components, folder / SETTINGS_COPY)
            _put_back_originals(view, folder / ORIGINALS_COPY)
    finally:
        components.close()
    return view


def state_key(components: Components) -> str:
    """What a version holds, in 16 hex digits: every chunk id with its quarantine mark, and the stored
    settings; equal keys mean the collection answers as the version does."""
    records = components.store.records(ChunkFilter(include_quarantined=True, include_unranked=True))
    lines = sorted(f"{r.chunk.id} {int(r.quarantined)}" for r in records)
    stored = load_collection_settings(components.shared, components.settings.collection)
    lines.append(json.dumps(dict(stored.values) if stored else {}, sort_keys=True))
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()[:16]


def version_label(components: Components) -> str:
    """Which version the collection is at, for an eval run to record (see the module's docstring)."""
    current = versions_dir(components.settings) / CURRENT
    try:
        raw = read_object(current)
    except Damage:
        return ""
    if raw is None or not isinstance(raw.get("name"), str):
        return ""
    name = raw["name"]
    return name if raw.get("state") == state_key(components) else f"unversioned changes since {name}"


def _mark_current(settings: Settings, version: Version) -> None:
    write_atomically(versions_dir(settings) / CURRENT, json.dumps({"name": version.name, "state": version.state}))


def _put_back_settings(components: Components, copy: Path) -> None:
    """The collection's stored settings as `copy` holds them, or none when it holds none (a damaged copy is
    refused, named)."""
    text = copy.read_text(encoding="utf-8") if copy.is_file() else None
    put_back_collection_settings(components.shared, components.settings.collection, text)


def _put_back_originals(settings: Settings, copy: Path) -> None:
    """The collection's kept originals replaced by the copy's: copied under a staging name, then swapped in."""
    live = settings.originals_dir
    staged = live.with_name(f".{live.name}.restoring-{secrets.token_hex(4)}")
    aside = live.with_name(f".{live.name}.replaced-{secrets.token_hex(4)}")
    if copy.is_dir():
        shutil.copytree(copy, staged)
    if live.exists():
        os.rename(live, aside)
    if staged.exists():
        os.rename(staged, live)
    shutil.rmtree(aside, ignore_errors=True)


def _read(folder: Path) -> Version | None:
    try:
        raw = read_object(folder / MANIFEST)
        return Version(**raw) if raw is not None else None
    except (Damage, TypeError):
        return None
