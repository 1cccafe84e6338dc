"""`ragscope ask --mode` and `ragscope eval --mode` on the two-hop corpus: the mode runs, is logged, and compares."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from modes_corpus import FILES, TWO_HOP_QUESTION

from rag.ask.log import AskLog
from rag.cli import main
from rag.settings.config import Settings
from rag.eval.runs import list_runs
from rag.ingest.pipeline import ingest_files

GOLD = {"source": "makers.md", "heading": "Halberd Instruments"}


@pytest.fixture
def ingested(components, tmp_path):
    """The two-hop corpus in the test's data dir (store closed so the CLI can open it), and a one-question set."""
    assert not ingest_files(components, [(n, t.encode()) for n, t in FILES.items()]).errors
    components.close()
    path = tmp_path / "two_hop.jsonl"
    path.write_text(json.dumps({"id": "vexora", "question": TWO_HOP_QUESTION, "gold": [GOLD], "answerable": True}) + "\n", encoding="utf-8")
    return path


def test_ask_runs_the_mode_logs_it_and_shows_its_stages(ingested):
    out = CliRunner().invoke(main, ["ask", TWO_HOP_QUESTION, "--mode", "multi_hop", "-k", "3", "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert data["retrieval_mode"] == "multi_hop" and data["mode"] == "extractive"
    stages = data["mode_stages"]
    assert (stages["mode"], stages["backend"]) == ("multi_hop", "offline")
    hop1, hop2 = stages["stages"]
    assert (hop1["label"], hop2["label"]) == ("hop 1", "hop 2") and hop1["carried"][:2] == ["halberd", "instruments"]
    assert ("makers.md", "Manufacturers > Halberd Instruments") in [(c["source"], c["heading"]) for c in hop2["final"]]
    # The sources sent come from the mode's fused final list, and the log records the mode.
    (record,) = AskLog.for_settings(Settings.from_env()).recent()
    assert record.config.mode == "multi_hop" and record.config.final_k == 3
    final = [r["id"] for r in sorted((r for r in record.retrieved if r["final_rank"]), key=lambda r: r["final_rank"])]
    assert len(final) == 3 and set(data["sources"]) <= set(final) and set(final) <= {c["id"] for s in (hop1, hop2) for c in s["final"]}
    assert record.inspector_params()["mode"] == "multi_hop"


def test_ask_text_output_lists_the_searches_and_the_agent_is_refused_offline(ingested):
    out = CliRunner().invoke(main, ["ask", TWO_HOP_QUESTION, "--mode", "hyde", "-k", "3"])
    assert out.exit_code == 0, out.output
    assert f"hyde question: {TWO_HOP_QUESTION}" in out.stderr and "hyde hyde passage: " in out.stderr
    assert "hyde: offline: the passage is a pseudo-document" in out.stderr and "after hyde retrieval" in out.stderr
    refused = CliRunner().invoke(main, ["ask", TWO_HOP_QUESTION, "--mode", "agent"])
    assert refused.exit_code == 1 and "needs Claude (set ANTHROPIC_API_KEY)" in refused.output and "Traceback" not in refused.output
    assert AskLog.for_settings(Settings.from_env()).recent(5)[0].config.mode == "hyde"  # the refused ask is not logged


def test_eval_runs_a_mode_records_it_and_compares_across_modes(ingested):
    runner = CliRunner()
    plain = json.loads(runner.invoke(main, ["eval", str(ingested), "-k", "2", "--json"]).stdout)
    out = runner.invoke(main, ["eval", str(ingested), "-k", "3", "--mode", "multi_hop", "--json", "--baseline", plain["run_id"]])
    assert out.exit_code == 0, out.output
    run = json.loads(out.stdout)
    assert run["config"]["mode"] == "multi_hop" and plain["config"]["mode"] == "plain"
    assert run["metrics"]["hit@final"] == 1.0  # the bridged hop brings the maker's section into the top 3
    assert run["comparison"]["changes"]["mode"] == ["plain", "multi_hop"]
    (q,) = run["questions"]
    assert q["inspector"]["mode"] == "multi_hop"
    names = {r.id: r.label for r in list_runs(Settings.from_env().data_dir)}
    assert "multi-hop mode" in names[run["run_id"]] and "mode" not in names[plain["run_id"]]
    text = runner.invoke(main, ["eval", str(ingested), "-k", "2", "--mode", "multi_hop", "--baseline", plain["run_id"]])
    assert "  mode: plain -> multi_hop" in text.stdout
    # The same k in multi_hop loses the maker when the hops are fused: the verdict names the mode's cause.
    assert "Found by one of the mode's searches but lost when they were combined" in text.stdout
