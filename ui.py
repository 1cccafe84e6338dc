"""Shared page setup: settings, the process-wide engine, the access gate and the sidebar.

Every page calls `page()` itself, because a first visit straight to a page URL can run that page
without app.py (Streamlit's `pages/` folder quirk); `setup()` is idempotent and cached.
"""

from __future__ import annotations

import hmac

import streamlit as st

from rag.components import Components, build_components
from rag.config import Settings
from rag.errors import RagError

APP_ICON = "🔎"


@st.cache_resource(show_spinner=False)
def get_settings() -> Settings:
    """Read once per process (environment + .streamlit/secrets.toml)."""
    return Settings.from_env()


@st.cache_resource(show_spinner="Opening the collection…")
def get_components(settings: Settings) -> Components:
    """One store and one set of models per process, shared by every session (the store is locked)."""
    return build_components(settings)


def setup() -> Components:
    """Settings, access check and engine; stops the page with a clear message when any fails."""
    try:
        settings = get_settings()
    except RagError as e:
        st.error(f"Configuration error: {e}")
        st.stop()
    _gate(settings)
    try:
        return get_components(settings)
    except RagError as e:
        st.error(str(e))
        st.stop()
        raise  # unreachable: st.stop raises


def page(title: str) -> Components:
    """Setup plus the page's title and the shared sidebar."""
    components = setup()
    st.title(title)
    sidebar(components)
    return components


def sidebar(components: Components) -> None:
    s = components.settings
    with st.sidebar:
        where = f"server {s.qdrant_url}" if s.qdrant_url else f"embedded, {s.data_dir}"
        st.caption(f"Collection **{s.collection}** · {where}")
        try:
            st.caption(f"{len(components.store.sources())} documents · {components.store.count()} chunks")
        except RagError as e:
            st.caption(f"Store unavailable: {e}")
        st.caption(f"Dense: {s.dense_model} · Sparse: {s.sparse_model}")
        st.caption(f"Answers: {'Anthropic ' + s.answer.anthropic_model if s.anthropic_api_key else 'offline (extractive)'}")
        if not s.password:
            st.caption("Access: open (no RAGSCOPE_PASSWORD set)")


def _gate(settings: Settings) -> None:
    """Password gate when RAGSCOPE_PASSWORD is configured; without it the sidebar says the app is open."""
    if not settings.password or st.session_state.get("auth_ok"):
        return
    st.title("ragscope")
    with st.form("auth_form"):
        given = st.text_input("Password", type="password", key="auth_password")
        submitted = st.form_submit_button("Sign in")
    if submitted:
        if hmac.compare_digest(given.encode(), settings.password.value.encode()):
            st.session_state["auth_ok"] = True
            st.rerun()
        st.error("Wrong password.")
    st.stop()
