"""Access: a configured password or OIDC sign-in guards every page, however it is reached.

Pages are checked three ways: through app.py's navigation, with `switch_page`, and opened on their
own (what a first visit straight to a page URL runs, Streamlit's `pages/` quirk). The Qdrant API key
is checked at the HTTP layer of the real qdrant-client, with a mocked transport (no network).
"""

from __future__ import annotations

import threading
import warnings
from pathlib import Path

import httpx
import pytest
from streamlit.testing.v1 import AppTest

from ui import setup as ui_setup
from rag.settings.config import Settings
from rag.store import open_store
from rag.store.client import ClientStore

ROOT = Path(__file__).resolve().parent.parent
APP = str(ROOT / "app.py")
PAGES = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "pages").glob("*.py"))
PASSWORD = "correct horse battery staple"
OIDC = {"redirect_uri": "http://localhost:8501/oauth2callback", "cookie_secret": "x" * 32}
PROVIDER = {"client_id": "id", "client_secret": "secret", "server_metadata_url": "https://idp.example/.well-known/openid-configuration"}


def _titles(at: AppTest) -> list[str]:
    return [t.value for t in at.title]


def _gated(at: AppTest) -> bool:
    """Only the gate is on screen: its title, no page title, no sidebar (drawn by pages only)."""
    return not at.exception and _titles(at) == ["ragscope"] and not at.sidebar.children


def _runs(page: str) -> list[AppTest]:
    """The page reached through app.py's navigation, and the page file run on its own."""
    via_app = AppTest.from_file(APP, default_timeout=60)
    via_app.run()
    via_app.switch_page(page)
    alone = AppTest.from_file(str(ROOT / page), default_timeout=60)
    return [via_app, alone]


def test_every_page_discovered():
    assert {"pages/documents.py", "pages/inspector.py", "pages/ask.py"} <= set(PAGES)


@pytest.mark.parametrize("page", PAGES)
def test_password_guards_every_page(page, monkeypatch):
    monkeypatch.setenv("RAGSCOPE_PASSWORD", PASSWORD)
    runs = _runs(page)
    assert len(runs) == 2  # through app.py and alone
    for at in runs:
        at.run()
        assert _gated(at), (page, _titles(at), [e.value for e in at.exception])
        assert [t.label for t in at.text_input] == ["Password"]

        at.text_input(key="auth_password").input("wrong")
        at.button[0].click().run()
        assert _gated(at) and [e.value for e in at.error] == ["Wrong password."]

        at.text_input(key="auth_password").input(PASSWORD)
        at.button[0].click().run()
        assert not at.exception, [e.value for e in at.exception]
        assert "ragscope" not in _titles(at) and _titles(at), (page, _titles(at))
        assert not any("Access: open" in c.value for c in at.sidebar.caption)


def test_password_gate_comes_before_the_store_is_opened(monkeypatch, tmp_path):
    """A stranger at the gate cannot make the app open (or create) the data dir."""
    monkeypatch.setenv("RAGSCOPE_PASSWORD", PASSWORD)
    data_dir = tmp_path / "fresh"
    monkeypatch.setenv("RAGSCOPE_DATA_DIR", str(data_dir))
    at = AppTest.from_file(APP, default_timeout=60).run()
    assert _gated(at)
    assert not data_dir.exists()


@pytest.mark.parametrize("page", PAGES)
def test_without_access_config_the_app_says_it_is_open(page):
    runs = _runs(page)
    assert len(runs) == 2  # through app.py and alone
    for at in runs:
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        assert not at.text_input or "Password" not in [t.label for t in at.text_input]
        assert any(c.value.startswith("Access: open") for c in at.sidebar.caption)


