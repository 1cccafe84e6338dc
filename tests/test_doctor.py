"""Damaged state files give one clear error naming the file and the repair; `ragscope doctor` finds and fixes them.

State files: the collection's models record (`qdrant/<collection>.meta.json`) and the crash journal's
entries (`journal/<collection>/<owner>/*.json`). Before, a truncated one made every command end in a
traceback.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from rag.cli import main
from rag.components import build_components
from rag.ingest.pipeline import ingest_files
from rag.store.journal import JournalEntry

GUIDE = b"# Ferry guide\n\n## Tickets\n\nA ticket costs four euros.\n\n## Bikes\n\nBikes ride free.\n"


def _run(*args: str):
    return CliRunner().invoke(main, list(args))


@pytest.fixture
def ingested(settings):
    components = build_components(settings)
    assert not ingest_files(components, [("guide.md", GUIDE)]).errors
    models = components.store.collection_models()
    components.close()
    return settings, models


def _one_clean_error(result, *needles: str) -> None:
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error: ")]
    assert len(errors) == 1 and all(n in errors[0] for n in needles), result.stderr


@pytest.mark.parametrize(
    "damage",
    [
        lambda text: text[: len(text) // 2],  # truncated mid-write
        lambda text: "",
        lambda text: "[]",
        lambda text: text.replace("384", '"384"'),  # a mistyped field
        lambda text: json.dumps({"dense_model": "x"}),  # fields missing
    ],
    ids=["truncated", "empty", "not-an-object", "mistyped", "missing-fields"],
)
def test_a_damaged_models_record_is_named_and_doctor_rebuilds_it(ingested, damage):
    settings, models = ingested
    meta = settings.data_dir / "qdrant" / "docs.meta.json"
    meta.write_text(damage(meta.read_text()))
    doc = settings.data_dir.parent / "guide.md"
    doc.write_bytes(GUIDE)
    for command in (["docs"], ["search", "ticket price"], ["ingest", str(doc)]):
        _one_clean_error(_run(*command), str(meta), "ragscope doctor --fix")
    found = _run("doctor")
    assert found.exit_code == 1 and any(line.startswith("problem: ") and str(meta) in line for line in found.stdout.splitlines())
    fixed = _run("doctor", "--fix")
    assert fixed.exit_code == 0, fixed.output
    assert any(line.startswith("fixed: collection 'docs': rewrote its models record") for line in fixed.stdout.splitlines())
    assert _run("doctor").exit_code == 0
    listed = _run("docs", "--json")
    assert listed.exit_code == 0 and [d["source"] for d in json.loads(listed.stdout)] == ["guide.md"]
    components = build_components(settings)
    try:
        assert components.store.collection_models() == models  # dimension and sentence vectors read back
    finally:
        components.close()


@pytest.mark.parametrize(
    "content",
    ['{"source": "guide.md", "phase": "commit", "added": [], "removed": "abc"}', "{trunc", '{"source": 3}'],
    ids=["mistyped", "truncated", "missing-fields"],
)
def test_a_damaged_journal_entry_is_named_and_doctor_removes_it(ingested, content):
    settings, _ = ingested
    components = build_components(settings)
    components.journal.write(JournalEntry("guide.md", "apply", [], []))  # stands in for a crash's entry
    entry = components.journal.entries()[0]
    components.close()
    entry.write_text(content)
    _one_clean_error(_run("docs"), str(entry), "ragscope doctor --fix")
    found = _run("doctor")
    assert found.exit_code == 1 and str(entry) in found.stdout
    fixed = _run("doctor", "--fix")
    assert fixed.exit_code == 0 and f"removed damaged journal entry {entry}" in fixed.stdout
    if "guide.md" in content:
        assert "re-ingest 'guide.md'" in fixed.stdout
    assert not entry.exists()
    assert _run("docs").exit_code == 0


def test_an_entry_from_the_old_shared_journal_is_reported_and_removed(ingested):
    settings, _ = ingested
    legacy = settings.data_dir / "journal" / "0123abcd.json"
    legacy.write_text(json.dumps({"source": "guide.md", "phase": "commit", "added": [], "removed": ["x"]}))
    assert _run("docs").exit_code == 0  # never replayed into a collection it may not belong to
    found = _run("doctor")
    assert found.exit_code == 1 and "collection is unknown" in found.stdout
    assert _run("doctor", "--fix").exit_code == 0 and not legacy.exists()


def test_a_healthy_data_dir_is_all_ok_also_while_the_app_holds_a_collection(ingested):
    settings, _ = ingested
    result = _run("doctor")
    assert result.exit_code == 0, result.output
    assert "ok: collection 'docs': 2 chunks" in result.stdout
    app = build_components(settings)  # a running app holds the collection and its journal owner
    try:
        busy = _run("doctor", "--fix")  # checks the collection in its own turns on the shard
        assert busy.exit_code == 0, busy.output
        assert "ok: collection 'docs': 2 chunks" in busy.stdout
        assert "in use by a running process; left alone" in busy.stdout  # the app's journal owner
        assert app.journal.folder.parent.is_dir()
    finally:
        app.close()


def test_a_damaged_record_of_an_empty_collection_is_removed(settings):
    components = build_components(settings)
    components.ensure_collection()
    components.close()
    meta = Path(settings.data_dir) / "qdrant" / "docs.meta.json"
    meta.write_text("{")
    fixed = _run("doctor", "--fix")
    assert fixed.exit_code == 0 and "holds no chunks" in fixed.stdout
    assert _run("docs").exit_code == 0
