"""Safe display strings for the Ask page: answers and document text as escaped HTML, labels as inert Markdown.

Answers and documents are untrusted text (a document can say `<img src=x onerror=...>`, a model can be
talked into writing a Markdown image whose URL leaks data). Everything they contain is escaped here;
the only markup in the output is the markup these functions add. Kept out of the page so it can be
tested without Streamlit.
"""

from __future__ import annotations

import html
import re
from typing import Collection, Mapping, Sequence

from rag.answer.citations import parse_citations
from rag.answer.context import Piece

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~:$&])")
_BOX = "white-space:pre-wrap;line-height:1.6"


def md_escape(text: str) -> str:
    """Backslash-escape Markdown (and Streamlit's `:color[...]` directives) so text shows as typed."""
    return _MD_SPECIAL.sub(r"\\\1", " ".join(text.split()))


def answer_html(text: str, sent: Collection[str] | None, titles: Mapping[str, str] | None = None) -> str:
    """The answer with its citation markers as superscripts; markers naming nothing sent shown in red.

    Args:
        text: the answer as written (markers included).
        sent: the labels (and chunk ids) that were sent; any other cited id is invented. None while
            the answer is still streaming and unchecked: every marker is shown plainly.
        titles: label -> `source > heading`, shown on hover.
    """
    titles = titles or {}
    out: list[str] = []
    cursor = 0
    for marker in parse_citations(text):
        out.append(html.escape(text[cursor : marker.start]))
        for ref in marker.ids:
            if sent is None or ref in sent:
                title = html.escape(titles.get(ref, ref), quote=True)
                out.append(f'<sup title="{title}" style="color:#1c64f2;font-weight:600">[{html.escape(ref)}]</sup>')
            else:
                out.append(f'<sup title="not a source that was sent" style="color:#c81e1e;font-weight:600">[{html.escape(ref)}?]</sup>')
        cursor = marker.end
    out.append(html.escape(text[cursor:]))
    return f'<div style="{_BOX}">{"".join(out)}</div>'


def context_html(pieces: Sequence[Piece]) -> str:
    """Document text around a citation, cited spans highlighted."""
    body = "".join(
        f'<mark style="background:#fde68a">{html.escape(p.text)}</mark>' if p.cited else html.escape(p.text) for p in pieces
    )
    return f'<div style="{_BOX};font-size:0.9em;border-left:3px solid #d1d5db;padding-left:0.75em">{body}</div>'
