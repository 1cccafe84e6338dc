"""A collection's dense vector space follows its record, not the settings (real MiniLM, float and int8).

RAGSCOPE_DENSE_RUNTIME=onnx-int8 runs the int8-quantised export: chunk vectors about 0.96 cosine from the
float ones, and queries must come from the same export. A float collection keeps float chunks and queries
whatever is configured later, and an int8 one keeps int8: one collection never mixes the two spaces.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from rag.catalog.collections import delete_collection
from rag.components import build_components
from rag.settings.config import INT8_RUNTIME, Settings
from rag.encoders.factory import dense_encoder
from rag.ingest.pipeline import ingest_files
from rag.retrieval.rerank import clear_sentence_cache, sentence_cosines
from rag.retrieval.retrieve import retrieve
from rag.ingest.sentences import sentence_texts
from rag.store.base import CollectionModels
from rag.types import ChunkFilter

FERRY = b"""# Ferry guide

## Timetable

The first ferry leaves at seven in the morning. The last one leaves at eleven at night.

## Bikes

Bikes ride free on weekdays. At weekends a bike ticket costs one euro.

## Pets

Dogs travel on a lead. Cats travel in a closed basket.
"""
BUS = b"""# Bus guide

## Night buses

Night buses run every half hour after midnight. They stop at every harbour gate.
"""
QUESTION = "when does the first boat go"


def _encoders(settings: Settings):
    models = settings.data_dir / "models"
    return dense_encoder(settings.dense_model, "onnx", models), dense_encoder(settings.dense_model, INT8_RUNTIME, models)


def _stored(comps, source: str):
    records = comps.store.records(ChunkFilter(sources=(source,)), with_vectors=True)
    return records, np.array([r.dense for r in records], dtype=np.float32)


def _made_with(settings: Settings, runtime: str) -> None:
    """The collection made, with ferry.md in it, by a process configured with `runtime` (closed after)."""
    first = build_components(dataclasses.replace(settings, dense_runtime=runtime))
    try:
        assert not ingest_files(first, [("ferry.md", FERRY)]).errors
    finally:
        first.close()


def _timetable(comps):
    (chunk,) = [r for r in comps.store.records(ChunkFilter(sources=("ferry.md",))) if r.chunk.heading.endswith("Timetable")]
    return chunk


def _dense_scores(comps) -> dict[str, float]:
    return {c.chunk.chunk.id: c.dense.score for c in retrieve(comps, QUESTION).ranked("dense")}


def test_an_int8_collection_holds_int8_chunk_vectors_and_is_queried_with_int8(settings):
    comps = build_components(dataclasses.replace(settings, dense_runtime=INT8_RUNTIME))
    try:
        assert not ingest_files(comps, [("ferry.md", FERRY)]).errors
        assert comps.store.collection_models().dense_runtime == INT8_RUNTIME
        flt, int8 = _encoders(settings)
        records, stored = _stored(comps, "ferry.md")
        texts = [r.chunk.embed_text for r in records]
        # Ingest encodes this file's chunks in one pass; the same pass gives exactly what was stored
        # (dynamic quantisation scales each pass by its own activations).
        np.testing.assert_allclose(stored, int8.encode_documents(texts), atol=1e-5)
        to_float = np.sum(stored * flt.encode_documents(texts), axis=1)
        assert 0.9 < to_float.min() and to_float.max() < 0.9999  # near the float vectors, and not them
        by_id = dict(zip((r.chunk.id for r in records), stored, strict=True))
        scores = _dense_scores(comps)
        assert scores and scores == pytest.approx({i: float(by_id[i] @ int8.encode_query(QUESTION)) for i in scores}, abs=1e-4)
        off = {i: float(by_id[i] @ flt.encode_query(QUESTION)) for i in scores}
        assert max(abs(scores[i] - off[i]) for i in scores) > 1e-3  # the witness: a float query scores otherwise
    finally:
        comps.close()


@pytest.mark.parametrize("made, later", [("onnx", INT8_RUNTIME), (INT8_RUNTIME, "onnx")])
def test_a_collection_keeps_its_dense_space_when_the_runtime_setting_changes(settings, made, later):
    """Chunks added later and every query follow the record; the record never changes."""
    _made_with(settings, made)
    comps = build_components(dataclasses.replace(settings, dense_runtime=later))
    try:
        assert not ingest_files(comps, [("bus.md", BUS)]).errors
        assert comps.store.collection_models().dense_runtime == made
        own = dict(zip(("onnx", INT8_RUNTIME), _encoders(settings), strict=True))[made]
        records, stored = _stored(comps, "bus.md")
        np.testing.assert_allclose(stored, own.encode_documents([r.chunk.embed_text for r in records]), atol=1e-5)
        vectors = {r.chunk.id: r.dense for r in comps.store.records(with_vectors=True)}
        scores = _dense_scores(comps)
        assert scores == pytest.approx({i: float(np.dot(vectors[i], own.encode_query(QUESTION))) for i in scores}, abs=1e-4)
    finally:
        comps.close()


def test_a_collection_made_again_in_the_same_process_follows_the_settings(settings):
    """Deleting a float collection and ingesting again, with int8 configured, makes an int8 one: the
    encoder is looked up from the record at each use, not fixed when the process started."""
    _made_with(settings, "onnx")
    comps = build_components(dataclasses.replace(settings, dense_runtime=INT8_RUNTIME))
    try:
        flt, int8 = _encoders(settings)
        assert comps.dense.encoder is flt
        delete_collection(comps, settings.collection)
        assert comps.dense.encoder is int8  # no collection: the configured runtime makes the next one
        assert not ingest_files(comps, [("ferry.md", FERRY)]).errors
        assert comps.store.collection_models().dense_runtime == INT8_RUNTIME
        records, stored = _stored(comps, "ferry.md")
        np.testing.assert_allclose(stored, int8.encode_documents([r.chunk.embed_text for r in records]), atol=1e-5)
    finally:
        comps.close()


@pytest.mark.parametrize(
    "recorded, configured, runs",
    [
        ("torch", "onnx", "onnx"),  # the float runtimes share one space: the configured one encodes
        ("onnx", "torch", "torch"),
        ("torch", INT8_RUNTIME, "onnx"),  # a float collection keeps float vectors
        ("onnx", INT8_RUNTIME, "onnx"),
        (INT8_RUNTIME, "onnx", INT8_RUNTIME),  # an int8 collection keeps int8 ones
        (INT8_RUNTIME, "torch", INT8_RUNTIME),
    ],
)
def test_the_record_picks_the_runtime_of_its_space(recorded, configured, runs):
    record = CollectionModels("all-MiniLM-L6-v2", 384, "Qdrant/bm25", dense_runtime=recorded)
    assert record.runtime_for(configured) == runs


def test_sentence_cosines_of_a_float_and_an_int8_collection_never_share_cached_vectors(settings):
    """The sentence-vector cache (sentences encoded at query time, for chunks stored without sentence
    vectors) keys on the encoder's name: one process holding a float and an int8 collection must score
    each with its own vectors (the int8 ones were served the float cache)."""
    clear_sentence_cache()
    without = dataclasses.replace(settings, sentence_vectors=False)
    float_comps = build_components(dataclasses.replace(without, collection="flt", dense_runtime="onnx"))
    int8_comps = build_components(dataclasses.replace(without, collection="q8", dense_runtime=INT8_RUNTIME))
    try:
        for comps in (float_comps, int8_comps):
            assert not ingest_files(comps, [("ferry.md", FERRY)]).errors
        assert float_comps.dense.name != int8_comps.dense.name
        flt, int8 = _encoders(settings)
        query = int8.encode_query(QUESTION)
        first, _ = sentence_cosines(float_comps.store, float_comps.dense, query, _timetable(float_comps))  # fills the cache with float vectors
        chunk = _timetable(int8_comps)
        scores, stored = sentence_cosines(int8_comps.store, int8_comps.dense, query, chunk)
        own = int8.encode_documents(sentence_texts(chunk.chunk))  # the same one pass as the scorer's
        assert not stored and len(scores) == 3 and scores == pytest.approx([float(v @ query) for v in own], abs=1e-5)
        assert scores != pytest.approx(first, abs=1e-4)  # the witness: float vectors score otherwise
    finally:
        float_comps.close()
        int8_comps.close()
