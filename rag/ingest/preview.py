"""What a preview shows for each file before anything is written: the one decision behind the Documents page's
upload preview and `ragscope ingest --dry-run`, so the two cannot tell a file's fate differently.

Each file is loaded and chunked as ingest_files would (the blocks repeated across the batch's HTML pages dropped,
rag.ingest.repeated), diffed against its stored version, and checked: a file over the chunk limit is shown but
not offered for ingest. Read-only: nothing here creates the collection or writes to it. The page renders the
result with widgets; the CLI prints it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from rag.components import Components
from rag.encoders.base import DenseEncoder
from rag.errors import RagError
from rag.ingest.fixes import Fix, dropped_fixes
from rag.ingest.loaders.document import load_document
from rag.ingest.neighbours import stored_neighbours
from rag.ingest.pipeline import preview
from rag.ingest.plan import ChunkDiff, chunk_diff, chunk_refusal, identity_clash, stored_chunks
from rag.ingest.repeated import SiteChrome
from rag.ingest.results import Prepared
from rag.settings.config import ChunkConfig
from rag.text.sizes import MIB
from rag.types import Chunk, Document, StoredChunk

# What ingest_files takes for one file: a previewed document (written as it was chunked) or a file's bytes.
Item = tuple[str, bytes] | Prepared
# Loads and chunks one file: (name, data, config, max_bytes, dense encoder) -> the document and its chunks.
# The page passes a cached one, so a rerun (every widget change) does not parse its PDFs again.
Load = Callable[[str, bytes, ChunkConfig, int, DenseEncoder], tuple[Document, list[Chunk]]]

CHUNK_LIMIT = (
    "{source}: {n} chunks is over the limit of {limit} per document (RAGSCOPE_MAX_CHUNKS); "
    "not offered for ingest. Split the file, or choose a larger chunk size."
)
SAME_NAME = (
    "{n} files are named {name}: a document is known by its name, so the last one ingested replaces "
    "the others. Rename them (or put them in folders of a .zip) to keep each."
)


@dataclass(frozen=True)
class Message:
    """One message of the preview, its wording (str.format fields) kept apart from the values it names: the page
    shows the values as typed (ui.safe.say escapes them, not its own Markdown), the CLI fills them in plain."""

    kind: Literal["error", "warning"]
    template: str
    values: Mapping[str, str]

    @property
    def text(self) -> str:
        return self.template.format_map(self.values)


@dataclass(frozen=True)
class FilePreview:
    """One file of a preview: its document and chunks with their diff, or why it did not load."""

    name: str  # as given
    data: bytes
    doc: Document | None = None  # None: it did not load, or its stored version could not be read (`error`)
    chunks: tuple[Chunk, ...] = ()
    diff: ChunkDiff = ChunkDiff((), (), ())
    error: str = ""
    over_limit: Message | None = None  # more chunks than a document may have: shown, not offered for ingest
    # Why ingest would still refuse it (no text, ids that repeat, another file's document name): the page leaves
    # it to the ingest summary, the dry run says it now.
    refusal: str = ""

    @property
    def stored(self) -> bool:
        """A version of it is stored already."""
        return bool(self.diff.unchanged or self.diff.removed)

    @property
    def state(self) -> str:
        """ "new", "changed", "unchanged" or "over the chunk limit" (the page's column); "error" if it did not load."""
        if self.doc is None:
            return "error"
        if self.over_limit:
            return "over the chunk limit"
        return ("unchanged" if self.diff.is_noop else "changed") if self.stored else "new"

    @property
    def dropped(self) -> tuple[Fix, ...]:
        """The fixes an ingest would drop, their passages changed: the page asks before, the CLI wants --drop-fixes."""
        return dropped_fixes(self.diff)

    @property
    def refused(self) -> str:
        """Why ingest would write nothing of it ("" when it would ingest it)."""
        return self.error or (self.over_limit.text if self.over_limit else "") or self.refusal

    @property
    def item(self) -> Item | None:
        """What to hand ingest_files: the previewed chunks, written as they are; the bytes of a file that did not
        load, so the ingest summary reports it; nothing for a file over the chunk limit, which would only be refused."""
        if self.doc is None:
            return (self.name, self.data)
        return None if self.over_limit else Prepared(self.doc, self.chunks)


@dataclass(frozen=True)
class BatchPreview:
    """A preview of files uploaded (or named) together, in their order, with the warnings about the batch."""

    files: tuple[FilePreview, ...]
    warnings: tuple[Message, ...]  # files of one name

    @property
    def items(self) -> list[Item]:
        return [item for f in self.files if (item := f.item) is not None]

    @property
    def changed(self) -> int:
        """How many documents are new or changed: what an ingest would write."""
        return sum(f.state in ("new", "changed") for f in self.files)


def load_and_chunk(
    name: str, data: bytes, config: ChunkConfig, max_bytes: int, dense: DenseEncoder
) -> tuple[Document, list[Chunk]]:
    """One file loaded within `max_bytes` and chunked (`dense`: the collection's encoder, "semantic" cuts with it)."""
    doc = load_document(name, data, max_bytes=max_bytes)
    return doc, preview(doc, config, dense)


def preview_batch(
    components: Components,
    files: Sequence[tuple[str, bytes]],
    config: ChunkConfig,
    load: Load = load_and_chunk,
    chrome: SiteChrome | None = None,
) -> BatchPreview:
    """What ingesting `files` with `config` would do to each, worked out without writing anything; `chrome`
    is the run's, when the batch is one of several (as ingest_files takes it)."""
    out: list[FilePreview] = []
    read_all = _load_batch(components, files, config, load, chrome or SiteChrome())
    for (name, data), read in zip(files, read_all, strict=True):
        if isinstance(read, RagError):
            out.append(FilePreview(name, data, error=str(read)))
            continue
        doc, chunks = read
        try:
            stored = stored_chunks(components, doc.source)
        except RagError as e:
            out.append(FilePreview(name, data, error=str(e)))
            continue
        out.append(_loaded(components, name, data, doc, chunks, stored))
    return BatchPreview(tuple(out), _same_names(files))


def _loaded(
    components: Components, name: str, data: bytes, doc: Document, chunks: list[Chunk], stored: dict[str, StoredChunk]
) -> FilePreview:
    """The preview of a file that loaded, against its stored chunks."""
    limit = components.settings.max_chunks_per_doc
    values = {"source": doc.source, "n": f"{len(chunks):,}", "limit": f"{limit:,}"}
    first = next(iter(stored.values()), None)
    return FilePreview(
        name,
        data,
        doc,
        tuple(chunks),
        chunk_diff(chunks, stored),
        over_limit=Message("error", CHUNK_LIMIT, values) if len(chunks) > limit else None,
        refusal=chunk_refusal(doc, chunks, limit) or identity_clash(doc, first.payload if first else {}),
    )


def _load_batch(
    components: Components, files: Sequence[tuple[str, bytes]], config: ChunkConfig, load: Load, chrome: SiteChrome
) -> list[tuple[Document, list[Chunk]] | RagError]:
    """Each file loaded and chunked, then without the blocks repeated across the batch's HTML pages, as
    ingest_files drops them: the preview shows what ingest would write."""
    max_bytes = components.settings.max_upload_mb * MIB
    read: list[tuple[Document, list[Chunk]] | RagError] = []
    for name, data in files:
        try:
            read.append(load(name, data, config, max_bytes, components.dense))
        except RagError as e:
            read.append(e)
    docs = [r[0] for r in read if not isinstance(r, RagError)]
    trimmed = iter(chrome.drop(docs, stored_neighbours(components, docs)))
    out: list[tuple[Document, list[Chunk]] | RagError] = []
    for r in read:
        doc = r if isinstance(r, RagError) else next(trimmed)
        out.append(r if isinstance(r, RagError) or doc is r[0] else (doc, preview(doc, config, components.dense)))
    return out


def _same_names(files: Sequence[tuple[str, bytes]]) -> tuple[Message, ...]:
    """Files of one name in one preview are one document: the last ingested replaces the others."""
    return tuple(
        Message("warning", SAME_NAME, {"n": str(n), "name": name})
        for name, n in Counter(name for name, _ in files).items()
        if n > 1
    )
