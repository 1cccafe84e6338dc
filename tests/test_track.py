"""Tracking an expected chunk: its standing in every stage, where it dropped out, verified fixes."""

from __future__ import annotations

import dataclasses
import json

import pytest
from carry_corpus import QUESTION, ingest_guide
from retrieval_corpus import KEYWORD_QUESTION, PARAPHRASE_QUESTION, chunk_at, corpus  # noqa: F401 (fixture)

from rag.settings.config import RetrievalConfig
from rag.errors import RagError
from rag.retrieval.retrieve import retrieve
from rag.inspect.standings import rank_text
from rag.inspect.suggest import is_small
from rag.inspect.target import find_target
from rag.inspect.track import track
from rag.ingest.pipeline import ingest_files
from rag.types import ChunkFilter



def _final_rank(components, question, config, flt, chunk_id):
    c = retrieve(components, question, config, flt).get(chunk_id)
    return c.final_rank if c else None


def test_chunk_every_stage_misses(corpus):
    target = find_target(corpus, source="billing.md", heading="Refunds")
    config = RetrievalConfig(candidates=2, final_k=2, fusion="rrf", reranker="none")
    report = track(corpus, KEYWORD_QUESTION, target, config)
    assert report.result.get(target.id) is None  # no stage listed it
    assert report.dropped_at == "missed_by_retrievers" and not report.found

    everything = retrieve(corpus, KEYWORD_QUESTION, dataclasses.replace(config, candidates=50))
    dense = report.stage("dense")
    assert dense.rank is None
    assert dense.would_be_rank == everything.get(target.id).dense.rank > 2
    assert dense.score == pytest.approx(everything.get(target.id).dense.score, abs=1e-5)
    sparse = report.stage("sparse")
    assert (sparse.rank, sparse.would_be_rank, sparse.score) == (None, None, 0.0)
    assert "no term" in sparse.note
    assert report.stage("fused").rank is None and report.stage("fused").would_be_rank is None
    assert report.stage("rerank").rank is None and report.stage("final").rank is None

    # It is the last of all dense candidates, so more candidates alone cannot bring it into the top 2; the
    # fix that works reads every chunk (k 2 -> 8), too large to advise: the report says why instead.
    assert report.suggestions == () and report.smallest is None
    assert "does not match the question in either search space" in report.no_fix and "BM25 score 0" in report.no_fix
    assert f"ranks {dense.would_be_rank}" in report.no_fix
    by_text = {s.text: s for s in report.too_large}
    fix = next(s for s in report.too_large if s.text.startswith("candidates >= "))
    assert not is_small(fix.config, config) and fix.text in report.no_fix
    assert fix.text == f"candidates >= {dense.would_be_rank} and final k >= {fix.config.final_k}"
    n = fix.config.candidates
    assert n >= dense.would_be_rank
    # Verified, and the smallest: one fewer candidate does not surface it.
    assert _final_rank(corpus, KEYWORD_QUESTION, fix.config, fix.flt, target.id) == fix.final_rank
    assert _final_rank(corpus, KEYWORD_QUESTION, dataclasses.replace(fix.config, candidates=n - 1), ChunkFilter(), target.id) is None
    for s in by_text.values():
        assert _final_rank(corpus, KEYWORD_QUESTION, s.config, s.flt, target.id) == s.final_rank is not None
    costs = [s.cost for s in report.too_large]
    assert costs == sorted(costs)


def test_the_rule_for_a_small_change():
    config = RetrievalConfig(candidates=20, final_k=5)

    def small(**changes) -> bool:
        return is_small(dataclasses.replace(config, **changes), config)

    assert small(final_k=10) and small(candidates=100) and small(fusion="rrf", dense_weight=0.9)
    assert not small(final_k=11)  # more than twice the chunks every answer reads
    assert not small(candidates=101)
    assert not small(candidates=63, final_k=57)  # the advice issue 12 quotes
    tiny = RetrievalConfig(candidates=2, final_k=1)
    assert is_small(dataclasses.replace(tiny, final_k=6, candidates=52), tiny)  # small settings may grow by a few


