"""PDF text as a reader reads it (issue 35): no running heads or page numbers, words hyphenated across a line
whole, contents and index pages stored but out of ranking, a scan stored with a visible warning.

The small PDFs are made here with reportlab; the real manuals (Debian's bash-doc and gnuplot-doc) are read
when installed, and their tests skipped with the reason otherwise.
"""

from __future__ import annotations

import dataclasses
import io
import json
import re
from pathlib import Path

import pytest
from apptest_pages import open_page
from installed_manuals import MANUALS, ON_MANUALS, read_manuals
from click.testing import CliRunner
from PIL import Image
from pypdf import PdfReader, PdfWriter
from reportlab.lib.pagesizes import A4
from reportlab.lib.utils import ImageReader
from reportlab.pdfgen import canvas
from streamlit.testing.v1 import AppTest

from rag.cli import main
from rag.components import build_components
from rag.ingest.chunker import chunk_document
from rag.ingest.loaders.document import load_document
from rag.ingest.loaders.pdf_reading import fold_ligatures
from rag.ingest.pipeline import ingest_files
from rag.ingest.results import Prepared
from rag.retrieval.retrieve import retrieve
from rag.store.base import chunk_payload
from rag.types import ROLE_CONTENTS, ROLE_INDEX, ROLE_NO_TEXT, ChunkFilter

HEAD = "Harbour Handbook: Ferry Services"
PAGE_ONE = [
    "Ferry services",
    "The harbour runs three ferries a day between the pier and the island, and each crossing takes about",
    "forty minutes when the sea is calm. Before every crossing the crew checks the windlass and its compo-",
    "nents, the life rafts, and the radio; a ferry that fails the check stays in port until it is mended.",
    "All components carry a tag with the date of their last inspection.",
    "A command-line tool prints the timetable for the week.",
]
INDEX_PAGE = [
    "Index",
    "anchor . . . . . . . . . . . . . . . . . . . . . . . . 1",
    "crossing . . . . . . . . . . . . . . . . . . . . . . . 1",
    "ferry . . . . . . . . . . . . . . . . . . . . . . . . . 1",
    "life rafts . . . . . . . . . . . . . . . . . . . . . . 1",
    "timetable . . . . . . . . . . . . . . . . . . . . . . 1",
    "windlass . . . . . . . . . . . . . . . . . . . . . . . 1",
]


def handbook_pdf() -> bytes:
    """Two pages with a running head and a page number each: a body page, then an index page; an outline."""
    buf = io.BytesIO()
    c = canvas.Canvas(buf, pagesize=A4)
    c.setTitle("Harbour Handbook")
    for number, lines in enumerate([PAGE_ONE, INDEX_PAGE], 1):
        c.setFont("Helvetica", 9)
        c.drawString(72, 800, HEAD)
        c.drawString(297, 40, str(number))
        c.bookmarkPage(f"p{number}")
        c.addOutlineEntry(lines[0], f"p{number}", level=0)
        c.setFont("Helvetica", 9)
        for i, line in enumerate(lines):
            c.drawString(72, 760 - 14 * i, line)
        c.showPage()
    c.save()
    return buf.getvalue()


def scan_pdf(pages: int = 2) -> bytes:
    """Pages that are pictures only, as a scanner makes them: no text layer at all."""
    buf = io.BytesIO()
    c = canvas.Canvas(buf, pagesize=A4)
    picture = Image.new("L", (200, 260), 255)
    for x in range(20, 180, 4):  # dark strokes where the scanned lines of text would be
        picture.paste(0, (x, 40, x + 2, 220))
    for _ in range(pages):
        c.drawImage(ImageReader(picture), 72, 300, 300, 390)
        c.showPage()
    c.save()
    return buf.getvalue()


def test_handbook_reads_as_a_reader_reads_it():
    doc = load_document("handbook.pdf", handbook_pdf())
    assert HEAD not in doc.text
    assert not re.search(r"(?m)^\s*\d+\s*$", doc.text), "no page-number line"
    assert "windlass and its components, the life rafts" in doc.text  # "compo-" + "nents": one word again
    assert "command-line tool" in doc.text  # a real hyphen stays
    assert dict(doc.roles) == {"Index": ROLE_INDEX}
    chunks = chunk_document(doc)
    roles = {c.heading_path: c.role for c in chunks}
    assert roles == {("Ferry services",): "", ("Index",): ROLE_INDEX}
    # Page starts stay exact: each chunk is its document's text at its offsets, on the page that holds them.
    for chunk in chunks:
        assert doc.text[chunk.start : chunk.end] == chunk.text
        assert chunk.page == doc.page_at(chunk.start)
    assert [c.page for c in chunks] == [1, 2]
    assert doc.text[doc.pages[1] :].startswith("# Index\n")


