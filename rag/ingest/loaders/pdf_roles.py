"""Contents and index pages: stored and browsable, but kept out of ranking (their `role` is
rag.types.ROLE_CONTENTS or ROLE_INDEX: retrieval reads them only with `ChunkFilter.include_unranked`).

A page of a table of contents or of an index is a list of names with page numbers: it matches almost any
name in a question and answers none. A page is one when most of its lines end in a page reference, after
dot leaders ("Quoting . . . . 6") or as an index's list of pages ("fill, 63, 66-67"), and an outline entry
named Contents or Index (numbered or not: "VI Index", "Appendix D Indexes") covers its section.
"""

from __future__ import annotations

import re

from rag.ingest.loaders.pdf_pages import Line
from rag.types import ROLE_CONTENTS, ROLE_INDEX

_DOT_LEADER = re.compile(r"(?:\.\s*){3,}\s*\d+\s*$")
_PAGE_LIST = re.compile(r"^\D.{0,80}?,\s*\d+(?:\s*[–-]\s*\d+)?(?:,\s*\d+(?:\s*[–-]\s*\d+)?)*\s*$")
_TRAILING_PAGE = re.compile(r"^\D.{0,80}?\s\d{1,4}$")
_LETTER = re.compile(r"^\s*[^\W\d_]\s*$")  # an index's letter heading ("A")
REFERENCE_SHARE = 0.5  # at least this share of a page's lines are page references
MIN_LINES = 5
_NAV_TITLE = re.compile(
    r"(?i)^(?:(?:appendix|part|chapter)\s+)?(?:[ivxlcdm]+|[a-z]|\d+)?[.:]?\s*"
    r"(?P<what>contents|table of contents|index|indexes|indices)$"
)


def page_role(lines: list[Line]) -> str:
    """ROLE_CONTENTS or ROLE_INDEX when the page's lines are mostly page references, else ""."""
    texts = [line.text.strip() for line in lines if line.text.strip() and not _LETTER.match(line.text)]
    if len(texts) < MIN_LINES:
        return ""
    leaders = sum(bool(_DOT_LEADER.search(t)) for t in texts)
    lists = sum(bool(_PAGE_LIST.match(t)) for t in texts)
    trailing = sum(bool(_TRAILING_PAGE.match(t)) and not _DOT_LEADER.search(t) for t in texts)
    if leaders + lists + trailing < REFERENCE_SHARE * len(texts):
        return ""
    # Dot leaders with one number each, or bare trailing numbers, are a contents page; several pages per
    # name, or dot leaders under letter headings, an index. Texinfo sets its indexes with leaders too, so
    # the letter headings tell them apart.
    letters = sum(bool(_LETTER.match(line.text)) for line in lines if line.text.strip())
    return ROLE_INDEX if lists > leaders + trailing or letters >= 2 else ROLE_CONTENTS


def page_reference(text: str) -> bool:
    """Whether one line reads as a contents or index entry: a name, then its page (after dot leaders, or
    alone) or its list of pages. Also what rag.ingest.parse_signals counts in a chunk."""
    text = text.strip()
    return bool(_DOT_LEADER.search(text) or _PAGE_LIST.match(text) or _TRAILING_PAGE.match(text))


def title_role(title: str) -> str:
    """ROLE_CONTENTS or ROLE_INDEX for an outline entry that names one ("Table of Contents", "VI Index")."""
    found = _NAV_TITLE.match(" ".join(title.split()))
    if not found:
        return ""
    return ROLE_CONTENTS if "content" in found.group("what").lower() else ROLE_INDEX
