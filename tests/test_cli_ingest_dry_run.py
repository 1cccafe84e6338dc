"""`ragscope ingest --dry-run` through click's CliRunner, on the real models and store: the Documents page's preview
for files and folders, printed; the collection is the same afterwards; a file that would be refused exits 1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from rag.cli import main
from rag.components import build_components
from rag.settings.config import Settings
from rag.types import ChunkFilter

GUIDE = b"# Ferry guide\n\n## Tickets\n\nA single ticket costs four euros.\n\n## Timetable\n\nThe first ferry leaves at seven.\n"
PRICES = b'<html><body><h1>Prices</h1><p>A day pass costs ten euros.</p><p style="display:none">secret</p></body></html>'
HIDDEN = "billing/prices.html: dropped 6 characters of hidden text"  # the loader's note, worded as the page words it


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A Markdown guide and, one folder down, an HTML page with hidden text (the loader notes it)."""
    for name, data in {"guide.md": GUIDE, "billing/prices.html": PRICES}.items():
        (tmp_path / "docs" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "docs" / name).write_bytes(data)
    return tmp_path / "docs"


def _run(*args: str):
    return CliRunner().invoke(main, list(args))


def _stored() -> tuple[bool, int, list[str]]:
    """Whether the collection exists, how many points it holds, and guide.md's chunk texts."""
    components = build_components(Settings.from_env())
    try:
        texts = [r.chunk.text for r in components.store.records(ChunkFilter(sources=("guide.md",)))]
        return components.store.collection_models() is not None, components.store.count(), sorted(texts)
    finally:
        components.close()


def test_dry_run_prints_each_files_preview_and_writes_nothing(folder):
    first = _run("ingest", "--dry-run", str(folder))
    assert first.exit_code == 0, first.output
    assert first.stdout.splitlines() == [
        "guide.md: new, 2 chunks: 2 added, 0 unchanged, 0 removed",
        "billing/prices.html: new, 1 chunk: 1 added, 0 unchanged, 0 removed",
        f"  warning: {HIDDEN}",
        "dry run, nothing written: 2 new, 0 changed, 0 unchanged, 0 refused; 3 chunks to embed",
    ]
    assert "preview: 2/2 files" in first.stderr  # progress on stderr, as ingest's
    assert _stored() == (False, 0, [])  # not even the collection was made

    assert _run("ingest", str(folder)).exit_code == 0
    (folder / "guide.md").write_bytes(GUIDE.replace(b"four euros", b"five euros"))
    before = _stored()
    assert before[:2] == (True, 3) and len(before[2]) == 2 and any("costs four euros" in t for t in before[2])
    again = _run("ingest", "--dry-run", str(folder), "--json")
    assert again.exit_code == 0, again.output
    files = {f["source"]: f for f in json.loads(again.stdout)["files"]}
    assert files["guide.md"] == {
        "source": "guide.md",
        "state": "changed",
        "chunks": 2,
        "added": 1,
        "unchanged": 1,
        "removed": 1,
        "refused": None,
        "warnings": [],
    }
    assert files["billing/prices.html"]["state"] == "unchanged" and files["billing/prices.html"]["warnings"] == [HIDDEN]
    assert "dry run, nothing written: 0 new, 1 changed, 1 unchanged, 0 refused; 1 chunk to embed" in again.stderr
    assert _stored() == before  # the edited file previewed, the stored version kept

    # The real ingest writes what the dry run said: one chunk added, one removed.
    written = json.loads(_run("ingest", str(folder), "--json").stdout)["files"]
    guide = next(f for f in written if f["source"] == "guide.md")
    assert (guide["written"], guide["unchanged"], guide["removed"]) == (1, 1, 1)


def test_a_file_that_would_be_refused_exits_1_with_the_pages_message(folder, monkeypatch):
    (folder / "empty.md").write_bytes(b"")
    (folder / "title.md").write_bytes(b"# Only a title\n")
    result = _run("ingest", "--dry-run", str(folder / "empty.md"), str(folder / "title.md"), str(folder / "guide.md"))
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        "empty.md: refused: empty.md: the file is empty",
        "title.md: new, 0 chunks: 0 added, 0 unchanged, 0 removed",
        "  refused: title.md: no text to index after chunking",
        "guide.md: new, 2 chunks: 2 added, 0 unchanged, 0 removed",
        "dry run, nothing written: 1 new, 0 changed, 0 unchanged, 2 refused; 2 chunks to embed",
    ]
    monkeypatch.setenv("RAGSCOPE_MAX_CHUNKS", "1")
    over = _run("ingest", "--dry-run", str(folder / "guide.md"))
    assert over.exit_code == 1
    assert over.stdout.splitlines()[:2] == [
        "guide.md: over the chunk limit, 2 chunks: 2 added, 0 unchanged, 0 removed",
        "  refused: guide.md: 2 chunks is over the limit of 1 per document (RAGSCOPE_MAX_CHUNKS); not offered for "
        "ingest. Split the file, or choose a larger chunk size.",
    ]
    assert _stored() == (False, 0, [])


def test_the_help_says_what_the_dry_run_exits_with():
    result = _run("ingest", "--help")
    assert result.exit_code == 0
    text = " ".join(result.stdout.split())
    assert "--dry-run Write nothing:" in text and "exits 1 if any file would be refused" in text