def test_final_k_cut_suggests_larger_k(corpus):
    config = RetrievalConfig(candidates=8, final_k=2, fusion="dense", reranker="none")
    result = retrieve(corpus, PARAPHRASE_QUESTION, dataclasses.replace(config, final_k=8))
    third = result.ranked("rerank")[2]
    report = track(corpus, PARAPHRASE_QUESTION, find_target(corpus, chunk_id=third.id), config)
    assert report.dropped_at == "final_k"
    assert report.stage("rerank").rank == 3 and report.stage("fused").rank == 3
    assert report.smallest.text == "final k >= 3"
    assert report.smallest.final_rank == 3


def test_dense_weight_suggestion_is_verified(corpus):
    refunds = chunk_at(corpus, "billing.md", "Billing > Refunds")
    config = RetrievalConfig(candidates=3, final_k=1, fusion="rrf", reranker="none")
    report = track(corpus, PARAPHRASE_QUESTION, find_target(corpus, chunk_id=refunds.chunk.id), config)
    assert report.stage("dense").rank == 1 and report.stage("sparse").rank is None
    assert report.dropped_at == "final_k"
    weight = next(s for s in report.suggestions if "dense weight" in s.text)
    assert weight.text.startswith("fusion weighted_rrf, dense weight >= ")
    assert weight.config.fusion == "weighted_rrf" and weight.config.dense_weight > 0.5
    assert _final_rank(corpus, PARAPHRASE_QUESTION, weight.config, ChunkFilter(), refunds.chunk.id) == 1
    lower = dataclasses.replace(weight.config, dense_weight=round(weight.config.dense_weight - 0.1, 1))
    assert _final_rank(corpus, PARAPHRASE_QUESTION, lower, ChunkFilter(), refunds.chunk.id) is None


def test_chunk_outside_the_filter(corpus):
    refunds = chunk_at(corpus, "billing.md", "Billing > Refunds")
    flt = ChunkFilter(sources=("kitchen.md",))
    report = track(corpus, PARAPHRASE_QUESTION, find_target(corpus, chunk_id=refunds.chunk.id), RetrievalConfig(reranker="none"), flt)
    assert report.dropped_at == "filter" and "filter" in report.reason
    assert report.stage("dense").score > 0  # still scored directly, for the record
    assert report.smallest.text == "remove the filter" and report.smallest.flt.sources == ()


def test_found_chunk_needs_no_suggestion(corpus):
    refunds = chunk_at(corpus, "billing.md", "Billing > Refunds")
    report = track(corpus, PARAPHRASE_QUESTION, find_target(corpus, chunk_id=refunds.chunk.id), RetrievalConfig(fusion="dense", reranker="none"))
    assert report.found and report.stage("final").rank == 1 and report.suggestions == ()


def test_a_chunk_found_below_rank_1_is_told_with_what_ranked_above_it_and_why(corpus):
    """Issue 38, item 5: BM25 alone finds Sourdough for the made-up word, so fusion ranks it first; the
    dense-cosine reranker puts the three gadgets, closer in meaning, above it. Each is named with the scores
    that ordered the list and the stage that put it above."""
    sourdough = chunk_at(corpus, "kitchen.md", "Kitchen > Sourdough").chunk.id
    config = RetrievalConfig(candidates=8, final_k=4, fusion="rrf", reranker="dense-cosine")
    report = track(corpus, KEYWORD_QUESTION, find_target(corpus, chunk_id=sourdough), config)
    mine = report.result.get(sourdough)
    assert report.found and report.stage("final").rank == 4 and mine.fused.rank == 1
    assert [(a.rank, a.candidate.id) for a in report.above] == [(c.final_rank, c.id) for c in report.result.final[:3]]
    assert {a.candidate.chunk.chunk.source for a in report.above} == {"gadgets.md"}
    for a in report.above:
        assert a.score == a.candidate.rerank.score > mine.rerank.score
        assert a.why == (
            f"higher rerank score (dense-cosine): {a.score:.4f} vs {mine.rerank.score:.4f}; "
            f"the reranker moved it above (fused rank {a.candidate.fused.rank} vs 1)"
        )
    # Without the reranker the fused order stands: first, with nothing above it to explain.
    first = track(corpus, KEYWORD_QUESTION, find_target(corpus, chunk_id=sourdough), dataclasses.replace(config, reranker="none"))
    assert first.found and first.stage("final").rank == 1 and first.above == ()
    # There the fused score decides, from the two searches' ranks.
    second = first.result.final[1]
    [above] = track(corpus, KEYWORD_QUESTION, find_target(corpus, chunk_id=second.id), first.result.config).above
    assert above.candidate.id == sourdough
    assert above.why == (
        f"higher fused score (rrf): {mine.fused.score:.4f} vs {second.fused.score:.4f}; fused rank 1 vs 2 "
        f"(dense rank {rank_text(mine.dense.rank)} vs {rank_text(second.dense.rank)}, sparse rank 1 vs "
        f"{rank_text(second.sparse.rank)})"
    )


