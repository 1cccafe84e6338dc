"""`ragscope eval` through click's CliRunner on the ingested sample help centre."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from rag.cli import main
from rag.components import build_components
from rag.eval.qsets import sample_question_set_text
from rag.eval.runs import list_runs
from rag.ingest.pipeline import ingest_files
from rag.retrieval.result import STAGES
from rag.catalog.sample import sample_files


@pytest.fixture
def ingested(settings, tmp_path):
    components = build_components(settings)
    assert not ingest_files(components, sample_files()).errors
    components.close()  # the CLI opens the store itself
    path = tmp_path / "sample_qa.jsonl"
    path.write_text(sample_question_set_text(), encoding="utf-8")
    return settings, path


def test_json_has_the_documented_shape_and_the_run_is_stored(ingested):
    settings, path = ingested
    result = CliRunner().invoke(main, ["eval", str(path), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert {"ndcg@10", "mrr@10", "recall@1", "recall@5", "recall@10", "hit@5"} <= set(data["metrics"])
    assert set(data["per_stage"]) == set(STAGES)
    assert data["metrics"]["ndcg@10"] == data["per_stage"]["rerank"]["ndcg@10"]
    assert 0.5 < data["metrics"]["recall@10"] <= 1.0
    assert data["config"]["candidates"] >= 20  # so that @20 counts
    assert len(data["questions"]) == 20
    failed = [q for q in data["questions"] if q["verdict"]]
    assert all(q["gold_ranks"]["final"] is None for q in failed if q["answerable"])
    for q in failed:
        assert {"q", "fusion", "candidates", "k", "reranker"} <= set(q["inspector"])
    (stored,) = list_runs(settings.data_dir)
    assert stored.id == data["run_id"] and stored.set_name == "sample_qa"


def test_baseline_comparison_and_listing(ingested):
    _, path = ingested
    runner = CliRunner()
    first = json.loads(runner.invoke(main, ["eval", str(path), "--json", "--mark-baseline"]).stdout)
    second = runner.invoke(main, ["eval", str(path), "--json", "--k", "10", "--baseline", "marked"])
    assert second.exit_code == 0, second.output
    cmp = json.loads(second.stdout)["comparison"]
    assert cmp["a"] == first["run_id"] and cmp["changes"]["final_k"] == [5, 10]
    assert cmp["verdict_changes"] == [{"id": "data-region", "a": "final_k", "b": None}]
    text = runner.invoke(main, ["eval", str(path), "--baseline", first["run_id"]])
    assert text.exit_code == 0 and f"({first['run_id']})" in text.stdout and "hybrid (fused)" in text.stdout
    assert "0 wins, 0 losses, 0 verdict changes" in text.stdout
    listing = runner.invoke(main, ["eval", "--list-runs"])
    assert listing.stdout.count("sample_qa") == 3 and f"* {first['run_id']}" in listing.stdout


def test_malformed_set_exits_non_zero_with_the_line_and_stores_nothing(ingested, tmp_path):
    settings, _ = ingested
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "ok", "gold": "x"}\n{"question": "broken", "gold": \n', encoding="utf-8")
    result = CliRunner().invoke(main, ["eval", str(bad), "--json"])
    assert result.exit_code == 1
    assert "bad line 2: not valid JSON" in result.output
    assert list_runs(settings.data_dir) == []


def test_usage_errors(ingested):
    _, path = ingested
    runner = CliRunner()
    assert runner.invoke(main, ["eval"]).exit_code == 2
    assert runner.invoke(main, ["eval", str(path), "--beir", str(path.parent)]).exit_code == 2
    missing = runner.invoke(main, ["eval", str(path), "--baseline", "nope"])
    assert missing.exit_code == 1 and "no eval run 'nope'" in missing.output


def test_gold_the_collection_lacks_is_reported_invalid_and_left_out(ingested, tmp_path):
    _, path = ingested
    lines = [
        {"id": "good", "question": "Can I get my money back on a monthly plan?", "gold": [{"source": "billing/plans.md", "heading": "Refunds"}]},
        {"id": "no-doc", "question": "What does the hardware cost?", "gold": [{"source": "hardware.md", "heading": "Prices"}]},
        {"id": "no-chunk", "question": "How do I log in?", "gold": ["0123-gone"]},
    ]
    qset = tmp_path / "mixed.jsonl"
    qset.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    runner = CliRunner()
    data = json.loads(runner.invoke(main, ["eval", str(qset), "--json", "--name", "mixed gold"]).stdout)
    assert data["name"] == "mixed gold" and data["left_out"] == 2
    assert {i["id"]: i["reason"] for i in data["invalid"]} == {
        "no-doc": "document 'hardware.md' is not in the collection",
        "no-chunk": "chunk id 0123-gone is not in the collection (chunk ids change when a document is re-chunked; name the section instead)",
    }
    # Only the valid question is scored: the leaf heading "Refunds" finds its section.
    good = next(q for q in data["questions"] if q["id"] == "good")
    assert good["gold_chunks"] and good["scores"]["rerank"]["ndcg@10"] == data["metrics"]["ndcg@10"] > 0
    text = runner.invoke(main, ["eval", str(qset)])
    assert text.exit_code == 0
    assert "2 questions left out of the metrics" in text.stdout and "no-doc\tINVALID\tdocument 'hardware.md'" in text.stdout


def test_a_set_whose_every_question_is_left_out_exits_non_zero_and_stores_nothing(settings, tmp_path):
    """Issue 38, item 7: the sample set on a collection of other documents is refused, not stored as nDCG 0."""
    components = build_components(settings)
    assert not ingest_files(components, [("note.md", b"# Note\n\nThe ferry leaves at nine.\n")]).errors
    components.close()
    path = tmp_path / "sample_qa.jsonl"
    path.write_text(sample_question_set_text(), encoding="utf-8")
    result = CliRunner().invoke(main, ["eval", str(path)])
    assert result.exit_code == 1, result.output
    assert "nothing stored: all " in result.output and "Was the set written for another collection?" in result.output
    assert list_runs(settings.data_dir) == []
