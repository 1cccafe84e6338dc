"""A PDF's text layer as a reader reads it, as Markdown-shaped pages: headings from the outline, else from font sizes.

A heading is what the author marked as one. The outline (bookmarks) says so directly: each entry's
title becomes a heading of its nesting level on the page it points to (the matching line when the
page has it, else a heading line put at the top of that page). Without an outline, a short line set
clearly larger than the body text (the size most characters use) is a heading, the largest size
level 1. Nothing else is: a line that happens to start with `#` is indented one space so the chunker
does not read it as one. Text before the first heading (a title page, a copyright page) goes under the
document's title.

What a reader skips is left out and what typesetting broke is mended, each step in its own module:
running heads, feet and page numbers (pdf_furniture), ligatures, lines of a paragraph and words
hyphenated across them (pdf_reading); contents and index pages are named as such (pdf_roles) so they
are stored out of ranking. Page starts are kept exact, so every chunk knows its page for citations.
"""

from __future__ import annotations

import logging
import re
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

from rag.errors import LoaderError
from rag.ingest.loaders.parsed import Parsed
from rag.ingest.loaders.pdf_furniture import strip_furniture
from rag.ingest.loaders.pdf_pages import Line, line_key, page_lines
from rag.ingest.loaders.pdf_reading import (
    document_words,
    fold_ligatures,
    join_across_pages,
    join_hyphenated,
    layout_of,
    reading_lines,
)
from rag.ingest.loaders.pdf_roles import page_role, title_role
from rag.types import ROLE_CONTENTS, ROLE_NO_TEXT

_HEADING_RATIO = 1.15  # a heading is set at least this much larger than the body
_MAX_HEADING_CHARS = 120
_MARKDOWN_HEADING = re.compile(r"^#{1,6}[ \t]")
# A heading's number as typeset before its title ("3.2.4", "D.1", "Appendix B", "Part I"): the outline's
# title is found on the page without it.
_NUMBERING = re.compile(
    r"^(?:(?:chapter|appendix|part|section)\s+)?(?:\d+(?:\.\d+)*|[a-z](?:\.\d+)+|[a-z]|[ivxlcdm]+)\.?\s+"
)
_SCANT = 20  # a page with fewer letters than this has no text layer worth the name (a scan, a picture)
NO_TEXT_LAYER = "no text layer: needs OCR"


@dataclass(frozen=True)
class PdfText:
    """What `pdf_markdown` read: the text, each page's start offset, the title, the sections out of ranking
    (heading title, role), and what the reader should know (a scan's warning)."""

    text: str
    starts: tuple[int, ...]
    title: str
    roles: tuple[tuple[str, str], ...] = ()
    notes: tuple[str, ...] = ()


def pdf_markdown(reader: Any, source: str = "") -> PdfText:  # noqa: ANN401 - a pypdf PdfReader
    """The PDF as a reader reads it; `source` names a scan's placeholder when the PDF has no title."""
    raw = [[replace(line, text=fold_ligatures(line.text)) for line in page_lines(page)] for page in reader.pages]
    scant = sum(sum(ch.isalpha() for line in lines for ch in line.text) < _SCANT for lines in raw)
    title = _metadata_title(reader) or _title_line(raw)
    if raw and scant == len(raw):
        return _no_text(len(raw), title or source)
    pages = strip_furniture(raw)
    outline = _outline_headings(reader)
    headings = outline or _font_headings(pages)
    # An entry named Index or Contents is one at the outline's top, or when its page reads as one: gnuplot's
    # "plot > Index" is a keyword's section.
    page_roles = [page_role(lines) for lines in pages]
    roles = {
        t: r
        for number, entries in outline.items()
        for level, t in entries
        if (r := title_role(t)) and (level == 1 or page_roles[number])
    }
    _name_navigation(page_roles, pages, headings, roles)
    title = title or next((t for entries in headings.values() for level, t in entries if level == 1), "")
    if title and headings and not _starts_with_heading(pages, headings):  # front matter: under the title
        headings = {**headings, 0: [(1, title), *headings.get(0, [])]}
    words = document_words(pages)
    layout = layout_of(lines for lines, role in zip(pages, page_roles) if not role)
    out_pages: list[list[str]] = []
    path: list[tuple[int, str]] = []  # the headings open at this point: (level, title)
    for number, lines in enumerate(pages):
        out: list[str] = []
        for segment in _segments(_mark(lines, headings.get(number, []))):
            if segment[0].heading:
                level = len(segment[0].text) - len(segment[0].text.lstrip("#"))
                path = [(lvl, t) for lvl, t in path if lvl < level] + [(level, segment[0].text[level:].strip())]
            if out:
                out.append("")
            if any(t in roles for _, t in path):  # a contents or index section: its lines, words made whole
                out.extend(join_hyphenated([line.text for line in segment], words))
            else:
                out.extend(reading_lines(segment, words, layout))
        if out_pages:
            join_across_pages(out_pages[-1], out, words)
        out_pages.append(out)
    text, starts = _join_pages(out_pages)
    notes: tuple[str, ...] = ()
    if scant * 2 >= len(raw) > 1:
        notes = (f"{NO_TEXT_LAYER}: {scant} of its {len(raw)} pages have no text to read (scanned pages?)",)
    return PdfText(text, starts, title, tuple(roles.items()), notes)


