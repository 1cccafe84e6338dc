"""Issue 29 in a real browser: the collection stays in the URL across a reload and a new tab, and the inspector's
stage table fits a 1,280 px window (fused rank, reranked rank and movement visible without scrolling).

Its own server and data dir: loading the sample docs here must not change what the flow tests find.
"""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import parse_qs, urlparse

import pytest
from harness import AppPage, Server, start_server


@pytest.fixture(scope="module")
def first_use(tmp_path_factory: pytest.TempPathFactory, browser) -> Iterator[Server]:  # noqa: ANN001
    server = start_server(tmp_path_factory.mktemp("first-use") / "data", "first-use")
    yield server
    server.stop()


def _collection(app: AppPage) -> str:
    """The `?collection=` in the address bar."""
    return parse_qs(urlparse(app.page.url).query).get("collection", [""])[0]


def _sidebar_collection(app: AppPage) -> str:
    captions = app.page.get_by_test_id("stSidebar").get_by_test_id("stCaptionContainer")
    return captions.filter(has_text="stored by").first.inner_text()


def test_load_sample_docs_then_reload_and_a_new_tab_stay_on_sample(browser, first_use: Server):  # noqa: ANN001
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        app = AppPage(context.new_page(), first_use).open()
        assert _collection(app) == "docs"
        app.page.get_by_role("button", name="Load sample docs").click()
        app.page.get_by_text("6 documents ingested").wait_for()
        app.settle()
        assert _collection(app) == "sample"
        assert _sidebar_collection(app).startswith("Collection sample")
        url = app.page.url

        app.page.reload()
        app.page.wait_for_selector('[data-testid="stApp"][data-test-connection-state="CONNECTED"]')
        app.settle()
        assert _collection(app) == "sample" and _sidebar_collection(app).startswith("Collection sample")

        tab = AppPage(context.new_page(), first_use)
        tab.page.goto(url)
        tab.page.wait_for_selector('[data-testid="stApp"][data-test-connection-state="CONNECTED"]')
        tab.settle()
        assert _collection(tab) == "sample" and _sidebar_collection(tab).startswith("Collection sample")
        # A page switch keeps it too (the page list's links carry no query).
        tab.page.get_by_test_id("stSidebarNav").get_by_text("Search inspector").click()
        tab.settle()
        tab.page.get_by_role("heading", name="Search inspector", exact=True).wait_for()
        assert _collection(tab) == "sample"
        assert app.problems() == [] and tab.problems() == []
    finally:
        context.close()


def test_stage_table_fits_1280_px(browser, first_use: Server):  # noqa: ANN001 - after the test above loaded the samples
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        app = AppPage(context.new_page(), first_use).open("inspector?collection=sample&q=How+long+does+a+refund+take")
        grid = app.page.get_by_test_id("stDataFrame").first
        grid.wait_for()
        app.settle()
        grid.scroll_into_view_if_needed()
        app.screenshot("first-use-stage-table-1280")
        # The grid draws on a canvas; its header elements are the accessible table it keeps for the columns in
        # view (virtualised: a column scrolled out has none), laid out at zero size. So: each wanted header is
        # there, and the grid's scroll area is no wider than its visible box, so every column lies inside it.
        headers = grid.locator('th[role="columnheader"]').all_inner_texts()
        for name in ("final", "fused #", "rerank #", "movement"):
            assert name in headers, (name, headers)
        box = grid.bounding_box()
        scroller = grid.locator(".dvn-scroller").first
        width, visible = scroller.evaluate("e => [e.scrollWidth, e.clientWidth]")
        assert width <= visible + 1 and visible <= box["width"] + 1, (width, visible, box)
        assert app.problems() == [], app.problems()
    finally:
        context.close()
