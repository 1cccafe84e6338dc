"""Shared page setup: settings, the process-wide engine, the access gate and the sidebar.

Every page calls `page()` itself, because a first visit straight to a page URL can run that page
without app.py (Streamlit's `pages/` folder quirk); `setup()` is idempotent and cached.
"""

from __future__ import annotations

import hmac
import importlib.util
import math
import threading
import uuid
from collections.abc import Mapping

import streamlit as st

from rag.components import Components, build_components
from rag.errors import RagError
from rag.settings.collection_settings import in_force
from rag.settings.config import RetrievalConfig, Settings
from rag.settings.labels import config_label
from rag.settings.parity import parity
from rag.text.redact import redact_url
from rag.text.words import plural
from ui import collections as collection_ui
from ui.attempts import AttemptLimiter
from ui.links import page_url
from ui.safe import safe_text, say

APP_ICON = "🔎"
DEMO = "ask_demo"  # the Ask page's demo-view toggle: app.py hides the page list while it is on
# Set by the first run of a session (see _leave_pages_folder_mode).
_SESSION_STARTED = "_ui_session_started"
# This run's sidebar line on retrieval, which a page rewrites once its own settings differ (retrieval_on_page).
# Per thread: each session's script runs in a thread of its own.
_SLOTS = threading.local()


@st.cache_resource(show_spinner=False)
def get_settings() -> Settings:
    """Read once per process (environment + .streamlit/secrets.toml)."""
    return Settings.from_env()


@st.cache_resource(show_spinner="Opening the collection…")
def get_components(settings: Settings) -> Components:
    """One store per collection per process, shared by every session; the models are shared by all.

    Cached for the process's life, yet on the embedded engine the store holds its shard only for a turn
    (rag/store/lease.py): between page runs a `ragscope` command on the same data dir takes its own.
    """
    return build_components(settings)


@st.cache_resource(show_spinner=False)
def password_attempts() -> AttemptLimiter:
    """One failure counter per process: a guesser opening fresh sessions still meets the overall limit."""
    return AttemptLimiter()


def setup(report: bool = True) -> Components:
    """Settings, access check and the engine on the session's collection; stops the page with a clear
    message when any fails. app.py runs it before the page does (`report=False`): a damaged stored-settings
    file is then said once, by the page, not once per call."""
    st.session_state[_SESSION_STARTED] = True
    try:
        settings = get_settings()
    except RagError as e:
        say("error", "Configuration error: {e}", e=e)
        st.stop()
    _gate(settings)
    try:
        components = get_components(collection_ui.session_settings(settings))
    except RagError as e:
        say("error", "{e}", e=e)
        st.stop()
        raise  # unreachable: st.stop raises
    # The collection's own settings (stored by a tune sweep) are read on every run, so a page applies them as soon
    # as they are stored; the cached engine (store and models) is shared, only its retrieval settings differ.
    try:
        return components.with_stored_settings()
    except RagError as e:
        if report:
            say("error", "The collection's stored settings were not applied: {e}", e=e)
        return components


def page(title: str, bare: bool = False) -> Components:
    """Setup plus the page's title and the shared sidebar (none when `bare`: the Ask page's demo view)."""
    _leave_pages_folder_mode()
    components = setup()
    st.title(title)
    _SLOTS.retrieval = None
    if not bare:
        sidebar(components)
    return components


def _leave_pages_folder_mode() -> None:
    """Go through app.py from now on when a page URL was the first visit to a fresh server.

    Streamlit's `pages/` quirk: with a `pages/` folder next to app.py the server starts in the old
    multipage mode, and a first visit straight to a page URL runs that page alone, with the raw file
    names ("app", "ask", ...) as navigation and without app.py's page config; the mode then sticks,
    for every session, until someone opens the root URL. `st.navigation` in app.py leaves the mode
    by clearing this flag (internal to Streamlit, which pyproject.toml pins); a page running alone
    clears it too, and on a session's first run (no widget event to lose) reruns through app.py.
    """
    from streamlit.runtime.pages_manager import PagesManager

    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        if not st.session_state.get(_SESSION_STARTED):
            st.session_state[_SESSION_STARTED] = True
            st.rerun()


def sidebar(components: Components) -> None:
    s = components.settings
    with st.sidebar:
        collection_ui.picker(get_settings(), components)
        if s.qdrant_url:
            say("caption", "Collection **{name}** on the Qdrant server {url}", name=s.collection,
                url=redact_url(s.qdrant_url, raw=s.qdrant_url))  # fmt: skip
        else:
            say("caption", "Collection **{name}**, stored by the embedded engine in {dir}", name=s.collection,
                dir=s.data_dir)  # fmt: skip
        dense = s.dense_model  # the configured model, until the collection's record says which is its default
        try:
            docs, chunks = len(components.store.sources()), components.store.count()
            st.caption(f"{plural(docs, 'document')} · {plural(chunks, 'chunk')}")
            record = components.store.collection_models()
            dense = record.dense_model if record is not None else dense
        except RagError as e:
            say("caption", "Store unavailable: {e}", e=e)
        collection_ui.manage(get_settings(), components, get_components)
        say("caption", "Dense: {dense} · Sparse: {sparse}", dense=dense, sparse=s.sparse_model)
        _SLOTS.retrieval = st.empty()
        _SLOTS.retrieval.caption(safe_text("Retrieval: {settings}", settings=_settings_in_force(components)))
        answers = "Anthropic " + s.answer.anthropic_model if s.anthropic_api_key else "offline (extractive)"
        say("caption", "Answers: {answers}", answers=answers)
        # Eval is a tab of the Ask page; this link opens it there (the tabs are bound to ?tab=).
        st.markdown(f"🧪 [Eval: question sets and runs]({page_url('ask', components, tab='Eval')})")
        providers = _oidc_providers()
        if providers is not None and st.user.get("is_logged_in"):
            st.caption("Signed in as")
            st.text(str(st.user.get("email") or st.user.get("name") or "(no name given)"))
            if st.button("Sign out", key="auth_logout"):
                st.logout()
        if not s.password and providers is None:
            st.caption("Access: open (no RAGSCOPE_PASSWORD and no [auth] sign-in configured)")


