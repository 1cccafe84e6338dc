"""Issue 30 in a real browser: the Eval tab writes a question set with Claude, a person drops one, and only the kept
questions are saved, with valid gold.

Claude is a tiny local HTTP server answering the Messages API (`POST /v1/messages`, the JSON shape of
tests/anthropic_mock.py); the app reaches it through the real `anthropic` SDK, which reads
ANTHROPIC_BASE_URL. Its reply offers two valid questions, one whose gold the collection lacks (dropped
before review, with the reason) and a near miss; the review then drops the second valid one.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from anthropic_mock import message_json, sse
from harness import AppPage, Server, downloading_context, start_server

FAILED = {"source": "billing/invoices.md", "heading": "Billing > Failed payments"}
RETRY = "If a card payment fails, we retry it three times over 9 days and email the owners each time."
KEPT_Q = "My card was declined, will you try charging it again?"
DROPPED_Q = "Can I download an old invoice?"
NEAR_Q = "Can I pay with a cheque?"
REPLY = json.dumps({
    "questions": [
        FAILED | {"question": KEPT_Q, "answer": RETRY},
        {"source": "billing/invoices.md", "heading": "Billing > Invoices", "question": DROPPED_Q,
         "answer": "Past invoices can be downloaded as PDF"},
        {"source": "billing/refunds.md", "heading": "Billing > Refunds", "question": "Where do refunds go?", "answer": "x"},
    ],
    "near_misses": [FAILED | {"question": NEAR_Q}],
})  # fmt: skip


class _Messages(BaseHTTPRequestHandler):
    """`POST /v1/messages`: the questions above for a generation request, a short text for anything else."""

    requests: list[dict] = []

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
        if self.path.split("?")[0] != "/v1/messages":
            return self._send(404, "application/json", json.dumps({"type": "error", "error": {"type": "not_found_error", "message": self.path}}).encode())
        self.requests.append(body)
        asks = json.dumps(body.get("messages", []))
        text = REPLY if "near_misses" in asks else "OK"
        if body.get("stream"):
            return self._send(200, "text/event-stream", sse([text], model=body["model"]))
        return self._send(200, "application/json", json.dumps(message_json(text, model=body["model"])).encode())

    def _send(self, status: int, kind: str, data: bytes) -> None:
        self.send_response(status)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:  # quiet
        pass


@pytest.fixture(scope="module")
def claude() -> Iterator[ThreadingHTTPServer]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Messages)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="module")
def gen_server(tmp_path_factory: pytest.TempPathFactory, browser, claude: ThreadingHTTPServer) -> Iterator[Server]:  # noqa: ANN001
    env = {"ANTHROPIC_API_KEY": "test", "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{claude.server_address[1]}"}
    server = start_server(tmp_path_factory.mktemp("gen-set") / "data", "gen-set", env)
    yield server
    server.stop()


def test_generate_review_drop_one_and_save_only_the_kept(browser, gen_server: Server):  # noqa: ANN001
    context = downloading_context(browser)
    try:
        app = AppPage(context.new_page(), gen_server).open("")
        app.page.get_by_role("button", name="Load sample docs").click()
        app.page.get_by_text("6 documents ingested").wait_for()
        app.settle()
        app.open("ask?collection=sample")
        app.page.get_by_role("tab", name="Eval").click()
        app.settle()
        main = app.page.get_by_test_id("stMain")
        main.locator("summary", has_text="Write a question set with Claude").click()
        generate = app.page.get_by_role("button", name="Generate questions")
        generate.wait_for()
        app.settle()
        generate.click()
        app.settle()
        try:
            app.page.get_by_text("questions checked and kept").wait_for(timeout=240_000)  # Claude's calls, on a busy machine
        except Exception:
            app.screenshot("gen-set-no-review")  # what the page showed instead, for the log
            raise
        assert app.problems() == [], app.problems()
        assert _Messages.requests and all(r["messages"][0]["content"].count("<section ") for r in _Messages.requests)

        review = app.dataframe(index=0)
        before = app.dataframe_rows(review)
        assert [r["question"] for r in before] == [KEPT_Q, DROPPED_Q, NEAR_Q] and all(r["keep"] == "true" for r in before)
        dropped = app.dataframe_rows(app.dataframe(index=1))
        assert any("gold is not in the collection" in r["why dropped"] for r in dropped)

        _untick_keep(app, review, row=1)
        assert [r["keep"] for r in app.dataframe_rows(review)] == ["true", "false", "true"]
        name = app.page.get_by_role("textbox", name="Save as question set")
        name.fill("gen-reviewed")
        name.press("Enter")
        app.settle()
        app.page.get_by_role("button", name="Save the reviewed set").click()
        app.page.get_by_text("Saved 2 reviewed questions").wait_for()
        app.settle()
        assert app.problems() == [] and app.dialogs == []
        app.screenshot("gen-set-saved")
    finally:
        context.close()

    saved = [json.loads(line) for line in (gen_server.data_dir / "eval_sets" / "gen-reviewed.jsonl").read_text().splitlines()]
    assert [q["question"] for q in saved] == [KEPT_Q, NEAR_Q]
    assert saved[0]["gold"] == [FAILED] and saved[0]["answer"] == RETRY  # the section and its answering sentence
    assert saved[1]["answerable"] is False and "gold" not in saved[1]


def _untick_keep(app: AppPage, grid, row: int) -> None:  # noqa: ANN001 - a playwright Locator
    """Untick the "keep" checkbox of data row `row` (0-based). The editor is a canvas: click where the cell is.

    "keep" is the first column and hide_index is on, so its cells start at the grid's left edge; the header
    and each row are Streamlit's default 35 px. A click toggles only on the checkbox itself, not elsewhere
    in its cell (and Space does not toggle it).
    """
    grid.scroll_into_view_if_needed()
    box = grid.bounding_box()
    app.page.mouse.click(box["x"] + 37, box["y"] + 35 + 35 * row + 17)  # the checkbox's centre, in the cell
    app.settle()
