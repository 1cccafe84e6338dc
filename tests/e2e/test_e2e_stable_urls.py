"""Every page URL works on a server that has already served a visit (not only on a fresh one).

Issue 12: after a first visit to "/", opening /documents directly showed "Page not found", because
the default page is served at "/" only. app.py serves it at /documents too.
"""

from __future__ import annotations

import pytest
from harness import AppPage

PAGES = {"": "Documents", "documents": "Documents", "inspector": "Search inspector", "ask": "Ask · Eval"}


@pytest.mark.parametrize("path", list(PAGES))
def test_each_page_url_opens_its_page_after_the_server_served_another_visit(path: str, browser, server):  # noqa: ANN001
    first = browser.new_context()
    try:
        AppPage(first.new_page(), server).open("")
    finally:
        first.close()
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        app = AppPage(context.new_page(), server).open(path)
        app.page.get_by_role("heading", name=PAGES[path], exact=True).wait_for()
        app.settle()
        assert app.page.get_by_text("Page not found").count() == 0
        assert app.problems() == [], app.problems()
    finally:
        context.close()
