"""Loaders: every format becomes Markdown-shaped text with its structure (headings, tables, pages) kept.

PDF and DOCX files are built here with reportlab and python-docx, so each test says exactly what the
file holds. (The hostile-input corpus lives in test_bad_input.py.)
"""

from __future__ import annotations

import io
import os
import stat
import zipfile

import docx
import pytest
from reportlab.lib.pagesizes import A4
from reportlab.pdfgen import canvas

from rag.ingest.loaders.archive import ArchiveLimits, expand_zip
from rag.ingest.chunker import chunk_document
from rag.settings.config import ChunkConfig
from rag.errors import LoaderError
from rag.types import ROLE_NO_TEXT
from rag.ingest.loaders.document import load_document
from rag.ingest.loaders.names import kind_of, safe_source


def make_pdf(pages: list[list[str]], title: str = "") -> bytes:
    """A PDF with one line of text per entry, one page per list."""
    buf = io.BytesIO()
    c = canvas.Canvas(buf, pagesize=A4)
    if title:
        c.setTitle(title)
    for lines in pages:
        y = 780
        for line in lines:
            c.drawString(72, y, line)
            y -= 20
        c.showPage()
    c.save()
    return buf.getvalue()


def make_docx() -> bytes:
    d = docx.Document()
    d.add_heading("Ferry handbook", 0)  # the Title style
    d.add_heading("Tickets", 1)
    d.add_paragraph("A single ticket costs four euros.")
    d.add_heading("Children", 2)
    d.add_paragraph("Children under six ride free.")
    d.add_paragraph("Bring a bike", style="List Bullet")
    table = d.add_table(rows=3, cols=2)
    for r, row in enumerate([("Zone", "Price"), ("A", "4 | 5"), ("B", "6")]):
        for col, value in enumerate(row):
            table.cell(r, col).text = value
    d.add_heading("Bikes", 1)
    d.add_paragraph("Bikes ride free on weekdays.")
    buf = io.BytesIO()
    d.save(buf)
    return buf.getvalue()


def test_markdown_keeps_text_and_title():
    d = load_document("docs/guide.md", b"# Ferry guide\r\n\r\n\r\n\r\nTickets   \r\ncost four euros.\r\n")
    assert (d.source, d.kind, d.title) == ("docs/guide.md", "markdown", "Ferry guide")
    assert d.text == "# Ferry guide\n\nTickets\ncost four euros."  # CRLF, trailing spaces, blank runs cleaned
    assert d.size_bytes == len(b"# Ferry guide\r\n\r\n\r\n\r\nTickets   \r\ncost four euros.\r\n")


def test_html_keeps_headings_tables_lists_and_drops_scripts():
    html = b"""<html><head><title>Ferry</title><style>p{color:red}</style><script>steal()</script></head>
    <body><nav><a href="/">Home</a></nav>
    <div class="content"><h1>Timetable</h1><p>The first ferry leaves at <b>seven</b>.</p>
    <script>document.write('injected')</script>
    <h2>Weekend</h2><ul><li>Every hour</li><li>Bikes free</li></ul>
    <table><tr><th>Day</th><th>First</th></tr><tr><td>Sat</td><td>8:00</td></tr></table>
    <pre>ferry-cli timetable
  --day sat</pre><noscript>enable js</noscript></div></body></html>"""
    d = load_document("t.html", html)
    assert d.title == "Ferry"
    assert "# Timetable\n\nThe first ferry leaves at seven ." in d.text or "# Timetable\n\nThe first ferry leaves at seven." in d.text
    assert "## Weekend" in d.text
    assert "- Every hour\n\n- Bikes free" in d.text
    assert "| Day | First |\n|---|---|\n| Sat | 8:00 |" in d.text
    assert "```\nferry-cli timetable\n  --day sat\n```" in d.text
    for gone in ("steal", "injected", "color:red", "enable js"):
        assert gone not in d.text
    paths = {c.heading_path for c in chunk_document(d)}
    assert ("Timetable", "Weekend") in paths


