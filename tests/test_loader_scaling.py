"""Every loader is linear in its input (issue 37): a generated file of each format the product reads, at n and 4n.

A step that is quadratic (a scan of every unit per line, text built by repeated concatenation, a list
searched as it grows) hides at the sizes a fixture has and shows at the sizes a user uploads: a file of
one-line Python functions took many times longer at 4x its length. Each format is read at two sizes; the
CPU time of the larger must stay near 4x (asserted under 8x, slack for a shared machine) and its peak
Python memory near 4x too, under a cap. A Python module of 800 imports and 800 functions stays about
800 chunks, each unit carrying the imports it uses and no others.
"""

from __future__ import annotations

import io
import re
import time
import tracemalloc
from collections.abc import Callable

import pytest

from rag.ingest.chunker import chunk_document
from rag.ingest.loaders.code import MAX_UNIT_IMPORTS
from rag.ingest.loaders.document import load_document
from rag.ingest.loaders.names import KINDS
from rag.settings.config import ChunkConfig

# Each format is read eight times at two sizes, under tracemalloc for half of them: out of the fast loop.
pytestmark = pytest.mark.slow


def _markdown(n: int) -> bytes:
    # code spans and comments, with unclosed openers of each (a search past them must not be repeated)
    part = "## Part {i}\n\nThe `ferry` {i} leaves <!-- at --> seven. `` <!--\n\n- a\n- b\n\n"
    return "".join(part.format(i=i) for i in range(n)).encode()


def _text(n: int) -> bytes:
    return "".join(f"Line {i} of plain text about ferries.\n" for i in range(n)).encode()


