"""Every file format ragscope reads, registered once: its kind, label, suffixes, parser, library and limits.

The suffix table (`names.KINDS`), the archive check (`ZIP_KINDS`), the parser dispatch
(`document.load_document`), the Documents page's uploader label, the CLI's "no supported files" message
and the docs' format lists all derive from `FORMATS` or are checked against it
(tests/test_docs_match_registries.py). Adding a format is one loader module plus one row here
(docs/architecture.md, "Extension points").
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Format:
    """One readable format.

    kind: the `Document.kind` it becomes (and the name docs and tests use).
    label: what a person calls it, in the uploader's label and messages.
    suffixes: the file suffixes it is recognised by (lower case, with the dot).
    parser: "module:function", imported the first time a file of this kind is read, so its library costs
        nothing at start-up; the function takes (data, source) and returns a `Parsed` (or its first three).
    library: the third-party package that parses it ("" for the standard library alone).
    zipped: the file is a zip archive, held to the archive limits before its parser opens it.
    """

    kind: str
    label: str
    suffixes: tuple[str, ...]
    parser: str
    library: str = ""
    zipped: bool = False


_LOADERS = "rag.ingest.loaders"
FORMATS: tuple[Format, ...] = (
    Format("markdown", "Markdown", (".md", ".markdown"), f"{_LOADERS}.text:parse_markdown"),
    Format("text", "text", (".txt", ".text"), f"{_LOADERS}.text:parse_text"),
    Format("html", "HTML", (".html", ".htm"), f"{_LOADERS}.html:parse_html", "beautifulsoup4, lxml"),
    Format("pdf", "PDF", (".pdf",), f"{_LOADERS}.pdf:parse_pdf", "pypdf"),
    Format("docx", "DOCX", (".docx",), f"{_LOADERS}.docx:parse_docx", "python-docx", zipped=True),
    Format("rst", "reStructuredText", (".rst",), f"{_LOADERS}.rst:parse_rst", "docutils"),
    Format("asciidoc", "AsciiDoc", (".adoc", ".asciidoc"), f"{_LOADERS}.adoc:parse_adoc"),
    Format("pptx", "PowerPoint", (".pptx",), f"{_LOADERS}.pptx:parse_pptx", "python-pptx", zipped=True),
    Format("epub", "EPUB", (".epub",), f"{_LOADERS}.epub:parse_epub", "ebooklib", zipped=True),
    Format("python", "Python", (".py",), f"{_LOADERS}.code:parse_python"),
)
BY_KIND = {f.kind: f for f in FORMATS}


def format_labels() -> str:
    """Every format ("Markdown, text, HTML, …, Python"), for a label or a message."""
    return ", ".join(f.label for f in FORMATS)


def format_suffixes() -> str:
    """Every suffix a file may have (".md, .markdown, .txt, …"), for a message."""
    return ", ".join(s for f in FORMATS for s in f.suffixes)
