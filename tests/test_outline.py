"""The Documents page's outline (heading tree, chunk counts, repeats) and code shown as code wherever chunk text is.

AppTest on the real page over the real embedded store; documents ingested with the real encoders.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from rag.catalog.outline import build_outline
from rag.components import build_components
from rag.ingest.pipeline import ingest_files
from rag.retrieval.context import Piece
from rag.settings.config import ChunkConfig
from rag.types import Chunk
from ui.chunks import table_key
from ui.outline import outline_text
from ui.render import context_html, fence_parts

APP = str(Path(__file__).resolve().parent.parent / "app.py")
SHARED = "All commands accept --help, which prints their options and exits without changing anything."
MANUAL = f"""# Tool manual

## Install

Download the archive and unpack it.

```bash
# not a heading: a shell comment
tar xf tool.tar.gz <script>
```

Then run the installer.

## Commands

### run

Runs a job from the queue.

### stop

Stops the running job.

### help

{SHARED}
""".encode()
OTHER = f"# Other page\n\nThis page talks about something else entirely.\n\n## Help\n\n{SHARED}\n".encode()


def test_the_outline_is_the_heading_tree_with_chunk_counts_and_repeats():
    def chunk(i: int, *path: str) -> Chunk:
        return Chunk(f"c{i}", "m.md", path, 0, 1, f"text {i}", i)

    chunks = [chunk(0), chunk(1, "A"), chunk(2, "A", "B"), chunk(3, "A", "B"), chunk(4, "A", "C"), chunk(5, "D")]
    outline = build_outline(chunks, frozenset({"c3"}))
    assert outline.total == 6 and outline.chunks == 1
    assert [(d, n.title, n.chunks, n.total, n.repeats) for d, n in outline.walk()] == [
        (0, "A", 1, 4, 0),
        (1, "B", 2, 2, 1),
        (1, "C", 1, 1, 0),
        (0, "D", 1, 1, 0),
    ]
    assert outline_text(outline).split("\n") == [
        "(before the first heading) · 1 chunk",
        "A · 1 chunk (4 in all)",
        "    B · 2 chunks · 1 repeated elsewhere",
        "    C · 1 chunk",
        "D · 1 chunk",
    ]


def test_fences_split_code_from_prose_and_the_citation_panel_shows_code_escaped():
    text = "Intro.\n\n```bash\n# comment\nrm <x>\n```\n\nAfter."
    parts = fence_parts(text)
    assert [(p.code, p.language, text[p.start : p.end]) for p in parts] == [
        (False, "", "Intro."),
        (True, "bash", "# comment\nrm <x>"),
        (False, "", "After."),
    ]
    # a hostile info string is no language; an unclosed fence runs to the end
    (part,) = fence_parts('```"><img src=x>\ncode')
    assert part.code and part.language == ""
    at = text.index("# comment")
    html = context_html([Piece(text[:at]), Piece("# comment", cited=True), Piece(text[at + 9 :])])
    assert "```" not in html and "<x>" not in html and "rm &lt;x&gt;" in html
    assert html.count("<pre") == 1 and '<code><mark style="background:#fde68a"># comment</mark>' in html


@pytest.fixture
def stored(settings):
    components = build_components(settings)
    files = [("manual.md", MANUAL), ("other.md", OTHER)]
    assert not ingest_files(components, files, ChunkConfig("heading", 800, 0)).errors
    components.close()
    return settings


def _page() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    at.switch_page("pages/documents.py")
    at.run()
    assert not at.exception, at.exception
    at.selectbox(key="documents_selected").select("manual.md").run()
    assert not at.exception, at.exception
    return at


def test_the_documents_page_shows_the_outline_and_the_repeats(stored):
    at = _page()
    (tree,) = [t.value for t in at.text if t.value.startswith("Tool manual")]
    assert tree.split("\n") == [
        "Tool manual · 0 chunks (4 in all)",
        "    Install · 1 chunk",
        "    Commands · 0 chunks (3 in all)",
        "        run · 1 chunk",
        "        stop · 1 chunk",
        "        help · 1 chunk · 1 repeated elsewhere",
    ]
    (repeats,) = [d.value for d in at.dataframe if d.proto.alt == "Repeated passages"]
    assert list(repeats["heading path"]) == ["Tool manual > Commands > help"]
    assert list(repeats["also in"]) == [["other.md > Other page > Help"]]


def test_a_chunk_with_a_code_fence_shows_its_code_through_st_code(stored):
    at = _page()
    (frame,) = [d.value for d in at.dataframe if d.proto.alt == "Chunks of the chosen document"]
    row = next(i for i, text in enumerate(frame["text"]) if "```bash" in text)
    at.session_state[table_key("documents_chunks", "manual.md", "")] = {"selection": {"rows": [row], "columns": []}}
    at.run()
    assert not at.exception, at.exception
    codes = [c for c in at.code if "tar xf" in c.value]
    listing = "# not a heading: a shell comment\ntar xf tool.tar.gz <script>"
    assert [(c.value, c.language) for c in codes] == [(listing, "bash")]
    texts = [t.value for t in at.text]
    assert "Download the archive and unpack it." in texts and "Then run the installer." in texts
    assert not any("```" in t for t in texts)
    assert not at.get("html") or all("<script>" not in h.proto.body for h in at.get("html"))