def _segments(lines: list[Line]) -> Iterator[list[Line]]:
    """A page's lines cut before each heading: what comes before the first, then each heading with its text."""
    current: list[Line] = []
    for line in lines:
        if line.heading and current:
            if any(x.text.strip() for x in current):
                yield current
            current = []
        current.append(line)
    if any(line.text.strip() for line in current):
        yield current


def _join_pages(pages: list[list[str]]) -> tuple[str, tuple[int, ...]]:
    out, starts = "", []
    for lines in pages:
        if out:
            out += "\n\n"
        starts.append(len(out))
        out += "\n".join(lines)
    return out, tuple(starts)


def _no_text(pages: int, title: str) -> PdfText:
    """A scan: one placeholder section saying so, stored (so the Documents page lists the file with its warning)
    but out of ranking."""
    body = (
        f"No text layer: needs OCR. None of the {pages} pages of this PDF has text to read: it is a scan, or "
        "pictures of pages. Run OCR on it (for example with ocrmypdf) and ingest it again."
    )
    text = f"# {title}\n\n{body}"
    note = f"{NO_TEXT_LAYER}: none of its {pages} pages has text to read (a scan?); stored as a placeholder"
    return PdfText(text, (0,) + (len(text),) * (pages - 1), title, ((title, ROLE_NO_TEXT),), (note,))


def _metadata_title(reader: Any) -> str:  # noqa: ANN401 - a pypdf PdfReader
    try:
        title = reader.metadata.title if reader.metadata else None
    except Exception:  # noqa: BLE001 - a damaged info dictionary: the title comes from the pages
        return ""
    title = " ".join(str(title).split()) if title else ""
    return "" if title.lower() == "untitled" else title  # what reportlab and others write when nobody named it


def _title_line(pages: list[list[Line]]) -> str:
    """The first page's line set in the largest size (a title page's title), "" when sizes say nothing."""
    lines = [line for line in (pages[0] if pages else []) if _looks_like_heading(line.text) and line.size]
    if len({line.size for line in lines}) < 2:
        return ""
    return " ".join(max(lines, key=lambda line: line.size).text.split())


def _starts_with_heading(pages: list[list[Line]], headings: dict[int, list[tuple[int, str]]]) -> bool:
    """Whether the first text of the document is a heading (else it is front matter, put under the title)."""
    for number, lines in enumerate(pages):
        marked = _mark(lines, headings.get(number, []))
        first = next((line for line in marked if line.text.strip()), None)
        if first is not None:
            return first.heading
    return True


def _name_navigation(
    page_roles: list[str], pages: list[list[Line]], headings: dict[int, list[tuple[int, str]]], roles: dict[str, str]
) -> None:
    """Complete `roles` (heading title -> role) and `headings` for the contents and index pages no outline entry
    names as such: such a page's first heading is the section's, or a page without one gets a heading."""
    open_roles: list[tuple[int, bool]] = []  # (level, named as navigation) of each heading open
    for number, (lines, role) in enumerate(zip(pages, page_roles)):
        on_page = headings.get(number, [])
        covered = any(nav for _, nav in open_roles)
        if role and not covered and not any(t in roles for _, t in on_page):
            if on_page:
                roles[on_page[0][1]] = role
            else:
                first = " ".join(next((line.text for line in lines if line.text.strip()), "").split())
                name = first if title_role(first) else "Contents" if role == ROLE_CONTENTS else "Index"
                level = min(open_roles[-1][0] + 1, 6) if open_roles else 2
                headings[number] = on_page = [(level, name)]
                roles[name] = role
        for level, t in on_page:
            open_roles = [(lvl, nav) for lvl, nav in open_roles if lvl < level] + [(level, t in roles)]


def _outline_headings(reader: Any) -> dict[int, list[tuple[int, str]]]:  # noqa: ANN401
    """Page index -> (level, title) of each outline entry, in outline order; {} without an outline."""
    found: dict[int, list[tuple[int, str]]] = {}

    def walk(items: list[Any], level: int) -> None:
        for item in items:
            if isinstance(item, list):
                walk(item, level + 1)
                continue
            try:
                page = reader.get_destination_page_number(item)
                title = " ".join(str(item.title).split())
            except Exception:  # noqa: BLE001 - a broken outline entry is skipped, the text still loads
                continue
            if title and page is not None and page >= 0:
                found.setdefault(page, []).append((min(level, 6), title))

    try:
        walk(reader.outline, 1)
    except Exception:  # noqa: BLE001 - an unreadable outline: fall back to font sizes
        return {}
    return found


