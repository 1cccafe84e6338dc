"""Repeated passages stand once: the same text in several documents ranks once, the other places listed.

Manuals include the same option text in many pages; every copy scores alike, so the copies filled
the ranking. Real documents, the real encoders and the real embedded store.
"""

from __future__ import annotations

import dataclasses

import pytest

from rag.catalog.outline import repeated_passages
from rag.ingest.pipeline import ingest_files
from rag.retrieval.dedupe import find_repeats
from rag.retrieval.loss import where_lost
from rag.retrieval.retrieve import retrieve
from rag.settings.config import ChunkConfig, Settings
from rag.types import Chunk

SHARED = "The --force option overwrites files that already exist in the target folder without asking first."


def _doc(title: str, own: str) -> bytes:
    return f"# {title}\n\n## Usage\n\n{own}\n\n## Options\n\n{SHARED}\n".encode()


@pytest.fixture
def manual(components):
    files = [
        ("copy.md", _doc("copy", "The copy command copies files from one folder to another folder.")),
        ("move.md", _doc("move", "The move command moves files and removes them from where they were.")),
        ("sync.md", _doc("sync", "The sync command makes two folders hold the same files, both ways.")),
        ("notes.md", b"# Notes\n\nThe force of habit makes people overwrite notes in folders they know.\n"),
    ]
    ingest_files(components, files, ChunkConfig("heading", 800, 0))
    return components


QUESTION = "which option overwrites files that already exist in the target folder"


def _config(components, dedupe: bool):
    return dataclasses.replace(components.settings.retrieval, reranker="none", final_k=4, dedupe=dedupe)


def test_without_dedupe_the_copies_fill_the_top_k(manual):
    final = retrieve(manual, QUESTION, _config(manual, False)).final
    assert sum(c.chunk.chunk.text == SHARED for c in final) == 3


def test_with_dedupe_the_passage_ranks_once_with_the_other_places_listed(manual):
    result = retrieve(manual, QUESTION, _config(manual, True))
    final = result.final
    copies = [c for c in final if c.chunk.chunk.text == SHARED]
    assert len(copies) == 1
    (standing,) = copies
    others = {f"{name}.md > {name} > Options" for name in ("copy", "move", "sync")} - {standing.chunk.chunk.location}
    assert set(standing.also_in) == others
    assert standing.as_row()["also_in"] == list(standing.also_in)
    # the freed places go to other documents, and each repeat names the chunk that stands for it
    assert len(final) == 4 and len({c.chunk.chunk.text for c in final}) == 4
    repeats = [c for c in result.candidates if c.repeat_of]
    assert len(repeats) == 2 and all(r.repeat_of == standing.id and r.final_rank is None for r in repeats)
    assert all("repeat: its text ranks as" in r.movement for r in repeats)
    # metrics see the ranking the final list shows: each repeated text once
    assert sum(c.chunk.chunk.text == SHARED for c in result.ranked("rerank")) == 1
    # tracking a repeat says where it went
    assert where_lost(result, [repeats[0].id]).code == "repeat"


def test_case_and_spacing_do_not_make_another_passage():
    a = Chunk("a", "a.md", ("A",), 0, 10, "Run  the TOOL.\n", 0)
    b = Chunk("b", "b.md", ("B",), 0, 10, "run the tool.", 0)
    c = Chunk("c", "c.md", ("C",), 0, 10, "run another tool.", 0)
    repeats = find_repeats([a, b, c])
    assert repeats.repeat_of == {"b": "a"}
    assert repeats.also_in == {"a": ("b.md > B",)}


def test_the_documents_page_list_of_repeats(manual):
    (passage,) = repeated_passages(manual)
    assert passage.text == SHARED
    assert [p.location for p in passage.places] == [f"{n}.md > {n} > Options" for n in ("copy", "move", "sync")]


def test_the_setting_is_read_from_the_environment_and_off_by_default():
    assert Settings.from_env({"RAGSCOPE_DEDUPE": "on"}).retrieval.dedupe is True
    assert Settings.from_env({}).retrieval.dedupe is False


def test_eval_names_a_gold_folded_into_its_repeat(manual):
    """Gold naming one of the copies that dedupe folded away gets its own verdict, naming the place that stands."""
    from rag.eval.gold import SectionGold, SectionRef
    from rag.eval.qsets import Question, QuestionSet
    from rag.eval.runner import run_eval

    config = _config(manual, True)
    standing = next(c for c in retrieve(manual, QUESTION, config).final if c.chunk.chunk.text == SHARED)
    other = next(name for name in ("copy.md", "move.md", "sync.md") if name != standing.chunk.chunk.source)
    gold = SectionGold((SectionRef(other, f"{other[:-3]} > Options"),))
    (row,) = run_eval(manual, QuestionSet("s", (Question("q", QUESTION, gold),)), config, save=False).questions
    assert row.verdict.code == "repeat" and row.gold_ranks["final"] is None
    assert standing.chunk.chunk.source in row.verdict.detail and "stands for it" in row.verdict.detail
