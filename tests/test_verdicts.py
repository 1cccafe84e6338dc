"""Every failure verdict, produced by real retrieval (real models, real store) on a small constructed corpus.

The corpus is written here; each case picks a gold and a retrieval config that loses the gold at one
specific stage. The answer verdicts run the real answerer with Claude behind a mocked HTTP transport
(the real `anthropic` SDK), and the faithfulness judge the same way.
"""

from __future__ import annotations


import pytest
from anthropic_mock import MockedMessages

from rag.answer.anthropic_gen import AnthropicGenerator
from rag.components import build_components
from rag.settings.config import AnswerConfig, ChunkConfig, RetrievalConfig, Settings
from rag.eval.gold import ChunkIdGold, SectionGold, SectionRef, TextGold
from rag.eval.judge import RELEVANCY_SYSTEM, FaithfulnessJudge
from rag.eval.qsets import Question, QuestionSet
from rag.eval.runner import run_eval
from rag.eval.verdicts import VERDICTS
from rag.catalog.documents import delete_document
from rag.ingest.pipeline import ingest_files
from rag.ingest.originals import Originals, loose_text
from rag.retrieval.retrieve import retrieve
from rag.types import ChunkFilter

GARDEN = """# Garden guide

## Watering tomatoes

Water tomato plants deeply twice a week in summer, early in the morning, so the leaves dry before evening.

## Pruning roses

Prune roses in late winter. Cut just above an outward-facing bud at a slant.

## Composting

A compost heap needs green waste, brown waste, air and moisture. Turn it every two weeks.

Finished compost is dark and crumbly and smells of forest soil after about six months.

## Slugs

Beer traps and copper tape keep slugs away from lettuce seedlings.
"""
TRAVEL = """# Travel

## Passport renewal

Renew your passport at least six months before it expires; most embassies refuse entry otherwise.

## Customs

Declare meat, cheese and tomatoes at the border; undeclared food is fined.

## Luggage

Carry-on bags may weigh at most 8 kg on most airlines.
"""
KITCHEN = """# Kitchen

## Bread

Knead bread dough for ten minutes, then let it rise for an hour in a warm place.

## Knives

Sharpen kitchen knives on a whetstone held at a 15 degree angle.
"""
# The loader keeps an HTML page's main content: the opening hours in its navigation bar reach no chunk.
SHED = b"""<html><body><nav>Opening hours: the tool shed opens at seven every morning.</nav>
<main><h1>Tool shed</h1><p>Spades, rakes and the wheelbarrow live in the tool shed.</p></main></body></html>"""
WATER = "How often should I water tomato plants?"
# Small chunks (160 chars) so the composting section is cut into two chunks at its paragraph break.
CHUNKS = ChunkConfig("heading", 160, 0)


def section(source: str, heading: str) -> SectionGold:
    return SectionGold((SectionRef(source, heading),))


@pytest.fixture(scope="module")
def garden(tmp_path_factory):
    # A relevance gate of 0.2 lets the two garden chunks through to the (mocked) generator as S1 and S2.
    settings = Settings(data_dir=tmp_path_factory.mktemp("verdicts"), answer=AnswerConfig(min_rerank_score=0.2))
    components = build_components(settings)
    files = [("garden.md", GARDEN.encode()), ("travel.md", TRAVEL.encode()), ("kitchen.md", KITCHEN.encode()), ("shed.html", SHED)]
    summary = ingest_files(components, files, CHUNKS)
    assert not summary.errors
    yield components
    components.close()


def one(components, gold, config, answerable=True, question=WATER, answer=None, **kwargs):
    """Run a one-question set (not stored) and return its only result."""
    qset = QuestionSet("case", (Question("case", question, gold, answerable, answer=answer),))
    return run_eval(components, qset, config, save=False, **kwargs).questions[0]


def chunk_id(components, heading: str, index: int = 0) -> str:
    chunks = sorted((r.chunk for r in components.store.records() if r.chunk.heading == heading), key=lambda c: c.index)
    return chunks[index].id


