"""One upload limit (issue 38, item 2): RAGSCOPE_MAX_UPLOAD_MB, covered by `.streamlit/config.toml`'s
server.maxUploadSize, so a file over the app's limit reaches the app and gets its message in MiB instead of
Streamlit's "AxiosError 413" on a red chip."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from apptest_pages import open_page
from streamlit import config as st_config
from streamlit.testing.v1 import AppTest

from rag.settings.config import Settings

CONFIG = Path(__file__).resolve().parent.parent / ".streamlit" / "config.toml"


def _uploader(at: AppTest):  # noqa: ANN202 - an AppTest widget
    (uploader,) = [u for u in at.file_uploader if u.key.startswith("documents_upload_")]
    return uploader


def _documents() -> AppTest:
    at = open_page("pages/documents.py", timeout=90)
    assert not at.exception, at.exception
    return at


def test_config_toml_covers_what_the_uploader_offers_at_the_default_limit():
    server_mb = tomllib.loads(CONFIG.read_text(encoding="utf-8"))["server"]["maxUploadSize"]
    limit_mb = Settings().max_upload_mb
    assert server_mb > limit_mb, "a file just over the app's limit must reach the app"
    assert server_mb >= 2 * limit_mb, "the uploader offers twice the limit: the server must take all of it"
    at = _documents()
    assert st_config.get_option("server.maxUploadSize") == server_mb  # the page runs under this config.toml
    assert _uploader(at).proto.max_upload_size_mb == 2 * limit_mb
    assert not [w for w in at.warning if "server.maxUploadSize" in w.value]


def test_the_uploader_never_offers_more_than_the_server_takes(monkeypatch):
    server_mb = st_config.get_option("server.maxUploadSize")
    monkeypatch.setenv("RAGSCOPE_MAX_UPLOAD_MB", str(server_mb - 10))  # twice that is over the server's cap
    at = _documents()
    assert _uploader(at).proto.max_upload_size_mb == server_mb
    assert not [w for w in at.warning if "server.maxUploadSize" in w.value]


@pytest.fixture
def small_server_cap():
    """A server started with a cap at the app's limit (as STREAMLIT_SERVER_MAX_UPLOAD_SIZE=1 would)."""
    before = st_config.get_option("server.maxUploadSize")
    st_config.set_option("server.maxUploadSize", 1)
    yield
    st_config.set_option("server.maxUploadSize", before)


def test_a_server_cap_that_does_not_cover_the_limit_is_said_on_the_page(monkeypatch, small_server_cap):
    monkeypatch.setenv("RAGSCOPE_MAX_UPLOAD_MB", "1")
    at = _documents()
    (warning,) = [w.value for w in at.warning if "server.maxUploadSize" in w.value]
    assert "up to 1.0 MiB (server.maxUploadSize), not more than the app's limit of 1.0 MiB" in warning
    assert "to 2, or lower RAGSCOPE_MAX_UPLOAD_MB" in warning
    assert _uploader(at).proto.max_upload_size_mb == 1


def test_a_file_over_the_apps_limit_gets_the_apps_message_in_mib(monkeypatch):
    monkeypatch.setenv("RAGSCOPE_MAX_UPLOAD_MB", "1")
    at = _documents()
    uploader = _uploader(at)
    assert "up to 1.0 MiB each" in uploader.label
    big = b"# Big\n\n" + b"The ferry leaves at nine. " * 60_000  # 1.5 MiB: over the app's limit, within the uploader's
    assert 1 * 2**20 < len(big) <= uploader.proto.max_upload_size_mb * 2**20 <= st_config.get_option("server.maxUploadSize") * 2**20
    uploader.set_value([("huge.md", big, "text/markdown")])
    at.run()
    assert not at.exception, at.exception
    errors = [re.sub(r"\\(.)", r"\1", e.value) for e in at.error]
    assert "huge.md: 1.5 MiB is over the 1.0 MiB limit per file (RAGSCOPE_MAX_UPLOAD_MB)" in errors
    assert not [b for b in at.button if b.key == "documents_ingest"]
