"""A code block written as a Markdown fence that its own content cannot close.

The chunker (rag.ingest.chunker) ends a fence at any line that starts with three of its marker
characters, indented or not, so a listing that holds a ``` line (a Markdown example inside an
AsciiDoc listing, a docstring showing Markdown) gets a `~~~` fence instead.
"""

from __future__ import annotations

import re

_BACKTICK_FENCE = re.compile(r"^[ \t]*`{3,}", re.M)


def fenced(code: str, language: str = "") -> str:
    """`code` between fence lines, with `language` on the opening one."""
    marker = "~~~" if _BACKTICK_FENCE.search(code) else "```"
    return f"{marker}{language}\n{code.strip(chr(10))}\n{marker}"