def _font_headings(pages: list[list[Line]]) -> dict[int, list[tuple[int, str]]]:
    """Page index -> (level, line) for the short lines set clearly larger than the body text."""
    weight: Counter[float] = Counter()
    for lines in pages:
        for line in lines:
            if line.text.strip():
                weight[line.size] += len(line.text.strip())
    if not weight:
        return {}
    body = weight.most_common(1)[0][0]
    candidates = [
        [
            (line.size, line.text)
            for line in lines
            if _looks_like_heading(line.text) and line.size >= body * _HEADING_RATIO
        ]
        for lines in pages
    ]
    levels = {
        size: min(i + 1, 6) for i, size in enumerate(sorted({s for page in candidates for s, _ in page}, reverse=True))
    }
    return {
        number: [(levels[s], " ".join(line.split())) for s, line in page]
        for number, page in enumerate(candidates)
        if page
    }


def _looks_like_heading(line: str) -> bool:
    text = line.strip()
    return (
        0 < len(text) <= _MAX_HEADING_CHARS and any(ch.isalpha() for ch in text) and not text.endswith((".", ",", ";"))
    )


def _mark(lines: list[Line], headings: list[tuple[int, str]]) -> list[Line]:
    """The page's lines with its headings as `#` lines. An outline title missing from the page goes where the
    outline's order puts it: before the next title found on the page, else after the last (its section starts
    on a later page), else, with none found, on top."""
    out = [replace(line, text=f" {line.text}") if _MARKDOWN_HEADING.match(line.text) else line for line in lines]
    found: list[int | None] = []
    for level, title in headings:
        at = _heading_line(lines, out, title)
        if at is not None:
            text = " ".join(lines[at].text.split()) if line_key(lines[at].text) == line_key(title) else title
            out[at] = Line(f"{'#' * level} {text}", heading=True)
        found.append(at)
    before: dict[int, list[Line]] = {}  # line index -> missing headings to put before it (len(out): the end)
    for j, ((level, title), at) in enumerate(zip(headings, found)):
        if at is None:
            after = next((k for k in found[j + 1 :] if k is not None), None)
            where = after if after is not None else len(out) if any(k is not None for k in found[:j]) else 0
            before.setdefault(where, []).append(Line(f"{'#' * level} {title}", heading=True))
    if not before:
        return out
    return [line for i in range(len(out) + 1) for line in (*before.get(i, []), *out[i : i + 1])]


def _heading_line(lines: list[Line], out: list[Line], title: str) -> int | None:
    """The line of the page that is this heading: its title, or its title after a number ("3.2.4 Lists")."""
    key = line_key(title)
    free = [i for i in range(len(lines)) if not out[i].heading]
    exact = next((i for i in free if line_key(lines[i].text) == key), None)
    if exact is not None:
        return exact
    return next((i for i in free if _NUMBERING.sub("", line_key(lines[i].text), 1) == key), None)


def parse_pdf(data: bytes, source: str) -> Parsed:
    """The PDF's text layer; what pypdf logged while reading it ("EOF marker not found") goes into the file's
    notes, or into the error when it could not be read, instead of onto stderr beside the clear message."""
    with pypdf_log() as said:
        try:
            read = _read_pdf(data, source)
        except LoaderError:
            raise
        except Exception as e:  # noqa: BLE001 - pypdf raises many types on corrupt input
            also = f"; pypdf also said: {'; '.join(said)}" if said else ""
            raise LoaderError(f"{source}: could not read this PDF file ({type(e).__name__}: {e}{also})") from None
    notes = tuple(f"pypdf read it with a repair: {message}" for message in said)
    return Parsed(read.text, read.starts, read.title, read.notes + notes, read.roles)


def _read_pdf(data: bytes, source: str) -> PdfText:
    import io

    from pypdf import PdfReader  # here: pypdf costs start-up that only PDFs need

    reader = PdfReader(io.BytesIO(data))
    if reader.is_encrypted:
        try:
            if not reader.decrypt(""):
                raise LoaderError(f"{source}: the PDF is encrypted; remove the password and upload it again")
        except LoaderError:
            raise
        except Exception:  # noqa: BLE001 - pypdf raises many types on an unsupported encryption; all mean the same
            raise LoaderError(f"{source}: the PDF is encrypted; remove the password and upload it again") from None
    return pdf_markdown(reader, source)


class _PypdfRoute(logging.Handler):
    """pypdf's log records: kept for the file this thread is reading, else passed to the root logger as before."""

    def __init__(self) -> None:
        super().__init__()
        self.local = threading.local()

    def emit(self, record: logging.LogRecord) -> None:
        said: list[str] | None = getattr(self.local, "said", None)
        if said is None:
            logging.getLogger().handle(record)
        elif record.levelno >= logging.WARNING and (message := record.getMessage()) not in said:
            said.append(message)


_ROUTE = _PypdfRoute()


@contextmanager
def pypdf_log() -> Iterator[list[str]]:
    """Collect the warnings pypdf logs on this thread (each once) while the block runs; other threads' records,
    and any outside such a block, reach the root logger as usual."""
    logger = logging.getLogger("pypdf")
    if _ROUTE not in logger.handlers:
        logger.addHandler(_ROUTE)
        logger.propagate = False
    said: list[str] = []
    _ROUTE.local.said = said
    try:
        yield said
    finally:
        _ROUTE.local.said = None
