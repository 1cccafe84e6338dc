"""EPUB through ebooklib: the spine's XHTML chapters in reading order, each read by the HTML loader.

An EPUB is a zip of XHTML pages, so each chapter goes through the same conversion as an uploaded HTML
page (rag.ingest.loaders.html: comments, scripts, hidden elements and navigation left out), and the
archive limits are checked before ebooklib opens it (rag.ingest.loaders.document, ZIP_KINDS). A chapter
whose own text does not open with a top-level heading gets one: its title in the book's table of
contents, else its `<title>`, else its file name, so every chapter is a top heading of the document.
DRM-encrypted chapters are refused by name rather than read as noise.

A chapter is read as its file is written, `<head>` included (ebooklib's `get_content()` rebuilds the page
without the head, and with it the chapter's `<style>` and its body's attributes), and its linked style
sheets are the book's own: a `<link rel="stylesheet">` (and an `@import` in it) is resolved inside the
archive, relative to the chapter, and never outside it, so the hidden-text rule sees what a reading system
applies (rag.ingest.loaders.hidden).
"""

from __future__ import annotations

import io
import posixpath
import re
import warnings
import zipfile
from typing import Any, Callable
from urllib.parse import unquote, urldefrag

from rag.errors import LoaderError
from rag.ingest.loaders.html import declared_encoding, html_to_markdown
from rag.ingest.loaders.parsed import Parsed
from rag.ingest.loaders.text import decode_text

_ENCRYPTION = "META-INF/encryption.xml"
_IMPORT = re.compile(r"""@import\s+(?:url\(\s*)?["']?([^"')\s;]+)["']?\s*\)?([^;]*);""", re.I)
_MAX_IMPORT_DEPTH = 4


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
    sheets: dict[str, str] = {}  # archive path -> its text with its imports, read once for every chapter
    for idref, _linear in book.spine:
        item = book.get_item_with_id(idref)
        if item is None or item.get_type() != ebooklib.ITEM_DOCUMENT or isinstance(item, epub.EpubNav):
            continue
        name = item.get_name()
        if any(path == name or path.endswith("/" + name) for path in encrypted):
            raise LoaderError(f"{source}: chapter {name!r} is encrypted (DRM); remove the protection first")
        raw = item.content if isinstance(item.content, bytes) else item.get_content()
        markup = decode_text(raw, f"{source}: {name}", declared_encoding(raw))
        page = html_to_markdown(markup, linked=_book_sheets(book, name, source, sheets))
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


def _book_sheets(book: Any, chapter: str, source: str, cache: dict[str, str]) -> Callable[[str], str | None]:  # noqa: ANN401
    """A reader of the style sheets `chapter` links to, by their href, from the book's own files only."""

    def read(href: str, base: str, depth: int) -> str | None:
        path = _inside(base, href)
        if path is None or depth > _MAX_IMPORT_DEPTH:
            return None
        if path not in cache:
            item = book.get_item_with_href(path)
            cache[path] = ""  # an import loop reads as an empty sheet
            if item is not None:
                try:
                    css = decode_text(item.get_content(), f"{source}: {path}")
                except LoaderError:
                    css = ""  # not text (a font named as a sheet): no rules, as a reading system finds none
                cache[path] = _IMPORT.sub(lambda m: _imported(read(m.group(1), path, depth + 1), m.group(2)), css)
        return cache[path]

    return lambda href: read(href, chapter, 0)


def _imported(css: str | None, media: str) -> str:
    media = media.strip()
    return f"@media {media} {{{css}}}" if css and media else css or ""


def _inside(base: str, href: str) -> str | None:
    """The archive path `href` names relative to the file `base`; None for a URL, an absolute path, or a
    path that climbs out of the archive."""
    href = unquote(urldefrag(href.strip())[0])
    if not href or ":" in href.split("/", 1)[0] or href.startswith(("/", "\\")):
        return None
    path = posixpath.normpath(posixpath.join(posixpath.dirname(base), href))
    return None if path == ".." or path.startswith("../") else path


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
