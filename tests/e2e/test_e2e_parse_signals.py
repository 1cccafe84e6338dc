"""Issue 40, item 5 in a real browser: the Documents page lists documents by their parse signals and shows the
flagged chunks of the handbook PDF (its index page and its page of footer), their text as plain text."""

from __future__ import annotations

from harness import AppPage, downloading_context, start_server
from parse_pdf import harbour_pdf

from rag.components import build_components
from rag.ingest.pipeline import ingest_files

GUIDE = b"# Ferry guide\n\n## Tickets\n\nA single ticket costs <b>four</b> euros.\n"


def test_the_documents_page_lists_documents_by_parse_signals(settings, browser):  # noqa: ANN001 - a Browser
    components = build_components(settings)  # before the server opens the data dir
    try:
        assert not ingest_files(components, [("harbour.pdf", harbour_pdf()), ("guide.md", GUIDE)]).errors
    finally:
        components.close()
    server = start_server(settings.data_dir, "parse-signals")
    context = downloading_context(browser)
    try:
        app = AppPage(context.new_page(), server).open("documents")
        app.page.get_by_text("Parse quality", exact=True).first.wait_for()
        assert app.problems() == [], app.problems()
        docs = {r["source"]: r for r in app.dataframe_rows(app.dataframe("Documents by parse signals"))}
        assert list(docs) == ["harbour.pdf", "guide.md"]
        assert (docs["harbour.pdf"]["flagged"], docs["guide.md"]["flagged"]) == ("2", "0")
        chunks = app.dataframe_rows(app.dataframe("Chunks with parse problems"))
        assert [r["heading path"] for r in chunks] == ["Notes", "Index"]
        assert "Intentionally left blank." in chunks[0]["text"] and "page furniture" in chunks[0]["flagged for"]
        assert chunks[1]["flagged for"] == "index or contents lines"
        app.screenshot("parse-signals")
        assert app.problems() == [], app.problems()
    finally:
        context.close()
        server.stop()
