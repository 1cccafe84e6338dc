"""Two inputs that would be stored as one document are refused together, naming both; none replaces another.

A document's identity is its source name (its path inside the folder given, or the name uploaded).
Inputs that map to one name (the same name from two folders, in one upload, inside one zip, or
names that only differ in what sanitising removes) would silently end as one document. The same
file reached twice, though, is one document and is ingested once.
"""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from rag.ingest.loaders.archive import expand_zip
from rag.cli import main
from rag.ingest.pipeline import ingest_files

A = b"# Guide A\n\nTeam A sails on Mondays.\n"
B = b"# Guide B\n\nTeam B sails on Fridays.\n"
OTHER = b"# Other\n\nThe harbour opens at six.\n"


def _zip(entries: list[tuple[str, bytes]]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in entries:
            z.writestr(name, data)
    return buf.getvalue()


def _run(*args: str):
    return CliRunner().invoke(main, list(args))


def _docs() -> set[str]:
    result = _run("docs", "--json")
    assert result.exit_code == 0, result.output
    return {d["source"] for d in json.loads(result.stdout)}


@pytest.mark.parametrize(
    "first,second",
    [
        ("guide.md", "guide.md"),  # the same name twice (two folders' files uploaded together)
        ("a\\b.md", "a/b.md"),  # alike once separators are normalised
        ("x/../guide.md", "guide.md"),  # alike once `..` is removed
        ("c" * 250 + ".md", "c" * 240 + ".md"),  # alike once cut to the longest source name
    ],
    ids=["same", "separators", "dotdot", "truncated"],
)
def test_upload_of_files_that_would_be_one_document_refuses_both(components, first, second):
    summary = ingest_files(components, [(first, A), ("other.md", OTHER), (second, B)])
    assert [f.status for f in summary.files] == ["error", "added", "error"]
    for failed in summary.errors:
        assert "file 1" in failed.error and "file 3" in failed.error and "would all be stored as the document" in failed.error
    assert set(components.store.sources()) == {"other.md"}


def test_the_same_bytes_under_one_name_twice_are_refused_too(components):
    summary = ingest_files(components, [("guide.md", A), ("guide.md", A)])
    assert summary.documents == 0 and len(summary.errors) == 2
    assert components.store.sources() == {}


def test_a_zip_holding_two_entries_of_one_name_refuses_both(components):
    archive = expand_zip("site.zip", _zip([("a\\guide.md", A), ("a/guide.md", B), ("a/other.md", OTHER)]))
    summary = ingest_files(components, list(archive.files))
    assert [f.status for f in summary.files] == ["error", "error", "added"]
    assert set(components.store.sources()) == {"other.md"}


def test_cli_two_folders_with_one_file_name_are_refused_naming_both_paths(tmp_path: Path):
    for team, body in (("teamA", A), ("teamB", B)):
        (tmp_path / team).mkdir()
        (tmp_path / team / "guide.md").write_bytes(body)
    (tmp_path / "teamA" / "other.md").write_bytes(OTHER)
    result = _run("ingest", str(tmp_path / "teamA"), str(tmp_path / "teamB"))
    assert result.exit_code == 1
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 2
    for line in errors:
        assert str(tmp_path / "teamA" / "guide.md") in line and str(tmp_path / "teamB" / "guide.md") in line
    assert "1 documents, 1 chunks written, 0 unchanged, 2 errors" in result.stdout
    assert _docs() == {"other.md"}
    # Their common parent keeps both apart.
    assert _run("ingest", str(tmp_path / "teamA"), str(tmp_path / "teamB")).exit_code == 1
    assert _run("ingest", str(tmp_path)).exit_code == 0
    assert _docs() == {"other.md", "teamA/guide.md", "teamA/other.md", "teamB/guide.md"}


def test_cli_a_zip_entry_and_a_file_of_one_name_are_refused_across_batches(tmp_path: Path, monkeypatch):
    import rag.cli.ingest_inputs

    monkeypatch.setattr(rag.cli.ingest_inputs, "_BATCH_FILES", 1)  # each input in its own ingest call
    (tmp_path / "guide.md").write_bytes(A)
    (tmp_path / "site.zip").write_bytes(_zip([("site/guide.md", B), ("site/other.md", OTHER)]))
    result = _run("ingest", str(tmp_path / "guide.md"), str(tmp_path / "site.zip"))
    assert result.exit_code == 1
    assert f"{tmp_path / 'site.zip'} (guide.md)" in result.stderr and str(tmp_path / "guide.md") in result.stderr
    assert _docs() == {"other.md"}


def test_cli_the_same_file_reached_twice_is_one_document(tmp_path: Path):
    (tmp_path / "docs" / "billing").mkdir(parents=True)
    (tmp_path / "docs" / "guide.md").write_bytes(A)
    (tmp_path / "docs" / "billing" / "prices.md").write_bytes(OTHER)
    twice = _run("ingest", str(tmp_path / "docs" / "guide.md"), str(tmp_path / "docs" / "guide.md"))
    assert twice.exit_code == 0, twice.output
    assert "1 documents, 1 chunks written" in twice.stdout
    inside = _run("ingest", str(tmp_path / "docs"), str(tmp_path / "docs" / "billing" / "prices.md"))
    assert inside.exit_code == 0, inside.output
    assert "2 documents, 1 chunks written, 1 unchanged" in inside.stdout
    assert _docs() == {"guide.md", "billing/prices.md"}  # not also as "prices.md"


def test_names_in_either_unicode_form_are_one_document(components, tmp_path: Path):
    """'café.md' decomposed (as macOS writes it) and composed (as a browser sends it) is one document: a
    re-upload in the other form replaces the stored version, two such files together are refused, and
    gold naming it in either form finds it."""
    import unicodedata

    from rag.catalog.documents import list_documents
    from rag.eval.gold import CollectionIndex, parse_gold

    nfd, nfc = (unicodedata.normalize(form, "café.md") for form in ("NFD", "NFC"))
    assert nfd != nfc
    assert not ingest_files(components, [(nfd, A)]).errors
    assert not ingest_files(components, [(nfc, B)]).errors
    assert [d.source for d in list_documents(components)] == [nfc]
    assert "Team B" in " ".join(r.chunk.text for r in components.store.records())
    together = ingest_files(components, [(nfd, OTHER), (nfc, A)])
    assert len(together.errors) == 2 and all("would all be stored as the document" in e.error for e in together.errors)
    index = CollectionIndex.from_components(components)
    gold = index.resolve(parse_gold([{"source": nfd, "heading": "Guide B"}]))
    assert gold.invalid is None and gold.chunk_ids
