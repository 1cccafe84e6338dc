"""Bytes in, `Document` out: the format's loader (one module each), then the same cleaning for all.

Every format is turned into Markdown-shaped text (headings as `#`, tables as pipe tables) so one
heading-aware chunker serves them all and chunk offsets always index the text we show.
"""

from __future__ import annotations

import importlib
import re
import unicodedata
from typing import Callable

from rag.errors import LoaderError
from rag.ingest.loaders.archive import ArchiveLimits, check_zip_container
from rag.ingest.loaders.formats import BY_KIND
from rag.ingest.loaders.names import ZIP_KINDS, kind_of, original_name, safe_source
from rag.ingest.loaders.parsed import Parsed
from rag.text.invisible import drop_invisible
from rag.text.sizes import mib
from rag.types import Document


def load_document(name: str, data: bytes, max_bytes: int = 50 * 1024 * 1024) -> Document:
    """Load one file.

    Args:
        name: file name or relative path; used (sanitised) as the document's source, and recorded
            as given (`original_name`) to tell it from another file that sanitises alike.
        data: the file's bytes.
        max_bytes: files larger than this are refused before parsing.

    Returns:
        A Document whose text is what chunks index into.

    Raises:
        LoaderError: the file is empty, too big, binary, undecodable, encrypted, has no text layer,
            or is of an unsupported type; the message names the file.
    """
    source = safe_source(name)
    kind = kind_of(source)
    if len(data) > max_bytes:
        raise LoaderError(
            f"{source}: {mib(len(data))} is over the {mib(max_bytes)} limit per file (RAGSCOPE_MAX_UPLOAD_MB)"
        )
    if not data.strip():
        raise LoaderError(f"{source}: the file is empty")
    if kind in ZIP_KINDS:
        check_zip_container(
            source, data, kind.upper(), ArchiveLimits(max_total_bytes=2 * max_bytes, max_file_bytes=max_bytes)
        )
    try:
        text, pages, title, notes, roles = Parsed(*_parser(kind)(data, source))
    except LoaderError:
        raise
    except Exception as e:  # noqa: BLE001 - third-party parsers raise anything on corrupt input
        raise LoaderError(f"{source}: could not read this {kind.upper()} file ({type(e).__name__}: {e})") from None
    text, pages, hidden = _clean(text, pages)
    if not text.strip():
        hint = " (a scanned PDF has no text layer; run OCR first)" if kind == "pdf" else ""
        raise LoaderError(f"{source}: no text found{hint}")
    return Document(
        source=source,
        text=text,
        kind=kind,
        size_bytes=len(data),
        pages=pages,
        title=title,
        original=data,
        original_name=original_name(name),
        notes=notes,
        hidden=hidden,
        roles=roles,
    )


def _clean(text: str, pages: tuple[int, ...]) -> tuple[str, tuple[int, ...], tuple[tuple[int, str], ...]]:
    """Normalise whitespace and drop invisible characters; pages are cleaned one by one so their start offsets
    stay exact. Also returns the invisible runs worth scanning, at their offsets in the cleaned text."""
    if not pages:
        cleaned, hidden = _clean_part(text)
        return cleaned, (), hidden
    bounds = list(pages) + [len(text)]
    parts = [_clean_part(text[bounds[i] : bounds[i + 1]]) for i in range(len(pages))]
    out, starts, hidden = "", [], []
    for part, runs in parts:
        if out and part:
            out += "\n\n"
        starts.append(len(out))
        hidden += [(len(out) + at, run) for at, run in runs]
        out += part
    return out, tuple(starts), tuple(hidden)


def _clean_part(text: str) -> tuple[str, tuple[tuple[int, str], ...]]:
    text = unicodedata.normalize("NFC", text.replace("\r\n", "\n").replace("\r", "\n"))
    text = "".join(ch for ch in text if ch in "\n\t" or unicodedata.category(ch) != "Cc")
    text = "\n".join(line.rstrip() for line in text.split("\n"))
    text = re.sub(r"\n{3,}", "\n\n", text)
    # Last, so the offsets of what it removes index the text as stored: no format character is stored,
    # shown or sent to a model (docs/security.md).
    return drop_invisible(text.strip("\n"))


def _parser(kind: str) -> Callable[[bytes, str], Parsed | tuple[str, tuple[int, ...], str]]:
    """The kind's parser (formats.FORMATS), its module (and the library it wraps) imported on first use."""
    module, name = BY_KIND[kind].parser.split(":")
    return getattr(importlib.import_module(module), name)