RETRIEVAL_CASES = [
    # (verdict, gold, config)
    ("parse_loss", TextGold("the tool shed opens at seven"), RetrievalConfig()),
    ("boundary_split", TextGold("Turn it every two weeks. Finished compost is dark"), RetrievalConfig()),
    # Only 3 candidates per list: dense keeps the garden chunks, sparse the tomato chunks; knives is in neither.
    ("missed_by_retrievers", section("kitchen.md", "Kitchen > Knives"), RetrievalConfig(candidates=3)),
    # Sparse finds the customs chunk ("tomatoes"), but fusion weighted all on dense keeps only dense's top 2.
    ("fused_out", section("travel.md", "Travel > Customs"), RetrievalConfig(candidates=2, fusion="weighted_rrf", dense_weight=1.0)),
    # DBSF fuses customs to rank 2 (sparse likes it); the dense-cosine reranker sends it to rank 5, outside k=2.
    ("reranker_dropped", section("travel.md", "Travel > Customs"), RetrievalConfig(candidates=10, final_k=2, reranker="dense-cosine")),
    # Composting is fused behind the watering chunk; with k=1 only rank 1 is kept.
    ("final_k", section("garden.md", "Garden guide > Composting"), RetrievalConfig(candidates=10, final_k=1)),
]


@pytest.mark.parametrize(("code", "gold", "config"), RETRIEVAL_CASES, ids=[c[0] for c in RETRIEVAL_CASES])
def test_retrieval_verdicts(garden, code, gold, config):
    result = one(garden, gold, config)
    assert result.verdict is not None and result.verdict.code == code, result.verdict
    assert result.gold_ranks["final"] is None  # every retrieval verdict is a miss at the final k
    evidence = result.verdict.evidence
    if code == "parse_loss":
        assert evidence["files"] == ["shed.html"] and "is in the file of shed.html but in no chunk" in result.verdict.detail
        assert result.invalid is None
    elif code == "boundary_split":
        first, second = evidence["chunks"]
        assert (first, second) == (chunk_id(garden, "Garden guide > Composting", 0), chunk_id(garden, "Garden guide > Composting", 1))
    elif code == "missed_by_retrievers":
        assert evidence["candidates"] == 3
        assert result.gold_ranks["dense"] is None and result.gold_ranks["sparse"] is None
    elif code == "fused_out":
        assert evidence["sparse_rank"] == 2 and evidence["dense_rank"] is None and evidence["fused_rank"] is None
        # Where fusion put it, not a contradiction like "rank 2 of 2, but fusion kept only the top 2".
        assert evidence["uncut_fused_rank"] > 2 and f"ranked it {evidence['uncut_fused_rank']} of both lists" in result.verdict.detail
        assert result.verdict.track == chunk_id(garden, "Travel > Customs")
        # The link reproduces the run: the dense weight that fused the gold away travels with it.
        assert result.inspector["dense_weight"] == "1.0"
        # ... and tracks the gold section, as Eval counted it, not one of its chunks.
        assert (result.inspector["track_source"], result.inspector["track_heading"]) == ("travel.md", "Travel > Customs")
        assert "track" not in result.inspector
    elif code == "reranker_dropped":
        assert evidence["fused_rank"] <= 2 < evidence["rerank_rank"]
        assert evidence["reranker"] == "dense-cosine"
    elif code == "final_k":
        assert evidence["rerank_rank"] > 1 == evidence["final_k"] and "only the top k=1" in result.verdict.detail


