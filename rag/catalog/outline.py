"""What the parser made of a document as a whole: its heading tree from the stored chunks, and repeated text.

A wrong parse shows at a glance in the tree (code comments read as headings nest the real chapters
under them; a flattened list leaves one giant section), which a table of hundreds of chunks hides.
Built from what is stored, so it shows what retrieval sees, not what the file says.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from rag.components import Components
from rag.text.fold import match_key
from rag.types import Chunk, ChunkFilter, StoredChunk

# Past this many chunks the Documents page does not read the whole collection to find repeats on every run.
REPEAT_SCAN_LIMIT = 20_000


@dataclass(frozen=True)
class OutlineNode:
    """One heading: how many chunks sit directly under it, how many of those repeat text stored elsewhere,
    and the headings inside it, in document order."""

    title: str
    path: tuple[str, ...]
    chunks: int = 0
    repeats: int = 0
    children: tuple[OutlineNode, ...] = ()

    @property
    def total(self) -> int:
        """Its chunks and those of every heading inside it."""
        return self.chunks + sum(c.total for c in self.children)

    def walk(self, depth: int = 0) -> list[tuple[int, OutlineNode]]:
        """Every heading under this one (itself excluded), each with its depth, in document order."""
        return [x for c in self.children for x in ((depth, c), *c.walk(depth + 1))]


@dataclass
class _Building:
    title: str
    path: tuple[str, ...]
    chunks: int = 0
    repeats: int = 0
    children: dict[str, _Building] = field(default_factory=dict)

    def frozen(self) -> OutlineNode:
        kids = tuple(c.frozen() for c in self.children.values())
        return OutlineNode(self.title, self.path, self.chunks, self.repeats, kids)


def build_outline(chunks: Sequence[Chunk], repeated: frozenset[str] = frozenset()) -> OutlineNode:
    """The heading tree of one document's chunks (in document order); the root holds chunks before any heading.

    Args:
        chunks: the document's chunks.
        repeated: ids of the chunks whose text is stored in another place too.
    """
    root = _Building("", ())
    for chunk in sorted(chunks, key=lambda c: c.index):
        node = root
        for depth, title in enumerate(chunk.heading_path, 1):
            node = node.children.setdefault(title, _Building(title, chunk.heading_path[:depth]))
        node.chunks += 1
        node.repeats += chunk.id in repeated
    return root.frozen()


@dataclass(frozen=True)
class RepeatedPassage:
    """One text stored in several places (the same once rag.text.fold.match_key folds it, as repeated passages
    once in rag.retrieval.dedupe compares them), each place a chunk, in source order."""

    text: str
    places: tuple[Chunk, ...]


def repeated_passages(components: Components, records: Sequence[StoredChunk] | None = None) -> list[RepeatedPassage]:
    """Every text the collection stores in more than one chunk, most places first.

    Args:
        records: the collection's chunks when the caller has read them already; else they are read here.
    """
    if records is None:
        records = components.store.records(ChunkFilter(include_quarantined=True))
    groups: dict[str, list[Chunk]] = {}
    for record in records:
        key = match_key(record.chunk.text)
        if key:
            groups.setdefault(key, []).append(record.chunk)
    passages = [
        RepeatedPassage(ordered[0].text, ordered)
        for ordered in (tuple(sorted(places, key=lambda c: (c.source, c.index))) for places in groups.values())
        if len(ordered) > 1
    ]
    return sorted(passages, key=lambda p: (-len(p.places), p.places[0].source, p.places[0].index))