@pytest.mark.parametrize(
    "hidden",
    [
        "<!-- staff price is 1 euro -->",
        "<!--staff price is 1 euro-->",
        "<?php echo 'staff price is 1 euro'; ?>",
        "<![CDATA[staff price is 1 euro]]>",
        "<!ELEMENT staff price is 1 euro>",
        "<script>var staff = 'staff price is 1 euro';</script>",
        "<style>/* staff price is 1 euro */</style>",
        "<noscript>staff price is 1 euro</noscript>",
        "<template><p>staff price is 1 euro</p></template>",
        "<div hidden>staff price is 1 euro</div>",
        '<span style="display:none">staff price is 1 euro</span>',
    ],
)
def test_html_text_a_browser_does_not_show_never_becomes_document_text(hidden):
    html = f"<?xml version='1.0'?><!DOCTYPE html><html><body><p>Tickets cost four euros. {hidden}</p>{hidden}</body></html>"
    d = load_document("prices.html", html.encode())
    assert d.text == "Tickets cost four euros."
    assert "staff" not in d.text and "xml" not in d.text and "DOCTYPE" not in d.text


def test_xhtml_prolog_and_doctype_do_not_leak_without_a_body_tag():
    d = load_document("x.html", b"<?xml version='1.0' encoding='utf-8'?>\n<!DOCTYPE html>\nFerries leave hourly.")
    assert d.text == "Ferries leave hourly."


def test_html_keeps_main_content_and_drops_navigation_headers_footers_sidebars_and_tocs():
    # Chrome is known by its element or role, or by a class or id name on a block of links
    # (a named block of real content is read: tests/test_hidden_html.py).
    html = b"""<html><body>
    <header><a href="/">Ferry Co</a><nav><a>Home</a> <a>Timetable</a></nav></header>
    <div id="sidebar"><h2>Popular</h2><p><a href="/island">Ferry to the island</a></p></div>
    <main>
      <div class="breadcrumbs"><a href="/">Home</a> &gt; <a href="/t">Timetable</a></div>
      <header><h1>Timetable</h1><p class="byline">Updated weekly</p></header>
      <nav class="toc"><h2>On this page</h2><ul><li>Weekdays</li></ul></nav>
      <div class="table-of-contents"><a href="#wd">Weekdays</a>, <a href="#we">Weekend</a></div>
      <p>The first ferry leaves at seven.</p>
      <aside>Did you know? Dogs travel free.</aside>
      <h2>Weekend</h2><p>Ferries leave every hour.</p>
      <div role="navigation">Previous | Next</div>
      <ul class="site-menu"><li><a href="/c">Contact</a></li></ul>
    </main>
    <footer>Copyright Ferry Co</footer></body></html>"""
    d = load_document("timetable.html", html)
    assert d.text == "# Timetable\n\nThe first ferry leaves at seven.\n\n## Weekend\n\nFerries leave every hour."
    # No <main>: the articles are the content; without either, the body minus its chrome.
    articles = b"<body><nav>Menu</nav><article><h1>News</h1><p>New pier.</p></article><aside>Ads</aside><article><p>Late boats.</p></article></body>"
    assert load_document("n.html", articles).text == "# News\n\nNew pier.\n\nLate boats."
    body = b"<body><div class='navbar'><a href='/'>Home</a></div><h1>Fares</h1><p>Four euros.</p><footer>Contact us</footer></body>"
    assert load_document("f.html", body).text == "# Fares\n\nFour euros."
    # class words are matched whole: "seat-navigator" is not navigation.
    assert "Pick a seat" in load_document("s.html", b"<body><p class='seat-navigator'>Pick a seat</p></body>").text


def test_pdf_text_layer_with_page_starts_and_title():
    data = make_pdf([["Boarding", "Board ten minutes early."], ["Safety", "Life jackets are under every seat."], ["Lost property"]], title="Ferry manual")
    d = load_document("manual.pdf", data)
    assert d.kind == "pdf" and d.title == "Ferry manual"
    assert len(d.pages) == 3 and d.pages[0] == 0
    for number, first_line in enumerate(["Boarding", "Safety", "Lost property"], 1):
        start = d.pages[number - 1]
        assert d.text[start:].startswith(first_line)
        assert d.page_at(start) == number
    chunks = chunk_document(d, ChunkConfig("heading", 50, 0))
    assert [(c.page, c.text.split("\n")[0]) for c in chunks] == [(1, "Boarding"), (2, "Safety"), (3, "Lost property")]


def make_styled_pdf(pages: list[list[tuple[int, str]]], outline: list[tuple[int, int, str]] = ()) -> bytes:
    """A PDF whose lines are (font size, text); `outline` entries are (page index, level 0.., title)."""
    buf = io.BytesIO()
    c = canvas.Canvas(buf, pagesize=A4)
    for number, lines in enumerate(pages):
        y = 780
        for size, text in lines:
            c.setFont("Helvetica", size)
            c.drawString(72, y, text)
            y -= size + 12
        for i, (page, level, title) in enumerate(outline):
            if page == number:
                c.bookmarkPage(f"b{i}")
                c.addOutlineEntry(title, f"b{i}", level=level)
        c.showPage()
    c.save()
    return buf.getvalue()


