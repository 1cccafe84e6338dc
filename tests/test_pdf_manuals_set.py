"""The PDF manuals question set (bashref.pdf, gnuplot.pdf): well formed, and its gold is real in the product's text.

Section gold must name a heading path the PDF loader and chunker produce (a chunk's path, or a path above one:
gold covers its subsections), and each answer's words must be in that section, read as a reader reads it
(a word hyphenated across a line joined). The PDFs come from Debian's bash-doc and gnuplot-doc packages and
are not in the repository (tests/data/README.md says how to get them).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from installed_manuals import MANUALS, ON_MANUALS, read_manuals

from rag.eval.gold import SectionGold
from rag.eval.qsets import read_question_set_file
from rag.types import Chunk

SET = Path(__file__).parent / "data" / "pdf_manuals.jsonl"
_WORD = re.compile(r"\w{3,}")
_LINE_HYPHEN = re.compile(r"(?<=[^\W\d_])-\n(?=[^\W\d_])")


def test_set_counts_and_shape():
    qset = read_question_set_file(SET)
    answerable = [q for q in qset.questions if q.answerable]
    assert len(answerable) >= 80 and qset.unanswerable >= 5
    for q in answerable:
        assert isinstance(q.gold, SectionGold) and len(q.gold.sections) == 1, q.id
        assert q.gold.sections[0].source in MANUALS and q.gold.sections[0].heading, q.id
        assert q.answer, q.id
    assert {q.gold.sections[0].source for q in answerable} == set(MANUALS)


@pytest.fixture(scope="module")
def chunks() -> dict[str, list[Chunk]]:
    return {name: chunks for name, (_, chunks) in read_manuals().items()}


def _under(chunk: Chunk, heading: str) -> bool:
    return chunk.heading == heading or chunk.heading.startswith(heading + " > ")


def _words(text: str) -> set[str]:
    return set(_WORD.findall(_LINE_HYPHEN.sub("", text).lower()))


@ON_MANUALS
def test_gold_sections_are_produced_and_hold_the_answer(chunks):
    bad = []
    for q in read_question_set_file(SET).questions:
        if not q.answerable:
            continue
        ref = q.gold.sections[0]
        held = [c for c in chunks[ref.source] if _under(c, ref.heading)]
        if not held:
            bad.append(f"{q.id}: no chunk under {ref.heading!r}")
            continue
        missing = _words(q.answer) - _words("\n".join(c.text for c in held))
        if missing:
            bad.append(f"{q.id}: {sorted(missing)} not in {ref.heading!r}")
    assert bad == []


@ON_MANUALS
def test_unanswerable_questions_name_nothing_the_manuals_hold(chunks):
    """Each unanswerable question names a tool neither manual mentions (checked word by word)."""
    text = "\n".join(c.text for cs in chunks.values() for c in cs).lower()
    named = {"pu01": "zsh", "pu02": "powershell", "pu03": "seaborn", "pu04": "systemd", "pu05": "pivot"}
    qids = {q.id for q in read_question_set_file(SET).questions if not q.answerable}
    assert set(named) == qids
    assert [word for word in named.values() if word in text] == []
