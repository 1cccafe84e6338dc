"""The app in a real browser, as a person uses it: load the samples, upload, ingest, search, ask, evaluate.

The tests share one server and run in file order (each builds on the data the previous one stored).
One uploaded document carries script tags, an onerror image, a `javascript:` link and raw HTML: on
every page that shows its text, no script may run (no dialog, no flag set on `window`), no injected
element may exist in the DOM, and the text must be on screen as text.
"""

from __future__ import annotations

from harness import ARTIFACTS, AppPage

HOSTILE_NAME = "harbour-tokens.md"
HOSTILE = """# Harbour ferry tokens

A harbour ferry token costs three euros <script>window.__xss = "script"; alert("xss-script")</script> at the kiosk.

Ferry tokens are sold at the pier kiosk <img src=x onerror="window.__xss = 'img'; alert('xss-img')"> every morning.

Lost ferry tokens are replaced through [the token form](javascript:alert('xss-link')) at the kiosk.

<div id="xss-div" onmouseover="alert('xss-div')"><b>Ferry token kiosk hours</b> are seven to seven.</div>
"""
PAYLOADS = ("<script>window.__xss", "<img src=x onerror=", "](javascript:alert('xss-link'))", '<div id="xss-div"')
QUESTION = "How much does a harbour ferry token cost?"


def assert_inert(app: AppPage) -> None:
    """Nothing of the hostile document ran or became markup."""
    assert app.dialogs == [], app.dialogs
    assert app.page.evaluate("() => window.__xss === undefined"), "a script from the document ran"
    assert app.count_everywhere("img[onerror]") == 0
    assert app.count_everywhere("#xss-div") == 0
    assert app.count_everywhere('a[href^="javascript:" i]') == 0


def assert_clean(app: AppPage) -> None:
    assert app.problems() == [], app.problems()


def test_documents_samples_upload_and_ingest(app: AppPage):
    app.open()
    app.page.get_by_role("heading", name="Documents", exact=True).wait_for()
    assert_clean(app)
    app.screenshot("documents-empty")

    app.page.get_by_role("button", name="Load sample docs").click()  # into the `sample` collection, which the session switches to
    app.page.get_by_text("6 documents ingested").wait_for()
    app.settle()
    assert_clean(app)

    upload = ARTIFACTS / HOSTILE_NAME
    upload.write_text(HOSTILE)
    app.page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(str(upload))
    app.page.get_by_text("Preview").wait_for()
    app.settle()
    app.page.get_by_role("button", name="Ingest 1 file").click()
    app.page.get_by_text("1 document ingested").wait_for()
    app.settle()
    assert_clean(app)

    # The chunk view of the hostile document: its text, raw, in the grid.
    app.settle()  # the ingest reruns once more to show its summary; a menu opened before that closes
    app.choose(app.page.get_by_role("combobox", name="Document"), app.page.get_by_role("option", name=HOSTILE_NAME))
    text = "\n".join(row["text"] for row in app.dataframe_rows(app.dataframe("Chunks of the chosen document")))
    for payload in PAYLOADS:
        assert payload in text, payload
    assert_inert(app)
    assert_clean(app)
    app.screenshot("documents")


def main_text(app: AppPage) -> str:
    return app.page.get_by_test_id("stMain").inner_text()


def test_inspector_shows_every_stage_and_the_chunk_as_text(app: AppPage):
    app.open("inspector?collection=sample")  # where the first test put the sample docs and its upload
    app.page.get_by_role("heading", name="Search inspector", exact=True).wait_for()
    assert_clean(app)
    question = app.page.get_by_label("Question", exact=True)
    question.fill(QUESTION)
    question.press("Enter")
    app.page.get_by_role("tab", name="Track an expected chunk").wait_for()  # drawn once the stages have run
    app.settle()
    assert_clean(app)
    rows = app.dataframe_rows(app.dataframe(index=0))
    assert rows and rows[0]["source > heading"].endswith("Harbour ferry tokens")  # the cell keeps the path's end
    assert {"dense #", "sparse #", "fused #", "rerank #", "movement"} <= set(rows[0])  # the compact default
    app.page.get_by_text("Show chunk ids and scores").click()  # the details toggle adds each stage's score
    app.settle()
    rows = app.dataframe_rows(app.dataframe(index=0))
    assert {"dense", "sparse", "fused", "rerank"} <= set(rows[0])
    # The top chunk is selected by default: its full text, with the markup shown as characters.
    shown = main_text(app)
    for payload in ("<script>", "</script>", "<img src=x onerror=", "javascript:alert('xss-link')", '<div id="xss-div"'):
        assert payload in shown, payload
    assert_inert(app)
    app.screenshot("inspector")


def test_ask_answers_with_a_citation_that_opens_its_span(app: AppPage):
    app.open("ask?collection=sample")
    app.page.get_by_role("heading", name="Ask · Eval", exact=True).wait_for()
    assert_clean(app)
    app.page.get_by_label("Question", exact=True).fill(QUESTION)
    app.page.get_by_role("button", name="Ask", exact=True).click()
    app.page.get_by_text("Answered by").wait_for()
    app.settle()
    assert_clean(app)
    answer = app.page.get_by_test_id("stHtml").first.inner_text()
    assert "three euros" in answer and "S1" in answer, answer

    # The [S1] marker is a link that opens its source's panel (a closed <details>).
    citation = app.page.locator("details").filter(has_text="harbour-tokens.md").first
    app.page.get_by_test_id("stHtml").first.locator('a[href="#ask-source-S1"]').click()
    citation.locator('[id="ask-source-S1"]').wait_for(state="visible")
    opened = citation.inner_text()
    assert "three euros" in opened
    for payload in ("<script>", "</script>", "<img src=x onerror="):
        assert payload in opened or payload in answer, payload
    assert_inert(app)
    assert_clean(app)
    app.screenshot("ask")


def test_eval_tab_runs_the_sample_question_set(app: AppPage):
    app.open("ask?collection=sample")
    app.page.get_by_role("tab", name="Eval").click()
    app.settle()
    app.page.get_by_role("button", name="Load sample question set").click()
    app.settle()
    app.page.get_by_role("button", name="Run eval").click()
    app.page.get_by_text("stored: nDCG@10").wait_for()
    app.settle()
    assert_clean(app)
    assert app.page.get_by_role("heading", name="Results").count() == 1
    assert_inert(app)
    app.screenshot("ask-eval")