def test_find_target_by_text_heading_and_id(corpus):
    sourdough = chunk_at(corpus, "kitchen.md", "Kitchen > Sourdough")
    exact = find_target(corpus, text="the batch   marker is ZORBLAXITE")
    assert exact.id == sourdough.chunk.id and "contains" in exact.note
    # Text no chunk holds is an error naming the nearest chunk, never a report on a chunk nobody asked about.
    with pytest.raises(RagError, match="no chunk holds the text") as e:
        find_target(corpus, text="knead the dough, then bake in a hot oven until the crust is golden")
    assert sourdough.chunk.id in str(e.value)
    assert find_target(corpus, source="kitchen.md", heading="Kitchen > Sourdough").id == sourdough.chunk.id
    assert find_target(corpus, source="kitchen.md", heading="sourdough").id == sourdough.chunk.id
    assert find_target(corpus, source="kitchen.md", heading=" kitchen  >  SOURDOUGH ").id == sourdough.chunk.id
    assert find_target(corpus, chunk_id=sourdough.chunk.id).how == "id"
    with pytest.raises(RagError, match="no heading"):
        find_target(corpus, source="kitchen.md", heading="Pizza")
    with pytest.raises(RagError, match="no document"):
        find_target(corpus, source="nope.md", heading="x")
    with pytest.raises(RagError, match="not a chunk id"):
        find_target(corpus, chunk_id="nope")
    with pytest.raises(RagError, match="no chunk with id"):
        find_target(corpus, chunk_id="00000000-0000-0000-0000-000000000000")
    with pytest.raises(RagError, match="say which chunk"):
        find_target(corpus)


def test_compare_lines_up_both_rankings(corpus):
    from rag.inspect.compare import compare

    a = RetrievalConfig(candidates=4, final_k=3, fusion="sparse", reranker="none")
    b = RetrievalConfig(candidates=4, final_k=3, fusion="dense", reranker="none")
    cmp = compare(corpus, PARAPHRASE_QUESTION, a, b)
    ranks_a = {c.id: c.final_rank for c in cmp.a.final}
    ranks_b = {c.id: c.final_rank for c in cmp.b.final}
    assert {c.chunk.chunk.id for c in cmp.changes} == set(ranks_a) | set(ranks_b)
    assert cmp.overlap == len(set(ranks_a) & set(ranks_b))
    for ch in cmp.changes:
        assert (ch.rank_a, ch.rank_b) == (ranks_a.get(ch.chunk.chunk.id), ranks_b.get(ch.chunk.chunk.id))
        if ch.status == "both":
            assert ch.delta == ch.rank_a - ch.rank_b
    refunds = next(ch for ch in cmp.changes if ch.chunk.chunk.heading == "Billing > Refunds")
    assert (refunds.rank_a, refunds.rank_b, refunds.status) == (None, 1, "only B")


