"""Versions of a collection (rag/catalog/versions.py) and the version diff (rag/eval/version_diff.py), on the
embedded engine with the real models: a restore brings back exactly the chunks and settings a version holds,
a copy that cannot be opened changes nothing, and the diff counts what a set made to move moved."""

from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner

import rag.store.edge
from versions_corpus import BROKE, FIXED, QSET, SOURCE, V2, two_versions

from rag.cli import main
from rag.components import build_components
from rag.catalog.documents import delete_document, set_quarantine
from rag.catalog.versions import (
    BEFORE_RESTORE,
    STORE_COPY,
    list_versions,
    load_version,
    restore_version,
    take_version,
    version_label,
    versions_dir,
)
from rag.errors import RagError, StoreError
from rag.eval.qsets import parse_question_set
from rag.eval.runner import run_eval
from rag.eval.runs import list_runs
from rag.eval.version_diff import diff_versions
from rag.ingest.originals import Originals
from rag.settings.collection_settings import load_collection_settings, save_collection_settings, settings_path
from rag.store.client import ClientStore
from rag.store.edge import SHARD_COPY, edge_collections
from rag.types import ChunkFilter

EVERY = ChunkFilter(include_quarantined=True, include_unranked=True)


def snapshot(components) -> dict:  # noqa: ANN001 - Components
    """Every chunk with its payload and vectors, the sentence vectors of each, and the stored settings file."""
    store = components.store
    records = store.records(EVERY, with_vectors=True)
    assert records, "the collection holds no chunk"
    path = settings_path(components.settings.data_dir, components.settings.collection)
    return {
        "chunks": {r.chunk.id: (r.payload, r.dense, r.sparse, store.sentence_vectors(r.chunk.id)) for r in records},
        "settings": path.read_bytes() if path.is_file() else None,
    }


def test_restoring_a_version_brings_back_exactly_its_chunks_and_settings(sample_components):
    components = sample_components
    data_dir, collection = components.settings.data_dir, components.settings.collection
    save_collection_settings(data_dir, collection, {"candidates": 30}, note="kept with v1")
    before = snapshot(components)
    take_version(components, "v1")
    assert version_label(components) == "v1"

    # Change all a version holds: a document gone (and its original), a chunk quarantined, other settings.
    gone = "billing/plans.md"
    assert Originals(components.settings.originals_dir).has(gone)
    delete_document(components, gone)
    quarantined = next(iter(snapshot(components)["chunks"]))
    set_quarantine(components, [quarantined], True)
    save_collection_settings(data_dir, collection, {"fusion": "rrf"}, merge=False)
    changed = snapshot(components)
    assert changed != before
    assert version_label(components) == "unversioned changes since v1"

    restored, kept = restore_version(components, "v1")
    assert restored.name == "v1"
    assert snapshot(components) == before  # every chunk, payload and vector; the settings file byte for byte
    assert load_collection_settings(data_dir, collection).values == {"candidates": 30}
    assert Originals(components.settings.originals_dir).has(gone)
    assert version_label(components) == "v1"

    # The automatic version holds the collection as it was before the restore, and restores as exactly.
    assert kept.name.startswith(f"{BEFORE_RESTORE}-") and kept.note == "before restoring v1"
    restore_version(components, kept.name)
    assert snapshot(components) == changed
    assert not Originals(components.settings.originals_dir).has(gone)


def test_versions_are_listed_newest_first_with_their_size_date_and_counts(sample_components):
    components = sample_components
    chunks, documents = components.store.count(), len(components.store.sources())
    take_version(components, "first")
    delete_document(components, "billing/plans.md")
    take_version(components, "second")
    listed = list_versions(components.settings)
    assert [v.name for v in listed] == ["second", "first"]
    second, first = listed
    assert (first.chunks, first.documents) == (chunks, documents)
    assert second.documents == documents - 1 and second.chunks < chunks
    assert second.chunks == components.store.count()
    assert all(v.size_bytes > 0 and v.created_at and v.backend == "edge" for v in listed)
    assert first.models == components.store.collection_models().as_dict()
    docs = json.loads((versions_dir(components.settings) / "first" / "documents.json").read_text())
    assert "billing/plans.md" in {d["source"] for d in docs}
    with pytest.raises(RagError, match="has a version 'first' already"):
        take_version(components, "first")
    with pytest.raises(RagError, match="version name '../x' is not allowed"):
        take_version(components, "../x")
    with pytest.raises(RagError, match="has no version 'third'; its versions: second, first"):
        load_version(components.settings, "third")


def test_a_restore_whose_copy_cannot_be_opened_leaves_the_collection_as_it_was(sample_components):
    components = sample_components
    take_version(components, "v1")
    delete_document(components, "billing/plans.md")
    before = snapshot(components)
    shard = versions_dir(components.settings) / "v1" / STORE_COPY / SHARD_COPY
    (shard / "edge_config.json").write_text("{ not json")  # the copy is damaged
    with pytest.raises(StoreError, match="could not be opened .* collection 'docs' is unchanged"):
        restore_version(components, "v1")
    assert snapshot(components) == before
    # Nothing left of the attempt beside the shard, and the automatic version was kept.
    assert edge_collections(components.settings.data_dir / "qdrant") == ["docs"]
    assert [p.name for p in (components.settings.data_dir / "qdrant").iterdir() if p.name.startswith(".")] == []
    assert any(v.name.startswith(BEFORE_RESTORE) for v in list_versions(components.settings))


