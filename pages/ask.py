import streamlit as st

import ui

components = ui.page("Ask")
st.info("Coming soon.")
