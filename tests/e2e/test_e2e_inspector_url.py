"""Issue 38, item 4 in a real browser: the inspector's address holds the question as soon as it is asked, so a
reload shows the new question, not the one the link opened with (AppTest's query_params cannot show the
address bar itself)."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

from harness import AppPage, start_server
from playwright.sync_api import expect


def _params(app: AppPage) -> dict[str, list[str]]:
    return parse_qs(urlparse(app.page.url).query)


def test_a_new_question_goes_into_the_address_and_a_reload_keeps_it(tmp_path, browser):  # noqa: ANN001 - a playwright Browser
    server = start_server(tmp_path / "data", "inspector-url")
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        app = AppPage(context.new_page(), server).open("inspector?q=the+old+question&fusion=union")
        box = app.page.get_by_role("textbox", name="Question", exact=True)
        expect(box).to_have_value("the old question", timeout=20_000)  # the first run fills it, maybe late
        box.fill("a new question")
        box.press("Enter")
        app.settle()
        app.page.wait_for_function("() => location.search.includes('new+question')", timeout=10_000)
        assert _params(app)["q"] == ["a new question"] and _params(app)["fusion"] == ["union"]
        app.page.reload()
        app.page.wait_for_selector('[data-testid="stApp"][data-test-connection-state="CONNECTED"]')
        # The reloaded page's first run fills the box; under load it can start after settle() looked, so wait on
        # the value itself (it still fails, after the wait, when the reload shows another question).
        expect(app.page.get_by_role("textbox", name="Question", exact=True)).to_have_value(
            "a new question", timeout=20_000
        )
        app.settle()
        assert not app.problems()
    finally:
        context.close()
        server.stop()
