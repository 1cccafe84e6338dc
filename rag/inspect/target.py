"""The chunk to track, and how a person names it: by id, by source + heading, or by pasting text it contains.

Named by source + heading, the target is the whole section (subsections included, as gold counts them),
followed in each retrieval through the chunk that stands for it there (`standing_for`), so that tracking
agrees with Eval's hit. Names that match nothing, or several sections, are errors that say what exists:
following some other chunk would report on a chunk nobody asked about.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

from rag.components import Components
from rag.errors import RagError
from rag.inspect.explain import get_chunk
from rag.retrieval.result import RetrievalResult
from rag.text.fold import reader_form
from rag.text.headings import heading_names
from rag.types import ChunkFilter, StoredChunk, stored_name

_WORDS = re.compile(r"\w+")


@dataclass(frozen=True)
class TrackTarget:
    """The chunk being tracked and how it was picked.

    Picked by source + heading, the target is the whole section: `section` holds every chunk id under
    the heading (subsections included, as gold counts them), and `track` follows the one that stands for
    the section in this retrieval (its best-ranked chunk), so the report agrees with Eval's hit.
    """

    chunk: StoredChunk
    how: str  # "id" | "heading" | "text"
    note: str = ""
    section: tuple[str, ...] = ()
    source: str = ""
    heading: str = ""

    @property
    def id(self) -> str:
        return self.chunk.chunk.id


def find_target(
    components: Components,
    *,
    chunk_id: str | None = None,
    source: str | None = None,
    heading: str | None = None,
    text: str | None = None,
    question: str = "",
) -> TrackTarget:
    """Pick the chunk to track: by id, by source + heading, or by text it should contain.

    Args:
        chunk_id: an exact chunk id.
        source, heading: a document and a heading path ("Billing > Refunds") or its last title;
            when several chunks sit under it, the one closest to `question` is taken.
        text: pasted text; the stored chunk containing it is taken.
        question: used to choose among several chunks under one heading.

    Raises:
        RagError: nothing matches (no chunk holds the text), the heading names several sections, or no way
            of picking was given.
    """
    if chunk_id:
        return TrackTarget(get_chunk(components, chunk_id), "id")
    if source:
        return _by_heading(components, stored_name(source), heading or "", question)
    if text and text.strip():
        return _by_text(components, text)
    raise RagError("say which chunk to track: a chunk id, a source and heading, or text it contains")


def refreshed(components: Components, target: TrackTarget) -> TrackTarget:
    """The same chunk read afresh from the store, to follow it again after the question, settings or documents changed.

    Raises:
        RagError: it is no longer stored (its document was re-ingested with other text or deleted).
    """
    try:
        return dataclasses.replace(target, chunk=get_chunk(components, target.id))
    except RagError as e:
        raise RagError(
            "the tracked chunk is no longer stored (its document was re-ingested or deleted, or the collection "
            f"changed): {e}"
        ) from None


def standing_for(components: Components, target: TrackTarget, result: RetrievalResult) -> TrackTarget:
    """For a section target, the chunk that stands for the section in `result`: the one with the best final
    rank, else the best reranked (collapsing aside), fused, then dense or sparse rank; a section none of
    whose chunks any stage found keeps the chunk it was picked by. A chunk target is returned as it is."""
    if len(target.section) < 2:
        return target
    big = 10**9

    def standing(cid: str) -> tuple:
        c = result.get(cid)
        if c is None:
            return (big,) * 4
        return (
            c.shown_rank or big,
            c.rerank.rank or big,
            c.fused.rank or big,
            min(c.dense.rank or big, c.sparse.rank or big),
        )

    best = min(target.section, key=standing)
    if standing(best) == (big,) * 4 or best == target.id:
        return target
    note = f"{len(target.section)} chunks under this heading; tracking the best-ranked, which stands for it"
    return dataclasses.replace(target, chunk=get_chunk(components, best), note=note)


def _by_heading(components: Components, source: str, heading: str, question: str) -> TrackTarget:
    records = components.store.records(ChunkFilter(sources=(source,), include_quarantined=True))
    if not records:
        raise RagError(f"no document named {source!r}; the Documents page lists them")
    under = [r for r in records if not heading.strip() or heading_names(r.chunk.heading_path, heading)]
    if not under:
        headings = sorted({r.chunk.heading for r in records})
        raise RagError(f"{source} has no heading {heading!r}; it has: {'; '.join(headings[:12])}")
    sections = sorted({_named_section(r.chunk.heading_path, heading) for r in under})
    if len(sections) > 1:  # two "Options" sections: tracking both as one would report on neither
        listed = "; ".join(" > ".join(p) for p in sections[:12])
        raise RagError(
            f"{heading!r} names {len(sections)} sections of {source}: {listed}. Give the full heading path of one"
        )
    section = tuple(r.chunk.id for r in sorted(under, key=lambda r: r.chunk.index))
    if len(under) == 1 or not question:
        best = min(under, key=lambda r: r.chunk.index)
        note = f"{len(under)} chunks under this heading; tracking the section" if len(under) > 1 else ""
        return TrackTarget(best, "heading", note, section, source, heading)
    vec = components.dense.encode_query(question)
    hits = components.store.search_dense(
        vec, len(under), ChunkFilter(ids=tuple(r.chunk.id for r in under), include_quarantined=True)
    )
    best_id = hits[0].id if hits else under[0].chunk.id
    best = next(r for r in under if r.chunk.id == best_id)
    note = f"{len(under)} chunks under this heading; tracking the section (first its chunk nearest the question)"
    return TrackTarget(best, "heading", note, section, source, heading)


def _named_section(path: tuple[str, ...], heading: str) -> tuple[str, ...]:
    """The section `heading` names for a chunk under `path`: the shortest start of the path it names (a
    subsection's chunk belongs to the section named, as gold counts it)."""
    return next(path[:j] for j in range(len(path) + 1) if heading_names(path[:j], heading))


def _by_text(components: Components, text: str) -> TrackTarget:
    """The stored chunk that contains `text`. Text no chunk holds is an error that names the chunk sharing most
    of its words: following some other chunk would report on a chunk nobody asked about."""
    store = components.store
    everything = ChunkFilter(include_quarantined=True)
    hits = store.search_sparse(components.sparse.encode_query(text), 20, everything) + store.search_dense(
        components.dense.encode_query(text), 20, everything
    )
    if not hits:
        raise RagError("the collection is empty: ingest documents first")
    ids = list(dict.fromkeys(h.id for h in hits))
    chunks = {c.chunk.id: c for c in store.records(ChunkFilter(ids=tuple(ids), include_quarantined=True))}
    wanted = reader_form(text)
    for cid in ids:
        if cid in chunks and wanted in reader_form(chunks[cid].chunk.text):
            return TrackTarget(chunks[cid], "text", "the chunk contains the pasted text")
    words = set(_WORDS.findall(wanted))

    def overlap(cid: str) -> float:
        return len(words & set(_WORDS.findall(reader_form(chunks[cid].chunk.text)))) / max(1, len(words))

    best = max((cid for cid in ids if cid in chunks), key=overlap)
    near = chunks[best].chunk
    raise RagError(
        f"no chunk holds the text {text.strip()[:80]!r}; the chunk sharing most of its words ({overlap(best):.0%}) "
        f"is {near.location} ({best}): track it by its id, or paste text it holds"
    )
