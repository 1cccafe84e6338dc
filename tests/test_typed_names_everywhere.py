"""Every other place a person types a document name reads it as ingest stored it (issue 28, item 4).

tests/test_names_typed.py covers filters, delete and tags; these cover a question set's gold sources,
`ragscope track --source` and the inspector's link parameters. The name is typed decomposed ("café" as
macOS writes it, NFD); the document is stored composed (NFC), as every loader stores names.
"""

from __future__ import annotations

import json
import unicodedata

from click.testing import CliRunner

from rag.cli import main
from rag.components import build_components
from rag.eval.gold import CollectionIndex
from rag.eval.qsets import parse_question_set
from rag.ingest.pipeline import ingest_files
from rag.settings.config import RetrievalConfig
from rag.settings.links import parse_inspector_params

STORED = "café.md"
TYPED = unicodedata.normalize("NFD", STORED)
MENU = b"# Menu\n\n## Coffee\n\nThe cafe serves espresso until noon.\n"


def _ingest(settings) -> None:
    components = build_components(settings)
    assert not ingest_files(components, [(STORED, MENU)], tags=["été"]).errors
    components.close()


def test_a_gold_source_typed_decomposed_names_the_stored_document(components):
    assert TYPED != STORED
    assert not ingest_files(components, [(STORED, MENU)]).errors
    line = json.dumps({"question": "Until when is espresso served?", "gold": [{"source": TYPED, "heading": "Coffee"}]})
    (question,) = parse_question_set(line).questions
    assert question.gold.sections[0].source == STORED
    resolution = CollectionIndex.from_components(components).resolve(question.gold)
    assert resolution.invalid is None and len(resolution.chunk_ids) == 1


def test_track_by_a_decomposed_source_reports_the_stored_name(settings):
    _ingest(settings)
    result = CliRunner().invoke(main, ["track", "espresso", "--source", TYPED, "--heading", "Coffee", "--json"])
    assert result.exit_code == 0, result.output
    target = json.loads(result.stdout)["target"]
    assert target["source"] == STORED and target["how"] == "heading"


def test_link_sources_and_tags_are_read_as_stored():
    params = {"source": [TYPED, STORED], "tag": [unicodedata.normalize("NFD", "été")]}
    flt = parse_inspector_params(params, RetrievalConfig()).flt
    assert flt.sources == (STORED,) and flt.tags == ("été",)
