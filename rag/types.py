"""Values that cross module boundaries. All frozen: cached objects are shared by every session."""

from __future__ import annotations

import hashlib
import unicodedata
import uuid
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

# Fixed namespace so a chunk's id depends only on its content, never on when it was ingested.
CHUNK_NAMESPACE = uuid.UUID("6f0e1f55-2d3c-4b8a-9a43-5a1c0b7d2e10")
# Payload `status` of a chunk retrieval must never return (a keyword: qdrant-edge 0.9 matches no bools).
QUARANTINED = "quarantined"
# Payload field set when a person edited the chunk's text (when, rag.ingest.fixes): its text is then no longer
# its document's between `start` and `end`.
EDITED_AT = "edited_at"
# Payload `role` of a chunk stored and browsable but out of ranking: a contents or index page (a list of names
# with page numbers matches almost any question and answers none), a scan's "needs OCR" placeholder.
# Chunks of the body have no `role`. Retrieval reads them only when its filter says `include_unranked`.
ROLE_CONTENTS = "contents"
ROLE_INDEX = "index"
ROLE_NO_TEXT = "no-text"


@dataclass(frozen=True)
class Document:
    """A loaded file: cleaned text plus where each page starts (PDF) and how it was read."""

    source: str
    text: str
    kind: str
    size_bytes: int
    pages: tuple[int, ...] = ()  # char offset where each page starts; empty when the format has no pages
    title: str = ""
    original: bytes = field(
        default=b"", repr=False, compare=False
    )  # the file as given, kept by ingest (rag.ingest.originals)
    # The name the file was given (rag.ingest.loaders.names.original_name), recorded as the stored
    # document's identity: `source` is cleaned and may be shared by two files. "" stands for `source`.
    original_name: str = ""
    # What the loader left out that a reader should know ("dropped 1,234 characters of hidden text"),
    # shown with the file on the Documents page (rag.ingest.loaders.parsed.Parsed.notes).
    notes: tuple[str, ...] = ()
    # Runs of invisible format characters kept out of `text` that may say something (tag characters),
    # as (offset in `text`, the characters), for the injection scan (rag.text.invisible.drop_invisible).
    hidden: tuple[tuple[int, str], ...] = field(default=(), repr=False)
    # (heading title, role) for the sections kept out of ranking (ROLE_CONTENTS, ROLE_INDEX, ROLE_NO_TEXT):
    # a chunk under a heading named here carries the role (rag.ingest.loaders.parsed.Parsed.roles).
    roles: tuple[tuple[str, str], ...] = ()

    def hidden_in(self, start: int, end: int) -> tuple[str, ...]:
        """The `hidden` runs removed from `text[start:end]`, or next to it with only whitespace between."""
        text = self.text
        return tuple(
            run for at, run in self.hidden if not (text[min(at, start) : start] + text[end : max(at, end)]).strip()
        )

    def role_of(self, heading_path: tuple[str, ...]) -> str:
        """The role of a chunk under `heading_path`: that of the outermost heading `roles` names, else ""."""
        named = dict(self.roles)
        return next((named[title] for title in heading_path if title in named), "")

    @property
    def identity(self) -> str:
        """What tells this document's file apart from another stored under the same `source`."""
        return self.original_name or self.source

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()

    def page_at(self, offset: int) -> int | None:
        """1-based page number holding `offset`, or None for formats without pages."""
        if not self.pages:
            return None
        page = 1
        for i, start in enumerate(self.pages):
            if start <= offset:
                page = i + 1
        return page


@dataclass(frozen=True)
class Chunk:
    """A span of a document's text: `text == document.text[start:end]`, unless a person `edited` the text
    (rag.catalog.fixes): the offsets are then still its passage's, and the text stands alone (code that joins
    chunks by their offsets leaves an edited one whole, rag.retrieval.context)."""

    id: str
    source: str
    heading_path: tuple[str, ...]
    start: int
    end: int
    text: str
    index: int
    page: int | None = None
    # How many times the heading path is written into what the encoders see (ChunkConfig.heading_weight).
    heading_weight: int = 1
    role: str = ""  # ROLE_CONTENTS, ROLE_INDEX or ROLE_NO_TEXT: stored out of ranking; "" for the body
    edited: bool = False  # its text is a person's edit, not its document's (payload EDITED_AT)

    @property
    def heading(self) -> str:
        return " > ".join(self.heading_path)

    @property
    def location(self) -> str:
        """Where the chunk sits, for people: "source > heading > subheading" (titles that are empty left out)."""
        return " > ".join(x for x in (self.source, *self.heading_path) if x)

    @property
    def embed_text(self) -> str:
        """What the encoders see: where the chunk sits (`heading_weight` times), then its body, so headings
        help retrieval; in documentation the heading often names the answer better than the body does."""
        where = " > ".join((self.source, *self.heading_path))
        return "\n".join([where] * self.heading_weight + [self.text])

    @staticmethod
    def make_id(source: str, heading_path: tuple[str, ...], text: str, occurrence: int, heading_weight: int = 1) -> str:
        """Content-addressed id: unchanged text under the same heading keeps its id across re-ingests.

        The key must tell every (source, path, text, occurrence) apart: a plain " > " join once gave
        `# A > B` and `# A` / `## B` one id, so one chunk overwrote the other. Source and titles are
        escaped so that no separator (NUL between fields, " > " between titles) occurs inside them and
        an empty title is not an empty path; the text needs none, as the only fields after it are
        digits. A source and path without `\\`, `>`, NUL or an empty title key exactly as before,
        so ids already stored stay valid. A heading weight other than 1 is part of the key (its vectors
        differ), so changing RAGSCOPE_HEADING_WEIGHT re-embeds on the next ingest; weight 1 keys as before.
        """
        path = " > ".join(_escape(title) or "\\e" for title in heading_path)
        key = "\x00".join(
            (_escape(source), path, text, str(occurrence), *((f"w{heading_weight}",) if heading_weight != 1 else ()))
        )
        return str(uuid.uuid5(CHUNK_NAMESPACE, key))


