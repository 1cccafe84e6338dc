"""BEIR import on a tiny BEIR folder written by the test: its own collection, document-level graded qrels."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from rag.cli import main
from rag.components import build_components
from rag.settings.config import Settings
from rag.errors import EvalSetError
from rag.eval.beir import beir_question_set, collection_name, ingest_beir, load_beir
from rag.eval.runner import run_eval

CORPUS = [
    {"_id": "d1", "title": "Vitamin D and bone density", "text": "Vitamin D supplements increased bone mineral density in elderly women over two years."},
    {"_id": "d2", "title": "Calcium intake", "text": "Dietary calcium intake was associated with fewer hip fractures in a cohort of older adults."},
    {"_id": "d3", "title": "Sleep and memory", "text": "Slow-wave sleep consolidates declarative memory in young adults."},
    {"_id": "d4", "title": "Coffee and heart rhythm", "text": "Moderate coffee consumption did not increase the risk of atrial fibrillation."},
    {"_id": "d5", "title": "Exercise in old age", "text": "Resistance training improved muscle strength and bone density in people over seventy."},
    {"_id": "d6", "title": "", "text": "Gut microbiota composition differs between lean and obese twins."},
]
QUERIES = [
    {"_id": "q1", "text": "Vitamin D supplementation improves bone density in older women."},
    {"_id": "q2", "text": "Sleep helps memory consolidation."},
    {"_id": "q3", "text": "Coffee causes atrial fibrillation."},
    {"_id": "q4", "text": "A query without judgements."},
    {"_id": "q5", "text": "Obese and lean twins have different gut bacteria."},
]
QRELS = "query-id\tcorpus-id\tscore\nq1\td1\t2\nq1\td5\t1\nq2\td3\t1\nq3\td4\t1\nq3\td2\t0\nq5\td6\t1\n"


@pytest.fixture
def beir_dir(tmp_path):
    folder = tmp_path / "tiny-bio"
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in CORPUS), encoding="utf-8")
    (folder / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in QUERIES), encoding="utf-8")
    (folder / "qrels" / "test.tsv").write_text(QRELS, encoding="utf-8")
    return folder


def test_load_and_question_set(beir_dir):
    data = load_beir(beir_dir, "test")
    assert len(data.corpus) == 6 and data.qrels["q1"] == {"d1": 2, "d5": 1}
    qset = beir_question_set(data)
    assert qset.name == "beir-tiny-bio-test"
    assert [q.id for q in qset.questions] == ["q1", "q2", "q3", "q5"]  # q4 has no judgement, q3's grade-0 doc is not gold
    q1 = qset.questions[0].gold.sections
    assert [(s.source, s.heading, s.grade) for s in q1] == [("d1.md", "", 2), ("d5.md", "", 1)]
    assert [q.id for q in beir_question_set(data, limit=2).questions] == ["q1", "q2"]
    assert collection_name(beir_dir) == "beir-tiny-bio"


def test_malformed_folders_name_file_and_line(beir_dir):
    with pytest.raises(EvalSetError, match="train.tsv is missing"):
        load_beir(beir_dir, "train")
    (beir_dir / "qrels" / "test.tsv").write_text(QRELS + "q9\td1\tmany\n", encoding="utf-8")
    with pytest.raises(EvalSetError, match="test.tsv line 8: expected query-id"):
        load_beir(beir_dir, "test")
    (beir_dir / "queries.jsonl").write_text('{"_id": "q1", "text": "x"}\n{"_id": "q2"}\n', encoding="utf-8")
    with pytest.raises(EvalSetError, match="queries.jsonl line 2"):
        load_beir(beir_dir, "test")


def test_ingest_into_its_own_collection_and_evaluate(beir_dir, tmp_path):
    data = load_beir(beir_dir, "test")
    components = build_components(Settings(data_dir=tmp_path / "data", collection=collection_name(beir_dir)))
    try:
        summary = ingest_beir(components, data)
        assert summary.documents == 6 and summary.chunks_written == 6  # one chunk per document
        chunks = {r.chunk.source: r.chunk for r in components.store.records()}
        assert chunks["d1.md"].heading == "Vitamin D and bone density"  # the title is the chunk's heading
        assert chunks["d6.md"].heading == "" and chunks["d6.md"].text.startswith("Gut microbiota")
        assert ingest_beir(components, data).chunks_written == 0  # a second import re-embeds nothing
        run = run_eval(components, beir_question_set(data), save=False)
    finally:
        components.close()
    q1 = next(q for q in run.questions if q.id == "q1")
    # Graded qrels: d1 (grade 2) and d5 (grade 1) are both gold, and each counts once however it is chunked.
    assert set(q1.gold_labels) == {"d1.md", "d5.md"}
    assert q1.scores["dense"]["hit@1"] == 1.0
    for q in run.questions:
        assert 0.0 <= q.scores["fused"]["ndcg@10"] <= 1.0
    assert run.per_stage["dense"]["recall@5"] == 1.0  # six documents, every gold is within five
    assert run.collection == "beir-tiny-bio"


def test_cli_beir_json(beir_dir):
    result = CliRunner().invoke(main, ["eval", "--beir", str(beir_dir), "--split", "test", "--limit", "3", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["collection"] == "beir-tiny-bio" and data["set"] == "beir-tiny-bio-test"
    assert len(data["questions"]) == 3
    assert {"ndcg@10", "mrr@10", "recall@1", "recall@5", "recall@10", "hit@5"} <= set(data["metrics"])
    assert set(data["per_stage"]) == {"dense", "sparse", "fused", "rerank"}
    bad = CliRunner().invoke(main, ["eval", "--beir", str(beir_dir), "--split", "dev"])
    assert bad.exit_code == 1 and "dev.tsv is missing" in bad.output
