"""The multi-hop question set over the FastAPI docs: well formed, two sections each, every section real."""

from __future__ import annotations

from pathlib import Path

import pytest

from rag.ingest.chunker import chunk_document
from rag.eval.gold import SectionGold
from rag.eval.qsets import read_question_set_file
from rag.ingest.loaders.document import load_document

SET = Path(__file__).parent / "data" / "fastapi_multihop.jsonl"
# ../shared beside the checkout (as the benches read it); `from conftest import` would pick tests/e2e/conftest.py under a full run.
DOCS = Path(__file__).resolve().parents[2] / "shared" / "data" / "fastapi_docs" / "docs" / "en" / "docs"


def test_every_question_needs_two_distinct_sections():
    qset = read_question_set_file(SET)
    assert len(qset.questions) >= 30
    for q in qset.questions:
        assert isinstance(q.gold, SectionGold) and len(q.gold.sections) == 2, q.id
        assert len({(s.source, s.heading) for s in q.gold.sections}) == 2, q.id


@pytest.mark.skipif(not DOCS.is_dir(), reason="the FastAPI docs are not in ../shared/data")
def test_every_gold_section_is_a_heading_of_the_docs():
    qset = read_question_set_file(SET)
    wanted = {(s.source, s.heading) for q in qset.questions for s in q.gold.sections}
    found = set()
    for source in {s for s, _ in wanted}:
        doc = load_document(source, (DOCS / source).read_bytes())
        found |= {(source, c.heading) for c in chunk_document(doc)}
    assert wanted - found == set()