def test_pdf_headings_come_from_font_sizes_and_pages_stay_exact():
    data = make_styled_pdf([
        [(22, "Ferry manual"), (11, "Board ten minutes early."), (16, "Safety"), (11, "Life jackets are under every seat."), (11, "# of seats: 40")],
        [(16, "Lost property"), (11, "Ask the crew"), (11, "Items are kept for a month.")],
    ])
    d = load_document("manual.pdf", data)
    chunks = chunk_document(d, ChunkConfig("heading", 60, 0))
    assert list(dict.fromkeys((c.page, c.heading_path) for c in chunks)) == [
        (1, ("Ferry manual",)), (1, ("Ferry manual", "Safety")), (2, ("Ferry manual", "Lost property"))
    ]
    assert d.page_at(d.text.index("Items are kept")) == 2
    # A body line is never a heading, however short, nor is a line that happens to start with "#".
    assert "\nAsk the crew" in d.text and "\n # of seats: 40" in d.text
    assert all("seats" not in "".join(c.heading_path) and "crew" not in "".join(c.heading_path) for c in chunks)
    # One font size throughout: no headings at all, rather than a guessed one.
    plain = load_document("plain.pdf", make_pdf([["Boarding", "Board ten minutes early."], ["Safety", "Life jackets."]]))
    assert {c.heading_path for c in chunk_document(plain)} == {()}


def test_pdf_outline_gives_the_headings_and_their_levels():
    data = make_styled_pdf(
        [[(11, "Ferry manual"), (11, "Board early."), (11, "Safety"), (11, "Life jackets are under every seat.")], [(11, "Items are kept for a month.")]],
        outline=[(0, 0, "Ferry manual"), (0, 1, "Safety"), (1, 1, "Lost property")],
    )
    d = load_document("manual.pdf", data)
    assert "# Ferry manual\n\nBoard early.\n\n## Safety\n" in d.text
    # An outline title the page does not print goes on top of its page, so the page keeps its section.
    assert d.text[d.pages[1] :].startswith("## Lost property\n\nItems are kept")
    chunks = chunk_document(d, ChunkConfig("heading", 50, 0))
    assert [(c.page, c.heading_path) for c in chunks] == [
        (1, ("Ferry manual",)), (1, ("Ferry manual", "Safety")), (2, ("Ferry manual", "Lost property"))
    ]


def test_pdf_without_text_layer_is_stored_as_a_placeholder_with_a_warning():
    buf = io.BytesIO()
    c = canvas.Canvas(buf)
    c.rect(72, 72, 300, 300, fill=1)
    c.showPage()
    c.save()
    d = load_document("scan.pdf", buf.getvalue())
    assert any("no text layer: needs OCR" in note for note in d.notes), d.notes
    (chunk,) = chunk_document(d)
    assert chunk.role == ROLE_NO_TEXT and "needs OCR" in chunk.text  # stored, out of ranking (tests/test_pdf_reading.py)


def test_docx_headings_lists_and_tables():
    d = load_document("handbook.docx", make_docx())
    assert d.kind == "docx" and d.title == "Ferry handbook"
    assert d.text.startswith("# Ferry handbook\n\n## Tickets\n\nA single ticket costs four euros.\n\n### Children")
    assert "- Bring a bike" in d.text
    assert "| Zone | Price |\n|---|---|\n| A | 4 \\| 5 |\n| B | 6 |" in d.text  # a pipe in a cell stays in its cell
    paths = [c.heading_path for c in chunk_document(d)]
    assert paths == [("Ferry handbook", "Tickets"), ("Ferry handbook", "Tickets", "Children"), ("Ferry handbook", "Bikes")]


@pytest.mark.parametrize(
    "encoded",
    [
        "# Résumé\n\nCafé crème, déjà vu.".encode("utf-8-sig"),
        "# Résumé\n\nCafé crème, déjà vu.".encode("utf-16"),  # BOM
        "# Résumé\n\nCafé crème, déjà vu.".encode("utf-16-le"),  # no BOM
        "# Résumé\n\nCafé crème, déjà vu.".encode("utf-16-be"),  # no BOM, big-endian
        "# Résumé\n\nCafé crème, déjà vu.".encode("latin-1"),
    ],
    ids=["utf8-bom", "utf16-bom", "utf16le", "utf16be", "latin1"],
)
def test_text_encodings_decode_to_the_same_text(encoded):
    assert load_document("r.md", encoded).text == "# Résumé\n\nCafé crème, déjà vu."


