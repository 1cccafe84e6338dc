"""`ragscope chunk disable|enable|edit|history` and `ingest --drop-fixes` (issue 41, item 1), through the CLI on a
real collection: the fix changes what `search` returns, is written to the history with the OS user, and an ingest
of a file whose fixed passage changed is refused (its fix named, nothing written) until --drop-fixes."""

from __future__ import annotations

import getpass
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from rag.cli import main

NOTES = (
    "# Notes\n\n## Harbour\n\nThe harbour ferry departs at noon from pier seven, weather permitting.\n\n"
    "## Kitchen\n\nSourdough bread needs a starter that is fed every day.\n"
)


def _run(*args: str, code: int = 0) -> str:
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == code, result.output
    return result.output


def _json(*args: str, code: int = 0) -> object:
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == code, result.output
    return json.loads(result.stdout)


def _search(question: str) -> list[dict]:
    return json.loads(CliRunner().invoke(main, ["search", question, "--json"]).stdout)["results"]


@pytest.fixture
def notes(tmp_path: Path) -> tuple[Path, str]:
    """notes.md ingested through the CLI; its path and the id of its Harbour chunk."""
    path = tmp_path / "notes.md"
    path.write_text(NOTES, encoding="utf-8")
    _run("ingest", str(path))
    [top] = [hit for hit in _search("harbour ferry pier seven") if hit["heading"] == "Notes > Harbour"][:1]
    return path, top["chunk_id"]


def test_disable_hides_a_chunk_from_search_and_enable_brings_it_back(notes):
    _, harbour = notes
    assert _run("chunk", "disable", harbour, "--why", "out of date").strip() == "1 chunk disabled"
    assert harbour not in {hit["chunk_id"] for hit in _search("harbour ferry pier seven")}
    assert "1 disabled already" in _run("chunk", "disable", harbour)
    assert _run("chunk", "enable", harbour).strip() == "1 chunk enabled"
    assert harbour in {hit["chunk_id"] for hit in _search("harbour ferry pier seven")}
    rows = _json("chunk", "history", "--json")
    assert [(r["action"], r["by"], r["chunk_id"]) for r in rows] == [
        ("disable", getpass.getuser(), harbour),
        ("enable", getpass.getuser(), harbour),
    ]
    assert rows[0]["details"] == {"why": "out of date"} and rows[0]["where"] == "notes.md > Notes > Harbour #0"
    assert "\tdisable\tnotes.md > Notes > Harbour #0\t" in _run("chunk", "history")


def test_edit_changes_what_search_finds_and_an_unknown_id_is_one_clean_error(notes):
    _, harbour = notes
    out = _run("chunk", "edit", harbour, "--text", "Tickets for the lighthouse tour cost twelve kroner.")
    assert out.startswith(f"notes.md > Notes > Harbour #0 ({harbour}): edited by {getpass.getuser()} at ")
    [top] = _search("lighthouse tour kroner")[:1]
    assert top["chunk_id"] == harbour and "lighthouse" in top["text"]
    assert "no chunk 'nope'" in _run("chunk", "edit", "nope", "--text", "x", code=1)
    assert "lighthouse tour" in _run("chunk", "history")


def test_an_ingest_that_would_drop_a_fix_is_refused_until_drop_fixes(notes):
    path, harbour = notes
    _run("chunk", "edit", harbour, "--text", "Tickets for the lighthouse tour cost twelve kroner.")
    path.write_text(NOTES.replace("at noon", "at one o'clock"), encoding="utf-8")

    dry = _run("ingest", str(path), "--dry-run", code=1)
    assert f"  drops fix: notes.md > Notes > Harbour #0 ({harbour}): edited by " in dry and "--drop-fixes" in dry
    entry = _json("ingest", str(path), "--dry-run", "--json", code=1)["files"][0]
    assert [f["chunk_id"] for f in entry["drops_fixes"]] == [harbour] and "--drop-fixes" in entry["refused"]
    assert "0 refused" in _run("ingest", str(path), "--dry-run", "--drop-fixes")

    refused = _run("ingest", str(path), code=1)
    assert harbour in refused and "--drop-fixes" in refused
    assert _search("lighthouse tour kroner")[0]["chunk_id"] == harbour  # nothing stored was lost

    _run("ingest", str(path), "--drop-fixes")
    assert harbour not in {hit["chunk_id"] for hit in _search("lighthouse tour kroner harbour")}
    last = _json("chunk", "history", "--json")[-1]
    assert (last["action"], last["chunk_id"], last["by"]) == ("drop", harbour, getpass.getuser())
