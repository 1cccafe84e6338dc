"""A final list that never hides the answer: a section's chunk carries the siblings that outrank the next section
(rag/retrieval/collapse.py), shown under it, read with it, found and counted at its rank."""

from __future__ import annotations

import dataclasses
import json

import pytest
from carry_corpus import ANSWER, QUESTION, ingest_guide
from click.testing import CliRunner

from rag.cli import main
from rag.eval.gold import TextGold
from rag.eval.qsets import Question, QuestionSet
from rag.eval.runner import run_eval
from rag.inspect.target import find_target
from rag.inspect.track import track
from rag.retrieval.collapse import carried_siblings, fold_sections
from rag.retrieval.retrieve import retrieve
from rag.settings.config import RetrievalConfig
from rag.types import Chunk

ON = RetrievalConfig(collapse=True)


@pytest.fixture
def guide(components):
    return components, ingest_guide(components)


def test_the_answer_in_the_second_chunk_of_the_first_section_is_in_the_final_list(guide):
    components, answer = guide
    result = retrieve(components, QUESTION, ON)
    first = result.final[0]
    mine = result.get(answer)
    # The case collapsing used to hide: ranked 2nd of all chunks, right behind a chunk of its own section.
    assert mine.rerank.rank == 2 and mine.collapsed_into == first.id and mine.final_rank is None
    assert first.chunk.chunk.heading_path == mine.chunk.chunk.heading_path
    assert mine.carried and mine.shown_rank == first.final_rank == 1
    shown = [c.id for c in result.shown]
    assert shown[shown.index(first.id) + 1] == answer  # listed right under its section's chunk
    assert "carried with its section's chunk" in mine.movement and mine.as_row()["carried_at"] == 1
    # Sections still count once; the carried chunk only joins its section's rank.
    assert len({c.chunk.chunk.heading for c in result.final}) == len(result.final)
    assert answer in {c.id for c in result.ranked_groups("rerank")[0]}
    assert answer not in {c.id for c in result.ranked("rerank")}


def test_tracking_the_carried_chunk_finds_it_at_its_sections_rank(guide):
    components, answer = guide
    target = find_target(components, text=ANSWER)
    assert target.id == answer
    report = track(components, QUESTION, target, ON)
    assert report.found and report.dropped_at is None, report.reason
    assert report.stage("final").rank == 1 and "carried with guide.md › Guide > Refunds" in report.reason
    assert report.suggestions == ()


def test_track_cli_says_found_at_the_sections_rank(guide):
    components, answer = guide
    components.close()
    out = CliRunner().invoke(main, ["track", QUESTION, "--chunk", answer, "--collapse", "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert data["found"] and data["final_rank"] == 1 and data["lost_at"] is None
    assert data["chunks"][0]["carried"] is True


def test_eval_answer_text_gold_counts_the_carried_chunk_at_its_sections_rank(guide):
    components, answer = guide
    qset = QuestionSet("carry", (Question("q1", QUESTION, TextGold(ANSWER), answer=ANSWER),))
    run = run_eval(components, qset, ON, save=False)
    [row] = run.questions
    assert row.verdict is None and row.gold_ranks["final"] == 1 and row.gold_chunks == (answer,)
    assert run.per_stage["rerank"]["mrr@10"] == 1.0 and run.per_stage["rerank"]["hit@1"] == 1.0
    # Without collapsing the same chunk ranks 2nd: carrying it counts it where its section is shown.
    off = run_eval(components, qset, dataclasses.replace(ON, collapse=False), save=False)
    assert off.per_stage["rerank"]["mrr@10"] == 0.5


def _chunk(cid: str, section: str) -> Chunk:
    return Chunk(cid, "doc.md", (section,), 0, 1, cid, 0)


@pytest.mark.parametrize(
    ("order", "k", "carried"),
    [
        # A's siblings ahead of B are carried; A3, below B and deeper than 2 x k, stays folded.
        ("A1 A2 B1 C1 A3", 1, {"A2"}),
        # Within the first 2 x k chunks a sibling is carried even behind another section.
        ("A1 B1 A2 C1 D1 A3", 2, {"A2"}),
        ("A1 B1 C1 A2 D1", 2, {"A2"}),
        ("A1 B1 C1 D1 A2", 2, set()),
        # At most 2 x k - 1 per section: the list without collapsing, at twice k, would show no more of them.
        ("A1 A2 A3 A4 A5", 2, {"A2", "A3", "A4"}),
        # Behind a second section's chunk that is not shown (a repeat), A's run goes on.
        ("A1 X1 A2 B1 A3 C1 D1 E1 A4", 1, {"A2"}),
    ],
)
def test_the_rule_for_what_a_section_carries(order, k, carried):
    ranked = [_chunk(cid, cid[0]) for cid in order.split()]
    folded = fold_sections(ranked)
    assert all(folded[c.id] == c.id[0] + "1" for c in ranked if not c.id.endswith("1"))
    shown = lambda cid: cid != "X1"  # noqa: E731 - X1 stands for a repeat of another text
    assert set(carried_siblings(ranked, folded, k, shown)) == carried
