"""A few stored pages beside a batch's HTML pages, so repetition can be seen across the collection.

A site's chrome is found by repetition (rag.ingest.repeated), which one page, or a handful, cannot show: an
edited page re-ingested alone would keep the tagline its siblings lost. Its stored siblings (the other HTML
documents of its folder, read from their kept originals with the same loader) are the evidence. Only the
batch's own folders are read, so a collection holding two sites never counts one's chrome against the other.
"""

from __future__ import annotations

from pathlib import PurePosixPath

from rag.components import Components
from rag.errors import RagError
from rag.ingest.loaders.document import load_document
from rag.ingest.loaders.names import kind_of
from rag.ingest.originals import Originals
from rag.types import Document

LIMIT = 8  # twice repeated.MIN_PAGES: enough to show what most pages of a folder share, cheap to load


def stored_neighbours(components: Components, docs: list[Document]) -> list[Document]:
    """Up to LIMIT stored HTML documents of the folders of `docs`' HTML pages, not among `docs` themselves;
    none for a batch of LIMIT pages or more, which shows its own repetition (and is not slowed down)."""
    pages = [d for d in docs if d.kind == "html"]
    if not pages or len(pages) >= LIMIT:
        return []
    folders = {PurePosixPath(d.source).parent for d in pages}
    taken = {d.source for d in docs}
    originals = Originals(components.settings.originals_dir)
    out: list[Document] = []
    for source in sorted(components.store.sources()):
        if len(out) >= LIMIT:
            break
        if source in taken or not _html(source) or PurePosixPath(source).parent not in folders:
            continue
        try:
            out.append(load_document(source, originals.path(source).read_bytes()))
        except (OSError, RagError):  # no original kept (an older collection) or one the loader refuses now
            continue
    return out


def _html(source: str) -> bool:
    try:
        return kind_of(source) == "html"
    except RagError:  # a name no loader reads now
        return False