def test_a_gold_of_two_sections_with_one_missing_fails_with_the_missing_ones_verdict(garden):
    # Watering is found at rank 1; knives is in neither list of 3 candidates. Recall@5 is 0.5, so the
    # question failed, and the verdict (and the inspector link) follow the section that was lost.
    gold = SectionGold((SectionRef("garden.md", "Garden guide > Watering tomatoes"), SectionRef("kitchen.md", "Kitchen > Knives")))
    result = one(garden, gold, RetrievalConfig(candidates=3))
    assert result.scores["rerank"]["recall@5"] == 0.5 and result.gold_ranks["final"] == 1
    assert result.verdict is not None and result.verdict.code == "missed_by_retrievers"
    assert result.verdict.detail.startswith("1 of 2 gold items in the final k=5; kitchen.md › Kitchen > Knives is not: ")
    assert result.verdict.evidence["missing_gold"] == ["kitchen.md › Kitchen > Knives"]
    assert result.verdict.track == chunk_id(garden, "Kitchen > Knives")
    assert (result.inspector["track_source"], result.inspector["track_heading"]) == ("kitchen.md", "Kitchen > Knives")
    both = SectionGold((SectionRef("garden.md", "Garden guide > Watering tomatoes"), SectionRef("garden.md", "Garden guide > Composting")))
    assert one(garden, both, RetrievalConfig(candidates=10)).verdict is None


def test_context_precision_counts_the_chunks_handed_to_the_answerer(garden):
    # Composting is two chunks; without collapsing, both can be among the three chunks handed over.
    config = RetrievalConfig(candidates=10, final_k=3, collapse=False)
    question = "How do I make compost and when is it finished?"
    result = one(garden, section("garden.md", "Garden guide > Composting"), config, question=question)
    handed = [c.id for c in retrieve(garden, question, config).ranked("rerank")][:3]
    gold = {chunk_id(garden, "Garden guide > Composting", i) for i in (0, 1)}
    relevant_at = [i for i, cid in enumerate(handed, 1) if cid in gold]
    assert len(relevant_at) == 2
    expected = sum(n / i for n, i in enumerate(relevant_at, 1)) / 2
    assert result.scores["rerank"]["context_precision"] == pytest.approx(expected)


def test_cut_by_threshold(garden):
    # Reranker "none" keeps the fused scores; a minimum between rank 1 and rank 2 cuts everything after rank 1.
    from rag.retrieval.retrieve import retrieve

    fused = [c.fused.score for c in retrieve(garden, WATER, RetrievalConfig(candidates=10)).ranked("fused")]
    threshold = (fused[0] + fused[1]) / 2
    result = one(garden, section("garden.md", "Garden guide > Composting"), RetrievalConfig(candidates=10, final_k=3, min_score=threshold))
    assert result.verdict.code == "min_score"
    evidence = result.verdict.evidence
    assert evidence["min_score"] == threshold and 1 < evidence["rerank_rank"] <= 3 and evidence["score"] < threshold
    assert "below the minimum score" in result.verdict.detail
    assert float(result.inspector["min_score"]) == threshold


def test_a_found_gold_gets_no_verdict_and_a_tracked_inspector_link(garden):
    gold = section("garden.md", "Garden guide > Watering tomatoes")
    result = one(garden, gold, RetrievalConfig(candidates=10, final_k=2))
    assert result.verdict is None and result.gold_ranks["final"] == 1
    config = RetrievalConfig(candidates=3, fusion="rrf", final_k=4, reranker="dense-cosine")
    missed = one(garden, section("kitchen.md", "Kitchen > Knives"), config)
    assert missed.inspector == {
        "q": WATER, "fusion": "rrf", "candidates": "3", "k": "4", "reranker": "dense-cosine", "dense_weight": "0.5", "rrf_k": "60",
        "track_source": "kitchen.md", "track_heading": "Kitchen > Knives", "collection": garden.settings.collection,
    }  # fmt: skip


def claude(replies: list[str], judge_replies: list[str] = (), relevancy: str = "How often do tomatoes need water?"):
    """The real SDK over a mocked transport: answer calls get `replies`, faithfulness calls `judge_replies`,
    in order; answer-relevancy calls get the questions in `relevancy`."""
    answers, verdicts = list(replies), list(judge_replies)

    def respond(body: dict) -> str:
        if body.get("system") == RELEVANCY_SYSTEM:
            return relevancy
        return (verdicts if body["max_tokens"] == 5 else answers).pop(0)

    api = MockedMessages(respond)
    return api.client(), api.requests