def test_probe_finds_own_chunks_and_flags_duplicates(components):
    from rag.ingest.pipeline import ingest_files
    from rag.inspect.probe import probe
    from retrieval_corpus import ingest_corpus

    ingest_corpus(components)
    twin = "# Copy\n\n## Refund copy\n\nRefunds are issued within 14 days of purchase to the original card.\n"
    assert not ingest_files(components, [("copy.md", twin.encode())]).errors
    total = components.store.count()
    report = probe(components, sample=50, config=RetrievalConfig(candidates=10, final_k=3, fusion="rrf", reranker="none"))
    assert len(report.cases) == total  # fewer chunks than the sample: all of them
    for case in report.cases:
        assert " ".join(case.sentence.split()) in " ".join(case.chunk.chunk.text.split())
        own = retrieve(components, case.sentence, report.config).get(case.chunk.chunk.id)
        assert case.rank == (own.final_rank if own else None)
    assert report.share_at_1 == sum(c.rank == 1 for c in report.cases) / total
    # The two chunks with the same text get the same query; only one can come first.
    twins = [c for c in report.cases if c.chunk.chunk.text.startswith("Refunds are issued")]
    assert len(twins) == 2 and sum(c.ok for c in twins) == 1
    loser = next(c for c in twins if not c.ok)
    assert loser in report.failures and loser.duplicate


def test_tracking_under_prf_uses_the_expanded_query_of_the_stage_table(corpus):
    """With PRF on, the tracker's sparse standing is the stage table's (expanded query), not the question's own."""
    config = RetrievalConfig(candidates=2, final_k=1, fusion="rrf", reranker="none", prf=True, prf_docs=2, prf_terms=10)
    wide = retrieve(corpus, PARAPHRASE_QUESTION, dataclasses.replace(config, candidates=50))
    own = retrieve(corpus, PARAPHRASE_QUESTION, dataclasses.replace(wide.config, prf=False))
    assert wide.expansion
    # A chunk whose sparse score the added words changed, outside the 2 sparse candidates.
    moved = [c for c in wide.ranked("sparse")[2:] if c.sparse.score != pytest.approx((own.get(c.id) or c).sparse.score or 0.0)]
    assert moved, "PRF changed no sparse score beyond the candidates: pick another question"
    target = moved[0]
    report = track(corpus, PARAPHRASE_QUESTION, find_target(corpus, chunk_id=target.id), config)
    sparse = report.stage("sparse")
    assert sparse.score == pytest.approx(target.sparse.score, rel=1e-5)
    assert sparse.would_be_rank == target.sparse.rank
    # And for a chunk inside the table, the tracker reports the table's own rank and score.
    inside = report.result.ranked("sparse")[0]
    again = track(corpus, PARAPHRASE_QUESTION, find_target(corpus, chunk_id=inside.id), config).stage("sparse")
    assert (again.rank, again.score) == (inside.sparse.rank, pytest.approx(inside.sparse.score, rel=1e-5))


def test_track_explain_and_compare_encode_the_question_once(corpus, monkeypatch):
    from rag.inspect.compare import compare
    from rag.inspect.explain import explain

    calls: list[str] = []
    real = corpus.dense.encode_query
    monkeypatch.setattr(corpus.dense, "encode_query", lambda text: calls.append(text) or real(text))
    config = RetrievalConfig(candidates=2, final_k=1, fusion="rrf", reranker="none", dense_prf=True, prf=True)
    target = find_target(corpus, source="billing.md", heading="Refunds")
    report = track(corpus, KEYWORD_QUESTION, target, config)
    assert calls == [KEYWORD_QUESTION]  # every fix tried (each a full retrieval) reused the first encoding
    # Explaining rows of the table encodes nothing, and explains the scores the table shows (expanded queries).
    calls.clear()
    for stage in ("dense", "sparse"):
        row = report.result.ranked(stage)[0]
        ex = explain(corpus, KEYWORD_QUESTION, row.id, report.result)
        assert getattr(ex, stage).score == pytest.approx(row.stage(stage).score, rel=1e-5)
    assert calls == []
    calls.clear()
    compare(corpus, KEYWORD_QUESTION, config, dataclasses.replace(config, fusion="dense"))
    assert calls == [KEYWORD_QUESTION]


