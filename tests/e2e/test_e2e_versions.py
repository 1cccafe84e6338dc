"""The version diff in a real browser (issue 41, item 3): two versions of the collection made to move
(tests/versions_corpus.py) compared on its question set from the Eval tab; the page says what moved and each
moved question links to the inspector on both versions, and the link opens that version's own collection."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

from harness import AppPage, start_server
from versions_corpus import FIXED, QSET, two_versions

from rag.components import build_components
from rag.eval.qsets import save_question_set


def test_two_versions_are_compared_on_the_eval_tab(settings, browser):  # noqa: ANN001 - a Browser
    components = build_components(settings)  # before the server opens the data dir
    try:
        two_versions(components)
    finally:
        components.close()
    save_question_set(settings.data_dir, "moving", QSET)
    server = start_server(settings.data_dir, "versions")
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
    context.add_init_script("delete window.showSaveFilePicker")  # a plain download, as conftest's `app` does
    try:
        app = AppPage(context.new_page(), server).open("ask?tab=Eval")
        compare = app.page.get_by_role("button", name="Compare", exact=True)
        compare.scroll_into_view_if_needed()
        compare.click()  # A defaults to v2, B to v3 (the newest), the set to the only one
        app.page.get_by_text("v3 against v2: 4 questions fixed, 1 broke").wait_for()
        app.settle()
        assert app.problems() == [], app.problems()
        rows = app.dataframe_rows(app.dataframe("Questions the later version fixed or broke"))
        assert {r["id"] for r in rows if r["outcome"] == "fixed"} == FIXED
        assert [r["id"] for r in rows if r["outcome"] == "broke"] == ["api"]
        refund = next(r for r in rows if r["id"] == "refund")
        link = urlparse(refund["inspector on v3"])
        assert link.path == "inspector" and parse_qs(link.query)["collection"] == ["docs--v3"], refund
        app.screenshot("versions-diff")

        app.open(refund["inspector on v3"])  # the version's own collection stays, so its link opens
        app.page.get_by_role("heading", name="Search inspector", exact=True).wait_for()
        app.page.get_by_role("tab", name="Track an expected chunk").wait_for()  # drawn once the stages have run
        app.settle()
        assert app.problems() == [], app.problems()
        assert "Refunds reach your card within five business days" in app.page.get_by_test_id("stMain").inner_text()
    finally:
        context.close()
        server.stop()