# Final two: watering (dense cosine 0.84) and composting (0.26), reranked by dense cosine.
ANSWER_CONFIG = RetrievalConfig(candidates=10, final_k=2, reranker="dense-cosine")
WATERING = section("garden.md", "Garden guide > Watering tomatoes")


def generator(garden, client):
    return AnthropicGenerator(garden.settings.answer, client=client)


def test_retrieved_but_not_cited(garden):
    # S1 is the watering chunk (rank 1), S2 composting: the answer cites only S2.
    client, _ = claude(["Water them twice a week [S2]."])
    result = one(garden, WATERING, ANSWER_CONFIG, generator=generator(garden, client))
    assert result.verdict.code == "not_cited"
    [cited] = result.verdict.evidence["cited"]
    assert garden.store.records(ChunkFilter(ids=(cited,)))[0].chunk.heading == "Garden guide > Composting"
    assert result.verdict.detail.endswith("cites only garden.md › Garden guide > Composting"), result.verdict.detail
    assert result.verdict.track == chunk_id(garden, "Garden guide > Watering tomatoes")


def test_contradicted_by_the_answer_per_the_judge(garden):
    client, seen = claude(["Water tomato plants every day at noon [S1]."], ["NO"])
    judge = FaithfulnessJudge(client, "claude-test")
    result = one(garden, WATERING, ANSWER_CONFIG, generator=generator(garden, client), judge=judge)
    assert result.verdict.code == "unsupported" and result.verdict.title.startswith("Cited, but")
    assert result.verdict.evidence["unsupported"] == ["Water tomato plants every day at noon."]
    judge_call = next(b for b in seen if b["max_tokens"] == 5)
    assert "Does the source state the sentence? YES/NO" in judge_call["messages"][0]["content"]
    assert "Water tomato plants deeply twice a week" in judge_call["messages"][0]["content"]


def test_supported_cited_answer_passes(garden):
    client, _ = claude(["Water them deeply twice a week in summer [S1]."], ["YES"])
    result = one(garden, WATERING, ANSWER_CONFIG, generator=generator(garden, client), judge=FaithfulnessJudge(client, "claude-test"))
    assert result.verdict is None
    assert result.answer.judged[0].supported
    assert result.answer.relevancy > 0.7  # the judge's question is close to the one asked (real dense cosine)


def test_wrong_abstentions_both_ways_have_their_own_verdicts(garden):
    client, _ = claude(["NOT_IN_SOURCES", "Tomatoes like a feed rich in potassium [S1]."])
    gen = generator(garden, client)
    false_abstention = one(garden, WATERING, ANSWER_CONFIG, generator=gen)
    assert false_abstention.verdict.code == "abstained_answerable"
    assert false_abstention.verdict.title == "Abstained on an answerable question"
    assert "abstained" in false_abstention.verdict.detail and false_abstention.verdict.evidence["final_rank"] == 1
    question = "Which fertiliser is best for tomato plants?"
    answered = one(garden, None, ANSWER_CONFIG, answerable=False, question=question, generator=gen)
    assert answered.verdict.code == "answered_unanswerable" and answered.verdict.title == "Answered but should have abstained"
    assert "should have abstained" in answered.verdict.detail
    # No gold: the link opens the inspector on the question, with nothing to track.
    assert answered.inspector["q"] == question and "track" not in answered.inspector


def test_runs_stored_with_the_old_single_abstention_code_read_as_the_right_one():
    from rag.eval.verdicts import Verdict

    old = {"code": "wrong_abstention", "detail": "answered a question the documents do not answer (it should have abstained)"}
    assert Verdict.from_json(old).code == "answered_unanswerable"
    assert Verdict.from_json(old | {"detail": "gold was retrieved at final rank 1 but the answer abstained: x"}).code == "abstained_answerable"


