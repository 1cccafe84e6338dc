"""A link or an upload never puts an image, a link or HTML on screen, in a real browser (issue 28).

Every link parameter the pages read (rag/settings/links.py: q, each setting's link name, source, tag,
track, collection; the Ask page's tab) and an uploaded question set's unknown key carry a Markdown
image, a Markdown link dressed as the app's advice, raw HTML and a bare URL. The values do reach the
messages (the error names them); the page must show them as text: no <img> or <a> pointing at the
planted host, and no request from the browser to any host but the app server.
"""

from __future__ import annotations

from urllib.parse import urlencode, urlparse

import pytest
from harness import AppPage, start_server

from rag.settings.config import RetrievalConfig
from rag.settings.spec import knobs
from rag.text.markdown import WORD_JOINER

HOST = "evil.example"
PAYLOAD = (
    f"![px](http://{HOST}/i.png) [Session expired: sign in again](http://{HOST}/phish) "
    f'<img src="http://{HOST}/h.png"> http://{HOST}/bare www.{HOST}/w admin@{HOST}'
)
SETTINGS = [k.link for k in knobs(RetrievalConfig) if k.link]
# (page path, parameter): every parameter the inspector reads, and the collection everywhere.
LINK_TARGET = ["q", "source", "tag", "track", "track_source", "track_heading"]
VISITS = [("inspector", p) for p in [*LINK_TARGET, *SETTINGS, "collection"]] + [
    ("", "collection"),
    ("ask", "collection"),
    ("ask", "tab"),
]
NAMED = {*SETTINGS, "collection"}  # the parameters whose bad value the page names in an error


@pytest.fixture(scope="module")
def visit(tmp_path_factory: pytest.TempPathFactory, browser):  # noqa: ANN001, ANN201
    """One server, one browser tab, and every request the tab makes to another host."""
    server = start_server(tmp_path_factory.mktemp("links") / "data", "no-markdown-links")
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    app = AppPage(context.new_page(), server)
    app.outside = []
    own = urlparse(server.url).netloc

    def record(request) -> None:  # noqa: ANN001 - a playwright Request
        url = urlparse(request.url)
        if url.scheme in ("http", "https", "ws", "wss") and url.netloc != own:
            app.outside.append(request.url)

    app.page.on("request", record)
    yield app
    context.close()
    server.stop()


def seen(text: str) -> str:
    """Text as a reader sees it: without the invisible word joiners that keep a bare URL from linking."""
    return text.replace(WORD_JOINER, "")


def assert_inert(app: AppPage) -> None:
    planted = f'img[src*="{HOST}"], a[href*="{HOST}"], source[src*="{HOST}"], iframe[src*="{HOST}"]'
    assert app.count_everywhere(planted) == 0
    assert app.count_everywhere("[data-testid='stAlert'] img, [data-testid='stAlert'] a") == 0
    assert app.outside == [], app.outside


@pytest.mark.parametrize(("path", "param"), VISITS)
def test_a_link_parameter_shows_as_text(visit: AppPage, path: str, param: str):
    visit.outside.clear()
    visit.open(f"{path}?{urlencode({param: PAYLOAD})}")
    visit.settle()
    assert_inert(visit)
    if param in NAMED:  # the value did reach a message, shown as typed
        assert any(PAYLOAD in seen(p) for p in visit.problems()), visit.problems()


def test_an_uploaded_set_with_an_unknown_key_shows_it_as_text(visit: AppPage):
    visit.open("ask?tab=Eval")
    visit.outside.clear()
    line = '{"question": "How long?", "gold": "5 days", "%s": 1}\n' % PAYLOAD.replace('"', '\\"')
    visit.page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(
        files=[{"name": "keys.jsonl", "mimeType": "application/jsonl", "buffer": line.encode()}]
    )
    visit.page.get_by_text("unknown keys").wait_for()
    visit.settle()
    assert_inert(visit)
    assert any(PAYLOAD in seen(p) for p in visit.problems()), visit.problems()
    visit.screenshot("no-markdown-from-upload")
