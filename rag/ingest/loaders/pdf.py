"""A PDF's text layer as Markdown-shaped pages: headings from the outline, else from font sizes.

A heading is what the author marked as one. The outline (bookmarks) says so directly: each entry's
title becomes a heading of its nesting level on the page it points to (the matching line when the
page has it, else a heading line put at the top of that page). Without an outline, a short line set
clearly larger than the body text (the size most characters use) is a heading, the largest size
level 1. Nothing else is: a line that happens to start with `#` is indented one space so the chunker
does not read it as one. Page starts are kept exact, so every chunk knows its page for citations.
"""

from __future__ import annotations

import logging
import math
import re
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from rag.errors import LoaderError
from rag.ingest.loaders.parsed import Parsed

_HEADING_RATIO = 1.15  # a heading is set at least this much larger than the body
_MAX_HEADING_CHARS = 120
_MARKDOWN_HEADING = re.compile(r"^#{1,6}[ \t]")


def pdf_markdown(reader: Any) -> tuple[str, tuple[int, ...], str]:  # noqa: ANN401 - a pypdf PdfReader
    """The text, each page's start offset, and the first level-1 heading (a title when metadata has none)."""
    pages: list[list[str]] = []
    sizes: list[dict[str, float]] = []
    for page in reader.pages:
        line_sizes: dict[str, float] = {}
        visitor = _SizeVisitor(line_sizes)
        text = page.extract_text(visitor_text=visitor) or ""
        visitor.end_line()
        pages.append(text.split("\n"))
        sizes.append(line_sizes)
    headings = _outline_headings(reader) or _font_headings(pages, sizes)
    out, starts, first = "", [], ""
    for number, lines in enumerate(pages):
        marked = _mark(lines, headings.get(number, []))
        if out:
            out += "\n\n"
        starts.append(len(out))
        out += "\n".join(marked)
        first = first or next((line[2:] for line in marked if line.startswith("# ")), "")
    return out, tuple(starts), first


class _SizeVisitor:
    """Records, per line of extracted text, the font size most of its characters are drawn in."""

    def __init__(self, out: dict[str, float]) -> None:
        self.out = out
        self.line = ""
        self.chars: Counter[float] = Counter()

    def __call__(self, text: str, cm: list[float], tm: list[float], font: Any, size: float) -> None:  # noqa: ANN401
        scale = math.hypot(tm[1], tm[3]) * math.hypot(cm[1], cm[3]) if tm and cm else 1.0
        effective = round(size * (scale or 1.0), 1)
        for part in re.split(r"(\n)", text):
            if part == "\n":
                self.end_line()
            elif part:
                self.line += part
                self.chars[effective] += len(part.strip())

    def end_line(self) -> None:
        """Close the line being collected (also called once after the page: its last line has no newline)."""
        if self.line.strip() and self.chars:
            self.out[_key(self.line)] = self.chars.most_common(1)[0][0]
        self.line, self.chars = "", Counter()


def _key(line: str) -> str:
    return " ".join(line.split()).lower()


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


def _font_headings(pages: list[list[str]], sizes: list[dict[str, float]]) -> dict[int, list[tuple[int, str]]]:
    """Page index -> (level, line) for the short lines set clearly larger than the body text."""
    weight: Counter[float] = Counter()
    for lines, line_sizes in zip(pages, sizes):
        for line in lines:
            if line.strip():
                weight[line_sizes.get(_key(line), 0.0)] += len(line.strip())
    if not weight:
        return {}
    body = weight.most_common(1)[0][0]
    candidates = [
        [
            (line_sizes.get(_key(line), 0.0), line)
            for line in lines
            if _looks_like_heading(line) and line_sizes.get(_key(line), 0.0) >= body * _HEADING_RATIO
        ]
        for lines, line_sizes in zip(pages, sizes)
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


def _mark(lines: list[str], headings: list[tuple[int, str]]) -> list[str]:
    """The page's lines with its headings as `#` lines; outline titles missing from the page go on top."""
    out = [f" {line}" if _MARKDOWN_HEADING.match(line) else line for line in lines]
    missing = []
    for level, title in headings:
        at = next((i for i, line in enumerate(lines) if _key(line) == _key(title) and not out[i].startswith("#")), None)
        if at is None:
            missing.append(f"{'#' * level} {title}")
        else:
            out[at] = f"{'#' * level} {' '.join(lines[at].split())}"
    return missing + out if missing else out


def parse_pdf(data: bytes, source: str) -> Parsed:
    """The PDF's text layer; what pypdf logged while reading it ("EOF marker not found") goes into the file's
    notes, or into the error when it could not be read, instead of onto stderr beside the clear message."""
    with pypdf_log() as said:
        try:
            text, starts, title = _read_pdf(data, source)
        except LoaderError:
            raise
        except Exception as e:  # noqa: BLE001 - pypdf raises many types on corrupt input
            also = f"; pypdf also said: {'; '.join(said)}" if said else ""
            raise LoaderError(f"{source}: could not read this PDF file ({type(e).__name__}: {e}{also})") from None
    notes = tuple(f"pypdf read it with a repair: {message}" for message in said)
    return Parsed(text, starts, title, notes)


def _read_pdf(data: bytes, source: str) -> tuple[str, tuple[int, ...], str]:
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
    text, starts, first_heading = pdf_markdown(reader)
    title = str(reader.metadata.title) if reader.metadata and reader.metadata.title else first_heading
    return text, starts, title


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
