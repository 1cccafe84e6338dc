"""Chunk fixes in a real browser (issue 41, item 1): on the Documents page a person clicks a chunk's row, edits
its text and saves it, then disables it; the store searches the chunk by its new text, and the browser shows it
edited, then disabled, by the page ("app": no sign-in configured)."""

from __future__ import annotations

from click.testing import CliRunner
from harness import AppPage, downloading_context, start_server

from rag.cli import main

GUIDE = "# Guide\n\n## Tickets\n\nA single ticket costs four euros.\n\n## Timetable\n\nThe first ferry leaves at seven.\n"
NEW = "Night boats leave at midnight from the north quay."


def test_a_chunk_is_edited_then_disabled_in_the_browser(tmp_path, browser):  # noqa: ANN001 - a Browser
    (tmp_path / "guide.md").write_text(GUIDE)
    done = CliRunner().invoke(main, ["ingest", str(tmp_path / "guide.md")])  # before the server opens the data dir
    assert done.exit_code == 0, done.output
    server = start_server(tmp_path / "data", "chunk-fixes")
    context = downloading_context(browser)
    try:
        app = AppPage(context.new_page(), server).open()
        grid = app.dataframe("Chunks of the chosen document")
        grid.wait_for()
        grid.scroll_into_view_if_needed()
        box = grid.bounding_box()
        # The grid is a canvas: click the row marker (left edge) of data row 1, Timetable (header and rows 35 px).
        app.page.mouse.click(box["x"] + 12, box["y"] + 35 + 35 * 1 + 17)
        app.settle()
        text = app.page.get_by_label("Text", exact=True)
        text.wait_for()
        assert text.input_value() == "The first ferry leaves at seven."
        text.fill(NEW)
        text.press("Control+Enter")  # commits the text area's value, as leaving it does
        app.settle()
        app.page.get_by_role("button", name="Save text").click()
        app.settle()
        app.page.get_by_text("Chunk #1 edited by app at").first.wait_for()
        assert app.page.get_by_label("Text", exact=True).input_value() == NEW
        rows = app.dataframe_rows(app.dataframe("Chunks of the chosen document"))
        assert [(r["text"], r["status"]) for r in rows][1] == (NEW, "active, edited"), rows

        app.page.get_by_role("button", name="Disable").click()
        app.settle()
        app.page.get_by_text("Chunk #1 disabled: never retrieved until enabled.").first.wait_for()
        rows = app.dataframe_rows(app.dataframe("Chunks of the chosen document"))
        assert rows[1]["status"] == "disabled, edited", rows
        assert "disabled by app at" in app.page.inner_text("body")
        app.page.get_by_role("button", name="Enable").wait_for()
        app.screenshot("chunk-fixes-disabled")
        assert app.problems() == [], app.problems()
    finally:
        context.close()
        server.stop()
    history = CliRunner().invoke(main, ["chunk", "history", "--json"])
    assert history.exit_code == 0, history.output
    assert '"action": "edit"' in history.stdout and '"action": "disable"' in history.stdout
    found = CliRunner().invoke(main, ["search", "midnight north quay", "--json"])
    assert found.exit_code == 0 and NEW not in found.stdout  # disabled: never retrieved