def test_windows_1252_curly_quotes_survive():
    d = load_document("q.txt", "“Quoted” – it’s fine".encode("cp1252"))
    assert d.text == "“Quoted” – it’s fine"


@pytest.mark.parametrize(
    "name,data,message",
    [
        ("photo.md", b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01" + bytes(range(256)) * 8, "binary"),
        ("blob.txt", bytes([1, 2, 3, 4, 5, 6, 7, 8]) * 200, "binary"),
        ("archive.md", b"PK\x03\x04" + bytes(300), "binary"),
        ("notes.odt", b"some text", "unsupported file type .odt"),
        ("README", b"some text", "unsupported file type (none)"),
        ("broken.docx", b"this is not a zip", "not a valid DOCX"),
        ("empty.txt", b"\n\n  \n", "empty"),
    ],
)
def test_refused_files_name_the_file_and_the_reason(name, data, message):
    with pytest.raises(LoaderError) as info:
        load_document(name, data)
    assert str(info.value).startswith(f"{name}: ")
    assert message in str(info.value)


def test_size_limit_is_checked_before_parsing():
    with pytest.raises(LoaderError, match="over the 1.0 MiB limit"):
        load_document("big.md", b"a" * 1_100_000, max_bytes=1_000_000)


def test_safe_source_and_kind():
    assert safe_source("..\\..\\etc/passwd.md") == "etc/passwd.md"
    assert safe_source("/abs/./path/../x.md") == "abs/x.md"
    assert safe_source("a\u202eb.md") == "ab.md"  # bidi override (a control/format char) removed
    assert kind_of("A.MD") == "markdown" and kind_of("x.HTM") == "html"


# .zip uploads (rag.ingest.loaders.archive): a folder of documents in, (name, bytes) out, and no zip bomb gets through.


def make_zip(entries: list[tuple[str | zipfile.ZipInfo, bytes]]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in entries:
            z.writestr(name, data)
    return buf.getvalue()


def _info(name: str, *, mode: int) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name)
    info.external_attr = mode << 16
    return info


def _mark_encrypted(data: bytes, name: str) -> bytes:
    """Set the "encrypted" flag of `name` in the central directory (zipfile cannot write encrypted entries)."""
    out = bytearray(data)
    at = out.find(b"PK\x01\x02")
    while at != -1:
        name_len = int.from_bytes(out[at + 28 : at + 30], "little")
        if out[at + 46 : at + 46 + name_len] == name.encode():
            out[at + 8] |= 0x1
        at = out.find(b"PK\x01\x02", at + 46)
    return bytes(out)


def test_zip_of_a_folder_gives_paths_inside_it_and_says_what_it_skipped():
    data = make_zip(
        [
            ("docs/", b""),
            ("docs/guide.md", b"# Guide\n\nHello."),
            ("docs/billing/plans.md", b"# Plans\n\nThree plans."),
            ("docs/logo.png", b"\x89PNG\r\n"),
            ("docs/inner.zip", make_zip([("x.md", b"# X")])),
            ("__MACOSX/docs/._guide.md", b"\x00\x05\x16\x07"),
            (_info("docs/link.md", mode=stat.S_IFLNK | 0o777), b"/etc/passwd"),
            ("docs/locked.md", b"ciphertext"),
        ]
    )
    data = _mark_encrypted(data, "docs/locked.md")
    expanded = expand_zip("site.zip", data)
    assert expanded.files == (("guide.md", b"# Guide\n\nHello."), ("billing/plans.md", b"# Plans\n\nThree plans."))
    reasons = "\n".join(expanded.skipped)
    assert len(expanded.skipped) == 5 and all(m.startswith("site.zip: skipped ") for m in expanded.skipped)
    for reason in ("unsupported file type .png", "archives inside archives", "archiver metadata", "symbolic link", "encrypted"):
        assert reason in reasons
    assert "docs/'" not in reasons  # folder entries are dropped silently


def test_zip_entry_names_are_sanitised():
    data = make_zip([("../../etc/evil.md", b"# Evil"), ("/abs/top.md", b"# Top"), ("a\\b.md", b"# AB"), ("./a/b.md", b"# dup")])
    expanded = expand_zip("x.zip", data)
    # Both a/b.md entries come out: ingest refuses the pair, naming each (tests/test_ingest_names.py).
    assert [name for name, _ in expanded.files] == ["etc/evil.md", "abs/top.md", "a/b.md", "a/b.md"]
    assert expanded.skipped == ()


def test_zip_bomb_by_ratio_is_refused_whole():
    data = make_zip([("ok.md", b"# Fine\n\nA normal page."), ("bomb.md", b"a" * 20_000_000)])
    assert len(data) < 100_000
    with pytest.raises(LoaderError, match="zip bomb"):
        expand_zip("bomb.zip", data)


def test_zip_over_total_size_or_entry_count_is_refused():
    pages = [(f"p{i}.md", os.urandom(40_000).hex().encode()) for i in range(4)]  # incompressible: no ratio alarm
    with pytest.raises(LoaderError, match="expands to more than"):
        expand_zip("big.zip", make_zip(pages), ArchiveLimits(max_total_bytes=200_000, max_file_bytes=100_000))
    many = make_zip([(f"n{i}.md", b"# N") for i in range(30)])
    with pytest.raises(LoaderError, match="30 files is over the limit of 20"):
        expand_zip("many.zip", many, ArchiveLimits(max_entries=20))


def test_zip_file_over_the_per_file_cap_is_skipped_others_kept():
    data = make_zip([("big.md", os.urandom(60_000).hex().encode()), ("small.md", b"# Small")])
    expanded = expand_zip("z.zip", data, ArchiveLimits(max_file_bytes=100_000))
    assert [n for n, _ in expanded.files] == ["small.md"]
    assert "big.md" in expanded.skipped[0] and "larger than" in expanded.skipped[0]


@pytest.mark.parametrize("data", [b"not a zip at all", b"PK\x03\x04" + bytes(40), b""])
def test_not_a_zip_is_refused(data):
    with pytest.raises(LoaderError, match="not a readable zip archive"):
        expand_zip("fake.zip", data)


def test_limits_follow_the_upload_setting():
    limits = ArchiveLimits.for_upload_mb(10)
    assert limits.max_file_bytes == 10 * 1024 * 1024 and limits.max_total_bytes == 40 * 1024 * 1024


def _docx_with(parts: list[tuple[str, bytes]]) -> bytes:
    """A real DOCX with extra parts added to its zip (as a crafted file would carry them)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(make_docx())) as src, zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as out:
        for info in src.infolist():
            out.writestr(info, src.read(info))
        for name, data in parts:
            out.writestr(name, data)
    return buf.getvalue()


def _quaternary(n: int, seed: int) -> bytes:
    """n bytes of four letters at random: compresses about four times, well under the ratio limit."""
    import random

    rng = random.Random(seed)
    return bytes(rng.choice(b"acgt") for _ in range(n))


def test_docx_parts_are_held_to_the_archive_limits_before_parsing():
    import tracemalloc

    # One part that inflates 1000-fold: refused while inflating, so memory stays far below its size.
    bomb = _docx_with([("word/media/blank.xml", bytes(30 * 1024 * 1024))])
    assert len(bomb) < 100_000
    tracemalloc.start()
    try:
        with pytest.raises(LoaderError, match=r"bomb\.docx: .*inflates more than 100 times"):
            load_document("bomb.docx", bomb)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 10 * 1024 * 1024
    # Parts that compress normally but add up past the limit (twice the file-size limit), or one part over it.
    many = _docx_with([(f"customXml/fill{i}.xml", _quaternary(300_000, i)) for i in range(5)])
    with pytest.raises(LoaderError, match=r"many\.docx: expands to more than 1\.9 MiB"):
        load_document("many.docx", many, max_bytes=1_000_000)
    big = _docx_with([("customXml/big.xml", _quaternary(1_100_000, 9))])
    with pytest.raises(LoaderError, match=r"big\.docx: part 'customXml/big\.xml' is larger than 1\.0 MiB"):
        load_document("big.docx", big, max_bytes=1_000_000)
    wide = _docx_with([(f"customXml/p{i}.xml", b"<a/>") for i in range(ArchiveLimits().max_entries)])
    with pytest.raises(LoaderError, match=r"wide\.docx: this DOCX has 2,0\d\d parts"):
        load_document("wide.docx", wide)
    # A normal document is untouched by the check.
    assert "four euros" in load_document("ok.docx", make_docx()).text
