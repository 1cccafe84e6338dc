"""`ragscope search --mode`: each search of a mode as a stage, in JSON and text; the agent refused offline."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from modes_corpus import FILES, TWO_HOP_QUESTION

from rag.cli import main
from rag.ingest.pipeline import ingest_files


@pytest.fixture
def ingested(components):
    """The two-hop corpus in the test's data dir, store closed so the CLI can open it."""
    assert not ingest_files(components, [(n, t.encode()) for n, t in FILES.items()]).errors
    components.close()


def test_multi_hop_json_has_one_stage_per_hop(ingested):
    out = CliRunner().invoke(main, ["search", TWO_HOP_QUESTION, "--mode", "multi_hop", "-k", "3", "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert (data["mode"], data["backend"]) == ("multi_hop", "offline") and "bridging" in data["notes"][0]
    hop1, hop2 = data["stages"]
    assert (hop1["label"], hop1["query"], hop1["hop"]) == ("hop 1", TWO_HOP_QUESTION, 1)
    assert hop1["carried"][:2] == ["halberd", "instruments"] and hop2["query"] == f"{TWO_HOP_QUESTION} {' '.join(hop1['carried'])}"
    for stage in (hop1, hop2):
        assert {"dense_rank", "sparse_rank", "fused_rank", "rerank_rank", "final_rank"} <= set(stage["results"][0])
    hop2_final = sorted((r for r in hop2["results"] if r["final_rank"]), key=lambda r: r["final_rank"])
    assert "Manufacturers > Halberd Instruments" in [r["heading"] for r in hop2_final]
    assert data["reranker"].startswith("rrf over 2 searches") and sum(1 for r in data["results"] if r["final_rank"]) == 3


def test_mode_from_the_environment_and_text_output(ingested, monkeypatch):
    monkeypatch.setenv("RAGSCOPE_MODE", "corrective")
    out = CliRunner().invoke(main, ["search", TWO_HOP_QUESTION, "-k", "3"])
    assert out.exit_code == 0, out.output
    assert "== first pass: " + TWO_HOP_QUESTION in out.stdout and "threshold: 0.25" in out.stdout
    assert "== final (corrective, offline)" in out.stdout and "graded by the answer gate's relevance" in out.stderr


def test_agent_offline_and_a_bad_mode_are_clean_errors(ingested, monkeypatch):
    out = CliRunner().invoke(main, ["search", TWO_HOP_QUESTION, "--mode", "agent"])
    assert out.exit_code == 1 and "needs Claude (set ANTHROPIC_API_KEY)" in out.output and "Traceback" not in out.output
    monkeypatch.setenv("RAGSCOPE_MODE", "psychic")
    out = CliRunner().invoke(main, ["search", TWO_HOP_QUESTION])
    assert out.exit_code != 0 and "must be one of plain, hyde, multi_hop, corrective, agent; got 'psychic'" in out.output
