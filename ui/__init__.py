"""Front-end helpers the pages share: setup and sidebar, the retrieval form, and the Eval view.

Streamlit code lives here and in pages/ only; `rag/` never imports it.

The app never downloads a model: every page and app.py import this package before any model library,
so the Hugging Face libraries start offline (as the CLI does). A name that is not on disk then fails
instead of reaching the hub.
"""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
