"""A citation marker in an answer opens its source in a real browser (no script: a fragment link into a closed <details>)."""

from __future__ import annotations

import pytest
from harness import AppPage, start_server


@pytest.fixture(scope="module")
def sample_server(tmp_path_factory: pytest.TempPathFactory, browser):  # noqa: ANN001, ANN201
    """One server for the file, with the sample docs loaded through the Documents page: each test reads them."""
    server = start_server(tmp_path_factory.mktemp("citations") / "data", "citations")
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        app = AppPage(context.new_page(), server).open("")
        app.page.get_by_role("button", name="Load sample docs").click()
        app.page.get_by_text("6 documents ingested").wait_for()
        app.settle()
    finally:
        context.close()
    yield server
    server.stop()


def test_clicking_a_citation_opens_and_scrolls_to_its_source(sample_server, browser):  # noqa: ANN001
    context = browser.new_context(viewport={"width": 1400, "height": 700})
    try:
        app = AppPage(context.new_page(), sample_server).open("ask?collection=sample")  # the sample docs' own collection
        app.page.get_by_label("Question", exact=True).fill("How long does a refund take to reach my card?")
        app.page.get_by_role("button", name="Ask", exact=True).click()
        app.page.get_by_text("Answered by").wait_for()
        app.settle()
        panel = app.page.locator("details").filter(has_text="billing/plans.md").first
        assert not panel.evaluate("d => d.open")
        body = panel.locator('[id="ask-source-S1"]')
        assert not body.is_visible()
        app.page.get_by_test_id("stHtml").first.locator('a[href="#ask-source-S1"]').click()
        body.wait_for(state="visible")
        assert panel.evaluate("d => d.open")
        assert "Approved refunds reach your card" in " ".join(body.inner_text().split())  # the file wraps its lines
        assert body.evaluate("e => { const r = e.getBoundingClientRect(); return r.top >= 0 && r.top < window.innerHeight; }")
        assert app.problems() == [], app.problems()
        app.screenshot("citation-opened")
    finally:
        context.close()


def test_an_eval_section_link_tracks_the_section_as_found(sample_server, browser):  # noqa: ANN001
    """The inspector opened on a section link (as Eval writes them for section gold) tracks the whole section:
    found at its best chunk's final rank, never "lost" because another of its chunks was."""
    from urllib.parse import urlencode

    context = browser.new_context(viewport={"width": 1400, "height": 900})
    try:
        app = AppPage(context.new_page(), sample_server)
        link = {
            "collection": "sample", "q": "How long does an approved refund take to reach my card?",
            "track_source": "billing/plans.md", "track_heading": "Billing > Refunds",
        }  # fmt: skip
        app.open("inspector?" + urlencode(link))
        app.page.get_by_text("found: final rank 1").wait_for()
        app.settle()
        assert app.page.get_by_text("Ranked below the final k").count() == 0
        assert app.problems() == [], app.problems()
        app.screenshot("inspector-section-tracked")
    finally:
        context.close()
