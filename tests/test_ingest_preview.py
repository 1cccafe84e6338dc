"""rag.ingest.preview: the decision behind the Documents page's upload preview and `ingest --dry-run`, on the
real models and store: each file's chunks, its diff against the stored version, and why it would be refused."""

from __future__ import annotations

import dataclasses

from rag.components import build_components
from rag.ingest.pipeline import ingest_files
from rag.ingest.preview import preview_batch
from rag.ingest.results import Prepared

GUIDE = b"# Ferry guide\n\n## Tickets\n\nA single ticket costs four euros.\n\n## Timetable\n\nThe first ferry leaves at seven.\n"
EDITED = GUIDE.replace(b"four euros", b"five euros")
PRICES = b"# Prices\n\nA day pass costs ten euros.\n"


def test_a_new_collection_previews_new_files_and_why_others_would_be_refused(components):
    batch = preview_batch(
        components,
        [("guide.md", GUIDE), ("empty.md", b""), ("title.md", b"# Only a title\n")],
        components.settings.chunk,
    )
    guide, empty, title = batch.files
    assert guide.state == "new" and guide.refused == "" and guide.stored is False
    assert [c.heading for c in guide.chunks] == ["Ferry guide > Tickets", "Ferry guide > Timetable"]
    assert guide.diff.added == guide.chunks and guide.diff.unchanged == guide.diff.removed == ()
    # Did not load: shown as the error, its bytes still handed to ingest so its summary reports it.
    assert empty.doc is None and empty.state == "error" and empty.refused == "empty.md: the file is empty"
    assert empty.item == ("empty.md", b"")
    # Loads, but ingest would refuse it: the page leaves that to the ingest summary, the dry run says it.
    assert title.state == "new" and title.chunks == ()
    assert title.refused == "title.md: no text to index after chunking"
    assert batch.items == [Prepared(guide.doc, guide.chunks), ("empty.md", b""), Prepared(title.doc, ())]
    assert batch.changed == 2 and batch.warnings == ()
    assert components.store.collection_models() is None  # read-only: not even the collection was made


def test_a_stored_document_shows_its_diff_and_nothing_is_written(components):
    assert not ingest_files(components, [("guide.md", GUIDE), ("prices.md", PRICES)]).errors
    before = components.store.count()
    edited, same, new = preview_batch(
        components, [("guide.md", EDITED), ("prices.md", PRICES), ("new.md", PRICES)], components.settings.chunk
    ).files
    assert (edited.state, same.state, new.state) == ("changed", "unchanged", "new")
    assert len(edited.diff.added) == len(edited.diff.removed) == len(edited.diff.unchanged) == 1
    assert "five euros" in edited.diff.added[0].text and "four euros" in edited.diff.removed[0].chunk.text
    assert edited.diff.unchanged[0].heading == "Ferry guide > Timetable"
    assert same.diff.is_noop and same.stored and len(same.diff.unchanged) == 1
    assert components.store.count() == before == 3


def test_a_file_over_the_chunk_limit_is_shown_and_not_offered(settings):
    components = build_components(dataclasses.replace(settings, max_chunks_per_doc=1))
    try:
        batch = preview_batch(components, [("guide.md", GUIDE), ("prices.md", PRICES)], components.settings.chunk)
    finally:
        components.close()
    guide, prices = batch.files
    assert guide.state == "over the chunk limit" and len(guide.chunks) == 2
    assert guide.refused == (
        "guide.md: 2 chunks is over the limit of 1 per document (RAGSCOPE_MAX_CHUNKS); not offered for ingest. "
        "Split the file, or choose a larger chunk size."
    )
    assert guide.over_limit is not None and guide.over_limit.values == {"source": "guide.md", "n": "2", "limit": "1"}
    assert guide.item is None and batch.items == [Prepared(prices.doc, prices.chunks)]
    assert batch.changed == 1


def test_files_of_one_name_are_warned_about_and_a_renamed_clash_refused(components):
    batch = preview_batch(components, [("guide.md", GUIDE), ("guide.md", EDITED)], components.settings.chunk)
    assert [w.text for w in batch.warnings] == [
        "2 files are named guide.md: a document is known by its name, so the last one ingested replaces the "
        "others. Rename them (or put them in folders of a .zip) to keep each."
    ]
    assert not ingest_files(components, [("guide.md", GUIDE)]).errors
    # A name that cleans to a stored document's that came from another file: ingest would refuse to replace it.
    (clash,) = preview_batch(components, [("gu\x07ide.md", EDITED)], components.settings.chunk).files
    assert clash.doc is not None and clash.doc.source == "guide.md" and clash.state == "changed"
    assert "would be stored as the document 'guide.md', which holds the file 'guide.md'" in clash.refused
    assert ingest_files(components, [("gu\x07ide.md", EDITED)]).errors[0].error == clash.refused