INVALID_CASES = [
    # (gold, what the reason must say)
    (section("orchard.md", "Apples"), "document 'orchard.md' is not in the collection"),
    (section("gardn.md", "Slugs"), "did you mean 'garden.md'"),
    (section("garden.md", "Watering tomatos"), "garden.md has no heading 'Watering tomatos'; nearest: 'Garden guide > Watering tomatoes'"),
    (ChunkIdGold(("0000-not-a-chunk",)), "chunk id 0000-not-a-chunk is not in the collection"),
    (TextGold("tomatoes need a trellis of bamboo canes"), "is in no document of the collection, neither in a chunk nor in any source file"),
]


@pytest.mark.parametrize(("gold", "reason"), INVALID_CASES, ids=["no-document", "misspelt-document", "no-heading", "no-chunk-id", "text-nowhere"])
def test_gold_the_collection_lacks_is_invalid_not_a_failure(garden, gold, reason):
    result = one(garden, gold, RetrievalConfig())
    assert result.verdict is None and not result.failed and not result.scored
    assert reason in result.invalid
    assert result.scores == {}


def test_without_a_kept_original_a_lost_text_is_not_called_parse_loss_or_a_set_mistake(garden):
    originals = Originals(garden.settings.originals_dir)
    kept = originals.path("kitchen.md")
    hidden = kept.with_name("aside")
    kept.rename(hidden)  # as if kitchen.md had been ingested before originals were kept
    try:
        result = one(garden, TextGold("tomatoes need a trellis of bamboo canes"), RetrievalConfig())
    finally:
        hidden.rename(kept)
    assert result.invalid is None and result.verdict.code == "text_not_found"
    assert "re-ingest them to find out" in result.verdict.detail


def test_originals_follow_their_documents(tmp_path):
    components = build_components(Settings(data_dir=tmp_path))
    try:
        assert not ingest_files(components, [("shed.html", SHED)]).errors
        originals = Originals(components.settings.originals_dir)
        assert originals.path("shed.html").read_bytes() == SHED
        edited = SHED.replace(b"seven", b"eight")
        assert not ingest_files(components, [("shed.html", edited)]).errors
        assert originals.path("shed.html").read_bytes() == edited  # a re-ingest replaces the copy
        assert originals.texts(["shed.html"]) == {"shed.html": loose_text("shed.html", edited)}
        delete_document(components, "shed.html")
        assert not originals.has("shed.html")
    finally:
        components.close()


def test_invalid_questions_are_left_out_of_the_metrics_and_listed(garden):
    questions = (
        Question("ok", WATER, section("garden.md", "Garden guide > Watering tomatoes")),
        Question("bad", "Where do apples grow?", section("orchard.md", "Apples")),
    )
    run = run_eval(garden, QuestionSet("mixed", questions), RetrievalConfig(candidates=10, final_k=2), save=False)
    # Only the valid question counts: its gold is at rank 1, so every metric is perfect instead of halved.
    assert run.per_stage["rerank"]["ndcg@10"] == 1.0 and run.metrics["hit@final"] == 1.0
    # Context precision reads the final k=2 chunks handed over: the gold first, so 1 whatever the second is.
    assert run.per_stage["rerank"]["context_precision"] == 1.0
    assert [q.id for q in run.invalid] == ["bad"]
    from rag.eval.runs import compare_runs
    from rag.eval.verdicts import verdict_title

    [_, bad] = compare_runs(run, run).questions  # compared, the invalid question says so instead of "passed"
    assert bad.verdict_a == bad.verdict_b == "invalid" and verdict_title(bad.verdict_a) == "invalid gold (not scored)"
    out = run.as_json()
    assert out["left_out"] == 1 and out["invalid"][0]["id"] == "bad" and "orchard.md" in out["invalid"][0]["reason"]


LEAF_CASES = ["Watering tomatoes", "  watering   TOMATOES ", "garden guide > watering tomatoes", "Garden guide>Watering tomatoes"]


