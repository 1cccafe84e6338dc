"""What `ragscope` refuses instead of answering wrongly (issue 37): a collection name nobody created, a tune
on gold that names nothing, and what it must accept or hide: a document name typed decomposed (NFD), a Qdrant
password holding `#`, `/` or `?`."""

from __future__ import annotations

import json
import unicodedata

import pytest
from click.testing import CliRunner

from rag.cli import main
from rag.components import build_components
from rag.ingest.pipeline import ingest_files

STORED = "café.md"
MENU = b"# Menu\n\n## Coffee\n\nThe cafe serves espresso until noon.\n\n## Tea\n\nGreen tea is served all day.\n"


def _ingest(settings) -> None:
    components = build_components(settings)
    try:
        assert not ingest_files(components, [(STORED, MENU)]).errors
    finally:
        components.close()


def _args(tmp_path) -> dict[str, list[str]]:
    qset = tmp_path / "set.jsonl"
    qset.write_text('{"question": "When is espresso served?", "gold": [{"source": "café.md"}]}\n', encoding="utf-8")
    return {
        "ask": ["when is espresso served"], "search": ["espresso"], "docs": [], "delete": [STORED], "optimize": [],
        "track": ["espresso", "--chunk", "abc"], "eval": [str(qset)], "gen-set": ["--template", str(tmp_path / "o")],
        "tune": [str(qset), "--vary", "fusion"], "settings": ["--reset"],
    }  # fmt: skip


def _collection_commands() -> list[str]:
    """Every command with a --collection option, except ingest (which creates the collection it names)."""
    return sorted(
        name for name, command in main.commands.items()
        if name != "ingest" and any("--collection" in p.opts for p in command.params)
    )  # fmt: skip


@pytest.mark.parametrize("command", _collection_commands())
def test_every_command_refuses_an_unknown_collection_with_did_you_mean(command, tmp_path):
    args = _args(tmp_path)
    assert command in args, f"add `ragscope {command}` to this test"
    result = CliRunner().invoke(main, [command, *args[command], "--collection", "docz"])
    assert result.exit_code == 1, result.output
    assert "collection 'docz' does not exist. Did you mean 'docs'?" in result.output, result.output
    assert "Traceback" not in result.output


def test_eval_list_runs_refuses_an_unknown_collection_too():
    result = CliRunner().invoke(main, ["eval", "--list-runs", "--collection", "docz"])
    assert result.exit_code == 1 and "Did you mean 'docs'?" in result.output, result.output


def test_tune_refuses_a_set_whose_gold_names_nothing_in_the_collection(settings, tmp_path):
    _ingest(settings)
    qset = tmp_path / "elsewhere.jsonl"
    qset.write_text(
        '{"id": "a", "question": "When is espresso served?", "gold": [{"source": "menu.md", "heading": "Coffee"}]}\n'
        '{"id": "b", "question": "Is tea served?", "gold": [{"source": "café.md", "heading": "Dinner"}]}\n',
        encoding="utf-8",
    )
    result = CliRunner().invoke(main, ["tune", str(qset), "--vary", "fusion", "--budget", "2"])
    assert result.exit_code == 1, result.output
    assert "no question of set 'elsewhere' can be scored on collection 'docs'" in result.output, result.output
    assert "a: document 'menu.md' is not in the collection" in result.output  # each invalid gold, as eval lists it
    assert "b: " in result.output
    listed = CliRunner().invoke(main, ["tune", "--list", "--json"])
    assert json.loads(listed.stdout) == []  # nothing was stored to resume


def test_gen_set_template_accepts_a_stored_name_typed_decomposed(settings, tmp_path):
    _ingest(settings)
    typed = unicodedata.normalize("NFD", STORED)
    assert typed != STORED
    out = tmp_path / "template.jsonl"
    result = CliRunner().invoke(main, ["gen-set", "--template", str(out), "--source", typed])
    assert result.exit_code == 0, result.output
    written = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    golds = [g for line in written for g in line.get("gold", [])]
    assert golds and {g["source"] for g in golds} == {STORED}


@pytest.mark.parametrize("password", ["se#cret", "se/cret", "se?cret", "p#a/s?s@word"])
@pytest.mark.parametrize("command", [["search", "espresso"], ["doctor"]])
def test_a_qdrant_password_with_url_delimiters_never_reaches_the_error(password, command, monkeypatch):
    monkeypatch.setenv("QDRANT_URL", f"http://admin:{password}@127.0.0.1:1")
    result = CliRunner().invoke(main, command)
    assert result.exit_code == 1, result.output
    assert "could not connect to Qdrant at http://***@127.0.0.1:1" in result.output, result.output
    for piece in (password, "admin", "cret", "word"):
        assert piece not in result.output, result.output
