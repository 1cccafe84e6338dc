"""ragscope: entry point. Shared setup, then the page registry."""

import streamlit as st

import ui.setup

st.set_page_config(page_title="ragscope", page_icon=ui.setup.APP_ICON, layout="wide")
ui.setup.setup(report=False)
# Every page has a stable URL path. The default page is served at "/" and Streamlit gives it no other
# path, so a hidden second entry serves the same file at /documents (a bookmark or a link from a
# README), which is also where st.page_link("pages/documents.py") goes.
# The Ask page's demo view shows only the answer: no page list, no sidebar (ui.setup.page(bare=True)).
navigation = st.navigation(
    [
        st.Page("pages/documents.py", title="Documents", icon="📄", url_path="home", default=True),
        st.Page("pages/inspector.py", title="Search inspector", icon="🔬", url_path="inspector"),
        st.Page("pages/ask.py", title="Ask · Eval", icon="💬", url_path="ask"),
        st.Page("pages/documents.py", title="Documents", icon="📄", url_path="documents", visibility="hidden"),
    ],
    position="hidden" if st.session_state.get(ui.setup.DEMO) else "sidebar",
)
navigation.run()
