"""`ragscope ask` through click's CliRunner on the ingested sample help centre."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from rag.ask.log import AskLog
from rag.cli import main
from rag.components import build_components
from rag.ingest.pipeline import ingest_files
from rag.catalog.sample import sample_files


@pytest.fixture
def ingested(settings):
    components = build_components(settings)
    assert not ingest_files(components, sample_files()).errors
    components.close()  # the CLI opens the store itself
    return settings


def test_json_answer_has_the_documented_shape_and_is_logged(ingested):
    result = CliRunner().invoke(main, ["ask", "How long does a refund take to reach my card?", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert {"answer", "citations", "abstained", "reason", "mode", "sources"} <= set(data)
    assert data["mode"] == "extractive" and data["abstained"] is False and data["reason"] == ""
    assert "5 to 10 business days" in data["answer"]
    first = data["citations"][0]
    assert {"id", "source", "heading", "start", "end"} <= set(first)
    assert (first["source"], first["heading"]) == ("billing/plans.md", "Billing > Refunds")
    assert first["id"] == data["sources"][0] and first["start"] < first["end"]
    assert len(set(data["sources"])) == len(data["sources"]) >= 1
    (record,) = AskLog.for_settings(ingested).recent()
    assert record.sources == tuple(data["sources"]) and record.answer == data["answer"]


def test_off_topic_question_abstains_with_exit_zero(ingested):
    result = CliRunner().invoke(main, ["ask", "What is the capital of France?", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["abstained"] is True and data["answer"] == "NOT_IN_SOURCES"
    assert data["sources"] == [] and data["citations"] == [] and "dense cosine" in data["reason"]


def test_text_output_streams_the_answer_then_lists_citations(ingested):
    result = CliRunner().invoke(main, ["ask", "How long is the password reset link valid?", "--fusion", "rrf", "--k", "3"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "The reset link is valid for 30 minutes. [S1]"
    assert any(line.startswith("[S1] account/security.md > Account and security > Resetting your password (chars ") for line in lines)
    assert "answered by extractive" in result.stderr
    record = AskLog.for_settings(ingested).recent()[0]
    assert (record.config.fusion, record.config.final_k) == ("rrf", 3)


def test_bad_input_exits_non_zero_with_a_message(ingested):
    empty = CliRunner().invoke(main, ["ask", "   "])
    assert empty.exit_code == 1 and "type a question first" in empty.stderr
    bad_k = CliRunner().invoke(main, ["ask", "refunds?", "-k", "0"])
    assert bad_k.exit_code != 0 and "Invalid value for '--k'" in bad_k.output and "must be a whole number from 1 to 4000; got '0'" in bad_k.output
    bad_reranker = CliRunner().invoke(main, ["ask", "refunds?", "--reranker", "magic"])
    # Checked as the option is parsed, like --fusion: a usage error (exit 2) naming the accepted forms.
    assert bad_reranker.exit_code == 2 and "unknown reranker 'magic'; use one of none, dense-cosine" in bad_reranker.output
    assert AskLog.for_settings(ingested).recent() == []
