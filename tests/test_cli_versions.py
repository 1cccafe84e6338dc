"""`ragscope versions take|list|restore|diff` (CliRunner, real models and store) on the set made to move
(tests/versions_corpus.py): what each prints, and that a restore and a diff change what they say they change."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest
from click.testing import CliRunner
from versions_corpus import FIXED, QSET, SOURCE, V2, V3, page

from rag.cli import main
from rag.settings.collection_settings import save_collection_settings


def _run(*args: str):
    result = CliRunner().invoke(main, list(args))
    return result


def _ok(*args: str):
    result = _run(*args)
    assert result.exit_code == 0, result.output
    return result


@pytest.fixture
def moving(tmp_path: Path, settings) -> Path:
    """v2 and v3 of the help page taken through the CLI; the question set's path."""
    save_collection_settings(settings.data_dir, settings.collection, {"final_k": 1})
    for notes, name in ((V2, "v2"), (V3, "v3")):
        (tmp_path / SOURCE).write_bytes(page(notes))
        _ok("ingest", str(tmp_path / SOURCE))
        taken = _ok("versions", "take", name)
        assert taken.stdout.startswith(f"version {name} of docs: 6 chunks in 1 document, ")
    qset = tmp_path / "moving.jsonl"
    qset.write_text(QSET)
    return qset


def test_take_list_and_restore_through_the_cli(moving):
    listed = json.loads(_ok("versions", "list", "--json").stdout)
    assert [v["name"] for v in listed] == ["v3", "v2"]
    assert all(v["chunks"] == 6 and v["size_bytes"] > 0 and v["settings"] == {"final_k": 1} for v in listed)
    lines = _ok("versions", "list").stdout.splitlines()
    assert [line.split("\t")[0] for line in lines] == ["v3", "v2"] and "6 chunks\t1 documents" in lines[0]

    restored = _ok("versions", "restore", "v2")
    assert restored.stdout.startswith("restored v2: 6 chunks; the collection as it was is version before-restore-")
    texts = {c["text"] for c in json.loads(_ok("search", "--json", "--all", "cat").stdout)["results"]}
    assert V2[0] in texts and V3[0] not in texts
    assert [v["name"] for v in json.loads(_ok("versions", "list", "--json").stdout)][0].startswith("before-restore-")

    missing = _run("versions", "restore", "v9")
    assert missing.exit_code == 1 and "has no version 'v9'; its versions: before-restore-" in missing.output


def test_diff_prints_the_headline_and_an_inspector_link_on_both_versions(moving):
    out = _ok("versions", "diff", "v2", "v3", "--set", str(moving)).stdout.splitlines()
    assert out[0] == "v3 against v2: 4 questions fixed, 1 broke"
    fixed = [line.split("\t")[1] for line in out if line.startswith("  fixed\t")]
    broke = [line.split("\t")[1] for line in out if line.startswith("  broke\t")]
    assert set(fixed) == FIXED and broke == ["api"]
    links = [line.split(": ", 1) for line in out if line.startswith("    ")]
    assert len(links) == 2 * 5 and {v.strip() for v, _ in links} == {"v2", "v3"}
    first = {k: v[0] for k, v in parse_qs(urlparse(links[0][1]).query).items()}
    assert urlparse(links[0][1]).path == "inspector" and first["collection"] == "docs--v2" and first["k"] == "1"
    as_json = json.loads(_ok("versions", "diff", "v2", "v3", "--set", str(moving), "--json").stdout)
    assert (set(as_json["fixed"]), as_json["broke"]) == (FIXED, ["api"])
    # The versions' own collections stay, so the links open.
    names = {c["name"] for c in json.loads(_ok("collections", "--json").stdout)}
    assert {"docs", "docs--v2", "docs--v3"} <= names


def test_delete_drops_only_that_version_and_refuses_an_unknown_name(moving, settings):
    deleted = _ok("versions", "delete", "v3")
    assert deleted.stdout.startswith("deleted version v3 of docs: ") and deleted.stdout.rstrip().endswith("freed")
    assert [v["name"] for v in json.loads(_ok("versions", "list", "--json").stdout)] == ["v2"]
    folder = settings.data_dir / "versions" / "docs"
    assert sorted(p.name for p in folder.iterdir()) == ["current.json", "v2"]  # nothing left aside
    texts = {c["text"] for c in json.loads(_ok("search", "--json", "--all", "refund").stdout)["results"]}
    assert V3[0] in texts  # the collection is as it was: v3's chunks

    missing = _run("versions", "delete", "v20")
    assert missing.exit_code == 1
    assert "has no version 'v20'; its versions: v2. Did you mean 'v2'?" in missing.output
    assert [v["name"] for v in json.loads(_ok("versions", "list", "--json").stdout)] == ["v2"]
