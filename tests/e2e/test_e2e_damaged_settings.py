"""A damaged stored-settings file, met in a real browser (issue 37): the Eval tab names it with the Reset
that repairs it, instead of a traceback, and after the click the tab is whole again."""

from __future__ import annotations

from harness import AppPage, start_server

from rag.eval.qsets import save_question_set
from rag.settings.collection_settings import settings_path


def test_the_eval_tab_shows_a_damaged_settings_file_and_its_reset_repairs_it(tmp_path, browser):  # noqa: ANN001 - a playwright Browser
    data = tmp_path / "data"
    save_question_set(data, "mine", '{"question": "Anything?", "answerable": false}\n')
    path = settings_path(data, "docs")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('{"values": {"fusion": "rrf", "fusion": "dbsf"}}')  # a key given twice
    server = start_server(data, "damaged-settings")
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        app = AppPage(context.new_page(), server).open("ask?tab=Eval")
        assert not app.page.locator('[data-testid="stException"]').count()
        app.page.get_by_text("is given twice").first.wait_for()  # the tab draws after the page's first paint
        app.screenshot("damaged-settings")
        shown = " ".join(app.problems())
        assert "given twice" in shown and path.name in shown, shown
        said = [p for p in app.problems() if "were not applied" in p]
        assert len(said) == 1, said  # said once by the page, not again by app.py's own setup
        app.page.get_by_role("button", name="Reset this collection's settings").click()
        # The rerun after the click may still show the old message for a moment on a loaded machine.
        app.page.get_by_text("is given twice").first.wait_for(state="detached")
        app.settle()
        assert not path.exists()
        assert not [p for p in app.problems() if "given twice" in p]
        assert not app.page.locator('[data-testid="stException"]').count()
    finally:
        context.close()
        server.stop()
