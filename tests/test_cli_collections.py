"""`ragscope collections` and `--collection` on every command that reads or writes one (CliRunner, real models and store)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from rag.cli import main

GUIDE = b"# Ferry guide\n\n## Tickets\n\nA single ticket costs four euros.\n\n## Timetable\n\nThe first ferry leaves at seven.\n"
PRICES = b"# Prices\n\nA day pass costs ten euros.\n"
COMMANDS = ("ingest", "docs", "delete", "search", "ask", "eval", "optimize")


def _run(*args: str, env: dict[str, str] | None = None):
    result = CliRunner().invoke(main, list(args), env=env)
    return result


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_on_a_collection_takes_the_same_option(command):
    help_text = _run(command, "--help").stdout
    assert "--collection NAME" in help_text and "RAGSCOPE_COLLECTION" in help_text


def test_collections_are_kept_apart_and_listed(tmp_path: Path):
    (tmp_path / "guide.md").write_bytes(GUIDE)
    (tmp_path / "prices.md").write_bytes(PRICES)
    assert _run("ingest", str(tmp_path / "guide.md")).exit_code == 0
    made = _run("ingest", "--collection", "prices", str(tmp_path / "prices.md"), env={"RAGSCOPE_DENSE_RUNTIME": "onnx-int8"})
    assert made.exit_code == 0, made.output

    def sources(*args: str) -> set[str]:
        result = _run("docs", "--json", *args)
        assert result.exit_code == 0, result.output
        return {d["source"] for d in json.loads(result.stdout)}

    assert sources() == {"guide.md"} and sources("--collection", "prices") == {"prices.md"}
    hits = json.loads(_run("search", "--json", "--collection", "prices", "day pass price").stdout)["results"]
    assert {h["source"] for h in hits} == {"prices.md"}

    listed = _run("collections", "--json")
    assert listed.exit_code == 0, listed.output
    rows = {r["name"]: r for r in json.loads(listed.stdout)}
    assert set(rows) == {"docs", "prices"}
    assert (rows["docs"]["default"], rows["docs"]["chunks"], rows["docs"]["documents"]) == (True, 2, 1)
    assert (rows["prices"]["default"], rows["prices"]["chunks"], rows["prices"]["sentence_vectors"]) == (False, 1, True)
    assert rows["prices"]["dense_model"] == "all-MiniLM-L6-v2" and rows["prices"]["sparse_model"] == "Qdrant/bm25"
    assert (rows["docs"]["dense_runtime"], rows["prices"]["dense_runtime"]) == ("onnx", "onnx-int8")  # each keeps the space it was made in
    plain = _run("collections").stdout.splitlines()
    assert plain[0].startswith("* docs\t1 documents\t2 chunks") and plain[1].startswith("  prices\t1 documents")
    assert "dense all-MiniLM-L6-v2 (onnx-int8)" in plain[1]

    gone = _run("delete", "--collection", "prices", "guide.md")  # guide.md lives in docs, not in prices
    assert gone.exit_code == 1 and "no document named 'guide.md'" in gone.stderr
    assert sources() == {"guide.md"}


def test_a_fresh_data_dir_lists_the_default_collection_as_empty():
    result = _run("collections", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == [
        {"name": "docs", "dense_model": None, "dense_runtime": None, "sparse_model": None, "sentence_vectors": None, "dense_vectors": [], "chunks": 0, "documents": 0, "error": None, "default": True,
         "layout": None, "cluster": {"peer": None, "shard_count": None, "replicas": [], "transfers": 0, "reported": False,
                                     "why": "the embedded engine does not report cluster status: it is one shard in this process"}}
    ]
