"""Browser tests: a real `streamlit run app.py` server driven by Debian's Chromium through Playwright.

The server runs in its own process with its own data dir, exactly as a user starts it; Playwright's
sync API drives /usr/bin/chromium (never a downloaded browser). Screenshots of every page go to
test-artifacts/ (gitignored), with the server's log, for a person to look at.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest
from harness import CHROMIUM, CHROMIUM_ARGS, AppPage, Server, downloading_context, start_server


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if Path(str(item.fspath)).parent == Path(__file__).parent:
            item.add_marker(pytest.mark.e2e)


@pytest.fixture(scope="session")
def browser() -> Iterator:
    """One headless Chromium for the session (each test opens its own context, i.e. its own session)."""
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing: install Debian's chromium (apt-get install chromium) to run the browser tests")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        yield browser
        browser.close()


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory, browser) -> Iterator[Server]:  # noqa: ANN001
    """The app server shared by the flow tests (they build on each other's data, in file order)."""
    server = start_server(tmp_path_factory.mktemp("e2e") / "data", "session")
    yield server
    server.stop()


@pytest.fixture
def app(browser, server: Server) -> Iterator[AppPage]:  # noqa: ANN001
    """A fresh browser session (its own context) on the shared server."""
    context = downloading_context(browser)
    try:
        yield AppPage(context.new_page(), server)
    finally:
        context.close()
