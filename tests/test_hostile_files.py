"""Inputs that are not plain documents, and file names that clean alike across separate ingests.

Issue 28: a FIFO named on the command line or sitting in a folder blocked `ragscope ingest` forever;
/dev/zero (or a `.md` symlink to it) was read whole into a MemoryError; zip members were read in
64 kB steps past their cap. And two different files whose names clean to one stored name, ingested
by separate commands, silently ended as one document: the second replaced the first.

Every CLI run that could hang or exhaust memory on a regression runs in a child process with a
timeout (and, for the endless devices, a memory limit), so a regression fails instead of stalling
the suite or the machine.
"""

from __future__ import annotations

import io
import json
import os
import resource
import socket
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from streamlit.testing.v1 import AppTest

from apptest_pages import APP
from rag.cli import main
from rag.components import build_components
from rag.errors import LoaderError
from rag.ingest.loaders.archive import ArchiveLimits, expand_zip
from rag.ingest.loaders.names import original_name
from rag.ingest.pipeline import ingest_files
from rag.ingest.reading import read_regular
from rag.ingest.walk import collect_paths
from rag.settings.config import Settings
from rag.types import ChunkFilter

ROOT = Path(__file__).resolve().parent.parent
A = b"# Guide A\n\nTeam A sails on Mondays.\n"
B = b"# Guide B\n\nTeam B sails on Fridays.\n"
GOOD = b"# Good\n\nThe ferry leaves at nine.\n"
LONG, LONG_TOO = "c" * 246 + ".md", "c" * 230 + ".md"  # both clean to "c" * 197 + ".md"


def _cli(*args: str, timeout: float = 180, memory_gb: int | None = None) -> subprocess.CompletedProcess:
    """`ragscope` in a child process (the test's data dir is in the environment), killed after `timeout`."""

    def limit_memory() -> None:
        if memory_gb:
            resource.setrlimit(resource.RLIMIT_AS, (memory_gb << 30, memory_gb << 30))

    return subprocess.run(
        [sys.executable, "-m", "rag", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        preexec_fn=limit_memory,
    )


def _texts(components) -> dict[str, str]:
    out: dict[str, str] = {}
    for r in components.store.records(ChunkFilter(include_quarantined=True)):
        out[r.chunk.source] = out.get(r.chunk.source, "") + r.chunk.text
    return out


# --- only regular files are read ---------------------------------------------------------------


def test_fifos_are_skipped_in_a_folder_and_refused_by_name_and_the_other_files_go_in(tmp_path: Path):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "good.md").write_bytes(GOOD)
    os.mkfifo(folder / "pipe.md")
    os.mkfifo(tmp_path / "named.md")
    run = _cli("ingest", str(folder), str(tmp_path / "named.md"), "--json")
    assert run.returncode == 1, run.stderr  # the named FIFO is an error
    out = json.loads(run.stdout)
    assert {f["source"]: f["status"] for f in out["files"]} == {"good.md": "added", "named.md": "error"}
    (refused,) = [f for f in out["files"] if f["status"] == "error"]
    assert refused["error"] == "named.md: not read: a named pipe (FIFO), not a regular file"
    assert {"path": str(folder / "pipe.md"), "reason": "a named pipe (FIFO), not a regular file (not read)"} in out[
        "skipped"
    ]
    assert "Traceback" not in run.stderr


def test_dev_zero_and_a_symlink_to_it_are_refused_without_reading_them(tmp_path: Path):
    (tmp_path / "zero.md").symlink_to("/dev/zero")
    for target in ("/dev/zero", str(tmp_path / "zero.md")):
        run = _cli("ingest", target, timeout=60, memory_gb=4)
        assert run.returncode == 1, run.stderr
        name = Path(target).name
        assert f"error: {name}: not read: a character device, not a regular file" in run.stderr
        assert "Traceback" not in run.stderr and "MemoryError" not in run.stderr


