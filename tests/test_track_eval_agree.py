"""`ragscope track` on a question's gold section and `ragscope eval` agree on every question of a set:
found exactly when the section is a hit in the final top k, at the same rank (issue 26)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from rag.cli import main
from rag.cli.track_cmd import report_json
from rag.eval.gold import SectionGold
from rag.eval.qsets import parse_question_set, sample_question_set_text
from rag.eval.runner import run_eval
from rag.inspect.track import find_target, track


def test_track_and_eval_agree_on_every_section_gold_question_of_the_sample_set(sample_components):
    qset = parse_question_set(sample_question_set_text(), "sample")
    config = sample_components.settings.retrieval
    run = run_eval(sample_components, qset, config, save=False)
    by_id = {q.id: q for q in qset.questions}
    checked = 0
    for row in run.questions:
        gold = by_id[row.id].gold
        if not row.scored or not isinstance(gold, SectionGold) or len(gold.sections) != 1:
            continue
        (ref,) = gold.sections
        target = find_target(sample_components, source=ref.source, heading=ref.heading, question=row.question)
        out = report_json(track(sample_components, row.question, target, config))
        hit = row.gold_ranks["final"]
        assert out["found"] == (hit is not None), (row.id, out["reason"], hit)
        assert out["final_rank"] == hit, (row.id, out["final_rank"], hit)
        assert (out["lost_at"] is None) == out["found"] and "min score None" not in out["reason"]
        checked += 1
    assert checked >= 8, checked  # every single-section question of the set


def test_track_json_has_the_documented_fields(sample_store):
    result = CliRunner().invoke(
        main, ["track", "How long do refunds take?", "--source", "billing/plans.md", "--heading", "Refunds", "--json"]
    )
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert set(out) >= {"target", "found", "final_rank", "lost_at", "stages", "standing_chunk", "fixes"}
    assert set(out["target"]) >= {"how", "source", "heading", "chunk_ids"} and out["target"]["how"] == "heading"
    assert set(out["stages"]) == {"dense", "sparse", "fused", "rerank"}
    assert all(set(s) == {"rank", "score"} for s in out["stages"].values())
    assert out["found"] is True and out["lost_at"] is None and out["standing_chunk"] in out["target"]["chunk_ids"]


def test_track_needs_exactly_one_way_of_naming_the_target(sample_store):
    result = CliRunner().invoke(main, ["track", "refunds?", "--chunk", "abc", "--text", "refund"])
    assert result.exit_code == 2 and "give one of" in result.output
