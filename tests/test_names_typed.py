"""A name a person types is read as ingest stores it (Unicode NFC): a decomposed "café", as macOS writes it,
names the document stored composed, in filters, deletes and tags (issue 28)."""

from __future__ import annotations

import unicodedata

from click.testing import CliRunner

from rag.catalog.documents import delete_document
from rag.cli import main
from rag.components import build_components
from rag.ingest.pipeline import ingest_files
from rag.retrieval.retrieve import retrieve
from rag.types import ChunkFilter

DECOMPOSED = unicodedata.normalize("NFD", "café.md")


def test_a_decomposed_name_filters_and_deletes_the_stored_document(components):
    assert not ingest_files(components, [("café.md", b"# Menu\n\nThe cafe serves espresso until noon.")], tags=["été"]).errors
    assert DECOMPOSED != "café.md"
    flt = ChunkFilter(sources=(DECOMPOSED,), tags=(unicodedata.normalize("NFD", "été"),))
    assert [c.chunk.chunk.source for c in retrieve(components, "espresso", flt=flt).final] == ["café.md"]
    assert delete_document(components, DECOMPOSED) == 1
    assert components.store.sources() == {}


def test_the_cli_filter_takes_the_decomposed_name(settings):
    components = build_components(settings)
    assert not ingest_files(components, [("café.md", b"# Menu\n\nThe cafe serves espresso until noon.")]).errors
    components.close()
    result = CliRunner().invoke(main, ["search", "espresso", "--filter", f"source={DECOMPOSED}", "--json"])
    assert result.exit_code == 0, result.output
    assert '"source": "café.md"' in result.stdout
