"""`ragscope search`: JSON schema, per-stage fields, filters, and clear failures."""

from __future__ import annotations

import json

import pytest
from carry_corpus import QUESTION, ingest_guide
from click.testing import CliRunner
from retrieval_corpus import KEYWORD_QUESTION, PARAPHRASE_QUESTION, ingest_corpus

from rag.cli import main

FIELDS = {
    "chunk_id", "source", "heading", "start", "end", "text",
    "dense_rank", "dense_score", "sparse_rank", "sparse_score",
    "fused_rank", "fused_score", "rerank_rank", "rerank_score", "final_rank", "collapsed_into", "carried_at",
    "also_in", "repeat_of", "arithmetic", "sparse_terms",
}  # fmt: skip


@pytest.fixture
def ingested(components):
    """The retrieval corpus in the test's data dir, store closed so the CLI can open it."""
    ingest_corpus(components)
    components.close()


def _search(*args: str):
    return CliRunner().invoke(main, ["search", *args])


def test_json_schema_and_stage_values(ingested):
    out = _search(PARAPHRASE_QUESTION, "-k", "2", "--candidates", "3", "--fusion", "union", "--reranker", "dense-cosine", "--json", "--all")
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert data["reranker"] == "dense-cosine"
    rows = data["results"]
    assert rows and all(set(r) == FIELDS for r in rows)
    finals = sorted((r for r in rows if r["final_rank"] is not None), key=lambda r: r["final_rank"])
    assert [r["final_rank"] for r in finals] == [1, 2]
    assert finals[0]["heading"] == "Billing > Refunds" and finals[0]["source"] == "billing.md"
    # Null where a chunk was not in a stage: Refunds shares no word with the question.
    assert finals[0]["sparse_rank"] is None and finals[0]["sparse_score"] is None
    assert finals[0]["dense_rank"] == 1 and isinstance(finals[0]["dense_score"], float)
    assert all(r["rerank_rank"] is not None for r in rows)  # union: everything found is reranked
    text = finals[0]["text"]
    assert "Refunds are issued" in text and finals[0]["end"] - finals[0]["start"] == len(text)


def test_filters_restrict_inside_the_store(ingested):
    out = _search(PARAPHRASE_QUESTION, "--filter", "source=kitchen.md", "--candidates", "2", "--fusion", "dense", "--reranker", "none", "--json")
    assert out.exit_code == 0, out.output
    rows = json.loads(out.stdout)["results"]
    assert len(rows) == 2 and {r["source"] for r in rows} == {"kitchen.md"}
    tagged = json.loads(_search(PARAPHRASE_QUESTION, "--filter", "tag=hardware", "--reranker", "none", "--json").stdout)["results"]
    assert tagged and {r["source"] for r in tagged} == {"gadgets.md"}


def test_k_limits_what_is_printed_and_all_prints_every_candidate(ingested):
    table = _search(PARAPHRASE_QUESTION, "-k", "3")
    assert table.exit_code == 0, table.output
    rows = table.stdout.splitlines()[1:]
    assert [int(line.split()[0]) for line in rows] == [1, 2, 3]
    assert "did not reach the final top-3: --all prints them" in table.stderr
    every = _search(PARAPHRASE_QUESTION, "-k", "3", "--all").stdout.splitlines()[1:]
    assert len(every) > 3 and sum(1 for line in every if line.split()[0] != "–") == 3
    limited = json.loads(_search(PARAPHRASE_QUESTION, "-k", "2", "--json").stdout)["results"]
    assert [r["final_rank"] for r in limited if r["carried_at"] is None] == [1, 2]  # carried rows sit under theirs
    assert all(r["final_rank"] is None and r["carried_at"] in (1, 2) for r in limited if r["carried_at"])


