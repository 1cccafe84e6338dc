"""With one hit per section, the answerer reads a kept section's best-matching chunks, not only the one that
ranked it: those it carries (rag/retrieval/collapse.py) and more up to RAGSCOPE_SECTION_READS
(rag/answer/section_reads.py)."""

from __future__ import annotations

import dataclasses

import pytest

from rag.answer.checks import gate
from rag.ask.answerer import answer_question
from rag.components import build_components
from rag.ingest.pipeline import ingest_files
from rag.settings.config import AnswerConfig, ChunkConfig, RetrievalConfig, Settings

# One long section cut into several chunks (160 characters each), and two short ones.
STASH = """# git stash

## Options

Use stash to record the current state of the working directory and go back to a clean one.

The --include-untracked option also stashes untracked files, then cleans them from the working tree.

The --keep-index option leaves every change already added to the index intact in the working tree.

The --patch option lets you choose interactively which hunks of the changes to stash.

## Discussion

A stash is a commit whose tree records the state of the working directory.
"""
OTHER = """# Branches

## Creating

Create a branch with git branch NAME and switch to it with git switch NAME.
"""
QUESTION = "How do I stash untracked files as well?"


@pytest.fixture(scope="module")
def manual(tmp_path_factory):
    settings = Settings(data_dir=tmp_path_factory.mktemp("reads"), answer=AnswerConfig(min_rerank_score=0.0))
    components = build_components(settings)
    summary = ingest_files(components, [("stash.md", STASH.encode()), ("branch.md", OTHER.encode())], ChunkConfig("heading", 160, 0))
    assert not summary.errors
    yield components
    components.close()


def _options(components) -> list[str]:
    return [r.chunk.id for r in components.store.records() if r.chunk.heading == "git stash > Options"]


@pytest.mark.parametrize("reads", [1, 3])
def test_a_kept_section_hands_over_the_chunks_it_carries_and_its_best_matching_ones(manual, reads):
    """The chunks a section carries (they outrank the next section) are always read, even at reads=1 (they are part
    of the final list as shown); RAGSCOPE_SECTION_READS tops the section up to reads - 1 siblings."""
    assert len(_options(manual)) >= 3  # the section really is several chunks
    config = RetrievalConfig(candidates=20, final_k=2, collapse=True, section_reads=reads)
    answer = answer_question(manual, QUESTION, config)
    result = answer.retrieval
    kept = [c.id for c in result.final]
    assert len({result.get(c).chunk.chunk.heading for c in kept}) == len(kept)  # one hit per section
    extra = [cid for cid in answer.sources if cid not in kept]
    holder = next(c for c in result.final if c.chunk.chunk.heading == "git stash > Options")
    carried = [c.id for c in result.carried_by(holder.id)]
    assert extra[: len(carried)] == carried
    assert all(result.get(cid).collapsed_into == holder.id for cid in extra)
    assert len(extra) == max(len(carried), reads - 1)  # 6000 characters hold the whole section here
    # The reads are the collapsed siblings the reranker scored best, placed right after their section's chunk.
    behind = sorted((c for c in result.candidates if c.collapsed_into == holder.id), key=lambda c: c.rerank.rank)
    assert extra == [c.id for c in behind[: len(extra)]]
    at = answer.sources.index(holder.id)
    assert list(answer.sources[at + 1 : at + 1 + len(extra)]) == extra
    # The retrieval itself is the same list as without reads: only what the answerer reads grows.
    plain = answer_question(manual, QUESTION, dataclasses.replace(config, section_reads=1)).retrieval
    assert [c.id for c in plain.final] == kept


def test_no_reads_without_collapsing(manual):
    from rag.retrieval.retrieve import retrieve

    result = retrieve(manual, QUESTION, RetrievalConfig(candidates=20, final_k=2, collapse=False, section_reads=5))
    checked = gate(manual, result, manual.settings.answer)
    assert [s.id for s in checked.sources] == [c.id for c in result.final]  # nothing collapsed, nothing to read
    assert all(s.read_for is None for s in checked.sources)
