"""Bytes in, `Document` out: one loader per format, all producing cleaned text.

Every format is turned into Markdown-shaped text (headings as `#`, tables as pipe tables) so one
heading-aware chunker serves them all and chunk offsets always index the text we show.
"""

from __future__ import annotations

import io
import posixpath
import re
import unicodedata
from typing import Callable

from rag.errors import LoaderError
from rag.types import Document

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


def load_document(name: str, data: bytes, max_bytes: int = 50 * 1024 * 1024) -> Document:
    """Load one file.

    Args:
        name: file name or relative path; used (sanitised) as the document's source.
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
        raise LoaderError(f"{source}: {len(data) / 1e6:.1f} MB is over the {max_bytes / 1e6:.0f} MB limit")
    if not data.strip():
        raise LoaderError(f"{source}: the file is empty")
    if kind in ZIP_KINDS:
        from rag.archive import ArchiveLimits, check_zip_container  # archive imports this module

        check_zip_container(source, data, kind.upper(), ArchiveLimits(max_total_bytes=2 * max_bytes, max_file_bytes=max_bytes))
    try:
        text, pages, title = _PARSERS[kind](data, source)
    except LoaderError:
        raise
    except Exception as e:  # third-party parsers raise anything on corrupt input
        raise LoaderError(f"{source}: could not read this {kind.upper()} file ({type(e).__name__}: {e})") from None
    text, pages = _clean(text, pages)
    if not text.strip():
        hint = " (a scanned PDF has no text layer; run OCR first)" if kind == "pdf" else ""
        raise LoaderError(f"{source}: no text found{hint}")
    return Document(source=source, text=text, kind=kind, size_bytes=len(data), pages=pages, title=title, original=data)


def decode_text(data: bytes, source: str) -> str:
    """Decode text files: BOMs first, then UTF-8, then UTF-16 without BOM, then Latin-1; refuse binary."""
    text = _decode(data, source)
    controls = sum(1 for ch in text[:20000] if unicodedata.category(ch) == "Cc" and ch not in "\n\r\t\f")
    if controls > 0.05 * min(len(text), 20000):
        raise LoaderError(f"{source}: looks like a binary file, not text")
    return text


def _decode(data: bytes, source: str) -> str:
    for bom, codec in ((b"\xef\xbb\xbf", "utf-8-sig"), (b"\xff\xfe", "utf-16"), (b"\xfe\xff", "utf-16")):
        if data.startswith(bom):
            try:
                return data.decode(codec)
            except UnicodeDecodeError:
                raise LoaderError(f"{source}: starts with a {codec} byte-order mark but does not decode as {codec}") from None
    if b"\x00" in data[:4096]:
        sample = data[:4096]
        # UTF-16 text without BOM has NULs in every other byte (and few in the others); anything else
        # with NULs is binary. Every decoded result still passes the control-character check.
        odd, even = sample[1::2].count(0) / max(len(sample) // 2, 1), sample[0::2].count(0) / max(len(sample) // 2, 1)
        if len(sample) >= 4 and max(odd, even) > 0.4 and min(odd, even) < 0.05:
            try:
                return data.decode("utf-16-le" if odd > even else "utf-16-be")
            except UnicodeDecodeError:
                pass
        raise LoaderError(f"{source}: looks like a binary file, not text")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        return _decode_legacy(data, source, e)


def _decode_legacy(data: bytes, source: str, error: UnicodeDecodeError) -> str:
    """Windows-1252 / Latin-1 text, unless the file is UTF-8 with damaged bytes.

    Real UTF-8 sequences next to invalid bytes mean a damaged or mixed file: decoding it all as
    Latin-1 would turn every accented letter into mojibake, so refuse it and say where it breaks.
    cp1252 is tried before Latin-1 because Windows "Latin-1" files put curly quotes in 0x80-0x9F,
    which Latin-1 reads as control characters (and cleaning would then drop them).
    """
    replaced = data.decode("utf-8", errors="replace")
    if any(ord(ch) > 127 and ch != "\ufffd" for ch in replaced):
        raise LoaderError(
            f"{source}: is not valid UTF-8 (byte 0x{data[error.start]:02x} at offset {error.start}) although "
            "other parts are UTF-8; the file is damaged or mixes encodings. Re-save it as UTF-8."
        )
    try:
        return data.decode("cp1252")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def _clean(text: str, pages: tuple[int, ...]) -> tuple[str, tuple[int, ...]]:
    """Normalise whitespace; pages are cleaned one by one so their start offsets stay exact."""
    if not pages:
        return _clean_part(text), ()
    bounds = list(pages) + [len(text)]
    parts = [_clean_part(text[bounds[i] : bounds[i + 1]]) for i in range(len(pages))]
    out, starts = "", []
    for part in parts:
        if out and part:
            out += "\n\n"
        starts.append(len(out))
        out += part
    return out, tuple(starts)


def _clean_part(text: str) -> str:
    text = unicodedata.normalize("NFC", text.replace("\r\n", "\n").replace("\r", "\n"))
    text = "".join(ch for ch in text if ch in "\n\t" or unicodedata.category(ch) != "Cc")
    text = "\n".join(line.rstrip() for line in text.split("\n"))
    text = re.sub(r"\n{3,}", "\n\n", text)
    return text.strip("\n")


def _markdown(data: bytes, source: str) -> tuple[str, tuple[int, ...], str]:
    text = decode_text(data, source)
    match = re.search(r"^#\s+(.+)$", text, re.M)
    return text, (), match.group(1).strip() if match else ""


def _text(data: bytes, source: str) -> tuple[str, tuple[int, ...], str]:
    return decode_text(data, source), (), ""


def _html(data: bytes, source: str) -> tuple[str, tuple[int, ...], str]:
    from rag.html_text import html_to_markdown  # imports this module: loaded on first use

    text, title = html_to_markdown(decode_text(data, source))
    return text, (), title


def rows_to_markdown(rows: list[list[str]]) -> str:
    """Table rows as a pipe table, the first row as its header (`|` in cells escaped)."""
    rows = [r for r in rows if any(cell for cell in r)]
    if not rows:
        return ""
    width = max(len(r) for r in rows)
    rows = [[c.replace("|", "\\|").replace("\n", " ") for c in r] + [""] * (width - len(r)) for r in rows]
    lines = ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * width]
    lines += ["| " + " | ".join(r) + " |" for r in rows[1:]]
    return "\n".join(lines)


def _pdf(data: bytes, source: str) -> tuple[str, tuple[int, ...], str]:
    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO(data))
    if reader.is_encrypted:
        try:
            if not reader.decrypt(""):
                raise LoaderError(f"{source}: the PDF is encrypted; remove the password and upload it again")
        except LoaderError:
            raise
        except Exception:
            raise LoaderError(f"{source}: the PDF is encrypted; remove the password and upload it again") from None
    from rag.pdf_text import pdf_markdown

    text, starts, first_heading = pdf_markdown(reader)
    title = str(reader.metadata.title) if reader.metadata and reader.metadata.title else first_heading
    return text, starts, title


def _docx(data: bytes, source: str) -> tuple[str, tuple[int, ...], str]:
    import docx
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    document = docx.Document(io.BytesIO(data))
    blocks: list[str] = []
    title = ""
    for element in document.element.body.iterchildren():
        tag = element.tag.rsplit("}", 1)[-1]
        if tag == "p":
            para = Paragraph(element, document)
            text = para.text.strip()
            if not text:
                continue
            style = (para.style.name if para.style is not None else "") or ""
            level = re.fullmatch(r"Heading (\d)", style)
            if style == "Title":
                title = title or text
                blocks.append("# " + text)
            elif level:
                # One level below the Title (which is `#`), so "Title > Heading 1" stays one path.
                blocks.append("#" * min(int(level.group(1)) + 1, 6) + " " + text)
            elif style.startswith("List"):
                blocks.append("- " + text)
            else:
                blocks.append(text)
        elif tag == "tbl":
            table = Table(element, document)
            blocks.append(rows_to_markdown([[cell.text.strip() for cell in row.cells] for row in table.rows]))
    return "\n\n".join(b for b in blocks if b), (), title


_PARSERS: dict[str, Callable[[bytes, str], tuple[str, tuple[int, ...], str]]] = {
    "markdown": _markdown,
    "text": _text,
    "html": _html,
    "pdf": _pdf,
    "docx": _docx,
}
