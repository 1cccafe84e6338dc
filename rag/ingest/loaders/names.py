"""What a file is called once stored, and which loader reads it (by its suffix)."""

from __future__ import annotations

import hashlib
import posixpath
import unicodedata

from rag.errors import LoaderError
from rag.ingest.loaders.formats import FORMATS

# suffix -> kind, and the kinds that are zip archives: both from the one format table (formats.py).
KINDS = {suffix: f.kind for f in FORMATS for suffix in f.suffixes}
SUPPORTED_SUFFIXES = tuple(KINDS)
ZIP_KINDS = {f.kind for f in FORMATS if f.zipped}  # held to the archive limits before parsing
MAX_SOURCE_CHARS = 200
# Longer given names are recorded as their start and a hash: still one identity each, never a huge payload.
MAX_ORIGINAL_CHARS = 1000


def safe_source(name: str) -> str:
    """A display/storage name that cannot escape a folder: no `..`, no NUL, no absolute path, bounded length.

    Unicode NFC: macOS file systems and zips write "café" decomposed (NFD), browsers and most keyboards
    composed; both must name one document, or an edited version re-uploaded under the other form would be
    stored beside the old one instead of replacing it.
    """
    name = "".join(ch for ch in _spelling(name) if not _is_control(ch))
    cleaned = "/".join(_path_parts(name))
    if len(cleaned) > MAX_SOURCE_CHARS:
        stem, dot, suffix = cleaned.rpartition(".")
        keep = MAX_SOURCE_CHARS - len(suffix) - 1 if dot and len(suffix) <= 10 else MAX_SOURCE_CHARS
        cleaned = cleaned[:keep] + (f".{suffix}" if dot and len(suffix) <= 10 else "")
    if not cleaned:
        raise LoaderError(f"file name {name!r} is empty once path parts are removed")
    return cleaned


def original_name(name: str) -> str:
    """The name a file was given, as the identity of the document it is stored as.

    `safe_source` is lossy on purpose (control characters dropped, long names cut), so two different
    files can get one stored name; ingest records this name with the document and refuses a file whose
    stored name matches but whose original does not, instead of letting it replace the other. Only what
    names one file in two spellings is normalised here (Unicode form, `\\` for `/`, `.` and `..`
    parts); control characters are kept, written as escapes (`\\n`, `\\x00`: unambiguous, as no `\\`
    is left), so the name prints on one line and is safe in a message.
    """
    escaped = "".join(ch.encode("unicode_escape").decode("ascii") if _is_control(ch) else ch for ch in _spelling(name))
    key = "/".join(_path_parts(escaped))
    if len(key) <= MAX_ORIGINAL_CHARS:
        return key
    digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]
    return f"{key[: MAX_ORIGINAL_CHARS - 50]}… (sha256 {digest})"


def _spelling(name: str) -> str:
    """One spelling for names of one file: Unicode NFC (macOS writes decomposed), `/` for `\\`."""
    return unicodedata.normalize("NFC", name.replace("\\", "/"))


def _is_control(ch: str) -> bool:
    return unicodedata.category(ch)[0] == "C"


def _path_parts(name: str) -> list[str]:
    """The folders and file of a relative path, with `.`, `..` and empty parts resolved away."""
    return [p for p in posixpath.normpath("/" + name).split("/") if p not in ("", ".", "..")]


def kind_of(name: str) -> str:
    suffix = posixpath.splitext(name.lower())[1]
    if suffix not in KINDS:
        raise LoaderError(
            f"{name}: unsupported file type {suffix or '(none)'}; supported: {', '.join(SUPPORTED_SUFFIXES)}"
        )
    return KINDS[suffix]
