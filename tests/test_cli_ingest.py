"""`ragscope ingest`, `docs` and `delete` through click's CliRunner, on the real models and store.

Each test runs in its own data dir (RAGSCOPE_DATA_DIR from conftest); results are checked through
the CLI's own output and by opening the store afterwards.
"""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from rag.cli import main
from rag.components import build_components
from rag.settings.config import Settings
from rag.catalog.documents import list_documents

GUIDE = b"# Ferry guide\n\n## Tickets\n\nA single ticket costs four euros.\n\n## Timetable\n\nThe first ferry leaves at seven.\n"
PRICES = b"# Prices\n\nA day pass costs ten euros.\n"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    (root / "billing").mkdir(parents=True)
    (root / "guide.md").write_bytes(GUIDE)
    (root / "billing" / "prices.md").write_bytes(PRICES)
    (root / "notes.txt").write_bytes(b"Plain notes about the ferry.")
    (root / "logo.png").write_bytes(b"\x89PNG\r\n")  # not a supported type: not picked up from a folder
    return root


def _run(*args: str):
    return CliRunner().invoke(main, list(args))


def _docs() -> dict[str, dict]:
    result = _run("docs", "--json")
    assert result.exit_code == 0, result.output
    return {d["source"]: d for d in json.loads(result.stdout)}


def test_ingest_folder_prints_summary_on_stdout_and_reingest_is_unchanged(folder):
    first = _run("ingest", str(folder))
    assert first.exit_code == 0, first.output
    assert first.stdout == "3 documents, 4 chunks written, 0 unchanged, 0 errors\n"  # the result; progress goes to stderr
    assert "ingest: 3/3 file" in first.stderr  # stderr is no terminal here: progress as lines
    docs = _docs()
    assert set(docs) == {"guide.md", "billing/prices.md", "notes.txt"}
    assert docs["guide.md"]["chunks"] == 2 and docs["guide.md"]["size_bytes"] == len(GUIDE)

    again = _run("ingest", str(folder))
    assert again.exit_code == 0
    assert "3 documents, 0 chunks written, 4 unchanged, 0 errors" in again.stdout


def test_docs_plain_listing(folder):
    assert _run("ingest", str(folder), "--tags", "ferry, help").exit_code == 0
    result = _run("docs")
    assert result.exit_code == 0
    lines = sorted(result.stdout.splitlines())
    assert len(lines) == 3
    assert lines[1].split("\t")[:4] == ["guide.md", "2 chunks", f"{len(GUIDE)} B", "ferry,help"]


def test_docs_says_whether_sentence_vectors_are_stored(folder, monkeypatch):
    assert _run("ingest", str(folder)).exit_code == 0
    assert _run("docs").stderr.startswith("Sentence vectors: stored")
    monkeypatch.setenv("RAGSCOPE_SENTENCE_VECTORS", "0")  # decides for new collections only
    assert _run("ingest", str(folder), "--collection", "plain").exit_code == 0
    assert "not stored in this collection" in _run("docs", "--collection", "plain").stderr
    assert _run("docs").stderr.startswith("Sentence vectors: stored")
    monkeypatch.setenv("RAGSCOPE_SENTENCE_VECTORS", "maybe")
    bad = _run("docs")
    assert bad.exit_code != 0 and "RAGSCOPE_SENTENCE_VECTORS must be 1 or 0 (true/false, yes/no and on/off work too); got 'maybe'" in bad.output


def test_strategy_size_and_tags_options(folder):
    result = _run("ingest", str(folder / "guide.md"), "--strategy", "fixed", "--size", "50", "--overlap", "0", "--tags", "b,a,,a")
    assert result.exit_code == 0, result.output
    docs = _docs()
    assert docs["guide.md"]["tags"] == ["a", "b"]
    assert docs["guide.md"]["chunks"] > 2  # 50-char windows instead of one chunk per section


