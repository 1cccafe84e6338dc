"""What an ingest reports (per file and in sum), and a document already chunked by a preview."""

from __future__ import annotations

from dataclasses import dataclass

from rag.types import Chunk, Document


@dataclass(frozen=True)
class FileResult:
    source: str
    status: str  # "added" | "updated" | "unchanged" | "error"
    chunks: int = 0
    written: int = 0
    unchanged: int = 0
    removed: int = 0
    flagged: int = 0
    error: str = ""
    notes: tuple[str, ...] = ()  # what the loader warned of ("no text layer: needs OCR"): Document.notes


@dataclass(frozen=True)
class IngestSummary:
    files: tuple[FileResult, ...]

    @property
    def documents(self) -> int:
        return sum(1 for f in self.files if f.status != "error")

    @property
    def chunks_written(self) -> int:
        return sum(f.written for f in self.files)

    @property
    def chunks_unchanged(self) -> int:
        return sum(f.unchanged for f in self.files)

    @property
    def errors(self) -> tuple[FileResult, ...]:
        return tuple(f for f in self.files if f.status == "error")


@dataclass(frozen=True)
class Prepared:
    """A document already loaded and chunked (the Documents page's preview), for `ingest_files` to
    write without loading and chunking the bytes again."""

    doc: Document
    chunks: tuple[Chunk, ...]
