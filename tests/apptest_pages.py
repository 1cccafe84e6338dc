"""Open one page of the app in AppTest the way a visitor following a link does: app.py first, then the page."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parent.parent / "app.py")


def open_page(page: str, timeout: float = 60, **params: str) -> AppTest:
    """Run app.py with these query parameters, switch to `page` (e.g. "pages/inspector.py") and run it."""
    at = AppTest.from_file(APP, default_timeout=timeout)
    for name, value in params.items():
        at.query_params[name] = value
    at.run()
    at.switch_page(page)
    return at.run()
