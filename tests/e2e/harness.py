"""Start the app as a user does (`streamlit run app.py`) and drive it in Debian's Chromium.

Used by tests/e2e/conftest.py and the test files; see ../shared/notes/streamlit-testing.md.
"""

from __future__ import annotations

import csv
import io
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = Path("/usr/bin/chromium")
# From ../shared/notes/streamlit-testing.md: no sandbox in containers, no GPU, nothing phoning home.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
# Every interaction reruns the script; the first page load also loads the models.
TIMEOUT_MS = 120_000


@dataclass
class Server:
    """A running `streamlit run app.py`."""

    url: str
    data_dir: Path
    process: subprocess.Popen
    log: Path

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(data_dir: Path, name: str, env: dict[str, str] | None = None) -> Server:
    """Start the app on a free port with its own data dir; returns once /_stcore/health answers ok."""
    port = _free_port()
    ARTIFACTS.mkdir(exist_ok=True)
    log = ARTIFACTS / f"server-{name}.log"
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("RAGSCOPE_", "QDRANT_", "ANTHROPIC_"))}
    full_env = {
        **clean,
        "RAGSCOPE_DATA_DIR": str(data_dir),
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        **(env or {}),
    }
    command = [
        sys.executable, "-m", "streamlit", "run", "app.py",
        "--server.headless", "true",
        "--server.address", "127.0.0.1",
        "--server.port", str(port),
        "--server.fileWatcherType", "none",
        "--browser.gatherUsageStats", "false",
    ]  # fmt: skip
    with open(log, "w") as out:
        process = subprocess.Popen(command, cwd=ROOT, env=full_env, stdout=out, stderr=subprocess.STDOUT)
    server = Server(f"http://127.0.0.1:{port}", data_dir, process, log)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"streamlit exited with {process.returncode}:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"{server.url}/_stcore/health", timeout=2) as r:
                if r.read().decode().strip() == "ok":
                    return server
        except OSError:
            time.sleep(0.3)
    server.stop()
    raise RuntimeError(f"streamlit did not answer /_stcore/health within 90 s:\n{log.read_text()[-3000:]}")


def downloading_context(browser):  # noqa: ANN001, ANN201 - a playwright Browser and BrowserContext
    """A fresh browser session whose downloads are plain files. Chromium has the File System Access API, so
    a dataframe's "Download as CSV" would open a save dialog; without it Streamlit downloads plainly."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
    context.add_init_script("delete window.showSaveFilePicker")
    return context


class AppPage:
    """One browser session on the app, with the waits and checks every test needs.

    Dialogs are recorded and dismissed (a dialog means a script ran); `problems()` lists exceptions
    and error alerts on screen.
    """

    def __init__(self, page, server: Server) -> None:  # noqa: ANN001 - playwright Page
        self.page = page
        self.server = server
        self.dialogs: list[str] = []
        page.set_default_timeout(TIMEOUT_MS)
        page.on("dialog", self._dialog)

    def _dialog(self, dialog) -> None:  # noqa: ANN001
        self.dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    def open(self, path: str = "") -> "AppPage":
        self.page.goto(f"{self.server.url}/{path}")
        self.page.wait_for_selector('[data-testid="stApp"][data-test-connection-state="CONNECTED"]')
        self.settle()
        return self

    def settle(self, running_timeout_ms: int = 1500) -> None:
        """Wait for the rerun an interaction started (if it has not finished already) to finish."""
        try:
            self.page.wait_for_selector('[data-test-script-state="running"]', timeout=running_timeout_ms)
        except Exception:  # noqa: BLE001 - a fast rerun may be over before we look
            pass
        self.page.wait_for_selector('[data-test-script-state="notRunning"]')
        self.page.wait_for_timeout(200)  # let the last deltas paint

    def choose(self, combobox, option) -> None:  # noqa: ANN001 - playwright Locators
        """Open a select box and click one of its options.

        A rerun that ends while the menu is open closes it (and a click during a rerun may not open it),
        so the menu is opened again, a few times, until the option shows.
        """
        for _ in range(4):
            self.settle()
            combobox.click()
            try:
                option.wait_for(timeout=10_000)
                break
            except Exception:  # noqa: BLE001 - the menu closed or never opened: settle and open it again
                self.page.keyboard.press("Escape")
        option.click()
        self.settle()

    def problems(self) -> list[str]:
        """Exceptions and error alerts on screen (their text), read in one step: counted first and read one by
        one, an alert a rerun removes in between would be waited for until the timeout."""
        shown = self.page.locator('[data-testid="stException"], [data-testid="stAlertContentError"]')
        return shown.all_inner_texts()

    def screenshot(self, name: str) -> Path:
        """The whole page (the app scrolls inside its main element, so the viewport is grown to fit)."""
        ARTIFACTS.mkdir(exist_ok=True)
        size = self.page.viewport_size
        height = self.page.evaluate("() => document.querySelector('[data-testid=\"stMain\"]')?.scrollHeight || 0")
        self.page.set_viewport_size(
            {"width": size["width"], "height": max(size["height"], min(int(height) + 40, 12000))}
        )
        self.page.wait_for_timeout(300)
        path = ARTIFACTS / f"{name}.png"
        self.page.screenshot(path=str(path))
        self.page.set_viewport_size(size)
        return path

    def count_everywhere(self, selector: str) -> int:
        """Matches of `selector` in the page and in every frame (components render in iframes)."""
        return sum(frame.locator(selector).count() for frame in self.page.frames)

    def dataframe(self, alt: str | None = None, index: int = 0):  # noqa: ANN201 - a playwright Locator
        """A dataframe by its `alt` text (accessible name), else the index-th one on the page."""
        frames = self.page.get_by_test_id("stDataFrame")
        if alt is not None:
            return frames.filter(has=self.page.locator(f'[data-testid="stDataFrameResizable"][aria-label="{alt}"]'))
        return frames.nth(index)

    def dataframe_rows(self, grid) -> list[dict[str, str]]:  # noqa: ANN001 - a Locator from dataframe()
        """A dataframe's contents through its own "Download as CSV" button (the grid itself is a canvas).

        The toolbar button sits over the grid, which takes the pointer, so the click is dispatched
        to the button directly.
        """
        grid.scroll_into_view_if_needed()
        grid.hover()
        with self.page.expect_download() as download:
            grid.get_by_role("button", name=re.compile(r"^Download as CSV")).dispatch_event("click")
        return list(csv.DictReader(io.StringIO(Path(download.value.path()).read_text(encoding="utf-8-sig"))))


def start_sample_server(browser, data_dir: Path, name: str) -> Server:  # noqa: ANN001 - a playwright Browser
    """A server with the sample docs loaded through the Documents page, as a user loads them, for a module
    whose tests all read them."""
    server = start_server(data_dir, name)
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        app = AppPage(context.new_page(), server).open("")
        app.page.get_by_role("button", name="Load sample docs").click()
        app.page.get_by_text("6 documents ingested").wait_for()
        app.settle()
    finally:
        context.close()
    return server
