"""Issue 40, item 1 in a real browser: the inspector's arithmetic panel shows the selected row's fused score as
the sum of its dense and sparse terms, the score the stage table (and `ragscope search --json`) ranked by, and
follows the row a person clicks."""

from __future__ import annotations

import json
import re

from click.testing import CliRunner
from harness import AppPage, downloading_context, start_server
from playwright.sync_api import expect

from rag.cli import main

KITCHEN = """# Kitchen

## Sourdough

Knead the dough, shape the loaf and bake it in a hot oven for forty minutes. The batch marker is zorblaxite.

## Soup

Simmer onions and carrots in stock for half an hour, then blend until smooth.

## Bread oven

The oven in the back room bakes twelve loaves at once and heats up in an hour.
"""
QUESTION = "bake the zorblaxite loaf in the oven"
ARGS = ["--fusion", "rrf", "--reranker", "score-fusion"]


def test_the_arithmetic_panel_shows_the_fused_score_retrieve_ranked_by(tmp_path, browser):  # noqa: ANN001 - a Browser
    (tmp_path / "kitchen.md").write_text(KITCHEN)
    done = CliRunner().invoke(main, ["ingest", str(tmp_path / "kitchen.md")])  # before the server opens the data dir
    assert done.exit_code == 0, done.output
    searched = CliRunner().invoke(main, ["search", QUESTION, *ARGS, "--all", "--json"])
    assert searched.exit_code == 0, searched.output
    rows = {r["chunk_id"]: r for r in json.loads(searched.stdout)["results"]}
    server = start_server(tmp_path / "data", "arithmetic")
    context = downloading_context(browser)
    try:
        app = AppPage(context.new_page(), server).open(
            "inspector?q=bake+the+zorblaxite+loaf+in+the+oven&fusion=rrf&reranker=score-fusion"
        )
        panel = app.page.locator(".st-key-inspector_arithmetic")
        expect(panel).to_contain_text("Fused score", timeout=30_000)
        for row in (0, 1):
            if row:  # click the second row's marker (the grid is a canvas: header and rows 35 px)
                grid = app.dataframe("Stage table")
                grid.scroll_into_view_if_needed()
                box = grid.bounding_box()
                app.page.mouse.click(box["x"] + 12, box["y"] + 35 + 35 * row + 17)
                app.settle()
            chunk_id = re.search(r"chunk ([0-9a-f-]{36})", app.page.inner_text("body")).group(1)
            expected = rows[chunk_id]
            text = panel.inner_text()
            fused = expected["arithmetic"]["fused"]
            assert f"Fused score {expected['fused_score']:.4f} = " in text, text
            assert f"= {expected['fused_score']:.4f}" in text.split("Fused score", 1)[1].split("\n")[0], text
            for term in fused["terms"]:
                assert f"{term['stage']} {term['value']:.4f}" in text, (term, text)
            assert "RRF, k 60: each list adds 1/(k + rank - 1)" in text
            assert f"Rerank score {expected['rerank_score']:.4f}" in text and "x chunk cosine" in text
        assert chunk_id != next(iter(rows))  # the panel followed the clicked row
        app.screenshot("inspector-arithmetic")
        assert app.problems() == [], app.problems()
    finally:
        context.close()
        server.stop()
