"""Definition lists in Markdown-shaped text: how a loader writes one item, and how the chunker finds them.

Reference manuals list their options, commands and examples as definition lists (HTML `<dl>`, DOCX
"List Heading" / "List Contents", Pandoc and MkDocs `def_list`). Flattened into paragraphs, a chunk
could start with an option's description while the option's name ended the chunk before. Every
format writes an item the way Pandoc and MkDocs do, the term on its own line(s) and each description
block after it, the first starting with ": ", so one reader here finds items in any format:

    -u, --include-untracked
    : All untracked files are also stashed and then cleaned up.

A blank line ends the item unless the next line starts with ":" or is indented (a continued
description, as Pandoc reads it); blank lines inside a code fence never end it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from rag.text.headings import ATX_HEADING, stored_title

_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})")
_DESCRIPTION = re.compile(r"^:(?:[ \t]|$)")
_CONTINUED = re.compile(r"^(?: {2,}|\t)\S")
# A term is one short line (or a few: several `<dt>` of one item) that starts no other block.
_NOT_TERM = re.compile(r"^(?:[ \t]|:|\||[-+*>][ \t]|\d{1,9}[.)][ \t])")
_MAX_TERM_LINES = 4
_MAX_TERM_CHARS = 200


@dataclass(frozen=True)
class DefinitionItem:
    """One term and its description: text[start:end], the term as a heading title stores it."""

    term: str
    start: int
    end: int


def definition_item(terms: Sequence[str], blocks: Sequence[str]) -> str:
    """One item as the loaders write it: the terms a line each, then the description's blocks, no blank line
    between (so the paragraph splitter cannot part them). Prose blocks start with ": "; code fences and
    tables are written as they are, after a lone ":" when the description starts with one.

    Returns the terms as one paragraph when the item has no description.
    """
    terms = [" ".join(t.split()) for t in terms if t.strip()]
    lines: list[str] = list(terms)
    for i, block in enumerate(b.strip("\n") for b in blocks if b.strip()):
        if block.startswith(("```", "~~~", "|")):
            if i == 0:
                lines.append(":")
            lines.append(block)
        else:
            lines.append(": " + " ".join(block.split()))
    if len(lines) == len(terms):
        return " ".join(terms)
    return "\n".join(lines)


def definition_items(text: str, start: int = 0, end: int | None = None) -> list[DefinitionItem]:
    """The definition items inside text[start:end], in order."""
    end = len(text) if end is None else end
    lines: list[tuple[int, str]] = []
    pos = start
    for line in text[start:end].split("\n"):
        lines.append((pos, line))
        pos += len(line) + 1
    items: list[DefinitionItem] = []
    fence: str | None = None
    i = 0
    while i < len(lines):
        at, line = lines[i]
        fence_match = _FENCE.match(line)
        if fence is not None or fence_match:
            fence = _fence_state(fence, fence_match)
            i += 1
            continue
        after_blank = i == 0 or not lines[i - 1][1].strip()
        first = _description_line(lines, i) if after_blank and _is_term(line) else None
        if first is None:
            i += 1
            continue
        last = _item_end(lines, first)
        term = ", ".join(_term_title(t) for _, t in lines[i:first])
        item_end = lines[last][0] + len(lines[last][1].rstrip())
        items.append(DefinitionItem(term, at, min(item_end, end)))
        i = last + 1
    return items


def _fence_state(fence: str | None, match: re.Match[str] | None) -> str | None:
    if match is None:
        return fence
    marker = match.group(1)
    if fence is None:
        return marker[0] * 3
    return None if marker.startswith(fence) else fence


def _is_term(line: str) -> bool:
    short = bool(line.strip()) and len(line) <= _MAX_TERM_CHARS
    return short and not _NOT_TERM.match(line) and not ATX_HEADING.match(line)


def _description_line(lines: list[tuple[int, str]], i: int) -> int | None:
    """The index of the ": " line that makes lines[i] (and the few after it) a term, or None."""
    for j in range(i + 1, min(i + 1 + _MAX_TERM_LINES, len(lines))):
        line = lines[j][1]
        if _DESCRIPTION.match(line):
            return j
        if not _is_term(line):
            return None
    return None


def _item_end(lines: list[tuple[int, str]], first: int) -> int:
    """The index of the item's last line: the description goes on to a blank line outside a fence that the
    next line does not continue (": " or indented)."""
    fence: str | None = None
    last = first
    j = first
    while j < len(lines):
        line = lines[j][1]
        fence_match = _FENCE.match(line)
        if fence is not None or fence_match:
            fence = _fence_state(fence, fence_match)
            last = j
        elif not line.strip():
            nxt = next((k for k in range(j + 1, len(lines)) if lines[k][1].strip()), None)
            if nxt is None or not (_DESCRIPTION.match(lines[nxt][1]) or _CONTINUED.match(lines[nxt][1])):
                return last
            j = nxt
            continue
        else:
            last = j
        j += 1
    return last


def _term_title(term: str) -> str:
    """A term as a heading title: no code backticks or emphasis markers, whitespace folded."""
    return stored_title(" ".join(re.sub(r"`+|\*\*|__", "", term).split()))
