"""One upload limit (issue 38, item 2): `.streamlit/config.toml`'s server.maxUploadSize and RAGSCOPE_MAX_UPLOAD_MB
are one number, and the Documents uploader takes no more than it, so the browser refuses a larger file on its
chip with the limit the page states ("File must be 50.0MB or smaller"), never Streamlit's "AxiosError 413"; a file
over it that reaches the app anyway gets the app's own message in MiB, as the CLI says it."""

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


def _limit_warnings(at: AppTest) -> list[str]:
    return [w.value for w in at.warning if "server.maxUploadSize" in w.value]


def test_config_toml_and_the_apps_settings_hold_one_limit_and_the_uploader_takes_it():
    server_mb = tomllib.loads(CONFIG.read_text(encoding="utf-8"))["server"]["maxUploadSize"]
    limit_mb = Settings().max_upload_mb
    assert server_mb == limit_mb, "server.maxUploadSize and RAGSCOPE_MAX_UPLOAD_MB's default are one limit"
    at = _documents()
    assert st_config.get_option("server.maxUploadSize") == server_mb  # the page runs under this config.toml
    uploader = _uploader(at)
    assert uploader.proto.max_upload_size_mb == limit_mb  # what the browser checks: the limit the label states
    assert f"up to {limit_mb}.0 MiB each" in uploader.label
    assert f"{limit_mb}.0 MiB" in uploader.help and "RAGSCOPE_MAX_UPLOAD_MB" in uploader.help
    assert not _limit_warnings(at)


def test_a_lower_app_limit_is_the_uploaders_limit_too(monkeypatch):
    monkeypatch.setenv("RAGSCOPE_MAX_UPLOAD_MB", "1")
    at = _documents()
    uploader = _uploader(at)
    assert uploader.proto.max_upload_size_mb == 1 and "up to 1.0 MiB each" in uploader.label
    assert not _limit_warnings(at)


def test_an_app_limit_over_the_servers_cap_is_said_on_the_page(monkeypatch):
    server_mb = st_config.get_option("server.maxUploadSize")
    monkeypatch.setenv("RAGSCOPE_MAX_UPLOAD_MB", str(server_mb + 30))
    at = _documents()
    (warning,) = _limit_warnings(at)
    assert f"up to {server_mb}.0 MiB (server.maxUploadSize), less than the app's limit of {server_mb + 30}.0 MiB" in warning
    assert f"to {server_mb + 30}, or lower RAGSCOPE_MAX_UPLOAD_MB to {server_mb}" in warning
    assert _uploader(at).proto.max_upload_size_mb == server_mb  # never more than the server takes: no 413


@pytest.fixture
def small_server_cap():
    """A server started with a cap under the app's limit (as STREAMLIT_SERVER_MAX_UPLOAD_SIZE=1 would)."""
    before = st_config.get_option("server.maxUploadSize")
    st_config.set_option("server.maxUploadSize", 1)
    yield
    st_config.set_option("server.maxUploadSize", before)


def test_a_server_cap_under_the_default_limit_is_said_on_the_page(small_server_cap):
    at = _documents()
    (warning,) = _limit_warnings(at)
    assert "up to 1.0 MiB (server.maxUploadSize), less than the app's limit of 50.0 MiB" in warning
    uploader = _uploader(at)
    assert uploader.proto.max_upload_size_mb == 1 and "up to 1.0 MiB each" in uploader.label


def test_a_file_over_the_limit_that_reaches_the_app_gets_the_apps_message_in_mib(monkeypatch):
    """The browser refuses it first; a client that skips that check (AppTest sets the value directly) still gets
    the app's refusal, the CLI's words."""
    monkeypatch.setenv("RAGSCOPE_MAX_UPLOAD_MB", "1")
    at = _documents()
    uploader = _uploader(at)
    big = b"# Big\n\n" + b"The ferry leaves at nine. " * 60_000  # 1.5 MiB: over the limit
    assert len(big) > uploader.proto.max_upload_size_mb * 2**20
    uploader.set_value([("huge.md", big, "text/markdown")])
    at.run()
    assert not at.exception, at.exception
    errors = [re.sub(r"\\(.)", r"\1", e.value) for e in at.error]
    assert "huge.md: 1.5 MiB is over the 1.0 MiB limit per file (RAGSCOPE_MAX_UPLOAD_MB)" in errors
    assert not [b for b in at.button if b.key == "documents_ingest"]
