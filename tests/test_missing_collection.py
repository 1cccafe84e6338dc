"""A collection that does not exist is an error, with the close names and the list, in every command and
link that reads one; a command that creates one (ingest) still does (CliRunner and AppTest, real store)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from rag.catalog.collections import missing_collection_message
from rag.cli import main
from rag.settings.config import Settings
from rag.store.base import CollectionModels
from rag.store.edge import EdgeStore
from streamlit.testing.v1 import AppTest

from tests.apptest_pages import APP

NOTES = CollectionModels("all-MiniLM-L6-v2", 384, "Qdrant/bm25")


@pytest.fixture
def notes(settings: Settings) -> Settings:
    """A data dir holding one collection, `notes` (empty, its models recorded), besides the default `docs`."""
    store = EdgeStore(settings.data_dir / "qdrant", "notes")
    store.ensure_collection(NOTES)
    store.close()
    return settings


@pytest.mark.parametrize(
    "command",
    [
        ["search", "ferry"],
        ["docs"],
        ["ask", "when does the ferry leave?"],
        ["eval", "SET"],
        ["track", "ferry", "--text", "ferry"],
        ["delete", "guide.md"],
        ["optimize"],
    ],
)
def test_a_command_reading_a_missing_collection_exits_1_with_the_close_names(notes, command, tmp_path):
    qset = tmp_path / "set.jsonl"
    qset.write_text('{"question": "when?", "gold": "seven"}\n', encoding="utf-8")
    args = [str(qset) if a == "SET" else a for a in command]
    result = CliRunner().invoke(main, [*args, "--collection", "nope"])
    assert result.exit_code == 1, result.output
    assert result.stderr.startswith("Error: collection 'nope' does not exist. Did you mean 'notes'?")
    assert "The collections are: docs, notes" in result.stderr
    # Refused before the store was opened: no lock, journal or models record left for the name.
    data = notes.data_dir
    assert not list((data / "qdrant").glob("nope*")) and not (data / "journal" / "nope").exists()


def test_a_name_close_to_none_lists_the_collections_without_a_guess(notes):
    result = CliRunner().invoke(main, ["docs", "--collection", "zzz-unrelated"])
    assert result.exit_code == 1
    assert "Did you mean" not in result.stderr and "The collections are: docs, notes" in result.stderr


def test_the_default_and_existing_collections_read_as_before(notes):
    for args in (["docs", "--json"], ["docs", "--json", "--collection", "notes"]):
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout) == []


def test_ingest_creates_a_new_collection(notes, tmp_path: Path):
    guide = tmp_path / "guide.md"
    guide.write_bytes(b"# Ferry\n\n## Timetable\n\nThe first ferry leaves at seven.\n")
    made = CliRunner().invoke(main, ["ingest", str(guide), "--collection", "nope"])
    assert made.exit_code == 0, made.output
    listed = CliRunner().invoke(main, ["docs", "--json", "--collection", "nope"])
    assert listed.exit_code == 0, listed.output
    assert [d["source"] for d in json.loads(listed.stdout)] == ["guide.md"]


def test_a_link_to_a_missing_collection_shows_the_error_and_opens_the_default(notes):
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["collection"] = "nope"
    at.run()  # the link is applied, and refused, on the run that follows it
    assert not at.exception, at.exception
    errors = [e.value.replace("\\", "") for e in at.error]  # shown Markdown-escaped (ui.safe)
    assert any(e.startswith("Collection not opened: collection 'nope' does not exist") for e in errors), errors
    assert any("Did you mean 'notes'?" in e for e in errors)
    assert at.sidebar.selectbox(key="ui_collection_picker").value == "docs"
    assert not list((notes.data_dir / "qdrant").glob("nope*"))


def test_the_message_offers_up_to_three_close_names():
    message = missing_collection_message("beir-scifct", ["beir-scifact", "beir-scidocs", "docs"])
    assert "Did you mean 'beir-scifact'" in message and message.endswith("Manage collections in the app).")
