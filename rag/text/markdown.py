"""Markdown escaping: untrusted text (document text, names, model output) shown through st.markdown reads as written."""

from __future__ import annotations

import re

# Every ASCII character Markdown, GFM autolinks, LaTeX or Streamlit directives could give meaning to.
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~:$=&\"'^@/])")
# Streamlit's Markdown (remark-gfm) finds bare URLs and e-mail addresses in the text left once escapes are
# read, so "http://", "www." and "name@host" become links through any backslash. A word joiner (U+2060:
# invisible, zero-width) before the scheme or "www." and after "@" leaves no autolink a place to start.
_AUTOLINK = re.compile(r"(?i)(?=https?:|www\.)|(?<=@)")
WORD_JOINER = "\u2060"


def escape_markdown(text: str) -> str:
    """Backslash-escape every character Markdown or Streamlit could interpret: the text shows as written.

    The one escaper for untrusted text shown through st.markdown (document text, names, model output):
    no bare URL or address in it becomes a link either.
    """
    return _MD_SPECIAL.sub(r"\\\1", _AUTOLINK.sub(WORD_JOINER, text))