def test_every_heading_that_counts_as_gold_can_be_tracked(corpus):
    """The inspector tracks by heading exactly where section gold resolves: one matcher for both."""
    from rag.eval.gold import CollectionIndex, SectionGold, SectionRef

    index = CollectionIndex.from_components(corpus)
    assert any(c.heading_path for chunks in index.by_source.values() for c in chunks)
    for source, chunks in index.by_source.items():
        for path in {c.heading_path for c in chunks if c.heading_path}:
            for written in {" > ".join(path[i:]) for i in range(len(path))} | {path[-1].upper(), "  " + path[-1] + " "}:
                gold = index.resolve(SectionGold((SectionRef(source, written),)))
                assert gold.invalid is None, (source, written)
                assert find_target(corpus, source=source, heading=written).id in gold.chunk_ids, (source, written)


def test_a_chunk_carried_with_its_section_is_found_at_its_rank_and_a_deeper_one_is_cut_with_the_list(components):
    """A sibling that outranks the next section is carried with its section's chunk (rag/retrieval/collapse.py):
    found at the section's rank, never "collapsed"; at final k 1 the section carries one sibling, and the next
    one, though it outranks the next section too, is cut by the list's size, not by collapsing."""
    answer = ingest_guide(components)
    result = retrieve(components, QUESTION, RetrievalConfig(collapse=True))
    assert result.get(answer).carried
    report = track(components, QUESTION, find_target(components, chunk_id=answer), RetrievalConfig(collapse=True))
    assert report.found and report.stage("final").rank == 1 and "carried with" in report.reason
    one = RetrievalConfig(collapse=True, final_k=1)
    result = retrieve(components, QUESTION, one)
    behind = [c for c in result.candidates if c.collapsed_into and not c.carried]
    assert behind, "the section's third chunk is left behind at final k 1"
    report = track(components, QUESTION, find_target(components, chunk_id=behind[0].id), one)
    assert report.dropped_at == "final_k" and "one hit per section" in report.reason
    assert "min score" not in report.reason


def test_a_cut_below_final_k_never_names_a_minimum_score_that_is_not_set(corpus):
    target = find_target(corpus, source="billing.md", heading="Refunds")
    config = RetrievalConfig(final_k=1, reranker="none", collapse=False)
    report = track(corpus, "How do I cancel my subscription?", target, config)
    assert report.dropped_at == "final_k", report.reason
    assert "min score" not in report.reason and "below final k = 1" in report.reason


TWO_OPTIONS = """# Tool

## Install

### Options

Pass --prefix to install the tool under another directory than the default one.

## Run

### Options

Pass --verbose to print every step the tool takes while it runs.
"""


@pytest.fixture
def two_options(components):
    """A document with two sections titled "Options", store closed so the CLI can open it."""
    assert not ingest_files(components, [("tool.md", TWO_OPTIONS.encode())]).errors
    components.close()


def test_track_cli_refuses_text_no_chunk_holds(two_options):
    from click.testing import CliRunner

    from rag.cli import main

    out = CliRunner().invoke(main, ["track", "How do I install elsewhere?", "--text", "install the tool under the moon"])
    assert out.exit_code != 0 and "no chunk holds the text" in out.output, out.output
    assert "tool.md > Tool > Install > Options" in out.output  # the nearest chunk, named, not tracked
    assert "rank" not in out.output


def test_track_cli_asks_for_the_path_when_a_heading_names_two_sections(two_options):
    from click.testing import CliRunner

    from rag.cli import main

    question = "How do I install elsewhere?"
    out = CliRunner().invoke(main, ["track", question, "--source", "tool.md", "--heading", "Options"])
    assert out.exit_code != 0, out.output
    assert "names 2 sections" in out.output and "Tool > Install > Options" in out.output and "Tool > Run > Options" in out.output
    path = CliRunner().invoke(main, ["track", question, "--source", "tool.md", "--heading", "Install > Options", "--json"])
    assert path.exit_code == 0, path.output
    assert json.loads(path.stdout)["target"]["heading"] == "Install > Options"