@pytest.mark.parametrize("page", PAGES)
def test_oidc_sign_in_guards_every_page(page, monkeypatch):
    monkeypatch.setattr(ui_setup.importlib.util, "find_spec", _authlib_present)
    runs = _runs(page)
    assert len(runs) == 2  # through app.py and alone
    for at in runs:
        at.secrets["auth"] = {**OIDC, **PROVIDER}
        at.user = {"is_logged_in": False}
        at.run()
        assert _gated(at), (page, _titles(at))
        assert [b.label for b in at.button] == ["Sign in"]

        at.user = {"is_logged_in": True, "email": "owner@tidepool.example", "name": "Owner"}
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        assert "ragscope" not in _titles(at) and _titles(at)
        assert "owner@tidepool.example" in [t.value for t in at.sidebar.text]
        assert any(b.label == "Sign out" for b in at.sidebar.button)
        assert not any("Access: open" in c.value for c in at.sidebar.caption)


def test_oidc_named_providers_and_password_both_required(monkeypatch):
    monkeypatch.setattr(ui_setup.importlib.util, "find_spec", _authlib_present)
    monkeypatch.setenv("RAGSCOPE_PASSWORD", PASSWORD)
    at = AppTest.from_file(APP, default_timeout=60)
    at.secrets["auth"] = {**OIDC, "google": PROVIDER, "okta": PROVIDER}
    at.user = {"is_logged_in": False}
    at.run()
    assert _gated(at) and sorted(b.label for b in at.button) == ["Sign in with google", "Sign in with okta"]
    at.user = {"is_logged_in": True, "email": "owner@tidepool.example"}
    at.run()
    assert _gated(at) and [t.label for t in at.text_input] == ["Password"]  # signed in, password still asked


def test_oidc_configured_without_authlib_stays_shut_and_says_why(monkeypatch):
    real = ui_setup.importlib.util.find_spec
    monkeypatch.setattr(ui_setup.importlib.util, "find_spec", lambda name, *a: None if name == "authlib" else real(name, *a))
    at = AppTest.from_file(APP, default_timeout=60)
    at.secrets["auth"] = {**OIDC, **PROVIDER}
    at.user = {"is_logged_in": False}
    at.run()
    assert _gated(at) and not at.button
    assert "pip install 'ragscope[auth]'" in at.error[0].value


def test_oidc_section_without_provider_stays_shut():
    at = AppTest.from_file(APP, default_timeout=60)
    at.secrets["auth"] = dict(OIDC)
    at.user = {"is_logged_in": False}
    at.run()
    assert _gated(at) and not at.button and len(at.error) == 1


def _authlib_present(name: str, *args):  # noqa: ANN202
    """find_spec as if Authlib were installed (it is an optional extra, absent in the test env)."""
    import importlib.machinery

    if name == "authlib":
        return importlib.machinery.ModuleSpec("authlib", None)
    return _real_find_spec(name, *args)


_real_find_spec = ui_setup.importlib.util.find_spec


def _quietly(connect):  # noqa: ANN001, ANN202
    """Build a server client: qdrant-client probes the server's version in a thread at construction,
    which meets the offline guard and warns; wait for that probe here so its warning stays here."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        store = connect()
        for thread in threading.enumerate():
            if "check_compatibility" in thread.name:
                thread.join(30)
    return store


def _mock_transport(monkeypatch, seen: list[httpx.Request]) -> None:
    """Every qdrant-client built from now on answers through a mocked HTTP transport that records each request.

    Installed as the client is built, before `ClientStore.connect` sends its first request (its probe).
    """
    from rag.store import client as client_module

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"result": {"exists": False}, "status": "ok", "time": 0.0})

    real = client_module.QdrantClient

    def built(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        client = real(*args, **kwargs)
        client._client.openapi_client.client._client._transport = httpx.MockTransport(handler)
        return client

    monkeypatch.setattr(client_module, "QdrantClient", built)


def test_qdrant_api_key_reaches_the_server_in_every_request(monkeypatch):
    """From the environment to the `api-key` header of the real client's HTTP requests (mocked transport)."""
    monkeypatch.setenv("QDRANT_URL", "http://qdrant.internal:6333")
    monkeypatch.setenv("QDRANT_API_KEY", "s3cret-qdrant-key")
    settings = Settings.from_env()
    assert "s3cret" not in repr(settings)
    seen: list[httpx.Request] = []
    _mock_transport(monkeypatch, seen)
    store = _quietly(lambda: open_store(settings))
    assert isinstance(store, ClientStore)
    assert store.count() == 0  # asks the server whether the collection exists
    store.close()
    assert len(seen) >= 2 and all(r.headers.get("api-key") == "s3cret-qdrant-key" for r in seen)
    assert {r.url.host for r in seen} == {"qdrant.internal"}


