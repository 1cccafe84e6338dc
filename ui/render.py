"""Safe display strings for the Ask page: answers and document text as escaped HTML, labels as inert Markdown.

Answers and documents are untrusted text (a document can say `<img src=x onerror=...>`, a model can be
talked into writing a Markdown image whose URL leaks data). Everything they contain is escaped here;
the only markup in the output is the markup these functions add: citation links, `<code>` around an
answer's backticked spans, the cited-source panels, and `<pre>` around a document's fenced code
(`fence_parts` splits chunk text into code and prose, for every place chunk text is shown). Kept out of
the page so it can be tested without Streamlit.

Citation clicks need no script (st.html runs none): a marker is a link to `#<anchor>-S1`, an element
inside that source's closed `<details>`; navigating to a fragment inside a closed `<details>` opens it
(HTML's "ancestor details revealing" step, in Chromium since 97) and scrolls to it.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from typing import Collection, Mapping, Sequence

from rag.answer.citations import parse_citations
from rag.retrieval.context import Piece
from rag.text.markdown import escape_markdown

_BOX = "white-space:pre-wrap;line-height:1.6"
_PRE_STYLE = (
    "font-family:monospace;font-size:0.9em;background:rgba(128,128,128,0.12);padding:0.5em 0.75em;"
    "border-radius:4px;margin:0.4em 0;white-space:pre;overflow-x:auto"
)
# A fence line as the chunker reads one (rag.ingest.chunker): indented or not, its info string after it.
_FENCE_LINE = re.compile(r"^[ \t]*(`{3,}|~{3,})[ \t]*(\S*)")
# What of an info string is passed on as a highlighter's language: a plain name ("python", "c++"), else none.
_LANGUAGE = re.compile(r"[A-Za-z0-9_+#.-]{1,30}")
_CODE = re.compile(r"`([^`\n]+)`")
_CODE_STYLE = (
    "font-family:monospace;font-size:0.92em;background:rgba(128,128,128,0.15);padding:0.05em 0.3em;border-radius:3px"
)
ANCHOR = "ask-source"  # the ids of the cited-source panels: ask-source-S1, ...


def md_escape(text: str) -> str:
    """Backslash-escape Markdown (and Streamlit's `:color[...]` directives) so text shows as typed, as text:
    no bare URL or address in it becomes a link; on one line."""
    return escape_markdown(" ".join(text.split()))


def inline_html(text: str) -> str:
    """Escaped text whose `backticked` spans become <code> (answers use them for headers, keys, commands)."""
    out: list[str] = []
    cursor = 0
    for m in _CODE.finditer(text):
        out.append(html.escape(text[cursor : m.start()]))
        out.append(f'<code style="{_CODE_STYLE}">{html.escape(m.group(1))}</code>')
        cursor = m.end()
    out.append(html.escape(text[cursor:]))
    return "".join(out)


def answer_html(
    text: str, sent: Collection[str] | None, titles: Mapping[str, str] | None = None, linked: Collection[str] = ()
) -> str:
    """The answer with its citation markers as superscripts; markers naming nothing sent shown in red.

    Args:
        text: the answer as written (markers included).
        sent: the labels (and chunk ids) that were sent; any other cited id is invented. None while
            the answer is still streaming and unchecked: every marker is shown plainly.
        titles: label -> `source > heading`, shown on hover.
        linked: labels whose marker links to its panel in `sources_html` (the cited ones on screen).
    """
    titles = titles or {}
    out: list[str] = []
    cursor = 0
    for marker in parse_citations(text):
        out.append(inline_html(text[cursor : marker.start]))
        for ref in marker.ids:
            if sent is None or ref in sent:
                title = html.escape(titles.get(ref, ref), quote=True)
                sup = f'<sup title="{title}" style="color:#1c64f2;font-weight:600">[{html.escape(ref)}]</sup>'
                out.append(
                    f'<a href="#{ANCHOR}-{html.escape(ref, quote=True)}" style="text-decoration:none">{sup}</a>'
                    if ref in linked
                    else sup
                )
            else:
                out.append(
                    '<sup title="not a source that was sent" style="color:#c81e1e;font-weight:600">'
                    f"[{html.escape(ref)}?]</sup>"
                )
        cursor = marker.end
    out.append(inline_html(text[cursor:]))
    return f'<div style="{_BOX}">{"".join(out)}</div>'


@dataclass(frozen=True)
class SourcePanel:
    """One cited source as the Ask page shows it: its label, where it is, and its text around the citation."""

    label: str
    title: str  # "billing/plans.md › Billing > Refunds · page 2"
    pieces: Sequence[Piece] | None  # None: the chunk is no longer stored
    caption: str = ""


def sources_html(panels: Sequence[SourcePanel]) -> str:
    """Every cited source as a closed <details>; a citation link (`#ask-source-S1`) opens and scrolls to it."""
    blocks = []
    for p in panels:
        label = html.escape(p.label, quote=True)
        body = (
            context_html(p.pieces)
            if p.pieces is not None
            else "<p>This chunk is no longer stored (its document was deleted or re-ingested).</p>"
        )
        caption = (
            f'<div style="font-size:0.8em;opacity:0.7;margin-top:0.4em">{html.escape(p.caption)}</div>'
            if p.caption
            else ""
        )
        blocks.append(
            '<details style="border:1px solid rgba(128,128,128,0.35);border-radius:6px;padding:0.4em 0.8em;'
            'margin:0.4em 0">'
            f'<summary style="cursor:pointer"><b>[{html.escape(p.label)}]</b> {html.escape(p.title)}</summary>'
            f'<div id="{ANCHOR}-{label}" style="scroll-margin-top:4em">{body}{caption}</div></details>'
        )
    return "".join(blocks)


def context_html(pieces: Sequence[Piece]) -> str:
    """Document text around a citation, cited spans highlighted, fenced code as a `<pre>` block (its fence
    lines dropped), all of it escaped."""
    text = "".join(p.text for p in pieces)
    bounds, at = [], 0
    for p in pieces:
        bounds.append((at, at + len(p.text), p.cited))
        at += len(p.text)
    out: list[str] = []
    for part in fence_parts(text):
        runs = "".join(
            f'<mark style="background:#fde68a">{html.escape(text[a:b])}</mark>' if cited else html.escape(text[a:b])
            for a, b, cited in ((max(s, part.start), min(e, part.end), c) for s, e, c in bounds)
            if a < b
        )
        out.append(f'<pre style="{_PRE_STYLE}"><code>{runs}</code></pre>' if part.code else runs)
    body = "".join(out)
    return f'<div style="{_BOX};font-size:0.9em;border-left:3px solid #d1d5db;padding-left:0.75em">{body}</div>'


@dataclass(frozen=True)
class TextPart:
    """text[start:end] of a chunk: a fenced code block's content (`code`, its fence's `language`) or prose."""

    start: int
    end: int
    code: bool = False
    language: str = ""


_FENCE_MARK = re.compile(r"(?:^|(?<=\s))(?:`{3,}|~{3,})[A-Za-z0-9_+#.-]{0,30}(?=\s|$)")


def without_fences(text: str) -> str:
    """A sentence lifted from a chunk, its fence lines (```python, ```) left out and its lines joined: a quote of
    one sentence shows no raw fences (issue 38, item 11); the chunk itself shows its code through fence_parts."""
    return " ".join(_FENCE_MARK.sub(" ", text).split())


def fence_parts(text: str) -> list[TextPart]:
    """`text` cut into prose and fenced code, fence lines left out, blank lines around the prose trimmed.

    A fence closes at a line of at least as many of its own marker characters, as the chunker reads it; one
    left open (a chunk cut inside a long listing) runs to the end.
    """
    parts: list[TextPart] = []
    fence: tuple[str, int, str] | None = None  # (marker, where the code starts, language)
    prose_start = pos = 0
    for line in text.split("\n"):
        line_end = pos + len(line)
        nxt = min(line_end + 1, len(text))
        match = _FENCE_LINE.match(line)
        if fence is None and match:
            _add_prose(text, prose_start, pos, parts)
            fence = (match.group(1), nxt, match.group(2) if _LANGUAGE.fullmatch(match.group(2)) else "")
        elif fence is not None and match and match.group(1).startswith(fence[0]) and not match.group(2):
            if pos - 1 > fence[1]:  # an empty block shows nothing
                parts.append(TextPart(fence[1], pos - 1, True, fence[2]))
            fence, prose_start = None, nxt
        pos = line_end + 1
    if fence is not None:
        parts.append(TextPart(fence[1], len(text), True, fence[2]))
    else:
        _add_prose(text, prose_start, len(text), parts)
    return parts


def _add_prose(text: str, start: int, end: int, parts: list[TextPart]) -> None:
    while start < end and text[start] == "\n":
        start += 1
    while end > start and text[end - 1] in "\n ":
        end -= 1
    if end > start:
        parts.append(TextPart(start, end))