def test_a_failing_file_exits_nonzero_and_the_others_still_go_in(folder):
    (folder / "empty.md").write_bytes(b"")
    (folder / "broken.pdf").write_bytes(b"%PDF-1.4 not really")
    result = _run("ingest", str(folder))
    assert result.exit_code == 1
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert any(line.startswith("error: empty.md: the file is empty") for line in errors)
    assert any(line.startswith("error: broken.pdf: could not read this PDF") for line in errors)
    assert "3 documents, 4 chunks written, 0 unchanged, 2 errors" in result.stdout
    assert set(_docs()) == {"guide.md", "billing/prices.md", "notes.txt"}


def test_zip_archive_is_expanded(tmp_path):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("site/guide.md", GUIDE)
        z.writestr("site/billing/prices.md", PRICES)
        z.writestr("site/logo.png", b"\x89PNG")
    (tmp_path / "site.zip").write_bytes(buf.getvalue())
    (tmp_path / "bomb.zip").write_bytes(_bomb())
    result = _run("ingest", str(tmp_path / "site.zip"), str(tmp_path / "bomb.zip"))
    assert result.exit_code == 1  # the bomb failed; the site went in
    assert "site.zip: skipped 'site/logo.png': unsupported file type .png" in result.stderr
    assert "error: bomb.zip:" in result.stderr and "zip bomb" in result.stderr
    assert set(_docs()) == {"guide.md", "billing/prices.md"}


def _bomb() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("big.md", b"a" * 20_000_000)
    return buf.getvalue()


def test_delete_removes_a_document_and_unknown_names_fail(folder):
    assert _run("ingest", str(folder)).exit_code == 0
    result = _run("delete", "guide.md")
    assert result.exit_code == 0
    assert "deleted guide.md (2 chunks)" in result.stdout
    assert set(_docs()) == {"billing/prices.md", "notes.txt"}
    missing = _run("delete", "guide.md")
    assert missing.exit_code == 1
    assert "no document named 'guide.md'" in missing.stderr


def test_bad_options_and_empty_folders_are_explained(folder, tmp_path):
    bad = _run("ingest", str(folder), "--size", "10")
    assert bad.exit_code == 1 and "chunk size (size) must be a whole number from 50 to 100000; got 10" in bad.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    none = _run("ingest", str(empty))
    assert none.exit_code == 1 and "no supported files found" in none.stderr
    assert _run("ingest", str(tmp_path / "missing")).exit_code == 2  # click: path does not exist


def test_collection_option_keeps_collections_apart(folder):
    assert _run("ingest", str(folder / "guide.md"), "--collection", "other").exit_code == 0
    assert _docs() == {}
    listed = _run("docs", "--json", "--collection", "other")
    assert [d["source"] for d in json.loads(listed.stdout)] == ["guide.md"]


def test_ingest_works_while_the_app_holds_the_data_dir(folder):
    app = build_components(Settings.from_env())  # stands in for a running app holding the data dir
    try:
        assert app.store.count() == 0
        result = _run("ingest", str(folder))  # takes its turns on the shard with the app's (rag/store/lease.py)
        assert result.exit_code == 0, result.output
        assert len(list_documents(app)) == 3  # the holder sees what the CLI wrote, and still works
        app.ensure_collection()
    finally:
        app.close()
    components = build_components(Settings.from_env())
    try:
        assert len(list_documents(components)) == 3
    finally:
        components.close()


