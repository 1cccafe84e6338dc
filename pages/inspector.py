import streamlit as st

import ui

components = ui.page("Inspector")
st.info("Coming soon.")
