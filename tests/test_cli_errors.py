"""Every `ragscope` command turns a RagError into one clean line and a non-zero exit, never a traceback.

The wrapper sits once on the click group; this test runs each registered command against a Qdrant
URL where nothing listens, so a command added later without an entry here fails the test.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from rag.cli import main
from rag.eval.qsets import sample_question_set_text


def _args(tmp_path: Path) -> dict[str, list[str]]:
    (tmp_path / "guide.md").write_text("# Guide\n\nThe ferry leaves at seven.\n")
    (tmp_path / "set.jsonl").write_text(sample_question_set_text(), encoding="utf-8")
    return {
        "ingest": [str(tmp_path / "guide.md")],
        "docs": [],
        "delete": ["guide.md"],
        "optimize": [],
        "search": ["when does the ferry leave"],
        "ask": ["when does the ferry leave"],
        "track": ["when does the ferry leave", "--chunk", "abc"],
        "chunk": ["disable", "6f0e1f55-2d3c-4b8a-9a43-5a1c0b7d2e10"],
        "versions": ["take", "v1"],
        "vectors": ["list"],
        "eval": [str(tmp_path / "set.jsonl")],
        "doctor": [],
        "collections": [],
        "gen-set": ["--template", str(tmp_path / "out.jsonl")],  # the template names the collection's sections
        "tune": [str(tmp_path / "set.jsonl"), "--vary", "fusion"],
        "settings": [],  # on a server, the collection's stored settings are in its metadata collection
    }
NEEDS_NO_STORE: set[str] = set()


def _commands() -> list[str]:
    return sorted(main.commands)


@pytest.mark.parametrize("command", _commands())
def test_unreachable_qdrant_is_one_clean_line_for_every_command(command, tmp_path, monkeypatch):
    monkeypatch.setenv("QDRANT_URL", "http://127.0.0.1:9")  # nothing listens on the discard port
    args = _args(tmp_path)
    assert command in args, f"add `ragscope {command}` to this test"
    result = CliRunner().invoke(main, [command, *args[command]])
    if command in NEEDS_NO_STORE:
        assert result.exit_code == 0 and "Traceback" not in result.output, result.output
        return
    assert result.exit_code == 1, result.output
    assert isinstance(result.exception, SystemExit)  # not an exception escaping click
    assert "Traceback" not in result.output
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error: ")]
    assert len(errors) == 1 and "could not connect to Qdrant at http://127.0.0.1:9" in errors[0], result.stderr
