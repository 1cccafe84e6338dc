"""Chunk ids tell every chunk apart, and ingest refuses to write two chunks under one id.

Ids are content hashes of (source, heading path, text, occurrence). The heading path was once
joined with " > ", so `# A > B` and `# A` / `## B` over the same text got one id: ingest said
2 written, stored 1, and a re-ingest said unchanged.
"""

from __future__ import annotations

import itertools
import uuid

from rag.ingest.chunker import chunk_document
from rag.ingest.pipeline import ingest_files
from rag.ingest.loaders.document import load_document
from rag.types import CHUNK_NAMESPACE, Chunk

NESTED = b"# A > B\n\nThe ferry leaves at seven.\n\n# A\n\n## B\n\nThe ferry leaves at seven.\n"
EMPTY_TITLE = b"The ferry leaves at seven.\n\n# {#anchor}\n\nThe ferry leaves at seven.\n"


def test_paths_that_joined_alike_get_their_own_chunks_and_ids(components):
    for name, data in (("nested.md", NESTED), ("anchor.md", EMPTY_TITLE)):
        chunks = chunk_document(load_document(name, data))
        assert len(chunks) == 2 and len({c.id for c in chunks}) == 2, [c.heading_path for c in chunks]
        first = ingest_files(components, [(name, data)])
        assert first.chunks_written == 2 and not first.errors
        assert components.store.sources()[name] == 2  # both stored, not one over the other
        again = ingest_files(components, [(name, data)])
        assert [f.status for f in again.files] == ["unchanged"] and again.chunks_unchanged == 2


def test_ids_are_distinct_for_every_distinct_heading_path():
    titles = ["A", "B", "A > B", "A >", "> B", "A \\", "\\", "", ">", " > ", "A\x00B", "\\>", "\\e"]
    paths = [()] + [p for n in (1, 2, 3) for p in itertools.product(titles, repeat=n)]
    ids = {Chunk.make_id("doc.md", path, "Same text.", 0) for path in paths}
    assert len(ids) == len(paths)
    # Fields cannot bleed into each other either.
    assert Chunk.make_id("a\x00b.md", (), "t", 0) != Chunk.make_id("a", ("b.md",), "t", 0)
    assert Chunk.make_id("s.md", ("A\x00t",), "x", 0) != Chunk.make_id("s.md", ("A",), "t\x00x", 0)


def test_ids_stored_before_stay_valid_for_ordinary_paths():
    """A path without `>`, backslash, NUL or an empty title keys as the old " > " join did."""
    for source, path, text in [("guide.md", ("Ferry guide", "Tickets"), "A ticket > costs four \\ euros."), ("notes.txt", (), "Plain.")]:
        old = str(uuid.uuid5(CHUNK_NAMESPACE, "\x00".join((source, " > ".join(path), text, "0"))))
        assert Chunk.make_id(source, path, text, 0) == old


def test_repeated_ids_are_refused_before_anything_is_written(components, monkeypatch):
    monkeypatch.setattr(Chunk, "make_id", staticmethod(lambda source, path, text, occurrence, heading_weight=1: str(uuid.uuid5(CHUNK_NAMESPACE, text))))
    same_twice = b"# One\n\nThe ferry leaves at seven.\n\n# Two\n\nThe ferry leaves at seven.\n"
    summary = ingest_files(components, [("twice.md", same_twice)])
    assert "chunk ids repeat" in summary.files[0].error and "twice.md chunk 1 (One)" in summary.files[0].error
    # Across documents (ids without the source, as this broken id function makes them): both refused.
    summary = ingest_files(components, [("a.md", b"# A\n\nShared text.\n"), ("b.md", b"# A\n\nShared text.\n"), ("c.md", b"# C\n\nOwn text.\n")])
    assert [f.status for f in summary.files] == ["error", "error", "added"]
    assert "a.md chunk 1" in summary.files[0].error and "b.md chunk 1" in summary.files[0].error
    assert set(components.store.sources()) == {"c.md"}
