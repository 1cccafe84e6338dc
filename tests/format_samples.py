"""Small documents in every format the loaders read beyond Markdown, text, HTML, PDF and DOCX, built in memory
(python-pptx and ebooklib write the binary ones): shared by the loader tests and the Documents page tests."""

from __future__ import annotations

import io
import zipfile

from ebooklib import epub
from pptx import Presentation
from pptx.util import Inches


RST = b"""
===========
Ferry Guide
===========

Boats leave from pier ``B`` every hour; see :func:`~ferry.fares.total`.

Tickets
=======

A single ticket costs four euros.

- Bring a bike
- Bring a dog

Weekly pass
   Valid for seven days.

.. code-block:: python

   # a comment, not a heading
   fare = 4

.. include:: /etc/passwd

.. raw:: html

   <script>alert("raw html")</script>

Children
--------

Children under six ride free.

Bikes
=====

Bikes ride free on weekdays.
"""

ADOC = b"""= Ferry Guide
Jane Doe <jane@example.com>
:toc:

Boats leave from pier B every hour.

// a comment nobody should read
== Tickets

A single ticket costs four euros.

* Bring a bike
* Bring a dog

[source,python]
----
# a comment, not a heading
fare = 4
----

include::secret.adoc[]

=== Children

Children under six ride free.

|===
|Zone |Price
|A |4
|===

== Bikes

Bikes ride free on weekdays.
"""

PY = b'''"""Ferry fares."""

import os
from dataclasses import dataclass

RATE = 4  # euros per zone


def total(fares: list[int]) -> int:
    """The fare of a trip."""
    return sum(fares) * RATE


class Small:
    def go(self) -> str:
        return os.sep
'''


def big_class() -> bytes:
    """A class over LARGE_CLASS_CHARS: its methods are sections of their own."""
    doc = "words " * 40
    methods = "".join(
        f'    def zone_{i}(self) -> int:\n        """Price of zone {i}: {doc}"""\n        return len(os.sep) + {i}\n\n'
        for i in range(8)
    )
    return PY + b'\n\nclass Timetable:\n    """When boats leave."""\n\n    ports = 3\n\n' + methods.encode()


def make_pptx() -> bytes:
    presentation = Presentation()
    first = presentation.slides.add_slide(presentation.slide_layouts[1])  # title and content
    first.shapes.title.text = "Tickets"
    body = first.placeholders[1].text_frame
    body.text = "A single ticket costs four euros."
    sub = body.add_paragraph()
    sub.text, sub.level = "Children ride free", 1
    first.notes_slide.notes_text_frame.text = "Mention the weekly pass."
    second = presentation.slides.add_slide(presentation.slide_layouts[5])  # title only
    second.shapes.title.text = "Prices"
    table = second.shapes.add_table(2, 2, Inches(1), Inches(2), Inches(4), Inches(1)).table
    for r, row in enumerate([("Zone", "Price"), ("A", "4")]):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    third = presentation.slides.add_slide(presentation.slide_layouts[6])  # blank: no title
    third.shapes.add_textbox(Inches(1), Inches(1), Inches(4), Inches(1)).text_frame.text = "Bikes ride free."
    buf = io.BytesIO()
    presentation.save(buf)
    return buf.getvalue()


def make_epub(extra: dict[str, bytes] | None = None) -> bytes:
    book = epub.EpubBook()
    book.set_identifier("ferry-1")
    book.set_title("Ferry Book")
    book.set_language("en")
    one = epub.EpubHtml(title="Tickets", file_name="ch1.xhtml", lang="en")
    one.content = "<h1>Tickets</h1><p>A single ticket costs four euros.</p><h2>Children</h2><p>Children ride free.</p>"
    two = epub.EpubHtml(title="Bikes", file_name="ch2.xhtml", lang="en")
    two.content = "<p>Bikes ride free on weekdays.</p><h2>Folding bikes</h2><p>Folding bikes always ride free.</p>"
    for chapter in (one, two):
        book.add_item(chapter)
    book.toc = [epub.Link("ch1.xhtml", "Tickets", "one"), epub.Link("ch2.xhtml", "Bikes (chapter two)", "two")]
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    book.spine = ["nav", one, two]
    buf = io.BytesIO()
    epub.write_epub(buf, book)
    if not extra:
        return buf.getvalue()
    out = io.BytesIO()
    with zipfile.ZipFile(buf) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            dst.writestr(info, src.read(info))
        for name, data in extra.items():
            dst.writestr(name, data)
    return out.getvalue()
