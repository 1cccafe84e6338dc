"""One long section whose second chunk answers the question, ranked right behind its first chunk and above the
next section: the case one hit per section used to hide (rag/retrieval/collapse.py)."""

from __future__ import annotations

from rag.ingest.pipeline import ingest_files
from rag.settings.config import ChunkConfig

LONG_SECTION = """# Guide

## Refunds

Refunds are paid back to the card that was charged. A refund for an annual plan is prorated by the days left.

A refund reaches the card within five to ten business days after it is approved by the billing team.

Refunds for gift cards are not possible; the balance stays on the account until it is spent on a plan.

## Invoices

Invoices are emailed on the first day of each month and can be downloaded from the billing page at any time.
"""
QUESTION = "How are refunds paid back and how long do they take?"
ANSWER = "within five to ten business days"  # in the section's second chunk, not its first
CHUNKING = ChunkConfig("heading", 120, 0)  # one paragraph a chunk
# The guide whose Invoices chunk holds text that would add markup, an image and a table row to a report read raw
# (tests/test_failure_report.py and the browser's download of it).
HOSTILE = "Invoices are emailed monthly <script>alert(1)</script> ![p](http://evil.example/p.png)\n| forged | row |"
HOSTILE_GUIDE = LONG_SECTION.split("## Invoices")[0] + "## Invoices\n\n" + HOSTILE + "\n"


def ingest_guide(components) -> str:  # noqa: ANN001 - Components
    """Ingest the guide; the id of the chunk holding ANSWER."""
    assert not ingest_files(components, [("guide.md", LONG_SECTION.encode())], CHUNKING).errors
    [answer] = [r.chunk.id for r in components.store.records() if ANSWER in r.chunk.text]
    return answer