@pytest.mark.parametrize("heading", LEAF_CASES)
def test_section_gold_matches_the_way_people_write_headings(garden, heading):
    result = one(garden, section("garden.md", heading), RetrievalConfig(candidates=10, final_k=2))
    assert result.invalid is None and result.verdict is None
    assert result.gold_chunks == (chunk_id(garden, "Garden guide > Watering tomatoes"),)
    assert result.gold_ranks["final"] == 1 and result.scores["rerank"]["ndcg@10"] == 1.0


@pytest.mark.parametrize("text", ["Pruning roses", "pruning roses prune roses in late winter", "Garden guide Pruning roses"])
def test_a_text_gold_quoting_a_heading_finds_that_section_not_a_parse_loss(garden, text):
    """A heading line lives in the chunk's heading path, not its text; quoting it (alone, into the body,
    or with its parent heading) names that section, as the original file shows."""
    result = one(garden, TextGold(text), RetrievalConfig(candidates=10, final_k=2), question="When should I prune roses?")
    assert result.invalid is None and result.verdict is None
    assert result.gold_chunks == (chunk_id(garden, "Garden guide > Pruning roses"),)
    assert result.gold_ranks["final"] == 1


def test_a_chunk_gold_carried_with_its_section_is_found_and_one_below_another_section_is_collapsed(garden):
    """Gold naming one chunk of a two-chunk section. Ranked right behind its sibling, above every other section, it
    is carried with it (rag/retrieval/collapse.py): found at the section's rank, no verdict. Ranked below other
    sections and deeper than the rule carries, it has its own verdict: collapsed, with where its section stands and
    which section outranks it, never a score or k that did not cut it."""
    question = "How do I make compost and when is it finished?"
    config = RetrievalConfig(candidates=10, final_k=3, collapse=True)
    run = retrieve(garden, question, config)
    [folded] = [c for c in run.candidates if c.collapsed_into]
    assert folded.carried and folded.rerank.rank == 2
    result = one(garden, ChunkIdGold((folded.id,)), config, question=question)
    assert result.verdict is None and result.gold_ranks["final"] == run.get(folded.collapsed_into).final_rank == 1
    question = "Which green and brown waste goes on a compost heap with air and moisture, and how do I water tomatoes and prune roses?"
    config = RetrievalConfig(candidates=10, final_k=1, collapse=True)
    run = retrieve(garden, question, config)
    [folded] = [c for c in run.candidates if c.collapsed_into]
    assert not folded.carried and folded.rerank.rank > 2  # below other sections, deeper than 2 x k
    result = one(garden, ChunkIdGold((folded.id,)), config, question=question)
    assert result.verdict.code == "collapsed" and result.gold_ranks["final"] is None
    holder = run.get(folded.collapsed_into)
    assert f"which ranks {holder.final_rank}" in result.verdict.detail and "garden.md › Garden guide > Composting" in result.verdict.detail
    assert "outranks it, so its section does not carry it" in result.verdict.detail
    assert "min" not in result.verdict.detail and result.verdict.evidence["collapsed_into"] == holder.id


def test_every_verdict_is_covered_here():
    codes = {c[0] for c in RETRIEVAL_CASES} | {"text_not_found", "not_cited", "unsupported", "wrong_answer", "answered_unanswerable", "abstained_answerable"}
    codes |= {"collapsed", "min_score"}  # test_a_chunk_gold_carried_with_its_section..., test_cut_by_threshold
    codes |= {"repeat"}  # tests/test_dedupe.py::test_eval_names_a_gold_folded_into_its_repeat
    modes = {"grader_discarded", "mode_merge_dropped", "hop_drifted", "agent_never_searched"}  # tests/test_mode_verdicts.py
    assert codes | modes == set(VERDICTS)