def test_folder_ingest_expands_archives_skips_hidden_and_tool_folders_and_reports_every_skip(folder):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("manuals/boats.md", b"# Boats\n\nThe big boat seats forty.\n")
        z.writestr("manuals/logo.png", b"\x89PNG")
    (folder / "billing" / "manuals.zip").write_bytes(buf.getvalue())
    hidden = {
        ".git/notes.md": b"# Notes\n\nInternal.\n",
        ".hg/store.md": b"# Store\n",
        ".svn/x.md": b"# X\n",
        ".obsidian/workspace.md": b"# W\n",
        "billing/.drafts/secret.md": b"# Draft\n",
        "__pycache__/cache.md": b"# C\n",
        "node_modules/pkg/readme.md": b"# Readme\n",
        ".md": b"# Dotfile\n",
        ".env.md": b"# Env\n",
    }
    for rel, data in hidden.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_bytes(data)
    (folder / "alias.md").symlink_to(folder / "guide.md")

    result = _run("ingest", str(folder), "--json")
    assert result.exit_code == 0, result.output
    assert set(_docs()) == {"guide.md", "billing/prices.md", "notes.txt", "billing/boats.md"}
    report = json.loads(result.stdout)
    skipped = {Path(s["path"]).relative_to(folder).as_posix() if s["path"].startswith(str(folder)) else s["path"]: s["reason"] for s in report["skipped"]}
    for top in (".git", ".hg", ".svn", ".obsidian", "billing/.drafts", ".md", ".env.md"):
        assert "hidden" in skipped[top], top
    assert "tool or package folder" in skipped["__pycache__"] and "tool or package folder" in skipped["node_modules"]
    assert "symbolic link" in skipped["alias.md"] and "unsupported file type .png" in skipped["logo.png"]
    assert "unsupported file type .png" in skipped["billing/manuals.zip"]  # the archive's own skipped entry
    assert not any("notes.md" in p or "readme.md" in p for p in skipped)  # folders are reported once, not walked
    # The same report, one line each, on stderr.
    assert f"skipped {folder / '.git'}/: hidden" in result.stderr and f"skipped {folder / 'logo.png'}: unsupported" in result.stderr
    assert {r["source"] for r in report["files"]} == {"guide.md", "billing/prices.md", "notes.txt", "billing/boats.md"}


def test_folder_ingest_leaves_out_virtual_environments_and_its_own_data_dir(folder, monkeypatch):
    """`ragscope ingest .` in a project folder: a venv's licences and READMEs and the app's own ./data are
    not the user's documents, and neither is walked (each is reported once, as a folder)."""
    site = folder / "venv" / "lib" / "python3.11" / "site-packages"
    (site / "pkg-1.0.dist-info").mkdir(parents=True)
    (folder / "venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (site / "pkg-1.0.dist-info" / "LICENSE.md").write_bytes(b"# MIT License\n\nPermission is hereby granted.\n")
    (site / "pkg-1.0.dist-info" / "top_level.txt").write_bytes(b"pkg\n")
    (folder / "env" / "conda-meta").mkdir(parents=True)  # a conda environment has no pyvenv.cfg
    (folder / "env" / "share" / "doc").mkdir(parents=True)
    (folder / "env" / "share" / "doc" / "README.md").write_bytes(b"# Conda package docs\n")
    (folder / "system" / "dist-packages" / "tool").mkdir(parents=True)  # a distribution's packages, no pyvenv.cfg
    (folder / "system" / "dist-packages" / "tool" / "README.md").write_bytes(b"# Tool\n")
    data = folder / "data"
    monkeypatch.setenv("RAGSCOPE_DATA_DIR", str(data))
    assert _run("ingest", str(folder / "guide.md")).exit_code == 0  # the data dir now holds a collection
    (data / "notes.md").write_bytes(b"# Not a document\n")  # whatever lies there, it is not walked

    result = _run("ingest", str(folder), "--json")
    assert result.exit_code == 0, result.output
    assert set(_docs()) == {"guide.md", "billing/prices.md", "notes.txt"}
    skipped = {Path(s["path"]).relative_to(folder).as_posix(): s["reason"] for s in json.loads(result.stdout)["skipped"]}
    assert "virtual environment" in skipped["venv"] and "virtual environment" in skipped["env"]
    assert "tool or package folder" in skipped["system/dist-packages"]
    assert "own data folder" in skipped["data"]
    assert not any(p.startswith(("venv/", "env/", "data/", "system/dist-packages/")) for p in skipped)  # reported once, not walked
