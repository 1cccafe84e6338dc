"""Issue 38, item 11, in the Search inspector through AppTest: no raw ``` fences in the best sentence."""

from __future__ import annotations

from apptest_pages import open_page

from rag.components import build_components
from rag.ingest.pipeline import ingest_files

GUIDE = b"""# Ferrytool

## Install

Install ferrytool with pip:
```bash
pip install ferrytool
```

## Timetable

The first ferry leaves at seven.
"""


def test_the_best_sentence_shows_no_code_fences(settings):
    components = build_components(settings)
    assert not ingest_files(components, [("ferrytool.md", GUIDE)]).errors
    components.close()
    at = open_page("pages/inspector.py", q="How do I install ferrytool with pip?", reranker="none")
    assert not at.exception and not at.error, [e.value for e in at.error]
    shown = at.markdown
    label = next(i for i, m in enumerate(shown) if m.value.startswith("Best sentence (cosine"))
    quote = shown[label + 1].value
    assert quote.startswith("> ") and "pip install ferrytool" in quote.replace("\\", ""), quote
    assert "```" not in quote and "\\`\\`\\`" not in quote, quote