def _escape(field: str) -> str:
    """`field` with backslash, `>` and NUL escaped: none of the id key's separators survive inside it."""
    return field.replace("\\", "\\\\").replace(">", "\\>").replace("\x00", "\\0")


@dataclass(frozen=True)
class SparseVector:
    indices: tuple[int, ...]
    values: tuple[float, ...]


@dataclass(frozen=True)
class StoredChunk:
    """A chunk as read back from the store, with its document-level metadata."""

    chunk: Chunk
    tags: tuple[str, ...] = ()
    quarantined: bool = False
    flags: tuple[str, ...] = ()
    flag_reason: str = ""  # why the injection scan flagged it: each flag, where and the words matched
    unchecked: str = ""  # why the scan could not read part of it (rag.ingest.scan); "" when it read it all
    dense: tuple[float, ...] | None = None
    sparse: SparseVector | None = None
    payload: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)


@dataclass(frozen=True)
class DocumentInfo:
    """One row of the documents table: a stored document's name and chunk count, with the document-level
    metadata every one of its chunks carries (taken from the first)."""

    source: str
    chunks: int
    size_bytes: int
    tags: tuple[str, ...]
    ingested_at: str
    sha256: str
    kind: str
    notes: tuple[str, ...] = ()  # what its loader warned of when it was ingested (Document.notes)


@dataclass(frozen=True)
class ChunkFilter:
    """Restrictions applied inside Qdrant, never after the fact."""

    sources: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    ids: tuple[str, ...] = ()
    include_quarantined: bool = False
    flagged_only: bool = False  # only chunks the injection scan flagged (payload `flags` not empty)
    unchecked_only: bool = False  # only chunks the scan marked unchecked (payload `unchecked` present)
    # Also the chunks stored out of ranking (payload `role`: contents and index pages, a scan's placeholder).
    # A read of every stored chunk (include_quarantined) has them too: browsing, re-ingest and delete see all.
    include_unranked: bool = False

    def __post_init__(self) -> None:
        # Names and tags as ingest stores them (Unicode NFC): "café" typed decomposed, as macOS writes it,
        # names the document stored composed (rag.ingest.loaders.names.safe_source).
        object.__setattr__(self, "sources", tuple(stored_name(s) for s in self.sources))
        object.__setattr__(self, "tags", tuple(stored_name(t) for t in self.tags))

    @property
    def is_empty(self) -> bool:
        return not (self.sources or self.tags or self.ids or self.flagged_only or self.unchecked_only)

    def matches(self, payload: Mapping[str, Any], point_id: str | None = None) -> bool:
        """The filter's rules on one stored chunk's payload (and id, when given).

        The stores apply the same rules inside Qdrant; this is for chunks already in hand (edge's
        fetch by id, the tracker's target), so the rules live in one place.
        """
        if self.ids and point_id is not None and point_id not in self.ids:
            return False
        if self.sources and payload.get("source") not in self.sources:
            return False
        if self.tags and not set(self.tags) & set(payload.get("tags") or ()):
            return False
        if self.flagged_only and not payload.get("flags"):
            return False
        if self.unchecked_only and not payload.get("unchecked"):
            return False
        if payload.get("role") and not (self.include_unranked or self.include_quarantined):
            return False
        return self.include_quarantined or payload.get("status") != QUARANTINED


@dataclass(frozen=True)
class Hit:
    """One point returned by a store query."""

    id: str
    score: float
    payload: dict[str, Any] = field(compare=False, hash=False, default_factory=dict)


def clean_tags(tags: Iterable[str]) -> list[str]:
    """Tags as stored: stripped, NFC, without empties or duplicates, sorted."""
    return sorted({stored_name(t.strip()) for t in tags if t.strip()})


def stored_name(name: str) -> str:
    """A document name or tag in the form ingest stores it (Unicode NFC), for every name a person types."""
    return unicodedata.normalize("NFC", name)
