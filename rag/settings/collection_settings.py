"""A collection's own retrieval settings: stored with the collection, and the settings in force with their origins.

A tune sweep (rag/eval/tune.py) finds the settings that serve one collection best; "use these settings for
this collection" stores them as `<data_dir>/collection_settings/<collection>.json` (a file per collection, so
two collections never race on one file; names are file-safe, see `validate_collection_name`), or on a server
as one record per collection in its metadata collection, which every replica reads
(rag/settings/shared_home.py). The inspector,
Ask, Eval and the CLI start from them: the order of precedence, first wins, is

    a setting given for one call (CLI option, link parameter, form)
    > the collection's stored settings
    > the environment / secrets.toml (RAGSCOPE_*)
    > the built-in default

`InForce` says for each retrieval setting which of these it came from, so every page and command can show
it. Resetting deletes the file and the collection returns to the configured settings. A damaged or
hand-edited file is refused whole (ConfigError naming the file, the problem and `reset_command`), never half
applied. Writes go through rag/settings/atomic (whole, under the file's lock); deleting the collection resets them.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rag.errors import ConfigError
from rag.settings.atomic import locked, write_atomically
from rag.settings.config import RetrievalConfig, Settings
from rag.settings.labels import config_label
from rag.settings.shared_home import SharedHome, home_of, record_key
from rag.settings.spec import knobs
from rag.settings.strict import Damage, expect, parse_object, read_object

DEFAULT, ENVIRONMENT, COLLECTION, GIVEN = "default", "environment", "collection", "given"
_ORIGIN_WORDS = {
    GIVEN: "given for this call",
    COLLECTION: "this collection's stored settings",
    ENVIRONMENT: "the environment (RAGSCOPE_*)",
}


@dataclass(frozen=True)
class CollectionSettings:
    """Retrieval settings stored for one collection: only the fields it sets (`values`), and why they were stored."""

    collection: str
    values: Mapping[str, Any]
    saved_at: str = ""
    note: str = ""  # where they came from, e.g. "tune sweep 20261201-..., nDCG@10 +0.031 [+0.010, +0.052]"

    def words(self) -> str:
        """ "fusion=rrf, candidates=100 (saved 2026-12-01T10:00:00+00:00: tune sweep ...)"."""
        shown = ", ".join(f"{k}={v}" for k, v in self.values.items())
        extra = "; ".join(x for x in (self.saved_at, self.note) if x)
        return shown + (f" ({extra})" if extra else "")

    def as_json(self) -> dict[str, Any]:
        return {
            "collection": self.collection,
            "values": dict(self.values),
            "saved_at": self.saved_at,
            "note": self.note,
        }


def settings_dir(data_dir: Path) -> Path:
    return data_dir / "collection_settings"


def settings_path(data_dir: Path, collection: str) -> Path:
    return settings_dir(data_dir) / f"{collection}.json"


def reset_command(collection: str) -> str:
    """The command that deletes `collection`'s stored settings (a damaged file's message names it)."""
    return f"`ragscope settings --reset --collection {collection}` (or Reset in the Eval tab)"


def _key(collection: str) -> str:
    return record_key("collection_settings", collection)


def load_collection_settings(where: Path | SharedHome, collection: str) -> CollectionSettings | None:
    """The collection's stored settings, or None when it has none: the one reader, of the file under the data
    dir or of the record on a server (rag/settings/shared_home.py).

    Raises:
        ConfigError: the file or record is damaged (cut short, a key given twice, a field of the wrong type, a
            value RetrievalConfig refuses); the message names where it is, the problem and `reset_command`.
        StoreError: on a server, the metadata collection cannot be read.
    """
    home = home_of(where)
    if home.records is None:
        path = settings_path(home.data_dir, collection)
        try:
            return _parsed(read_object(path), collection)
        except (Damage, ConfigError) as e:
            raise ConfigError(f"{path} is damaged: {e}; {reset_command(collection)} starts it again") from None
    return _from_record(home, collection, home.records.get(_key(collection)))


def _from_record(home: SharedHome, collection: str, record: dict[str, Any] | None) -> CollectionSettings | None:
    try:
        return _parsed(record.get("stored") if record else None, collection)
    except (Damage, ConfigError) as e:
        where = home.describe(f"the stored settings of collection {collection!r}")
        raise ConfigError(f"{where} are damaged: {e}; {reset_command(collection)} starts them again") from None


def _parsed(raw: Any, collection: str) -> CollectionSettings | None:  # noqa: ANN401 - a parsed JSON value
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise Damage(f"expected an object, found {type(raw).__name__}")
    expect(raw, "values", dict)
    for key in ("collection", "saved_at", "note"):
        expect(raw, key, str, required=False)
    values = _checked(raw["values"])
    return CollectionSettings(collection, values, raw.get("saved_at", ""), raw.get("note", ""))


def save_collection_settings(
    where: Path | SharedHome, collection: str, values: Mapping[str, Any], note: str = "", merge: bool = True
) -> CollectionSettings:
    """Store retrieval settings for the collection (with `merge`, on top of those it has): read, merged and
    written whole under the file's lock, or as one swap of the record on a server (`Records.swap`), so two
    writers (`tune --apply` and the page's button, or two replicas) both land.

    Raises:
        ConfigError: an unknown setting or a value RetrievalConfig refuses, or (with `merge`) the stored
            settings are damaged; nothing is written.
        StoreError: on a server, the metadata collection cannot be read or written.
    """
    _checked(values)  # a bad value is refused before anything, even the lock file, is made
    home = home_of(where)

    def merged(old: CollectionSettings | None) -> CollectionSettings:
        both = _checked({**(old.values if old and merge else {}), **values})
        return CollectionSettings(collection, both, datetime.now(UTC).isoformat(timespec="seconds"), note)

    if home.records is not None:
        written: list[CollectionSettings] = []  # what the swap that landed wrote (an earlier try may have lost)

        def change(record: dict[str, Any] | None) -> dict[str, Any]:
            written[:] = [merged(_from_record(home, collection, record) if merge else None)]
            return {"kind": "collection_settings", "collection": collection, "stored": written[0].as_json()}

        home.records.swap(_key(collection), change)
        return written[0]
    path = settings_path(home.data_dir, collection)
    with locked(path):
        stored = merged(load_collection_settings(home, collection) if merge else None)
        write_atomically(path, json.dumps(stored.as_json(), indent=2, ensure_ascii=False) + "\n")
    return stored


def reset_collection_settings(where: Path | SharedHome, collection: str) -> bool:
    """Delete the collection's stored settings (damaged or not); True when it had some."""
    home = home_of(where)
    if home.records is not None:
        existed = home.records.get(_key(collection)) is not None
        home.records.delete(_key(collection))
        return existed
    path = settings_path(home.data_dir, collection)
    with locked(path):
        existed = path.is_file()
        path.unlink(missing_ok=True)
    return existed


def put_back_collection_settings(where: Path | SharedHome, collection: str, text: str | None) -> None:
    """Store the settings a copy (`copy_of_collection_settings`, e.g. a kept version) holds, or none when
    `text` is None: the copy is checked as the stored settings are read, and refused whole when damaged.

    Raises:
        ConfigError: the copy is damaged.
    """
    if text is None:
        reset_collection_settings(where, collection)
        return
    home = home_of(where)
    try:
        stored = _parsed(parse_object(text), collection)
    except (Damage, ConfigError) as e:
        raise ConfigError(f"the copy of collection {collection!r}'s stored settings is damaged: {e}") from None
    if stored is None:
        return
    if home.records is not None:
        payload = {"kind": "collection_settings", "collection": collection, "stored": stored.as_json()}
        home.records.swap(_key(collection), lambda _old: payload)
        return
    path = settings_path(home.data_dir, collection)
    with locked(path):
        write_atomically(path, text)


def copy_of_collection_settings(where: Path | SharedHome, collection: str) -> str | None:
    """The collection's stored settings as the text of their file (read, and so checked), or None: what a kept
    version holds, whichever home they live in."""
    home = home_of(where)
    stored = load_collection_settings(home, collection)
    if stored is None:
        return None
    if home.records is None:
        return settings_path(home.data_dir, collection).read_text(encoding="utf-8")
    return json.dumps(stored.as_json(), indent=2, ensure_ascii=False) + "\n"


def _checked(values: Mapping[str, Any]) -> dict[str, Any]:
    """`values` when every key is a retrieval setting and the whole RetrievalConfig accepts them."""
    known = {k.name for k in knobs(RetrievalConfig)}
    unknown = sorted(set(values) - known)
    if unknown:
        raise ConfigError(f"unknown retrieval settings {unknown}; known: {', '.join(sorted(known))}")
    dataclasses.replace(RetrievalConfig(), **values)  # every range and grammar check, once
    return {k.name: values[k.name] for k in knobs(RetrievalConfig) if k.name in values}


@dataclass(frozen=True)
class InForce:
    """The retrieval settings a collection runs with, and where each came from (DEFAULT, ENVIRONMENT,
    COLLECTION or GIVEN)."""

    collection: str
    config: RetrievalConfig
    origins: Mapping[str, str]
    stored: CollectionSettings | None = field(default=None, compare=False)

    def given(self, changes: Mapping[str, Any]) -> InForce:
        """With settings given for one call on top (the CLI's options, a form's edits): they win."""
        changes = {k: v for k, v in changes.items() if v is not None}
        config = dataclasses.replace(self.config, **changes)
        origins = {**self.origins, **{k: GIVEN for k, v in changes.items()}}
        return InForce(self.collection, config, origins, self.stored)

    def as_run(self, config: RetrievalConfig) -> InForce:
        """The settings a question really ran with (a form's, a link's, a logged ask's, an Eval run's): each that
        differs from these in force is GIVEN, the rest keep their origin. Unlike `given`, a None (no min score)
        counts too."""
        changed = {
            k.name: GIVEN for k in knobs(RetrievalConfig) if getattr(config, k.name) != getattr(self.config, k.name)
        }
        return InForce(self.collection, config, {**self.origins, **changed}, self.stored)

    def from_origin(self, origin: str) -> list[str]:
        return [name for name, o in self.origins.items() if o == origin]

    def describe(self) -> str:
        """One line: the settings in words, then which came from where ("the rest: defaults")."""
        parts = [
            f"{', '.join(names)} from {_ORIGIN_WORDS[origin]}"
            for origin in (GIVEN, COLLECTION, ENVIRONMENT)
            if (names := self.from_origin(origin))
        ]
        where = "; ".join(parts) + ("; the rest: defaults" if parts else "all defaults")
        return f"{config_label(self.config)} ({where})"

    def as_json(self) -> dict[str, Any]:
        return {
            "collection": self.collection, "config": dataclasses.asdict(self.config), "origins": dict(self.origins),
            "stored": self.stored.as_json() if self.stored else None, "in_words": self.describe(),
        }  # fmt: skip


def in_force(settings: Settings, home: SharedHome) -> InForce:
    """The settings `settings.collection` runs with: `settings.retrieval` (as configured) under its stored ones,
    kept in `home` (`rag.store.shared_home(settings)`).

    Raises:
        ConfigError: the stored settings are damaged (see `load_collection_settings`).
        StoreError: on a server, the metadata collection cannot be read.
    """
    stored = load_collection_settings(home, settings.collection)
    defaults = RetrievalConfig()
    origins = {
        k.name: ENVIRONMENT if getattr(settings.retrieval, k.name) != getattr(defaults, k.name) else DEFAULT
        for k in knobs(RetrievalConfig)
    }
    config = settings.retrieval
    if stored is not None:
        config = dataclasses.replace(config, **stored.values)
        origins |= dict.fromkeys(stored.values, COLLECTION)
    return InForce(settings.collection, config, origins, stored)


def with_collection_settings(settings: Settings, home: SharedHome) -> Settings:
    """`settings` whose retrieval is the collection's settings in force (every command and page starts here)."""
    return dataclasses.replace(settings, retrieval=in_force(settings, home).config)


def stored_in_run(config: RetrievalConfig, where: Path | SharedHome, collection: str) -> str | None:
    """What a run records about the collection's stored settings it ran with ("fusion=rrf (saved ...)"), or None
    when the collection has none or the run overrode every one."""
    try:
        stored = load_collection_settings(where, collection)
    except ConfigError:
        return None
    if stored is None:
        return None
    used = {k: v for k, v in stored.values.items() if getattr(config, k) == v}
    return dataclasses.replace(stored, values=used).words() if used else None
