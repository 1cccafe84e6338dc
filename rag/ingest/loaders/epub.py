"""EPUB through ebooklib: the spine's XHTML chapters in reading order, each read by the HTML loader.

An EPUB is a zip of XHTML pages, so each chapter goes through the same conversion as an uploaded HTML
page (rag.ingest.loaders.html: comments, scripts, hidden elements and navigation left out), and the
archive limits are checked before ebooklib opens it (rag.ingest.loaders.document, ZIP_KINDS). A chapter
whose own text does not open with a top-level heading gets one: its title in the book's table of
contents, else its `<title>`, else its file name, so every chapter is a top heading of the document.
DRM-encrypted chapters are refused by name rather than read as noise.
"""

from __future__ import annotations

import io
import posixpath
import warnings
import zipfile
from typing import Any

from rag.errors import LoaderError
from rag.ingest.loaders.html import html_to_markdown
from rag.ingest.loaders.parsed import Parsed
from rag.ingest.loaders.text import decode_text

_ENCRYPTION = "META-INF/encryption.xml"


def parse_epub(data: bytes, source: str) -> Parsed:
    import ebooklib
    from ebooklib import epub

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ebooklib's notices about future defaults
        book = epub.read_epub(io.BytesIO(data), {"ignore_ncx": True})
    encrypted = _encrypted_paths(data)
    toc = _toc_titles(book.toc)
    chapters: list[str] = []
    notes: list[str] = []
    for idref, _linear in book.spine:
        item = book.get_item_with_id(idref)
        if item is None or item.get_type() != ebooklib.ITEM_DOCUMENT or isinstance(item, epub.EpubNav):
            continue
        name = item.get_name()
        if any(path == name or path.endswith("/" + name) for path in encrypted):
            raise LoaderError(f"{source}: chapter {name!r} is encrypted (DRM); remove the protection first")
        page = html_to_markdown(decode_text(item.get_content(), f"{source}: {name}"))
        text = page.text
        if not text.strip():
            continue
        notes += [f"{name}: {note}" for note in page.notes]
        if not text.startswith("# "):
            heading = toc.get(name) or page.title or posixpath.splitext(posixpath.basename(name))[0]
            text = f"# {' '.join(heading.split())}\n\n{text}"
        chapters.append(text)
    titles = book.get_metadata("DC", "title")
    return Parsed("\n\n".join(chapters), (), (titles[0][0] if titles else "").strip(), tuple(notes))


def _toc_titles(toc: Any) -> dict[str, str]:  # noqa: ANN401 - ebooklib's toc mixes Links, Sections and tuples
    """File name -> the title its first table-of-contents entry gives it (fragments dropped)."""
    titles: dict[str, str] = {}
    stack = list(toc)
    while stack:
        entry = stack.pop(0)
        if isinstance(entry, tuple):  # (Section, [children])
            section, children = entry
            stack = [section, *children, *stack]
            continue
        href = (getattr(entry, "href", "") or "").split("#", 1)[0]
        title = getattr(entry, "title", "") or ""
        if href and title:
            titles.setdefault(href, title)
    return titles


def _encrypted_paths(data: bytes) -> set[str]:
    """Paths that META-INF/encryption.xml lists (DRM or font obfuscation); empty when it has none."""
    from lxml import etree

    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        if _ENCRYPTION not in archive.namelist():
            return set()
        root = etree.fromstring(archive.read(_ENCRYPTION), etree.XMLParser(resolve_entities=False, no_network=True))
    return {ref.get("URI", "") for ref in root.iter("{*}CipherReference")}
