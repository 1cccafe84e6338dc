"""Front-end helpers the pages share: setup and sidebar, the retrieval form, and the Eval view.

Streamlit code lives here and in pages/ only; `rag/` never imports it."""
