"""What a format's parser hands to `load_document`: one shape for every format."""

from __future__ import annotations

from typing import NamedTuple


class Parsed(NamedTuple):
    """A parser's reading of one file, before the cleaning every format shares.

    A tuple, so a parser with nothing to note returns a plain `(text, pages, title)` and
    `Parsed(*result)` reads both alike.
    """

    text: str
    pages: tuple[int, ...] = ()  # where each page starts in `text` (PDF)
    title: str = ""
    # What the parser left out that the reader should know ("dropped 1,234 characters of hidden text"):
    # shown with the file on the Documents page, carried on the Document.
    notes: tuple[str, ...] = ()
    # (heading title, role) for the sections stored out of ranking: a PDF's contents and index pages, a scan's
    # placeholder (rag.types.ROLE_INDEX ...); carried on the Document, read by the chunker.
    roles: tuple[tuple[str, str], ...] = ()