def test_index_page_is_stored_and_browsable_but_out_of_the_default_ranking(components):
    assert not ingest_files(components, [("handbook.pdf", handbook_pdf())]).errors
    everything = components.store.records(ChunkFilter(sources=("handbook.pdf",), include_quarantined=True))
    assert sorted(r.chunk.role for r in everything) == ["", ROLE_INDEX]  # both stored, the index marked
    ranked = components.store.records(ChunkFilter())
    assert [r.chunk.heading_path for r in ranked] == [("Ferry services",)]
    assert components.store.count(ChunkFilter()) == 1
    for question in ("windlass", "Index of the handbook: anchor, crossing, ferry, life rafts"):
        result = retrieve(components, question)
        assert result.candidates and all(not c.chunk.chunk.role for c in result.candidates), question
        wide = retrieve(components, question, flt=ChunkFilter(include_unranked=True))
        assert ROLE_INDEX in {c.chunk.chunk.role for c in wide.candidates}, question


def test_a_kept_chunk_takes_its_new_role_on_re_ingest(components):
    """Same text under the same heading keeps its id (nothing re-embedded), but a role the loader now reads
    otherwise is written: a collection ingested before index pages were recognised gets them out of ranking."""
    doc = load_document("handbook.pdf", handbook_pdf())
    chunks = chunk_document(doc)
    unmarked = [dataclasses.replace(c, role="") for c in chunks]
    assert not ingest_files(components, [Prepared(doc, tuple(unmarked))]).errors
    assert components.store.count(ChunkFilter()) == 2  # as an older loader stored it: the index ranked
    edited = dataclasses.replace(doc, text=doc.text.replace("three ferries", "four ferries"))
    again = chunk_document(edited)
    assert {c.id for c in again} & {c.id for c in chunks} == {chunks[1].id}  # the index chunk is kept
    result = ingest_files(components, [Prepared(edited, tuple(again))]).files[0]
    assert (result.written, result.unchanged) == (1, 1)
    assert [r.chunk.heading_path for r in components.store.records(ChunkFilter())] == [("Ferry services",)]
    (index,) = components.store.records(ChunkFilter(ids=(chunks[1].id,), include_unranked=True))
    assert index.chunk.role == ROLE_INDEX
    # And back: a role the loader no longer reads is cleared.
    assert not ingest_files(components, [Prepared(doc, tuple(unmarked))]).errors
    assert components.store.count(ChunkFilter()) == 2


@pytest.mark.parametrize("role", [ROLE_INDEX, ROLE_CONTENTS, ROLE_NO_TEXT])
def test_every_role_is_out_of_ranking_by_the_filter_rules(role):
    doc = load_document("handbook.pdf", handbook_pdf())
    chunk = chunk_document(doc)[0]
    payload = chunk_payload(chunk, {}) | {"role": role}
    assert not ChunkFilter().matches(payload)
    assert ChunkFilter(include_unranked=True).matches(payload)
    assert ChunkFilter(include_quarantined=True).matches(payload)  # a read of everything sees it
    assert ChunkFilter().matches(chunk_payload(chunk, {}))


def test_pages_without_text_among_pages_with_text_keep_the_text_and_get_the_warning():
    text_page = io.BytesIO()
    c = canvas.Canvas(text_page, pagesize=A4)
    c.drawString(72, 760, "The ferry leaves the pier at nine every morning.")
    c.showPage()
    c.save()
    writer = PdfWriter()  # one text page, then a scanned one
    for data in (text_page.getvalue(), scan_pdf(1)):
        writer.add_page(PdfReader(io.BytesIO(data)).pages[0])
    out = io.BytesIO()
    writer.write(out)
    doc = load_document("mixed.pdf", out.getvalue())
    assert "The ferry leaves the pier at nine" in doc.text and not doc.roles
    assert doc.notes == ("no text layer: needs OCR: 1 of its 2 pages have no text to read (scanned pages?)",)


def test_ligatures_fold_to_letters_and_nothing_else_changes():
    assert fold_ligatures("\ufb01le \ufb02ow e\ufb00ect o\ufb03ce") == "file flow effect office"
    assert fold_ligatures("½ ² ＡＢ") == "½ ² ＡＢ"  # other compatibility forms stay (NFKC of the ligature block only)


def test_scan_is_stored_with_the_ocr_warning_through_the_cli(tmp_path):
    path = tmp_path / "scan.pdf"
    path.write_bytes(scan_pdf())
    result = CliRunner().invoke(main, ["ingest", str(path)])
    assert result.exit_code == 0, result.output
    assert "warning: scan.pdf: no text layer: needs OCR" in result.stderr
    assert "1 documents, 1 chunks written" in result.stdout
    listed = CliRunner().invoke(main, ["docs", "--json"])
    (row,) = json.loads(listed.stdout)
    assert row["source"] == "scan.pdf" and any("no text layer: needs OCR" in n for n in row["notes"])