def test_the_folder_walk_names_each_kind_of_special_file(tmp_path: Path):
    os.mkfifo(tmp_path / "pipe.md")
    (tmp_path / "ok.md").write_bytes(GOOD)
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(tmp_path / "s.md"))
    except OSError:  # a path too long for a socket address; the FIFO still shows the rule
        pass
    try:
        collected = collect_paths([tmp_path])
    finally:
        sock.close()
    assert [name for name, _ in collected.files] == ["ok.md"]
    reasons = dict(collected.skipped)
    assert reasons[str(tmp_path / "pipe.md")] == "a named pipe (FIFO), not a regular file (not read)"
    if (tmp_path / "s.md").exists():
        assert reasons[str(tmp_path / "s.md")] == "a socket, not a regular file (not read)"


def test_a_read_stops_one_byte_past_the_limit(tmp_path: Path):
    big = tmp_path / "big.md"
    big.write_bytes(b"x" * 3_000_000)
    with pytest.raises(LoaderError, match=r"big.md: over the 1.0 MiB limit per file \(RAGSCOPE_MAX_UPLOAD_MB\)"):
        read_regular(big, "big.md", 1_000_000)
    assert read_regular(big, "big.md", 3_000_000) == b"x" * 3_000_000


def test_the_cli_refuses_a_file_over_the_limit_by_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("RAGSCOPE_MAX_UPLOAD_MB", "1")
    (tmp_path / "big.md").write_bytes(b"# Big\n\n" + b"ferry " * 400_000)
    result = CliRunner().invoke(main, ["ingest", str(tmp_path / "big.md")])
    assert result.exit_code == 1
    assert "error: big.md: over the 1.0 MiB limit per file (RAGSCOPE_MAX_UPLOAD_MB); not read further" in result.stderr


