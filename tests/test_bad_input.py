"""Bad input never costs stored data: each bad file gets its own clear message, the rest still go in.

The corpus is built here, byte by byte, from the cases people actually upload by mistake (or on
purpose): empty and binary files, wrong encodings, broken and encrypted PDFs, fake DOCX files,
oversized files, pathological Markdown, script-laden HTML and hostile file names.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from reportlab.lib.pdfencrypt import StandardEncryption
from reportlab.pdfgen import canvas

from rag.ingest.loaders.archive import ArchiveLimits, expand_zip
from rag.ingest.chunker import chunk_document
from rag.cli import main
from rag.components import build_components
from rag.settings.config import Settings
from rag.errors import ConfigError
from rag.catalog.documents import list_documents
from rag.ingest.pipeline import ingest_files
from rag.ingest.loaders.document import load_document
from rag.ingest.loaders.names import MAX_SOURCE_CHARS
from rag.types import ChunkFilter

LATIN = "Café crème: naïve résumé, façade, déjà vu."
SAFE_BODY = b"# Notes\n\nThe ferry leaves at nine.\n"
# What is already stored before the bad files arrive (small, so each test pays little embedding).
SEED = [
    ("guide/boats.md", b"# Boats\n\n## Sizes\n\nThe big boat seats 40.\n\n## Safety\n\nLife jackets are under the seats.\n"),
    ("prices.md", b"# Prices\n\nA single ticket costs 4 euros. A day pass costs 10 euros.\n"),
]


def _pdf(text: str, encrypt: StandardEncryption | str | None = None) -> bytes:
    buf = io.BytesIO()
    c = canvas.Canvas(buf, encrypt=encrypt)
    c.drawString(72, 720, text)
    c.showPage()
    c.save()
    return buf.getvalue()


def _scripts_html() -> bytes:
    noise = "<script>alert('x'); document.cookie</script><style>body{color:red}</style>" * 200
    return (
        "<html><head><title>Ferry</title><script src='https://evil.example/x.js'></script>"
        f"<style>h2 {{ display:none }}</style></head><body>{noise}<h1>Timetable</h1>"
        f"<p>The ferry leaves at nine.</p>{noise}<noscript>enable js</noscript></body></html>"
    ).encode()


# name -> (bytes, substring every message for it must contain)
REFUSED: dict[str, tuple[bytes, str]] = {
    "empty.md": (b"", "empty"),
    "blank.md": (b" \n\t\r\n   \n", "empty"),
    "image.md": (bytes(range(256)) * 64, "binary"),
    "damaged-utf8.md": ("# Café\n\nNaïve résumé".encode() + b" \xff\xfe broken " + "déjà".encode(), "not valid UTF-8"),
    "locked.pdf": (_pdf("The vault code is 1234.", encrypt=StandardEncryption("secret", ownerPassword="owner")), "encrypted"),
    "truncated.pdf": (_pdf("The ferry leaves at nine.")[:700], "could not read this PDF"),
    "fake.docx": (b"PK\x03\x04 not really a zip archive at all", "not a valid DOCX"),
    "picture.png": (b"\x89PNG\r\n\x1a\n" + bytes(200), "unsupported file type"),
    "..": (SAFE_BODY, "empty once path parts are removed"),
}

# name -> (bytes, expected source, text that must be in the document, text that must not)
ACCEPTED: dict[str, tuple[bytes, str, str, str]] = {
    "utf16.md": (("# Résumé\n\n" + LATIN).encode("utf-16"), "utf16.md", LATIN, "\x00"),
    "utf16-nobom.txt": (("Résumé\n\n" + LATIN).encode("utf-16-le"), "utf16-nobom.txt", LATIN, "\x00"),
    "latin1.md": (("# Résumé\n\n" + LATIN).encode("latin-1"), "latin1.md", LATIN, "Ã"),
    "scripts.html": (_scripts_html(), "scripts.html", "The ferry leaves at nine.", "alert"),
    "../../escape.md": (SAFE_BODY, "escape.md", "ferry", ""),
    "nul\x00name.md": (SAFE_BODY, "nulname.md", "ferry", ""),
    "x" * 5000 + ".md": (SAFE_BODY, "x" * (MAX_SOURCE_CHARS - 3) + ".md", "ferry", ""),
}


@pytest.fixture
def seeded(components):
    """Components with a few documents already stored."""
    summary = ingest_files(components, SEED)
    assert not summary.errors, summary.errors
    return components


def _snapshot(components) -> dict[str, frozenset[str]]:
    """Every document and the exact set of its chunk ids."""
    recs = components.store.records(ChunkFilter(include_quarantined=True))
    out: dict[str, set[str]] = {}
    for r in recs:
        out.setdefault(r.chunk.source, set()).add(r.chunk.id)
    return {k: frozenset(v) for k, v in out.items()}


def _files_outside(root: Path, data_dir: Path) -> set[Path]:
    return {p for p in root.rglob("*") if data_dir not in p.parents and p != data_dir}


@pytest.mark.parametrize("name", list(REFUSED))
def test_loader_refuses_with_a_message_naming_the_problem(name: str):
    data, reason = REFUSED[name]
    with pytest.raises(Exception) as info:
        load_document(name, data)
    assert type(info.value).__name__ == "LoaderError"
    assert reason in str(info.value)


@pytest.mark.parametrize("name", list(ACCEPTED))
def test_loader_decodes_and_sanitises(name: str):
    data, source, present, absent = ACCEPTED[name]
    doc = load_document(name, data)
    assert doc.source == source
    assert present in doc.text
    if absent:
        assert absent not in doc.text


def test_bad_corpus_through_ingest_keeps_stored_documents_and_writes_nowhere_else(seeded, tmp_path, monkeypatch):
    """The upload path: one call with every file; the bad ones fail alone, stored documents stay as they were."""
    workdir = tmp_path / "cwd"
    workdir.mkdir()
    monkeypatch.chdir(workdir)  # a relative write (`../escape.md`) would land in tmp_path, where we look
    data_dir = seeded.settings.data_dir
    before = _snapshot(seeded)
    outside_before = _files_outside(tmp_path, data_dir)

    files = [(n, d) for n, (d, _) in REFUSED.items()] + [(n, v[0]) for n, v in ACCEPTED.items()]
    summary = ingest_files(seeded, files)

    assert len(summary.files) == len(files)
    for name, (_, reason) in REFUSED.items():
        result = next(f for f in summary.files if f.source == name)
        assert result.status == "error" and reason in result.error, (name, result)
    accepted_sources = {v[1] for v in ACCEPTED.values()}
    assert {f.source for f in summary.files if f.status == "added"} == accepted_sources, summary.files

    after = _snapshot(seeded)
    assert {k: v for k, v in after.items() if k in before} == before
    assert set(after) == set(before) | accepted_sources
    html = seeded.store.records(ChunkFilter(sources=("scripts.html",)))
    assert html and all("alert" not in r.chunk.text and "color:red" not in r.chunk.text for r in html)
    assert _files_outside(tmp_path, data_dir) == outside_before
    assert not (tmp_path.parent / "escape.md").exists()


def test_file_over_the_size_limit_is_refused_before_parsing(tmp_path):
    settings = Settings(data_dir=tmp_path / "data", max_upload_mb=1)
    components = build_components(settings)
    try:
        big = b"# Big\n\n" + b"The ferry leaves at nine. " * 60_000  # ~1.5 MB
        summary = ingest_files(components, [("big.md", big)])
        (result,) = summary.files
        assert result.status == "error"
        assert "over the 1.0 MiB limit" in result.error
        assert components.store.count() == 0
    finally:
        components.close()


def test_ten_thousand_headings_chunk_correctly_and_ingest_is_bounded(seeded):
    """The chunker handles it (every heading its own chunk); ingest refuses it by the per-document cap.

    10,000 chunks would be minutes of embedding on a small machine, and such a file is a dump rather
    than a page someone reads; the cap says so instead of tying up the app. A heading-dense file under
    the cap goes in whole.
    """
    text = "".join(f"## Stop {i}\n\nThe ferry calls at stop {i}.\n\n" for i in range(10_000))
    doc = load_document("stops.md", text.encode())
    chunks = chunk_document(doc, seeded.settings.chunk)
    assert len(chunks) == 10_000
    assert chunks[7_321].heading_path == ("Stop 7321",)
    assert all(doc.text[c.start : c.end] == c.text for c in chunks)

    before = _snapshot(seeded)
    (refused,) = ingest_files(seeded, [("stops.md", text.encode())]).files
    assert refused.status == "error"
    assert "10,000 chunks" in refused.error and "RAGSCOPE_MAX_CHUNKS" in refused.error
    assert _snapshot(seeded) == before

    small = "".join(f"## Stop {i}\n\nThe ferry calls at stop {i}.\n\n" for i in range(100))
    (added,) = ingest_files(seeded, [("stops.md", small.encode())]).files
    assert (added.status, added.chunks, added.written) == ("added", 100, 100)
    stored = {r.chunk.heading for r in seeded.store.records(ChunkFilter(sources=("stops.md",)))}
    assert stored == {f"Stop {i}" for i in range(100)}


def test_single_five_megabyte_line(seeded):
    """One 5 MB line: loaded whole, cut into bounded exact spans, refused by the per-document cap."""
    line = ("ferry " * 900_000)[: 5 * 1024 * 1024]
    doc = load_document("oneline.md", line.encode())
    assert "\n" not in doc.text and len(doc.text) > 5_000_000
    chunks = chunk_document(doc, seeded.settings.chunk)
    size = seeded.settings.chunk.size
    assert all(0 < len(c.text) <= size and doc.text[c.start : c.end] == c.text for c in chunks)
    assert "".join(c.text for c in chunks).replace(" ", "") == doc.text.replace(" ", "")  # nothing dropped

    before = _snapshot(seeded)
    (result,) = ingest_files(seeded, [("oneline.md", line.encode())]).files
    assert result.status == "error" and f"{len(chunks):,} chunks" in result.error
    assert _snapshot(seeded) == before


def test_chunk_cap_is_a_setting():
    assert Settings.from_env({"RAGSCOPE_MAX_CHUNKS": "12"}).max_chunks_per_doc == 12
    assert Settings.from_env({}).max_chunks_per_doc == Settings().max_chunks_per_doc


def test_sentence_vectors_setting_takes_a_flag_and_names_a_bad_value(tmp_path):
    assert Settings.from_env({}, secrets_path=tmp_path / "none.toml").sentence_vectors is True
    for raw, wanted in (("0", False), ("false", False), ("FALSE", False), ("1", True), (" true ", True)):
        assert Settings.from_env({"RAGSCOPE_SENTENCE_VECTORS": raw}).sentence_vectors is wanted
    with pytest.raises(ConfigError, match=r"RAGSCOPE_SENTENCE_VECTORS must be 1 or 0 \(true/false, yes/no and on/off work too\); got 'maybe'"):
        Settings.from_env({"RAGSCOPE_SENTENCE_VECTORS": "maybe"})
    secrets = tmp_path / "secrets.toml"
    secrets.write_text("RAGSCOPE_SENTENCE_VECTORS = false\n")  # a TOML boolean reads too
    assert Settings.from_env({}, secrets_path=secrets).sentence_vectors is False


def test_cli_prints_one_line_per_bad_file_and_exits_nonzero(tmp_path, monkeypatch):
    """`ragscope ingest` on a folder with good and bad files: good ones stored, each bad one named on stderr, exit 1."""
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    seed = tmp_path / "seed"
    for name, data in SEED:
        (seed / name).parent.mkdir(parents=True, exist_ok=True)
        (seed / name).write_bytes(data)
    first = runner.invoke(main, ["ingest", str(seed)])
    assert first.exit_code == 0, first.output

    components = build_components(Settings.from_env())
    before = _snapshot(components)
    components.close()

    bad = tmp_path / "bad"
    bad.mkdir()
    for name, (data, _) in REFUSED.items():
        if name != ".." and name.endswith((".md", ".pdf", ".docx")):
            (bad / name).write_bytes(data)
    (bad / ("y" * 240 + ".md")).write_bytes(SAFE_BODY)  # near the file system's 255-byte name limit
    (bad / "latin1.md").write_bytes(ACCEPTED["latin1.md"][0])
    result = runner.invoke(main, ["ingest", str(bad)])

    assert result.exit_code == 1
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    expected = {n: r for n, (_, r) in REFUSED.items() if n != ".." and n.endswith((".md", ".pdf", ".docx"))}
    assert len(errors) == len(expected)
    for name, reason in expected.items():
        assert any(line.startswith(f"error: {name}:") and reason in line for line in errors), (name, errors)
    assert "2 documents" in result.stdout and f"{len(expected)} errors" in result.stdout  # the summary is a result: stdout

    components = build_components(Settings.from_env())
    try:
        after = _snapshot(components)
        assert {k: v for k, v in after.items() if k in before} == before
        assert set(after) - set(before) == {"latin1.md", "y" * (MAX_SOURCE_CHARS - 3) + ".md"}
        assert [d.source for d in list_documents(components)].count("latin1.md") == 1
    finally:
        components.close()


def _zip(entries: list[tuple[str, bytes]]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        for name, data in entries:
            z.writestr(name, data)
    return buf.getvalue()


def test_zip_bombs_are_refused_before_they_inflate_and_store_nothing(seeded, tmp_path, monkeypatch):
    """The .zip upload path (as the Documents page runs it): refused with a message, memory bounded, disk untouched."""
    monkeypatch.chdir(tmp_path)
    limits = ArchiveLimits.for_upload_mb(seeded.settings.max_upload_mb)
    before = _snapshot(seeded)
    outside_before = _files_outside(tmp_path, seeded.settings.data_dir)
    ratio_bomb = _zip([("docs/readme.md", b"# Hi\n\nfine"), ("docs/zeros.md", bytes(40 * 1024 * 1024))])
    assert len(ratio_bomb) < 100_000  # 40 MB of zeros in well under 100 kB
    wide = _zip([(f"docs/{i}.md", b"# Page\n\ntext") for i in range(limits.max_entries + 1)])
    for name, data, reason in (("bomb.zip", ratio_bomb, "zip bomb"), ("wide.zip", wide, "per archive")):
        with pytest.raises(Exception) as info:
            expand_zip(name, data, limits)
        assert type(info.value).__name__ == "LoaderError"
        assert name in str(info.value) and reason in str(info.value)

    nested = _zip([("docs/inner.zip", ratio_bomb), ("docs/ok.md", b"# Ok\n\nThe ferry leaves at nine.")])
    expanded = expand_zip("nested.zip", nested, limits)
    assert [n for n, _ in expanded.files] == ["ok.md"]
    assert any("inner.zip" in m and "not expanded" in m for m in expanded.skipped)

    # A .zip given straight to ingest (the CLI's path) is refused by type, not opened.
    (result,) = ingest_files(seeded, [("bomb.zip", ratio_bomb)]).files
    assert result.status == "error" and "unsupported file type .zip" in result.error
    assert _snapshot(seeded) == before
    assert _files_outside(tmp_path, seeded.settings.data_dir) == outside_before