def _html(n: int) -> bytes:
    # A sheet that grows with the page, unclosed <li> and <p> (a browser closes them; a naive parser nests them).
    css = "".join(f".c{i}{{color:#333}} .h{i}{{display:none}} @media (min-width:700px){{.h{i}{{display:block}}}} "
                  for i in range(n // 10))  # fmt: skip
    body = "".join(f"<h2>Part {i}</h2><p class='c{i % 50} h{i % 7}'>Ferry {i} <b>leaves</b>.<li>item {i}<li>more"
                   for i in range(n))  # fmt: skip
    return f"<html><head><style>{css}</style></head><body><ul>{body}</ul></body></html>".encode()


def _adoc(n: int) -> bytes:
    parts = "".join(f"== Part {i}\n\nIt costs {{price}}.\n\n* item\n\n----\ncode {i}\n----\n\n" for i in range(n))
    return f"= Book\n:price: 4 euros\n\n{parts}".encode()


def _rst(n: int) -> bytes:
    return "".join(f"Part {i}\n{'=' * (len(str(i)) + 5)}\n\nThe ferry leaves at seven.\n\n" for i in range(n)).encode()


def _python(n: int) -> bytes:
    """The shape that was quadratic: many one-line functions (and as many imports)."""
    imports = "".join(f"import mod{i}\n" for i in range(n))
    return (imports + "".join(f"def f{i}(x): return mod{i}.g(x)\n" for i in range(n))).encode()


def _docx(n: int) -> bytes:
    import docx

    document = docx.Document()
    for i in range(n):
        document.add_heading(f"Part {i}", 2)
        document.add_paragraph(f"The ferry {i} leaves at seven.")
    buf = io.BytesIO()
    document.save(buf)
    return buf.getvalue()


def _pptx(n: int) -> bytes:
    from pptx import Presentation

    deck = Presentation()
    for i in range(n):
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = f"Part {i}"
        slide.placeholders[1].text_frame.text = f"Ferry {i} leaves at seven."
    buf = io.BytesIO()
    deck.save(buf)
    return buf.getvalue()


def _epub(n: int) -> bytes:
    from ebooklib import epub

    book = epub.EpubBook()
    book.set_identifier("scale")
    book.set_title("Scale")
    chapters = []
    for i in range(n):
        chapter = epub.EpubHtml(title=f"Chapter {i}", file_name=f"c{i}.xhtml")
        chapter.content = f"<h1>Chapter {i}</h1><p>Ferry {i} leaves at seven.</p>"
        book.add_item(chapter)
        chapters.append(chapter)
    book.add_item(epub.EpubNav())
    book.spine = chapters
    buf = io.BytesIO()
    epub.write_epub(buf, book)
    return buf.getvalue()


def _pdf(n: int) -> bytes:
    from reportlab.pdfgen import canvas

    buf = io.BytesIO()
    pdf = canvas.Canvas(buf)
    for page in range(n):
        for line in range(40):
            pdf.drawString(72, 800 - line * 18, f"Line {line} of page {page} about ferries.")
        pdf.showPage()
    pdf.save()
    return buf.getvalue()


# kind -> (suffix, generator, n): n sized so the smaller file takes a tenth of a second or so.
FORMATS: dict[str, tuple[str, Callable[[int], bytes], int]] = {
    "markdown": (".md", _markdown, 3000),
    "text": (".txt", _text, 8000),
    "html": (".html", _html, 200),
    "pdf": (".pdf", _pdf, 10),
    "docx": (".docx", _docx, 150),
    "rst": (".rst", _rst, 300),
    "asciidoc": (".adoc", _adoc, 1000),
    "pptx": (".pptx", _pptx, 25),
    "epub": (".epub", _epub, 30),
    "python": (".py", _python, 1000),
}
MAX_TIME_RATIO = 8.0  # for 4x the input
MAX_PEAK_BYTES = 128 * 1024 * 1024


def test_every_format_the_product_reads_is_measured():
    assert set(FORMATS) == set(KINDS.values())


def _cpu(name: str, data: bytes) -> float:
    """The least CPU time of two loads (a shared machine's noise only ever adds)."""
    times = []
    for _ in range(2):
        start = time.process_time()
        load_document(name, data)
        times.append(time.process_time() - start)
    return min(times)


def _peak(name: str, data: bytes) -> int:
    tracemalloc.start()
    try:
        load_document(name, data)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("kind", list(FORMATS))
def test_a_loader_is_linear_in_its_input(kind):
    suffix, generate, n = FORMATS[kind]
    name = f"big{suffix}"
    small, large = generate(n), generate(4 * n)
    load_document(name, generate(5))  # the format's library imported before anything is timed
    cpu = _cpu(name, small), _cpu(name, large)
    assert cpu[1] < MAX_TIME_RATIO * max(cpu[0], 0.005), f"{kind}: {cpu[0]:.3f}s, then {cpu[1]:.3f}s for 4x the input"
    peak = _peak(name, small), _peak(name, large)
    assert peak[1] < MAX_TIME_RATIO * max(peak[0], 1 << 20) and peak[1] < MAX_PEAK_BYTES, f"{kind}: peak {peak}"


def _module(imports: int, functions: int) -> str:
    header = "".join(f"import mod{i}\n" for i in range(imports))
    return header + "".join(f"\n\ndef f{i}(x):\n    return mod{i}.g(x) + {i}\n" for i in range(functions))


def test_a_module_of_800_imports_and_800_functions_is_about_800_chunks_without_unused_imports():
    source = _module(800, 800)
    assert 40_000 < len(source) < 70_000
    doc = load_document("big.py", source.encode())
    for strategy in ("heading", "code"):
        chunks = chunk_document(doc, ChunkConfig(strategy=strategy))
        units = [c for c in chunks if len(c.heading_path) == 2]
        assert len(units) == 800 and len(chunks) < 900, strategy  # the module section holds the 800 imports
        for chunk in units:
            i = int(chunk.heading_path[1][1:])
            assert re.findall(r"^import (\S+)$", chunk.text, re.M) == [f"mod{i}"]


def test_what_a_unit_carries_is_bounded_however_many_imports_it_uses():
    calls = " + ".join(f"mod{i}.g()" for i in range(200))
    source = "".join(f"import mod{i}\n" for i in range(200)) + f"\n\ndef everything():\n    return {calls}\n"
    doc = load_document("wide.py", source.encode())
    (unit,) = [c for c in chunk_document(doc, ChunkConfig(strategy="code")) if c.heading_path[-1] == "everything"]
    assert len(re.findall(r"^import ", unit.text, re.M)) == MAX_UNIT_IMPORTS


def test_a_unit_cuts_a_shared_import_line_to_the_names_it_uses():
    source = "from typing import Any, Callable\nimport os.path\n\ndef walk(r: 'Any'):\n    return os.path.join(r)\n"
    (unit,) = [c for c in chunk_document(load_document("w.py", source.encode())) if c.heading_path[-1] == "walk"]
    assert unit.text.startswith("```python\nfrom typing import Any\nimport os.path\n\ndef walk(")
