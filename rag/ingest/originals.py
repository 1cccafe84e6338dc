"""Each stored document's original file, kept beside the collection so eval can tell parse loss apart.

A gold answer text that no chunk holds has two very different causes: the loader or chunker dropped
it (true parse loss: fix the loader, not retrieval), or the documents never say it in those words (a
mistake in the question set). Only the file as uploaded can tell them apart, so ingest keeps a copy
of every document's bytes under `<data_dir>/originals/<collection>/`, named by a hash of its source
name (source names are paths and may not be valid file names). Re-ingest replaces the copy, deleting
a document deletes it, deleting the collection deletes the folder. A file's text is read back
loosely: everything a reader of the file could see, none of what the loader leaves out on purpose
(navigation, hidden elements, page furniture), since that is exactly what is being checked.
"""

from __future__ import annotations

import hashlib
import io
import re
import shutil
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from rag.ingest.loaders.names import kind_of
from rag.ingest.loaders.text import decode_text
from rag.settings.atomic import write_atomically

_XML_TEXT = re.compile(rb"<w:t(?:\s[^>]*)?>([^<]*)</w:t>")


@dataclass(frozen=True)
class Originals:
    """The originals folder of one collection."""

    folder: Path

    def path(self, source: str) -> Path:
        return self.folder / hashlib.sha256(source.encode("utf-8")).hexdigest()[:32]

    def save(self, source: str, data: bytes) -> None:
        """Keep `data` as the original of `source`, replacing an older one whole (written, then renamed)."""
        write_atomically(self.path(source), data)

    def has(self, source: str) -> bool:
        return self.path(source).is_file()

    def holds(self, source: str, data: bytes) -> bool:
        """Whether the kept original of `source` is exactly `data` (an unchanged re-ingest writes nothing)."""
        path = self.path(source)
        return path.is_file() and path.stat().st_size == len(data) and path.read_bytes() == data

    def delete(self, source: str) -> None:
        self.path(source).unlink(missing_ok=True)

    def drop(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)

    def texts(self, sources: Iterable[str]) -> dict[str, str] | None:
        """Each source's original as loose text (`loose_text`).

        None when some source has no original (stored before originals were kept): then a text found
        in no file proves nothing.
        """
        sources = list(sources)
        if not all(self.has(s) for s in sources):
            return None
        return {s: loose_text(s, self.path(s).read_bytes()) for s in sources}


def loose_text(source: str, data: bytes) -> str:
    """All the text of a file a reader could see, by its kind; "" when it cannot be read at all."""
    kind = kind_of(source)
    try:
        if kind == "html":
            from bs4 import BeautifulSoup

            soup = BeautifulSoup(data, "html.parser")
            for tag in soup(["script", "style"]):
                tag.decompose()
            return soup.get_text(" ")
        if kind == "pdf":
            from pypdf import PdfReader

            return "\n".join(page.extract_text() or "" for page in PdfReader(io.BytesIO(data)).pages)
        if kind == "docx":
            with zipfile.ZipFile(io.BytesIO(data)) as z:
                parts = [n for n in z.namelist() if n.startswith("word/") and n.endswith(".xml")]
                return " ".join(t.decode("utf-8", "replace") for n in parts for t in _XML_TEXT.findall(z.read(n)))
        return decode_text(data, source)
    except Exception:  # noqa: BLE001 - a third-party parser on a damaged file; the check then finds nothing
        return ""
