"""ragscope: entry point. Shared setup, then the page registry."""

import streamlit as st

import ui.setup

st.set_page_config(page_title="ragscope", page_icon=ui.setup.APP_ICON, layout="wide")
ui.setup.setup()
navigation = st.navigation(
    [
        st.Page("pages/documents.py", title="Documents", icon="📄", default=True),
        st.Page("pages/inspector.py", title="Search inspector", icon="🔬"),
        st.Page("pages/ask.py", title="Ask · Eval", icon="💬"),
    ]
)
navigation.run()
