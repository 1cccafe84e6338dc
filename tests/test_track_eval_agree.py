"""`ragscope track` on a question's gold section and `ragscope eval` agree on every question of a set:
found exactly when the section is a hit in the final top k, at the same rank (issue 26)."""

from __future__ import annotations

import dataclasses
import json


from click.testing import CliRunner

from rag.cli import main
from rag.cli.track_cmd import report_json
from rag.eval.gold import SectionGold
from rag.eval.qsets import parse_question_set, sample_question_set_text
from rag.eval.runner import run_eval
from rag.inspect.target import find_target
from rag.inspect.track import track


# The defaults, and settings tight enough to lose gold at different stages (few candidates, k = 1).
CONFIGS = {
    "defaults": {},
    "rrf-dense-cosine": {"candidates": 2, "final_k": 1, "fusion": "rrf", "reranker": "dense-cosine"},
    "dbsf-no-rerank": {"candidates": 3, "final_k": 1, "fusion": "dbsf", "reranker": "none"},
    "sparse-only": {"candidates": 2, "final_k": 1, "fusion": "sparse", "reranker": "dense-cosine"},
}


def test_track_and_eval_agree_on_every_section_gold_question_of_the_sample_set(sample_components):
    """Found, rank and the stage that lost it are the same in both, under every config, since both ask one
    classifier (rag.retrieval.loss)."""
    qset = parse_question_set(sample_question_set_text(), "sample")
    by_id = {q.id: q for q in qset.questions}
    lost: dict[str, list[str]] = {}
    for name, changes in CONFIGS.items():
        config = dataclasses.replace(sample_components.settings.retrieval, **changes)
        run = run_eval(sample_components, qset, config, save=False)
        checked = 0
        for row in run.questions:
            gold = by_id[row.id].gold
            if not row.scored or not isinstance(gold, SectionGold) or len(gold.sections) != 1:
                continue
            (ref,) = gold.sections
            target = find_target(sample_components, source=ref.source, heading=ref.heading, question=row.question)
            out = report_json(track(sample_components, row.question, target, config))
            hit = row.gold_ranks["final"]
            assert out["found"] == (hit is not None), (name, row.id, out["reason"], hit)
            assert out["final_rank"] == hit, (name, row.id, out["final_rank"], hit)
            assert (out["lost_at"] is None) == out["found"] and "min score None" not in out["reason"]
            assert out["lost_at"] == (row.verdict.code if hit is None else None), (name, row.id, out["lost_at"])
            checked += 1
            if hit is None:
                lost.setdefault(name, []).append(out["lost_at"])
        assert checked >= 8, (name, checked)  # every single-section question of the set
    assert "defaults" not in lost, lost
    assert len({code for codes in lost.values() for code in codes}) >= 2, lost  # the agreement covers several stages


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
