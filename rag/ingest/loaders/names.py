"""What a file is called once stored, and which loader reads it (by its suffix)."""

from __future__ import annotations

import posixpath
import unicodedata

from rag.errors import LoaderError

KINDS = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".txt": "text",
    ".text": "text",
    ".html": "html",
    ".htm": "html",
    ".pdf": "pdf",
    ".docx": "docx",
}
SUPPORTED_SUFFIXES = tuple(KINDS)
ZIP_KINDS = {"docx"}  # formats that are zip archives: held to the archive limits before parsing
MAX_SOURCE_CHARS = 200


def safe_source(name: str) -> str:
    """A display/storage name that cannot escape a folder: no `..`, no NUL, no absolute path, bounded length.

    Unicode NFC: macOS file systems and zips write "café" decomposed (NFD), browsers and most keyboards
    composed; both must name one document, or an edited version re-uploaded under the other form would be
    stored beside the old one instead of replacing it.
    """
    name = unicodedata.normalize("NFC", name.replace("\\", "/").replace("\x00", ""))
    name = "".join(ch for ch in name if unicodedata.category(ch)[0] != "C")
    parts = [p for p in posixpath.normpath("/" + name).split("/") if p not in ("", ".", "..")]
    cleaned = "/".join(parts)
    if len(cleaned) > MAX_SOURCE_CHARS:
        stem, dot, suffix = cleaned.rpartition(".")
        keep = MAX_SOURCE_CHARS - len(suffix) - 1 if dot and len(suffix) <= 10 else MAX_SOURCE_CHARS
        cleaned = cleaned[:keep] + (f".{suffix}" if dot and len(suffix) <= 10 else "")
    if not cleaned:
        raise LoaderError(f"file name {name!r} is empty once path parts are removed")
    return cleaned


def kind_of(name: str) -> str:
    suffix = posixpath.splitext(name.lower())[1]
    if suffix not in KINDS:
        raise LoaderError(
            f"{name}: unsupported file type {suffix or '(none)'}; supported: {', '.join(SUPPORTED_SUFFIXES)}"
        )
    return KINDS[suffix]
