"""A second dense model where the engine cannot add one in place (a Qdrant server from before named vectors
could be added): copy the collection into a new collection built with that model, no file read again.

Every chunk keeps its id, stored text, payload (fixes, tags, roles, status) and sparse vector; its dense
vector, and its sentence vectors when the collection stores them, are encoded by the new model from the
stored text, as `ragscope vectors add` does in place, into a dense vector named after the model (so the
record says which model encodes its questions, whatever RAGSCOPE_DENSE_MODEL names). The source is only
read. Its stored retrieval settings and kept originals go with the copy, so an eval run on each collection
compares the models alone (the runs' paired comparison: `ragscope eval SET --baseline RUN`).

Resumable: the new collection is created with its record first, then written a batch at a time; a copy
stopped part-way goes on, when run again, from the chunks the new collection lacks. A collection of that
name that is not such a copy (other models, or chunks the source does not hold) is refused, never mixed in.
The design: docs/reliability.md, "Dense vectors".
"""

from __future__ import annotations

import dataclasses
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass

from rag.catalog.collections import for_collection
from rag.catalog.vectors import Progress, default_name, model_dim
from rag.components import Components, build_components
from rag.errors import ConfigError, RagError
from rag.ingest.embed import encode_chunks
from rag.settings.collection_settings import load_collection_settings, save_collection_settings
from rag.settings.config import Settings
from rag.store import shared_home
from rag.store.base import CollectionModels, Store
from rag.types import ChunkFilter, SparseVector

# Chunks read, encoded and written per step: one progress report each, and at most this much redone after a kill.
COPY_BATCH = 32
# Every chunk, of every status and role.
_ALL = ChunkFilter(include_quarantined=True, include_unranked=True)


@dataclass(frozen=True)
class CopyResult:
    """What one `copy_with_model` run did."""

    source: str
    into: str
    models: CollectionModels  # the new collection's record
    copied: int  # chunks this run wrote
    chunks: int  # chunks in the source
    resumed: bool  # an earlier run had stopped part-way
    seconds: float

    def words(self) -> str:
        how = "finished a copy that had stopped part-way" if self.resumed else "copied"
        m = self.models
        return (
            f"{how}: collection {self.source} into {self.into} with dense model {m.dense_model} ({m.dense_dim} d), "
            f"{self.copied} of {self.chunks} chunks encoded in {self.seconds:.1f} s; {self.source} is unchanged"
        )


def copy_with_model(
    components: Components,
    model: str,
    into: str,
    runtime: str = "",
    progress: Progress | None = None,
    open_components: Callable[[Settings], Components] | None = None,
) -> CopyResult:
    """Copy the collection into the new collection `into`, its dense model `model` (on `runtime`, default the
    configured one); again after a stop, finish it.

    `open_components` opens `into` as the caller opens a collection (the app: its one cached engine per
    collection, so a collection is never open twice in one process) and keeps it open; without it, `into`
    is opened and closed here. It is opened on the caller's settings: its record, written first, names the
    encoders (`_copy_record`).

    Raises:
        ConfigError: `into` is no valid name, is the collection itself, or is a collection that is not a copy
            of this one with `model` (nothing is written to it).
        EncoderError: the model cannot be loaded (nothing was written).
        RagError: the collection is empty.
    """
    started = time.monotonic()
    source, settings = components.store, components.settings
    record = source.collection_models()
    if record is None:
        raise RagError(f"collection {settings.collection!r} is empty: ingest documents first")
    target_settings = _target_settings(settings, record, model, into, runtime or settings.dense_runtime)
    wanted = _copy_record(components, target_settings, record.sentence_vectors)
    target = (open_components or build_components)(for_collection(settings, target_settings.collection))
    try:
        ids = [r.chunk.id for r in source.records(_ALL)]
        held = _held(target, wanted, set(ids), settings.collection)
        target.store.ensure_collection(wanted)
        todo = [i for i in ids if i not in held]
        for at in range(0, len(todo), COPY_BATCH):
            if progress:
                progress(len(ids) - len(todo) + at, len(ids))
            _copy_batch(source, target, todo[at : at + COPY_BATCH])
        if progress:
            progress(len(ids), len(ids))
        target.store.flush()
        _copy_beside(settings, target_settings)
        return CopyResult(
            settings.collection,
            target_settings.collection,
            wanted,
            len(todo),
            len(ids),
            bool(held),
            time.monotonic() - started,
        )
    finally:
        if open_components is None:
            target.close()


