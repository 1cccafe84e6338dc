import streamlit as st

import ui

components = ui.page("Documents")
st.info("Coming soon.")