def test_scan_is_stored_with_the_ocr_warning_on_the_documents_page():
    at = AppTest.from_file(str(Path(__file__).resolve().parent.parent / "app.py"), default_timeout=60)
    at.run()
    (uploader,) = [u for u in at.file_uploader if u.key.startswith("documents_upload_")]
    uploader.set_value([("scan.pdf", scan_pdf(), "application/pdf")])
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    preview = [w.value.replace("\\", "") for w in at.warning]  # the page escapes Markdown in a file's words
    assert any("scan.pdf: no text layer: needs OCR" in w for w in preview), preview
    at.button(key="documents_ingest").click().run()
    assert not at.exception, at.exception
    warnings = [w.value.replace("\\", "") for w in at.warning]
    assert any("scan.pdf: no text layer: needs OCR" in w for w in warnings), warnings
    (table,) = [d.value for d in at.dataframe if d.proto.alt == "Ingested documents"]
    assert "needs OCR" in table.set_index("source").loc["scan.pdf", "notes"]


def test_cli_search_reads_index_pages_with_pages_all(tmp_path):
    path = tmp_path / "handbook.pdf"
    path.write_bytes(handbook_pdf())
    assert CliRunner().invoke(main, ["ingest", str(path)]).exit_code == 0
    question = "windlass anchor crossing ferry life rafts timetable"
    plain = CliRunner().invoke(main, ["search", question])
    wide = CliRunner().invoke(main, ["search", question, "--filter", "pages=all"])
    assert plain.exit_code == wide.exit_code == 0, (plain.output, wide.output)
    assert "handbook.pdf > Ferry services" in plain.stdout and "handbook.pdf > Index" not in plain.stdout
    assert "handbook.pdf > Index" in wide.stdout


def test_inspector_searches_index_pages_only_when_asked(settings):
    components = build_components(settings)
    assert not ingest_files(components, [("handbook.pdf", handbook_pdf())]).errors
    components.close()
    at = open_page("pages/inspector.py", q="windlass anchor crossing ferry life rafts timetable")
    assert not at.exception and not at.error, [e.value for e in at.error]

    def shown() -> set[str]:
        return set(at.dataframe(key="inspector_table").value["source > heading"])

    assert shown() == {"handbook.pdf > Ferry services"}
    at.checkbox(key="inspector_unranked").check().run()
    assert not at.exception, at.exception
    assert "handbook.pdf > Index" in shown()


# The real manuals (tests/installed_manuals.py): Texinfo (bashref) and LaTeX (gnuplot), a few hundred pages each,
# with outlines and indexes.
_RUNNING_HEAD = re.compile(
    r"(?m)^(?:Chapter \d+|Appendix [A-Z]): .* \d+$|gnuplot 5\.4 (?:\d+|CONTENTS|INDEX)|\d+ gnuplot 5\.4"
)
_BARE_NUMBER = re.compile(r"^\s*(?:\d+|[ivxlc]+)\s*$")
_LINE_HYPHEN = re.compile(r"([^\W\d_]+)-\n+([^\W\d_]+)")


@pytest.fixture(scope="module")
def manuals():
    return read_manuals()


@ON_MANUALS
def test_no_running_head_page_number_or_split_word_in_any_chunk(manuals):
    assert set(manuals) == set(MANUALS)
    for name, (doc, chunks) in manuals.items():
        words = {w.lower() for w in re.findall(r"[^\W\d_]+", doc.text)}
        heads = [m.group() for c in chunks for m in _RUNNING_HEAD.finditer(c.text)]
        # A page number sits at a page's edge: the first or last line of a page's text.
        edges = []
        for number, start in enumerate(doc.pages):
            end = doc.pages[number + 1] if number + 1 < len(doc.pages) else len(doc.text)
            lines = [line for line in doc.text[start:end].split("\n") if line.strip()]
            edges += [line for line in lines[:1] + lines[-1:] if _BARE_NUMBER.match(line)]
        # A word split across a line: the two halves make a word the document uses ("compo-" "nents").
        splits = [m.group() for c in chunks for m in _LINE_HYPHEN.finditer(c.text) if (m[1] + m[2]).lower() in words]
        assert (heads, edges, splits) == ([], [], []), name


@ON_MANUALS
def test_manual_contents_and_index_pages_are_out_of_the_default_ranking(manuals):
    for name, (doc, chunks) in manuals.items():
        navigation = [c for c in chunks if c.role]
        assert {c.role for c in navigation} == {ROLE_CONTENTS, ROLE_INDEX}, name
        assert all(not ChunkFilter().matches(chunk_payload(c, {})) for c in navigation)
        body = [c for c in chunks if not c.role]
        # An index line ("alias . . . 55", "fill, 63, 66") is in no ranked chunk.
        assert not [c.text for c in body if len(re.findall(r"(?m)(?:\. ){6,}\.? ?\d+$", c.text)) > 2], name
        # Front matter sits under the document's title, not under an empty heading.
        assert all(c.heading_path for c in chunks), name
    bash_doc, bash_chunks = manuals["bashref.pdf"]
    assert bash_doc.title == "Bash Reference Manual"
    assert {c.heading_path[0] for c in bash_chunks if c.role == ROLE_INDEX} == {"Indexes"}
    # Outline titles stay the heading paths, found on the page after their number ("3.2.4 Lists of Commands").
    lists = [c for c in bash_chunks if c.heading_path[-1:] == ("Lists of Commands",)]
    assert lists and "A list is a sequence of one or more pipelines" in lists[0].text
