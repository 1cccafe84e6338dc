"""Issue 40, item 4 in a real browser: the inspector's tracked target downloads its failure report as Markdown and
JSON, with every section and the document's text escaped (AppTest sees the buttons, not the files)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import urlencode

from carry_corpus import CHUNKING, HOSTILE, HOSTILE_GUIDE, QUESTION
from harness import AppPage, downloading_context, start_server

from rag.components import build_components
from rag.ingest.pipeline import ingest_files

TITLES = ["Question", "Settings (and where each came from)", "Stage table", "Target", "How its scores were computed", "Where it was lost",
          "What ranked above it", "The verified fix"]  # fmt: skip


def _download(app: AppPage, name: str) -> Path:
    button = app.page.get_by_role("button", name=name, exact=True)
    button.scroll_into_view_if_needed()
    with app.page.expect_download() as download:
        button.click()
    return Path(download.value.path())


def test_the_tracked_target_downloads_its_report_as_markdown_and_json(settings, browser):  # noqa: ANN001 - a Browser
    components = build_components(settings)  # before the server opens the data dir
    try:
        assert not ingest_files(components, [("guide.md", HOSTILE_GUIDE.encode())], CHUNKING).errors
    finally:
        components.close()
    server = start_server(settings.data_dir, "failure-report")
    context = downloading_context(browser)
    try:
        link = urlencode({"q": QUESTION, "k": "1", "track_source": "guide.md", "track_heading": "Invoices"})
        app = AppPage(context.new_page(), server).open(f"inspector?{link}")
        app.page.get_by_role("button", name="Download report (Markdown)", exact=True).wait_for()
        app.settle()
        assert app.problems() == [], app.problems()
        app.screenshot("failure-report")
        markdown = _download(app, "Download report (Markdown)").read_text(encoding="utf-8")
        assert re.findall(r"(?m)^## (.+)$", markdown) == TITLES
        assert "**Ranked below the final k**" in markdown and "final k \\>\\= 2**: verified" in markdown
        assert "\\<script\\>" in markdown and "<script>" not in markdown and "](http" not in markdown
        assert "From: the search inspector" in markdown
        app.settle()
        data = json.loads(_download(app, "Download report (JSON)").read_text(encoding="utf-8"))
        assert data["target"]["text"] == HOSTILE and data["lost"]["lost_at"] == "final_k"
        assert data["settings"]["origins"]["final_k"] == "given" and not data["settings"]["parity"]["same"]
        assert app.problems() == [], app.problems()
    finally:
        context.close()
        server.stop()