def test_eval_reads_quarantine_from_the_store_and_says_why_such_gold_is_left_out(components):
    """Through the store: a question whose gold only a quarantined chunk holds is listed as invalid gold with
    that reason (never a retrieval miss, never "no such heading")."""
    from rag.catalog.documents import set_quarantine
    from rag.eval.gold import CollectionIndex, SectionGold, SectionRef
    from rag.ingest.pipeline import ingest_files

    text = b"# Help\n\n## Refunds\n\nRefunds take five days.\n\n## Odd\n\nThe ferry is blue.\n"
    assert not ingest_files(components, [("help.md", text)]).errors
    odd = next(r.chunk for r in components.store.records() if r.chunk.heading_path[-1] == "Odd")
    set_quarantine(components, [odd.id], True)
    res = CollectionIndex.from_components(components).resolve(SectionGold((SectionRef("help.md", "Odd"),)))
    assert res.chunk_ids == frozenset() and "quarantined" in res.invalid


# Answer-text gold: the sentence of garden.md that answers WATER.
WATER_ANSWER = "Water tomato plants deeply twice a week in summer, early in the morning, so the leaves dry before evening."


def test_the_offline_answer_that_quotes_the_answering_sentence_scores_correct(garden):
    result = one(garden, WATERING, ANSWER_CONFIG, answers=True, answer=WATER_ANSWER)
    check = result.answer.check
    assert result.answer.mode == "extractive" and check.correct and check.basis == "words", check
    assert check.context_recall == 1.0 and result.verdict is None


@pytest.mark.parametrize("judged", [False, True], ids=["words", "claude"])
def test_an_answer_citing_gold_that_does_not_say_the_gold_answer_scores_wrong(garden, judged):
    """Right source, wrong claim: citation-based metrics pass it; answer correctness must not. Offline the
    words decide; with a judge, Claude is asked whether the cited sentences state the gold answer."""
    client, seen = claude(["Water tomato plants every day at noon [S1]."], ["NO", "NO"] if judged else [])
    judge = FaithfulnessJudge(client, "claude-test") if judged else None
    result = one(garden, WATERING, ANSWER_CONFIG, generator=generator(garden, client), judge=judge, answer=WATER_ANSWER)
    check = result.answer.check
    assert not check.correct and check.context_recall == 1.0  # the context held the answer; the answer lost it
    assert result.verdict.code in (("unsupported",) if judged else ("wrong_answer",)), result.verdict
    if not judged:
        assert "of the gold answer's words" in check.reason and check.basis == "words"
        assert result.verdict.title == "Cites the gold, but does not say the gold answer"


def test_a_paraphrase_the_words_miss_is_settled_by_claude(garden):
    client, seen = claude(["Give them a deep soak two times weekly on summer mornings [S1]."], ["YES", "YES"])
    judge = FaithfulnessJudge(client, "claude-test")
    result = one(garden, WATERING, ANSWER_CONFIG, generator=generator(garden, client), judge=judge, answer=WATER_ANSWER)
    check = result.answer.check
    assert check.correct and check.basis == "claude" and result.verdict is None
    asked = [b["messages"][0]["content"] for b in seen if b["max_tokens"] == 5]
    assert any(WATER_ANSWER in content and "two times weekly" in content for content in asked)


def test_context_recall_is_the_share_of_the_gold_answer_the_context_states(garden):
    """Two gold sentences, only one of them in the sources sent (k = 1: the watering chunk)."""
    config = RetrievalConfig(candidates=10, final_k=1, reranker="dense-cosine")
    gold_answer = WATER_ANSWER + " Sharpen kitchen knives on a whetstone held at a 15 degree angle."
    result = one(garden, WATERING, config, answers=True, answer=gold_answer)
    assert result.answer.check.context_recall == 0.5
    run = run_eval(garden, QuestionSet("s", (Question("a", WATER, WATERING, answer=gold_answer),)), config, answers=True, save=False)
    assert run.answers["context_recall"] == 0.5 and run.answers["answer_correctness"] in (0.0, 1.0)


def test_without_answer_text_gold_correctness_is_not_scored(garden):
    run = run_eval(garden, QuestionSet("s", (Question("a", WATER, WATERING),)), ANSWER_CONFIG, answers=True, save=False)
    assert run.answers["answer_correctness"] is None and run.answers["context_recall"] is None