def test_a_restore_that_fails_after_moving_the_live_shard_aside_puts_it_back(sample_components, monkeypatch):
    components = sample_components
    take_version(components, "v1")
    delete_document(components, "billing/plans.md")
    before = snapshot(components)
    real_rename = rag.store.edge.os.rename

    def rename(src, dst):  # noqa: ANN001, ANN202 - os.rename's own arguments
        if ".restoring-" in str(src):
            raise OSError(28, "No space left on device")
        return real_rename(src, dst)

    monkeypatch.setattr(rag.store.edge.os, "rename", rename)
    with pytest.raises(StoreError, match="restoring version 'v1' failed: .*No space left on device"):
        restore_version(components, "v1")
    monkeypatch.undo()
    assert snapshot(components) == before
    assert [p.name for p in (components.settings.data_dir / "qdrant").iterdir() if p.name.startswith(".")] == []


def test_doctor_puts_back_what_a_restore_killed_between_its_renames_left_and_removes_a_cut_short_delete(sample_store):
    settings = sample_store
    components = build_components(settings)
    try:
        take_version(components, "v1")
        delete_document(components, "billing/plans.md")
        before = snapshot(components)
    finally:
        components.close()
    # As a kill leaves it: the live shard moved aside, the version's copy staged beside it, a take's copy too.
    root, versions = settings.data_dir / "qdrant", versions_dir(settings)
    (root / "docs").rename(root / ".docs.replaced-0a1b2c3d")
    shutil.copytree(versions / "v1" / STORE_COPY / SHARD_COPY, root / ".docs.restoring-0a1b2c3d")
    shutil.copytree(versions / "v1", versions / ".v2.taking-0a1b2c3d")
    shutil.copytree(versions / "v1", versions / ".v0.deleting-0a1b2c3d")  # a delete killed before its removal
    report = CliRunner().invoke(main, ["doctor"])
    assert report.exit_code == 1
    assert report.output.count("that was cut short") == 4 and "--fix` moves it back to" in report.output
    assert "left by a version delete that was cut short; `ragscope doctor --fix` removes it" in report.output
    fixed = CliRunner().invoke(main, ["doctor", "--fix"])
    assert fixed.exit_code == 0, fixed.output
    assert f"moved to {root / 'docs'}, whole with the rest of the collection" in fixed.output
    assert sorted(p.name for p in [*root.iterdir(), *versions.iterdir()] if p.name.startswith(".")) == []
    components = build_components(settings)
    try:
        assert snapshot(components) == before  # as it was before that restore
        assert [v.name for v in list_versions(settings)] == ["v1"]
    finally:
        components.close()


def test_qdrant_client_local_mode_keeps_no_versions_and_says_which_backends_do(tmp_path):
    store = ClientStore.connect(":memory:", "", "docs")
    try:
        with pytest.raises(StoreError, match="local mode keeps no snapshot: versions are kept on the embedded engine"):
            store.copy_to(tmp_path / "copy")
    finally:
        store.close()
    assert not (tmp_path / "copy").exists()


def test_the_version_diff_counts_the_fixed_and_broken_questions_of_a_set_made_to_move(components):
    two_versions(components)
    qset = parse_question_set(QSET, "moving")
    diff = diff_versions(components.settings, "v2", "v3", qset)
    assert {q.id for q in diff.having("fixed")} == FIXED
    assert {q.id for q in diff.having("broke")} == BROKE
    assert [q.id for q in diff.having("hit in both")] == ["two-factor"]
    assert diff.headline() == "v3 against v2: 4 questions fixed, 1 broke"
    assert diff.left_out == ()
    # Each version ran with the settings it stored, on its own collection, which the links open.
    assert diff.run_a.config.final_k == diff.run_b.config.final_k == 1
    fixed = diff.having("fixed")[0]
    assert fixed.inspector_a["collection"] == "docs--v2" and fixed.inspector_b["collection"] == "docs--v3"
    assert fixed.inspector_a["k"] == "1"
    # The diff keeps no run in the history, and the collection itself is still v3.
    assert list_runs(components.settings.data_dir) == []
    assert version_label(components) == "v3"
    assert components.store.records(ChunkFilter(sources=(SOURCE,)))[0].chunk.text not in V2


def test_a_stored_eval_run_names_the_version_it_was_made_on(components):
    two_versions(components)
    qset = parse_question_set(QSET, "moving")
    on_v3 = run_eval(components, qset)
    restore_version(components, "v2")
    on_v2 = run_eval(components, qset)
    cat = next(r.chunk.id for r in components.store.records() if r.chunk.text == V2[0])
    set_quarantine(components, [cat], True)
    changed = run_eval(components, qset)
    assert (on_v3.version, on_v2.version) == ("v3", "v2")
    assert changed.as_json()["version"] == "unversioned changes since v2"
    stored = list_runs(components.settings.data_dir)  # newest first
    assert [r.version for r in stored] == ["unversioned changes since v2", "v2", "v3"]
