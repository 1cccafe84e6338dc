"""Heading syntax and heading matching: how a title is stored, and when a heading someone wrote names a section.

The chunker stores each title without its "#" markers or trailing attribute list; gold, the inspector's
tracking and the section filters all ask `heading_names`, so a heading that counts as gold is one the
inspector can track. How a heading is compared as a reader sees it: rag.text.fold.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rag.text.fold import TAG, match_key, rendered

# An ATX heading line: "## Title ##" (group 1 the markers, group 2 the title).
ATX_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$")
# MkDocs/Pandoc attribute lists after a heading: "## Caveat { #caveat }" is titled "Caveat".
_HEADING_ATTRS = re.compile(r"\s*\{:?\s*[#.][^{}]*\}\s*$")


def stored_title(name: str) -> str:
    """A heading's text (the part after its "#" markers, or a setext title) as stored: no attribute list."""
    return _HEADING_ATTRS.sub("", name).strip()


def heading_title(line: str) -> str:
    """A heading line or title as the chunker stores its title: no "#" markers, no trailing attribute list.

    Gold written from the Markdown source ("## Caveat { #caveat }") is cleaned with it.
    """
    heading = ATX_HEADING.match(line.strip())
    return stored_title(heading.group(2) if heading else line)


def heading_parts(heading: str) -> tuple[str, ...]:
    """A heading path as comparable parts: split on ">", each as rendered and as the chunker stores titles
    (a copied "## Caveat { #caveat }" is "Caveat"), trimmed, case- and whitespace-folded."""
    parts = TAG.sub("", heading).split(">")  # tags first: their own ">" is not a path separator
    return tuple(p for p in (match_key(rendered(heading_title(part))) for part in parts) if p)


def heading_names(path: Sequence[str], heading: str) -> bool:
    """True when `heading`, as a person writes it, names the section with heading path `path` or one it is
    inside: its folded parts are consecutive titles of `path`. Titles are folded one by one, so a title
    holding ">" ("a > b") still matches."""
    want = " > ".join(heading_parts(heading))
    if not want:
        return True  # no heading: the whole document
    titles = [" > ".join(heading_parts(t)) for t in path]
    return any(" > ".join(titles[i:j]) == want for i in range(len(titles)) for j in range(i + 1, len(titles) + 1))
