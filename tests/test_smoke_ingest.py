"""End-to-end ingest of the sample docs through the real pipeline."""

from rag.catalog.documents import list_documents
from rag.ingest.pipeline import ingest_files
from rag.retrieval.retrieve import retrieve
from rag.catalog.sample import sample_files


def test_sample_docs_ingest_and_reingest_is_idempotent(sample_components):
    docs = list_documents(sample_components)
    assert {d.source for d in docs} == {name for name, _ in sample_files()}
    again = ingest_files(sample_components, sample_files())
    assert again.chunks_written == 0
    assert {f.status for f in again.files} == {"unchanged"}


def test_refund_question_finds_refund_section(sample_components):
    result = retrieve(sample_components, "How long does a refund take to reach my card?")
    top = result.final[0].chunk.chunk
    assert top.source == "billing/plans.md"
    assert top.heading == "Billing > Refunds"
