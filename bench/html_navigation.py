"""How many chunks of an HTML docs set hold site navigation text (issue 38, item 6), for the tree on PYTHONPATH.

Navigation is read from each page's markup, the same way for every tree measured: the text of the blocks a
site marks as chrome (nav/header/footer/aside, navigation roles, and the class names documentation
generators give their bars: DocBook's `navheader`/`navfooter`, Sphinx's `related`/`sphinxsidebar`/`footer`,
SQLite's `nosearch` menus), taken one link, cell or item at a time. A chunk holds navigation text when one
of its lines (heading lines aside) is made of nothing but such strings. Pages are loaded, passed through
the collection-level pass when the tree has one (rag.ingest.repeated), and chunked with product defaults.

    PYTHONPATH=<tree> nice -n 10 python bench/html_navigation.py /usr/share/doc/python3.11/html
"""

from __future__ import annotations

import argparse

import re
import sys
import time
from pathlib import Path

from bs4 import BeautifulSoup

from rag.ingest.chunker import chunk_document
from rag.ingest.loaders.document import load_document
from rag.settings.config import Settings

_CHROME_CLASS = re.compile(
    r"^(nav\w*|related|sphinxsidebar\w*|footer|header|breadcrumbs?|menu|submenu|mainmenu|nosearch|tagline|searchmenu)$"
)
_ROLES = {"navigation", "banner", "contentinfo", "complementary", "search"}
_LEAVES = ["a", "th", "td", "li", "p", "h3", "h4", "option", "span", "div"]


def navigation_strings(markup: bytes) -> set[str]:
    """The texts of the page's chrome, one leaf block at a time (at least 3 characters)."""
    soup = BeautifulSoup(markup, "lxml")
    chrome = [
        t
        for t in soup.find_all(True)
        if t.name in ("nav", "header", "footer", "aside")
        or (t.get("role") or "") in _ROLES
        or any(_CHROME_CLASS.match(c) for c in t.get("class") or [])
    ]
    strings = set()
    for block in chrome:
        for local in block.find_all("a", href=re.compile("^#")):
            local.decompose()  # a sidebar's contents of this page: its own headings, not navigation
        for leaf in [block, *block.find_all(_LEAVES)]:
            text = " ".join(leaf.get_text(" ").split())
            if len(text) >= 3 and not leaf.find(_LEAVES[:5]):
                strings.add(text)
            for img in leaf.find_all("img", alt=True):
                if len(img["alt"].strip()) >= 2:
                    strings.add(img["alt"].strip())
    return strings


def is_navigation_line(line: str, strings: set[str]) -> bool:
    """Whether every cell of the line (the line itself, or a table row's cells) is navigation strings
    separated by spaces or bars, and nothing else."""
    body = " ".join(line.split()).lstrip("-").strip()  # no-break spaces read as spaces, as in `strings`
    if not body or body.startswith("#") or set(body) <= set("|-: "):
        return False
    cells = [c.strip() for c in body.strip("|").split("|") if c.strip()] if body.startswith("|") else [body]
    return len(re.sub(r"[\W_]", "", body)) >= 3 and all(_only_navigation(cell, strings) for cell in cells)


def _only_navigation(cell: str, strings: set[str]) -> bool:
    rest = f" {cell} "
    for s in sorted(strings, key=len, reverse=True):
        if f" {s} " in rest:
            rest = rest.replace(f" {s} ", "  ")
    return not re.sub(r"[\W_]", "", rest)


def main(root: str, pattern: str = "**/*.html") -> None:
    files = sorted(p for p in Path(root).glob(pattern) if p.is_file() and "genindex" not in p.name)
    files = [p for p in files if not any(part.startswith("_") for part in p.relative_to(root).parts)]
    started = time.perf_counter()
    docs, strings = [], {}
    for path in files:
        data = path.read_bytes()
        try:
            docs.append(load_document(str(path.relative_to(root)), data))
        except Exception as e:  # noqa: BLE001 - a page the loader refuses is reported, not measured
            print(f"refused {path}: {e}", file=sys.stderr)
            continue
        strings[docs[-1].source] = navigation_strings(data)
    try:
        from rag.ingest.repeated import SiteChrome
    except ImportError:  # a tree before the run-wide chrome, or before the collection-level pass
        try:
            from rag.ingest.repeated import drop_repeated
        except ImportError:
            drop_repeated = None
    else:
        drop_repeated = SiteChrome().drop
    if drop_repeated is not None:
        docs = drop_repeated(docs)
    config = Settings().chunk
    chunks = held = pages_with = 0
    examples: dict[str, int] = {}
    for doc in docs:
        found = False
        for chunk in chunk_document(doc, config):
            chunks += 1
            lines = [ln for ln in chunk.text.split("\n") if is_navigation_line(ln, strings[doc.source])]
            if lines:
                held += 1
                found = True
                for ln in lines[:1]:
                    examples[ln[:70]] = examples.get(ln[:70], 0) + 1
        pages_with += found
    print(
        f"{root}: {len(docs)} pages, {chunks} chunks, {held} hold navigation text "
        f"({pages_with} pages), {time.perf_counter() - started:.0f} s"
    )
    for line, n in sorted(examples.items(), key=lambda kv: -kv[1])[:8]:
        print(f"  {n:4d}  {line!r}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Chunks holding site navigation text in a folder of HTML pages.")
    parser.add_argument("root", help="the folder of HTML pages")
    parser.add_argument("pattern", nargs="?", default="**/*.html", help="which files (a glob under root)")
    args = parser.parse_args()
    main(args.root, args.pattern)
