"""Each page URL opened first, on a fresh server (Streamlit's `pages/` folder quirk).

With a folder called `pages/` next to app.py, a first visit straight to a page URL can run that
page without app.py; every page must still work. Each page gets its own new server, started
together so the wait is paid once.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from harness import AppPage, start_server

# URL path -> the page's title (st.navigation derives the path from the file name).
PAGES = {"documents": "Documents", "inspector": "Search inspector", "ask": "Ask · Eval"}
# What a question on an empty collection should show.
EMPTY_QUESTION = {"inspector": "No chunk matched", "ask": "Abstained: the sources do not answer"}


@pytest.fixture(scope="module")
def fresh_servers(tmp_path_factory: pytest.TempPathFactory, browser):  # noqa: ANN001, ANN201
    with ThreadPoolExecutor(len(PAGES)) as pool:
        futures = {path: pool.submit(start_server, tmp_path_factory.mktemp(f"fresh-{path}") / "data", f"fresh-{path}") for path in PAGES}
        servers = {path: f.result() for path, f in futures.items()}
    yield servers
    with ThreadPoolExecutor(len(servers)) as pool:
        list(pool.map(lambda server: server.stop(), servers.values()))


@pytest.mark.parametrize("path", list(PAGES))
def test_page_url_opened_first_on_a_fresh_server_works(path: str, fresh_servers, browser):  # noqa: ANN001
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        app = AppPage(context.new_page(), fresh_servers[path]).open(path)
        app.page.get_by_role("heading", name=PAGES[path], exact=True).wait_for()
        app.settle()
        assert app.problems() == [], app.problems()
        assert app.dialogs == []
        # The shared sidebar and the navigation are there too: the visit ran the app's setup.
        assert app.page.get_by_text("Access: open").count() == 1
        # Not the raw file list ("app", "ask", ...) Streamlit shows for a page run without app.py.
        links = app.page.get_by_test_id("stSidebarNav").get_by_role("link")
        assert [links.nth(i).inner_text().split("\n")[-1] for i in range(links.count())] == list(PAGES.values())
        app.screenshot(f"direct-{path}")
        # The collection is empty on a fresh server: asking must say so, not fail.
        if path in EMPTY_QUESTION:
            app.page.get_by_label("Question", exact=True).fill("How long does a refund take?")
            app.page.get_by_label("Question", exact=True).press("Enter")
            app.page.get_by_text(EMPTY_QUESTION[path]).wait_for()
            app.settle()
            assert app.problems() == [], app.problems()
            app.screenshot(f"direct-{path}-empty-question")
    finally:
        context.close()
