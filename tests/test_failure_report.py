"""Issue 40, item 4: one question's failure report, from the engine and from `ragscope track --report`: every
section of a tracked failure, in Markdown an issue tracker reads (document text escaped) and in JSON."""

from __future__ import annotations

import dataclasses
import json
import re

import pytest
from carry_corpus import CHUNKING, HOSTILE, HOSTILE_GUIDE, QUESTION
from click.testing import CliRunner

from rag.cli import main
from rag.components import build_components
from rag.ingest.pipeline import ingest_files
from rag.inspect.report import SECTIONS, failure_report, report_input
from rag.inspect.target import find_target
from rag.inspect.track import track
from rag.modes.run import run_mode
from rag.settings.collection_settings import save_collection_settings
from rag.settings.config import RetrievalConfig

TITLES = ["Question", "Settings (and where each came from)", "Stage table", "Target", "How its scores were computed", "Where it was lost",
          "What ranked above it", "The verified fix"]  # fmt: skip


@pytest.fixture
def guide(settings):
    """The guide ingested with its hostile Invoices section; stored settings put k at 1 (Invoices is lost there)."""
    components = build_components(settings)
    assert not ingest_files(components, [("guide.md", HOSTILE_GUIDE.encode())], CHUNKING).errors
    components.close()
    save_collection_settings(settings.data_dir, settings.collection, {"final_k": 1}, note="by hand")
    return settings


def _headings(markdown: str) -> list[str]:
    return re.findall(r"(?m)^## (.+)$", markdown)


def test_the_report_of_a_tracked_failure_holds_every_section_and_escapes_document_text(guide):
    components = build_components(guide).with_stored_settings()
    try:
        target = find_target(components, source="guide.md", heading="Invoices", question=QUESTION)
        config = RetrievalConfig(final_k=1, fusion="rrf")  # the stored k, and a fusion the form changed
        report = failure_report(
            report_input(components, (t := track(components, QUESTION, target, config)).result, t, "a test")
        )
        hops = dataclasses.replace(config, mode="multi_hop")
        moded = track(components, QUESTION, target, hops, mode=run_mode(components, QUESTION, config=hops))
        under_mode = failure_report(report_input(components, moded.result, moded))
    finally:
        components.close()
    assert t.dropped_at == "final_k"
    assert [s.key for s in report.sections] == ["question", "settings", "stages", "target", "arithmetic", "lost", "above", "fix"]
    # Under a mode, one more: each of its searches and what happened to the target there (every builder has said).
    assert [s.key for s in under_mode.sections] == [b.__name__[1:] for b in SECTIONS]
    mode = under_mode.section("mode")
    assert mode.title == "The multi_hop mode's searches" and mode.data["searches"] and mode.data["summary"]
    assert re.findall(r"(?m)^## (.+)$", under_mode.markdown())[5] == mode.title
    md = report.markdown()
    assert _headings(md) == TITLES
    assert "\\<script\\>" in md and "<script>" not in md and "](http" not in md and "\n| forged" not in md
    settings = report.section("settings")
    assert "| final_k | 1 | collection's stored |  |" in settings.markdown
    assert "| fusion | rrf | given (form, link or option) | dbsf |" in settings.markdown
    assert "differs from Ask and Eval in: fusion rrf (Ask: dbsf)" in settings.markdown.replace("\\", "")
    assert "**Ranked below the final k**" in report.section("lost").markdown
    assert "final k \\>\\= 2**: verified, final rank 2" in report.section("fix").markdown
    data = report.as_json()
    assert data["settings"]["origins"]["final_k"] == "collection" and data["settings"]["origins"]["fusion"] == "given"
    assert data["target"]["heading"] == "Guide > Invoices" and data["target"]["text"] == HOSTILE
    assert data["lost"]["lost_at"] == "final_k" and data["fix"]["verified"][0] == {
        "change": "final k >= 2",
        "final_rank": 2,
    }
    assert [a["heading"] for a in data["above"]] == ["Guide > Refunds"] and data["above"][0]["why"]
    assert len(data["stages"]["candidates"]) == 4
    # How the target's scores were made: the fused terms sum to the score the stage table ranked it by, and
    # the chunk just above it (Refunds) is named with the term that decided.
    arithmetic = data["arithmetic"]
    mine = next(c for c in data["stages"]["candidates"] if c["chunk_id"] == t.target.id)
    assert arithmetic["row"]["fused"]["matches"] and arithmetic["row"]["fused"]["recorded"] == mine["fused_score"]
    versus = arithmetic["versus_above"]
    assert versus["above_id"] == data["above"][0]["chunk_id"] and versus["decided_by"]
    assert versus["decided_by"] in report.section("arithmetic").markdown.replace("\\", "")


def test_track_writes_the_report_as_its_extension_says_and_refuses_another(guide, tmp_path):
    args = ["track", QUESTION, "--source", "guide.md", "--heading", "Invoices"]
    md, js = tmp_path / "out.md", tmp_path / "out.json"
    for path in (md, js):
        done = CliRunner().invoke(main, [*args, "--report", str(path)])
        assert done.exit_code == 0, done.output
        assert f"report written to {path}" in done.stderr
    assert _headings(md.read_text(encoding="utf-8")) == TITLES
    data = json.loads(js.read_text(encoding="utf-8"))
    assert list(data) == ["report", "question", "settings", "stages", "target", "arithmetic", "lost", "above", "fix"]
    assert data["question"]["came_from"] == "ragscope track" and data["settings"]["origins"]["final_k"] == "collection"
    assert data["settings"]["parity"]["same"] is True  # nothing given: it runs what Ask runs
    refused = CliRunner().invoke(main, [*args, "--report", str(tmp_path / "out.txt")])
    assert refused.exit_code == 2 and "written as .md (Markdown) or .json" in refused.output
    assert not (tmp_path / "out.txt").exists()
    nowhere = CliRunner().invoke(main, [*args, "--report", str(tmp_path / "missing" / "out.md")])
    assert nowhere.exit_code == 2 and "no folder" in nowhere.output