def test_no_api_key_header_without_a_key(monkeypatch):
    seen: list[httpx.Request] = []
    _mock_transport(monkeypatch, seen)
    store = _quietly(lambda: ClientStore.connect("http://qdrant.internal:6333", "", "docs"))
    store.count()
    store.close()
    assert len(seen) >= 2 and all("api-key" not in r.headers for r in seen)


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_attempt_limiter_locks_out_per_client_and_overall_with_doubling_waits():
    from ui.attempts import AttemptLimiter

    clock = _Clock()
    limiter = AttemptLimiter(free=3, global_free=10, base_s=2, max_s=60, forget_s=600, clock=clock)
    assert [limiter.failed(["a"]) for _ in range(3)] == [0, 0, 0]
    assert [limiter.failed(["a"]) for _ in range(4)] == [2, 4, 8, 16]
    assert limiter.wait_s(["a"]) == 16 and limiter.wait_s(["b"]) == 0  # another client is not locked...
    clock.now += 10
    assert limiter.wait_s(["a"]) == 6
    assert [limiter.failed([f"c{i}"]) for i in range(3)] == [0, 0, 0]
    assert limiter.wait_s(["fresh"]) == 0  # 10 failures overall: the next one locks everyone
    assert limiter.failed(["fresh"]) == 2 and limiter.wait_s(["someone-new"]) == 2  # overall: 11 > 10
    assert [limiter.failed(["z"]) for _ in range(8)][-1] == 60  # capped at max_s
    clock.now += 601  # quiet for longer than forget_s: everyone starts over
    assert limiter.wait_s(["a"]) == 0 and limiter.failed(["a"]) == 0
    limiter.succeeded(["a"])
    assert limiter.wait_s(["a"]) == 0


def test_attempt_limiter_counts_every_failure_under_concurrency():
    from ui.attempts import GLOBAL, AttemptLimiter

    limiter = AttemptLimiter(free=10_000, global_free=10_000)
    threads = [threading.Thread(target=lambda i=i: [limiter.failed([f"s{i % 4}"]) for _ in range(50)]) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert limiter._failures[GLOBAL].count == 400 and all(limiter._failures[f"s{i}"].count == 100 for i in range(4))


def test_password_gate_backs_off_after_failures_and_logs_them_without_the_password(monkeypatch, caplog):
    monkeypatch.setenv("RAGSCOPE_PASSWORD", PASSWORD)
    at = AppTest.from_file(APP, default_timeout=60).run()

    def attempt(password: str) -> list[str]:
        at.text_input(key="auth_password").input(password)
        at.button[0].click().run()
        assert _gated(at)
        return [e.value for e in at.error]

    with caplog.at_level("WARNING", logger="ragscope.access"):
        assert [attempt(f"guess {i}") for i in range(3)] == [["Wrong password."]] * 3
        assert attempt("guess 3") == ["Wrong password. Too many failed attempts: try again in 2 s."]
        # Lock this session for long (as more failures would): now even the right password is not compared.
        limiter = ui_setup.password_attempts()
        session = f"session {at.session_state['auth_session_key']}"
        for _ in range(5):
            limiter.failed([session])
        (locked,) = attempt(PASSWORD)
        assert locked.startswith("Too many failed attempts: try again in")
    failures = [r.getMessage() for r in caplog.records if r.name == "ragscope.access"]
    assert len(failures) == 9 and all("failed password attempt" in m and session in m for m in failures)
    assert not any("guess" in m or PASSWORD in m for m in caplog.messages)

    # Failures from many sessions lock out everyone, a brand-new session included.
    for i in range(limiter.global_free):
        limiter.failed([f"session other-{i}"])
    fresh = AppTest.from_file(APP, default_timeout=60).run()
    fresh.text_input(key="auth_password").input(PASSWORD)
    fresh.button[0].click().run()
    assert _gated(fresh) and fresh.error[0].value.startswith("Too many failed attempts")
