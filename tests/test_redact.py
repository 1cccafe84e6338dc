"""Credentials inside QDRANT_URL never reach a message (issue 28, item 7).

`http://admin:secret@host:6333` was echoed whole by the connection error, and so by every command's
one-line error and `ragscope doctor`. The client here is the real qdrant-client: against a port where
nothing listens, and against a small local HTTP endpoint that answers the one call `connect` makes.
"""

from __future__ import annotations

import importlib.metadata
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from click.testing import CliRunner

from rag.catalog.doctor import check
from rag.cli import main
from rag.errors import StoreError
from rag.settings.config import Settings
from rag.store.client import ClientStore
from rag.text.redact import redact_url

UNREACHABLE = "http://admin:secret@127.0.0.1:1"  # nothing listens on port 1
VERSION = ".".join(importlib.metadata.version("qdrant-client").split(".")[:2]) + ".0"  # a server the client accepts


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("http://admin:secret@db:6333", "http://***@db:6333"),
        ("https://admin@db:6333/", "https://***@db:6333/"),
        ("http://admin:p@ss@db:6333/x", "http://***@db:6333/x"),  # a raw @ in the password
        ("at http://db:6333/?api_key=k1&x=2 (down)", "at http://db:6333/?api_key=***&x=2 (down)"),
        ("http://db/?a=1&token=abc#top", "http://db/?a=1&token=***#top"),
        ("http://db/?access_token=abc", "http://db/?access_token=***"),
        ("http://db:6333", "http://db:6333"),
        ("http://[::1]:6333/collections", "http://[::1]:6333/collections"),
        (":memory:", ":memory:"),
        ("write to a@b.example about http://db/p@q", "write to a@b.example about http://db/p@q"),
    ],
)
def test_redact_url_hides_user_info_and_secret_parameters_only(text, shown):
    assert redact_url(text) == shown


def _clean(message: str) -> None:
    assert "secret" not in message and "admin" not in message, message
    assert "http://***@127.0.0.1:" in message, message


def test_the_client_connection_error_does_not_show_the_password():
    with pytest.raises(StoreError) as caught:
        ClientStore.connect(UNREACHABLE, "", "docs")
    _clean(str(caught.value))
    assert "could not connect to Qdrant at http://***@127.0.0.1:1" in str(caught.value)


@pytest.mark.parametrize("command", [["doctor"], ["docs"], ["search", "ticket price"]])
def test_commands_that_cannot_connect_do_not_show_the_password(command, monkeypatch):
    monkeypatch.setenv("QDRANT_URL", UNREACHABLE)
    result = CliRunner().invoke(main, command)
    assert result.exit_code == 1, result.output
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error: ")]
    assert len(errors) == 1, result.stderr
    _clean(errors[0])
    assert "secret" not in result.output


class _Qdrant(BaseHTTPRequestHandler):
    """Answers what `ClientStore.connect` asks a server: its version (`GET /`), then
    `GET /collections/<name>/exists`."""

    def do_GET(self) -> None:  # noqa: N802 - the name http.server calls
        if self.path == "/":
            answer = {"title": "qdrant - vector search engine", "version": VERSION}
        else:
            answer = {"result": {"exists": False}, "status": "ok", "time": 0.0}
        body = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        """Quiet: the test output is for the test."""


@pytest.fixture
def server_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Qdrant)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://admin:secret@127.0.0.1:{server.server_address[1]}"
    for pending in threading.enumerate():  # qdrant-client asks the version from a thread of its own
        if "_check_compatibility" in pending.name:
            pending.join(timeout=10)
    server.shutdown()
    thread.join()


def test_doctor_says_the_server_is_reachable_without_its_password(server_url, tmp_path, monkeypatch):
    findings = check(Settings(data_dir=tmp_path / "data", qdrant_url=server_url))
    (reachable,) = [f for f in findings if "reachable" in f.message]
    assert reachable.level == "ok"
    _clean(reachable.message)
    monkeypatch.setenv("QDRANT_URL", server_url)
    result = CliRunner().invoke(main, ["doctor"])
    assert result.exit_code == 0, result.output
    assert "secret" not in result.output and "ok: Qdrant server at http://***@127.0.0.1:" in result.output