def _zip(entries: list[tuple[str, bytes]]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in entries:
            z.writestr(name, data)
    return buf.getvalue()


def test_a_zip_member_is_read_through_its_stream_no_further_than_its_cap(monkeypatch: pytest.MonkeyPatch):
    data = _zip([("docs/big.md", os.urandom(1_000_000)), ("docs/ok.md", GOOD)])  # random: no zip-bomb ratio
    read: dict[str, int] = {}
    real_read = zipfile.ZipExtFile.read

    def counting(self, n=-1):  # noqa: ANN001, ANN202 - zipfile's own signature
        chunk = real_read(self, n)
        read[self.name] = read.get(self.name, 0) + len(chunk)
        return chunk

    monkeypatch.setattr(zipfile.ZipExtFile, "read", counting)
    archive = expand_zip("site.zip", data, ArchiveLimits(max_file_bytes=100_000))
    assert [n for n, _ in archive.files] == ["ok.md"]
    assert any("big.md" in m for m in archive.skipped)
    assert read["docs/big.md"] == 100_001


def test_a_zip_member_whose_header_lies_about_its_size_is_refused():
    data = bytearray(_zip([("docs/a.md", b"# A\n\n" + b"ferry " * 50_000)]))
    central = data.index(b"PK\x01\x02")
    data[central + 24 : central + 28] = (10).to_bytes(4, "little")  # "10 bytes uncompressed"
    with pytest.raises(LoaderError, match="could not be read"):
        expand_zip("liar.zip", bytes(data))


# --- a stored name is an identity ---------------------------------------------------------------


def test_original_names_are_told_apart_where_stored_names_are_not():
    assert original_name("new\nline.md") == "new\\nline.md" != original_name("newline.md")
    assert original_name(LONG) != original_name(LONG_TOO)
    assert original_name("a\\b.md") == original_name("a/b.md") == original_name("./x/../a/b.md")
    huge = original_name("d" * 5000 + ".md")
    assert len(huge) <= 1000 and huge != original_name("d" * 4999 + ".md")


def test_cli_a_second_file_cleaning_to_a_stored_name_is_refused_with_both_names(tmp_path: Path):
    (tmp_path / "one").mkdir()
    (tmp_path / "one" / "new\nline.md").write_bytes(A)
    (tmp_path / "newline.md").write_bytes(B)
    run = CliRunner().invoke
    assert run(main, ["ingest", str(tmp_path / "one")]).exit_code == 0
    second = run(main, ["ingest", str(tmp_path / "newline.md")])
    assert second.exit_code == 1
    assert (
        "error: newline.md: not ingested: the file 'newline.md' would be stored as the document 'newline.md', "
        "which holds the file 'new\\nline.md'; this one would replace it" in second.stderr
    )
    # The first file's text is still there, and the same original still replaces its document.
    components = build_components(Settings.from_env())
    try:
        assert _texts(components) == {"newline.md": "Team A sails on Mondays."}
    finally:
        components.close()
    (tmp_path / "one" / "new\nline.md").write_bytes(A.replace(b"Mondays", b"Tuesdays"))
    again = run(main, ["ingest", str(tmp_path / "one")])
    assert again.exit_code == 0 and "1 documents, 1 chunks written" in again.stdout


def test_engine_truncated_names_in_separate_ingests_keep_the_first(components):
    assert ingest_files(components, [(LONG, A)]).files[0].status == "added"
    (refused,) = ingest_files(components, [(LONG_TOO, B)]).files
    assert refused.status == "error" and f"'{LONG_TOO}'" in refused.error and f"'{LONG}'" in refused.error
    assert _texts(components) == {"c" * 197 + ".md": "Team A sails on Mondays."}
    # Identical bytes under the other name are refused too: it is another file, not a re-ingest.
    assert ingest_files(components, [(LONG_TOO, A)]).files[0].status == "error"
    assert ingest_files(components, [(LONG, B)]).files[0].status == "updated"


def test_documents_stored_before_originals_were_recorded_are_replaced_then_guarded(components):
    assert not ingest_files(components, [("guide.md", A)]).errors
    components.store.set_source_payload("guide.md", {"original_name": None})  # as stored by an older version
    (replaced,) = ingest_files(components, [("guide\x07.md", B)]).files  # unknown original: replaced, as before
    assert replaced.status == "updated"
    assert _texts(components) == {"guide.md": "Team B sails on Fridays."}
    assert ingest_files(components, [("guide.md", A)]).files[0].status == "error"  # now its original is known
    (record,) = components.store.records(ChunkFilter(sources=("guide.md",)))
    assert record.payload["original_name"] == "guide\\x07.md"


def test_an_unchanged_legacy_document_gets_its_original_recorded(components):
    assert not ingest_files(components, [("guide.md", A)]).errors
    components.store.set_source_payload("guide.md", {"original_name": None})
    (again,) = ingest_files(components, [("guide.md", A)]).files
    assert again.status == "updated" and again.written == 0
    assert ingest_files(components, [("guide.md", A)]).files[0].status == "unchanged"
    assert ingest_files(components, [("guide\x00.md", A)]).files[0].status == "error"


def test_page_upload_cleaning_to_a_stored_name_is_refused_and_the_stored_text_kept(settings):
    seeded = build_components(settings)
    assert not ingest_files(seeded, [(LONG, A)]).errors
    seeded.close()
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    (uploader,) = [u for u in at.file_uploader if u.key.startswith("documents_upload_")]
    uploader.set_value([(LONG_TOO, B, "text/markdown")])
    at.run()
    at.button(key="documents_ingest").click().run()
    assert not at.exception, at.exception
    shown = [w.value.replace("\\", "") for w in at.warning]  # the page escapes Markdown in file names
    assert any("1 error" in w and LONG_TOO in w and LONG in w and "would replace it" in w for w in shown), shown
    from ui import setup as ui_setup

    engine = ui_setup.get_components(ui_setup.get_settings())
    assert _texts(engine) == {"c" * 197 + ".md": "Team A sails on Mondays."}