def retrieval_on_page(config: RetrievalConfig | None, base: RetrievalConfig, ask: bool = False) -> None:
    """The sidebar's retrieval line says the page's own settings once they differ from the collection's (an
    applied fix, a changed stage setting, a replayed ask), and how they differ from what Ask and Eval run, so it
    never disagrees with the form under it (issue 38, item 11; issue 40, item 3). On the Ask page (`ask`) its
    own form is what differs from the collection's settings."""
    slot = getattr(_SLOTS, "retrieval", None)
    if slot is None or config is None or config == base:
        return
    p = parity(config, base)
    words = f"differs from the collection's settings in: {p.listed('collection')}" if ask and not p.same else p.words()
    slot.caption(safe_text("Retrieval on this page: {now} · {parity}", now=config_label(config), parity=words))


def _settings_in_force(components: Components) -> str:
    """Which retrieval settings this page starts from, and where each came from (every page's sidebar says it)."""
    try:
        return in_force(components.settings, components.shared).describe()
    except RagError as e:
        return str(e)


def signed_in_name() -> str:
    """Who is signed in (OIDC: their email, else their name), for what they change to be recorded as theirs;
    "" when sign-in is not configured (RAGSCOPE_PASSWORD names nobody) or gives no name."""
    if _oidc_providers() is None or not st.user.get("is_logged_in"):
        return ""
    return str(st.user.get("email") or st.user.get("name") or "")


def _oidc_providers() -> list[str] | None:
    """Identity providers from the `[auth]` section of secrets.toml; None when sign-in is not configured.

    `[auth]` holding `client_id` is Streamlit's default provider (""); each `[auth.<name>]` table is
    a named one. An `[auth]` section naming no provider still counts as configured, so the gate stays
    shut and says what is missing instead of opening the app.
    """
    try:
        auth = st.secrets.get("auth")
    except FileNotFoundError:  # no secrets.toml at all
        return None
    if not auth:
        return None
    named = [name for name, value in auth.items() if isinstance(value, Mapping)]
    return ([""] if "client_id" in auth else []) + named


def _gate(settings: Settings) -> None:
    """Require every configured way in: OIDC sign-in (`[auth]` in secrets.toml), then RAGSCOPE_PASSWORD.

    With neither configured the app is open and the sidebar says so. Runs before the engine is
    opened, on every page (a page URL opened directly runs without app.py).
    """
    providers = _oidc_providers()
    if providers is not None and not st.user.get("is_logged_in", False):
        _sign_in(providers)
    if settings.password and not st.session_state.get("auth_ok"):
        _password(settings)


def _sign_in(providers: list[str]) -> None:
    """The OIDC sign-in screen; always stops the page (st.login redirects the browser away)."""
    st.title("ragscope")
    if importlib.util.find_spec("authlib") is None:
        st.error(
            "Sign-in is configured ([auth] in secrets.toml) but Authlib is not installed: run "
            "`pip install 'ragscope[auth]'` and restart the app."
        )
    elif not providers:
        st.error(
            "The [auth] section in secrets.toml names no identity provider: add client_id, client_secret "
            "and server_metadata_url to it, or one [auth.<name>] table per provider."
        )
    else:
        st.write("Sign in to use ragscope.")
        for name in providers:
            if st.button(f"Sign in with {name}" if name else "Sign in", key=f"auth_login_{name or 'default'}"):
                st.login(name or None)
    st.stop()


def _password(settings: Settings) -> None:
    """The RAGSCOPE_PASSWORD form; stops the page until the right password is given.

    Repeated failures lock the form for a doubling time, for this session, this client address and
    (after many failures from anywhere) everyone; while locked a password is not even compared.
    """
    st.title("ragscope")
    with st.form("auth_form"):
        given = st.text_input("Password", type="password", key="auth_password")
        submitted = st.form_submit_button("Sign in")
    if submitted:
        limiter, who = password_attempts(), _client_keys()
        wait = limiter.wait_s(who)
        if wait > 0:
            st.error(f"Too many failed attempts: try again in {math.ceil(wait)} s.")
        elif hmac.compare_digest(given.encode(), settings.password.value.encode()):
            limiter.succeeded(who)
            st.session_state["auth_ok"] = True
            st.rerun()
        else:
            wait = limiter.failed(who)
            st.error(
                "Wrong password." + (f" Too many failed attempts: try again in {math.ceil(wait)} s." if wait else "")
            )
    st.stop()


def _client_keys() -> list[str]:
    """This browser session, and the client's address when Streamlit knows it (not behind every proxy)."""
    session = st.session_state.setdefault("auth_session_key", uuid.uuid4().hex[:12])
    address = getattr(st.context, "ip_address", None)
    return [f"session {session}"] + ([f"address {address}"] if address else [])
