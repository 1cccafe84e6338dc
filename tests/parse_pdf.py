"""A small PDF with parse problems, made with reportlab: two pages of prose, a page that is little but its
footer, and an index page, each page under a running head, a three-line footer and its page number.

The loader drops the running head and the edge lines of the footer (rag.ingest.loaders.pdf_furniture peels
two lines from each edge) and names the index page; what is left of the footer (its first two lines) stays in
every page's text, as such blocks do in real manuals: the parse signals must find it where it is most of a
page, and not in the prose.
"""

from __future__ import annotations

import io

from reportlab.lib.pagesizes import A4
from reportlab.pdfgen import canvas

HEAD = "Harbour Handbook: Ferry Services"
FOOTER = (
    "Harbour Authority, 1 Quay Street, Portsmouth PO1 2AB",
    "Telephone 023 9200 1234, ferries@harbour.example",
    "Document HB-2, revision 4",
)
FERRIES = (
    "The harbour runs three ferries a day between the pier and the island, and each crossing takes about",
    "forty minutes when the sea is calm. Before every crossing the crew checks the windlass, the life rafts",
    "and the radio; a ferry that fails the check stays in port until the yard has mended it. In a gale the",
    "harbour master may stop every crossing, and the timetable at the pier office says when they resume.",
    "Dogs travel free on a lead, and bicycles are carried on the lower deck when there is room for them.",
)
TICKETS = (
    "Tickets are sold at the pier office from seven in the morning until the last ferry of the evening has",
    "left. A single ticket is valid for one crossing on the day it is bought; a return ticket is valid for",
    "the way back on the same day. Season tickets for residents of the island cost forty pounds a month and",
    "are sold against proof of address. A refund is given for any crossing the harbour master cancels, at",
    "the office where the ticket was bought, on the day or within the following fortnight.",
)
NOTES = ("Intentionally left blank.",)
INDEX = (
    "anchor . . . . . . . . . . . . . . 1",
    "crossing . . . . . . . . . . . . . 1",
    "ferry, 1, 2",
    "life rafts, 1",
    "refund, 2",
    "season ticket, 2",
    "windlass . . . . . . . . . . . . . 1",
)
PAGES = (("Ferry services", FERRIES), ("Tickets", TICKETS), ("Notes", NOTES), ("Index", INDEX))


def harbour_pdf() -> bytes:
    """The handbook's four pages, each with its outline entry, in the order a reader reads them."""
    buf = io.BytesIO()
    c = canvas.Canvas(buf, pagesize=A4)
    c.setTitle("Harbour Handbook")
    for number, (title, lines) in enumerate(PAGES, 1):
        c.setFont("Helvetica", 9)
        c.drawString(72, 800, HEAD)
        c.bookmarkPage(f"p{number}")
        c.addOutlineEntry(title, f"p{number}", level=0)
        c.setFont("Helvetica-Bold", 14)
        c.drawString(72, 770, title)
        c.setFont("Helvetica", 9)
        for i, line in enumerate(lines):
            c.drawString(72, 745 - 13 * i, line)
        for i, line in enumerate(FOOTER):
            c.drawString(72, 70 - 11 * i, line)
        c.drawString(297, 30, str(number))
        c.showPage()
    c.save()
    return buf.getvalue()