def test_table_output_names_the_reranker(ingested):
    out = _search(PARAPHRASE_QUESTION, "--reranker", "none", "-k", "3")
    assert out.exit_code == 0, out.output
    assert "billing.md > Billing > Refunds" in out.stdout
    assert "reranker: none" in out.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--filter", "colour=red"], "source=NAME or tag=NAME"),
        (["--reranker", "magic"], "unknown reranker"),
        (["--candidates", "0"], "must be a whole number from 1 to 2000; got '0'"),
        (["--candidates", "1e20"], "must be a whole number from 1 to 2000; got '1e20'"),
        (["--candidates", "100000000000000000000"], "must be a whole number from 1 to 2000"),
        (["--min-score", "nan"], "must be a finite number, or empty for none; got 'nan'"),
        (["--dense-weight", "inf"], "must be a number from 0 to 1; got 'inf'"),
        (["--fusion", "best"], "Invalid value for '--fusion'"),
    ],
)
def test_bad_options_exit_non_zero_with_a_message(ingested, args, message):
    out = _search("refunds", *args)
    assert out.exit_code != 0
    assert message in out.output


def test_an_empty_question_is_refused_as_ask_refuses_it(ingested):
    for question in ("", "   \n\t"):
        search_out = _search(question)
        ask_out = CliRunner().invoke(main, ["ask", question])
        assert search_out.exit_code == ask_out.exit_code == 1
        assert "type a question first" in search_out.stderr and "type a question first" in ask_out.stderr


def test_search_lists_the_chunk_a_section_carries_under_it(components):
    """The answer in the second chunk of the first section, carried with it (rag/retrieval/collapse.py): the
    final list the CLI prints shows it right under its section's chunk, at that chunk's rank."""
    answer = ingest_guide(components)
    components.close()
    out = _search(QUESTION, "--collapse")
    assert out.exit_code == 0, out.output
    lines = [line for line in out.stdout.splitlines() if line.strip()[:1] in "(0123456789"]
    assert lines[0].split()[0] == "1" and lines[1].split()[:2] == ["(1)", answer[:8]], out.stdout
    rows = json.loads(_search(QUESTION, "--collapse", "--json").stdout)["results"]
    assert (rows[1]["chunk_id"], rows[1]["final_rank"], rows[1]["carried_at"]) == (answer, None, 1)


def test_json_rows_carry_the_arithmetic_of_the_scores_they_were_ranked_by(ingested):
    out = _search(KEYWORD_QUESTION, "--fusion", "dbsf", "--reranker", "score-fusion", "--candidates", "4", "--json", "--all")
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert data["fusion"]["fusion"] == "dbsf" and [n["stage"] for n in data["fusion"]["norms"]] == ["dense", "sparse"]
    assert "zorblaxite" in [t["word"] for t in data["question_terms"]["terms"]]
    for row in data["results"]:
        fused, rerank = row["arithmetic"]["fused"], row["arithmetic"]["rerank"]
        if row["fused_score"] is not None:
            assert fused["matches"] and fused["computed"] == pytest.approx(row["fused_score"], rel=1e-5, abs=1e-6)
            assert rerank["computed"] == row["rerank_score"]
            assert [p["name"] for p in rerank["parts"]] == ["chunk cosine", "BM25"]
        terms = row["sparse_terms"]["terms"]
        assert sum(t["contribution"] for t in terms) == pytest.approx(row["sparse_score"] or 0.0, rel=1e-4, abs=1e-9)


def test_a_question_of_stop_words_is_reported_empty(ingested):
    text = _search("What is it that they do?")
    assert text.exit_code == 0, text.output
    assert "The keyword (BM25) search had no term to search" in text.stderr and "they (stop word)" in text.stderr
    data = json.loads(_search("What is it that they do?", "--json").stdout)
    assert data["question_terms"]["usable"] is False and data["question_terms"]["terms"] == []
    assert all(r["sparse_rank"] is None for r in data["results"])
    assert "BM25 searched 1 term" in _search(PARAPHRASE_QUESTION.replace("How can I get my money back?", "money")).stderr
