"""A site's chrome that no page marks as chrome: the blocks of text repeated on most pages of one ingest.

A page's own markup finds most navigation (rag.ingest.loaders.html drops nav/header/footer, chrome roles
and named bars), but a site can print its tagline, menu or copyright line in a plain `<div>`. Such a block
says nothing about the page it is on and would match every question, so it is dropped when the same block
(one paragraph of the loaded text, not a heading, not inside code) is on at least half of the HTML pages
of the batch and on at least MIN_PAGES of them. Content that several pages share ("Availability: not
WASI.", "See also") is on far fewer than half of a docs set's pages (bench/README.md, html_navigation.py).
The batches of one run share a `SiteChrome`, so what one batch shows to be chrome also leaves a later batch
too small to show it (the CLI reads a folder 32 files at a time); and a batch is read beside a few stored pages
of its folders (rag.ingest.neighbours), so a page re-ingested alone still loses its site's chrome.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from rag.types import Document

MIN_PAGES = 4
SHARE = 0.5
_BREAK = re.compile(r"\n{2,}")


@dataclass
class SiteChrome:
    """The blocks found to be a site's chrome so far in one run; its batches share one."""

    blocks: set[str] = field(default_factory=set)

    def drop(self, docs: list[Document], neighbours: Sequence[Document] = ()) -> list[Document]:
        """`docs` without the blocks repeated across most of their HTML pages (alone, or with the stored
        `neighbours`, which are only evidence), nor those earlier batches showed to be chrome (other
        documents as given)."""
        self.blocks |= _repeated(docs) | (_repeated([*docs, *neighbours]) if neighbours else set())
        if not self.blocks:
            return docs
        return [_without(d, self.blocks) if d.kind == "html" else d for d in docs]


def _repeated(docs: list[Document]) -> set[str]:
    pages = [d for d in docs if d.kind == "html"]
    if len(pages) < MIN_PAGES:
        return set()
    counts = Counter(b for d in pages for b in {text for _, _, text in _blocks(d.text) if _candidate(text)})
    floor = max(MIN_PAGES, SHARE * len(pages))
    return {b for b, n in counts.items() if n >= floor}


def _blocks(text: str) -> list[tuple[int, int, str]]:
    """(start, end, text) of each paragraph; a paragraph inside a code fence is returned as ``` (never dropped)."""
    out = []
    start = 0
    fenced = False
    for match in [*_BREAK.finditer(text), None]:
        end = match.start() if match else len(text)
        block = text[start:end]
        inside = fenced
        fenced ^= sum(line.startswith("```") for line in block.split("\n")) % 2 == 1
        out.append((start, end, "```" if inside or fenced or "```" in block else block))
        start = match.end() if match else end
    return out


def _candidate(block: str) -> bool:
    return bool(block.strip()) and not block.startswith(("#", "```"))


def _without(doc: Document, repeated: set[str]) -> Document:
    """The document without the repeated blocks; its hidden runs moved to their places in the new text."""
    kept: list[tuple[int, int]] = [(s, e) for s, e, b in _blocks(doc.text) if b not in repeated]
    if len(kept) == len(_blocks(doc.text)) or not kept:
        return doc
    text, moved = "", []
    for start, end in kept:
        if text:
            text += "\n\n"
        moved += [(len(text) + at - start, run) for at, run in doc.hidden if start <= at <= end]
        text += doc.text[start:end]
    return replace(doc, text=text, hidden=tuple(moved))