def _target_settings(settings: Settings, record: CollectionModels, model: str, into: str, runtime: str) -> Settings:
    """The settings the new collection's record is made from: `model` for dense, the rest as the source was built."""
    target = for_collection(settings, into)
    if target.collection == settings.collection:
        raise ConfigError(f"copy into a new collection: {into!r} is the collection itself; name another")
    return dataclasses.replace(
        target,
        dense_model=model,
        dense_runtime=runtime,
        sparse_model=record.sparse_model,
        sparse_tokenizer=record.sparse_tokenizer,
        sentence_vectors=record.sentence_vectors,
        sentence_pooling=record.sentence_pooling,
    )


def _copy_record(components: Components, target: Settings, sentences: bool) -> CollectionModels:
    """The new collection's record: its dense vector named after the model (`default_name`), so that the record,
    not RAGSCOPE_DENSE_MODEL, says what encodes its questions (`CollectionModels.follows_record`) and one app
    searches and evaluates both collections. The model is loaded here: one that cannot load stops before
    anything is written."""
    model, runtime = target.dense_model, target.dense_runtime
    made = CollectionModels.from_settings(target, model_dim(components, model, runtime), sentences)
    name = default_name(model, runtime)
    return dataclasses.replace(made, dense_vector=name, sentence_space=name)


def _held(target: Components, wanted: CollectionModels, ids: set[str], source: str) -> set[str]:
    """The chunk ids an earlier copy wrote into `target`; none when it is new.

    Raises:
        ConfigError: `target` holds something that is not part of a copy of `source` built as `wanted`.
    """
    existing = target.store.collection_models()
    held = {r.chunk.id for r in target.store.records(_ALL)}
    name = target.settings.collection
    if existing is not None and (existing.spaces[0], existing.sparse_model) != (wanted.spaces[0], wanted.sparse_model):
        raise ConfigError(
            f"collection {name!r} exists, built with dense={existing.dense_model} on {existing.dense_runtime}: not "
            f"a copy of {source!r} with {wanted.dense_model} on {wanted.dense_runtime}; copy into a new name"
        )
    if held - ids:
        raise ConfigError(
            f"collection {name!r} exists and holds {len(held - ids)} chunks that {source!r} does not: it is not a "
            "copy of it; copy into a new name"
        )
    return held


def _copy_batch(source: Store, target: Components, ids: list[str]) -> None:
    """These chunks of `source`, read with their sparse vectors, encoded by the new model and written to `target`."""
    found = source.records(dataclasses.replace(_ALL, ids=tuple(ids)), with_vectors=True)
    sparse = [r.sparse or SparseVector((), ()) for r in found]
    vectors = encode_chunks(target, [r.chunk for r in found], sparse=sparse)
    target.store.upsert([vectors.point(i, r.chunk.id, r.payload) for i, r in enumerate(found)])


def _copy_beside(settings: Settings, target: Settings) -> None:
    """The source's kept originals (the files not copied yet) and its stored retrieval settings (when the copy
    has none of its own), so that the two collections differ by their dense model only."""
    if settings.originals_dir.is_dir():
        shutil.copytree(settings.originals_dir, target.originals_dir, dirs_exist_ok=True)
    home, target_home = shared_home(settings), shared_home(target)
    stored = load_collection_settings(home, settings.collection)
    if stored is not None and load_collection_settings(target_home, target.collection) is None:
        save_collection_settings(target_home, target.collection, stored.values, f"copied from {settings.collection}")
