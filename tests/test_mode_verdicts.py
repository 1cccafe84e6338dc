"""Eval failure verdicts of the retrieval modes, from real mode runs on the two-hop corpus (real models and store).

Each case loses the gold in a way only a mode can: the corrective grader discarded it, a search found
it but combining the searches lost it, hop 2 searched for something else, the agent never searched
for it (Claude over the mocked Messages endpoint).
"""

from __future__ import annotations

from anthropic_mock import MockedMessages, blocks, text_block, tool_use
from modes_corpus import TWO_HOP_QUESTION, heading_of, two_hop  # noqa: F401 (fixture)

from rag.settings.config import RetrievalConfig
from rag.eval.gold import CollectionIndex, SectionGold, SectionRef
from rag.eval.verdicts import judge_question
from rag.modes.run import run_mode
from rag.modes.options import ModeOptions

MAKER = SectionGold((SectionRef("makers.md", "Halberd Instruments"),))
OTHER_MAKER = SectionGold((SectionRef("makers.md", "Brightwell Lighting"),))
PRODUCT = SectionGold((SectionRef("products.md", "Vexora"),))


def verdict(components, gold, mr):  # noqa: ANN001, ANN201
    resolved = CollectionIndex.from_components(components).resolve(gold)
    assert resolved.chunk_ids, "the gold must name a chunk of the corpus"
    return judge_question(True, resolved, mr.result, None, None, mr)


def test_grader_discarded_the_gold(two_hop):
    mr = run_mode(two_hop, TWO_HOP_QUESTION, "corrective", RetrievalConfig(final_k=3), options=ModeOptions(grade_threshold=0.95))
    assert mr.abstained
    v = verdict(two_hop, PRODUCT, mr)
    assert v.code == "grader_discarded" and v.detail.startswith("the grader discarded the gold chunk: the first pass ranked it 1 but graded it 0.")
    assert v.evidence["threshold"] == 0.95 and v.evidence["basis"] == "dense cosine"
    assert v.track == next(c.id for c in mr.corrective.attempts[0].result.final if heading_of(c) == "Products > Vexora")


def test_a_hop_found_the_gold_but_fusing_the_hops_lost_it(two_hop):
    # Hop 2 ranks the maker 2nd, but RRF over both hops prefers Osterby Print, which hop 1 ranked 2nd too.
    mr = run_mode(two_hop, TWO_HOP_QUESTION, "multi_hop", RetrievalConfig(final_k=2))
    v = verdict(two_hop, MAKER, mr)
    assert v.code == "mode_merge_dropped" and v.evidence["search"] == "hop 2"
    assert "gold was rank 2 in the hop 2 search, but combining the mode's searches (rrf over 2 searches" in v.detail


def test_hop_2_drifted_away_from_a_gold_no_hop_found(two_hop):
    mr = run_mode(two_hop, TWO_HOP_QUESTION, "multi_hop", RetrievalConfig(final_k=2))
    v = verdict(two_hop, OTHER_MAKER, mr)
    assert v.code == "hop_drifted" and v.detail.startswith(f"hop 2 query drifted: it searched “{TWO_HOP_QUESTION} halberd instruments")
    assert v.evidence["carried"][:2] == ["halberd", "instruments"]


def test_the_agent_never_searched_for_the_gold(two_hop):
    api = MockedMessages.replying([blocks(tool_use("search_docs", {"query": "desk lamp"}, "toolu_1")), blocks(text_block("I do not know."), stop_reason="end_turn")])
    mr = run_mode(two_hop, TWO_HOP_QUESTION, "agent", RetrievalConfig(final_k=1), client=api.client())
    assert all(heading_of(c) != "Manufacturers > Halberd Instruments" for c in mr.result.final)
    v = verdict(two_hop, MAKER, mr)
    assert v.code == "agent_never_searched" and v.detail == "agent never searched for makers.md › Halberd Instruments: its 1 searches (“desk lamp”) never returned it"


def test_a_plain_miss_keeps_the_plain_verdicts(two_hop):
    mr = run_mode(two_hop, TWO_HOP_QUESTION, "plain", RetrievalConfig(final_k=1))
    assert verdict(two_hop, MAKER, mr).code in ("final_k", "min_score", "reranker_dropped", "missed_by_retrievers", "fused_out")
