"""Markdown escaping: untrusted text (document text, names, model output) shown through st.markdown reads as written."""

from __future__ import annotations

import re

# Every ASCII character Markdown, GFM autolinks, LaTeX or Streamlit directives could give meaning to.
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~:$=&\"'^@/])")


def escape_markdown(text: str) -> str:
    """Backslash-escape every character Markdown or Streamlit could interpret: the text shows as written.

    The one escaper for untrusted text shown through st.markdown (document text, names, model output).
    """
    return _MD_SPECIAL.sub(r"\\\1", text)
