"""HTML to Markdown-shaped text: the page's main content as a reader sees it, nothing else.

What a browser does not show must not become document text, because whatever is document text can
be quoted in an answer: comments (`<!-- staff price is 1 euro -->`), the doctype, `<?xml ...?>`
processing instructions, script/style/template/noscript bodies, and elements the page hides by an
attribute, its inline style or its style sheets (rag.ingest.loaders.hidden); how much hidden text was
dropped is noted with the document, so a person sees that the file carried some. Page
chrome is not content either: navigation, site headers and footers, sidebars, breadcrumbs and tables
of contents repeat on every page and would match every question. When the page marks its content
(`<main>`, `role="main"`, `<article>`) only that is read.
"""

from __future__ import annotations

import re
import warnings

from bs4 import BeautifulSoup, NavigableString, Tag, XMLParsedAsHTMLWarning
from bs4.element import PreformattedString, Script, Stylesheet, TemplateString

from rag.ingest.loaders.hidden import HiddenTest
from rag.ingest.loaders.parsed import Parsed
from rag.ingest.loaders.tables import rows_to_markdown
from rag.ingest.loaders.text import decode_text
from rag.text.definitions import definition_item
from rag.text.words import plural

_NEVER_TEXT = [
    "script",
    "style",
    "noscript",
    "template",
    "iframe",
    "svg",
    "head",
    "title",
    "object",
    "embed",
    "canvas",
    "math",
]
_CHROME_TAGS = ["nav", "aside", "footer", "header", "menu"]
_CHROME_ROLES = {"navigation", "banner", "contentinfo", "complementary", "menu", "menubar", "doc-toc", "search"}
# class/id words that mark page chrome; matched as whole words of `toc-list`, `site_nav`, `sidebar`.
_CHROME_NAMES = re.compile(
    r"(?:^|[-_\s])(toc|nav|navbar|navigation|sidebar|side-bar|breadcrumbs?|menu|menubar|table-of-contents|skip-link)(?:[-_\s]|$)",
    re.I,
)
_HEADINGS = ["h1", "h2", "h3", "h4", "h5", "h6"]
_BLOCK_TAGS = {"p", "li", "pre", "blockquote", "dt", "dd", "figcaption", "caption", "address"}
_STRUCTURE = [*_BLOCK_TAGS, "table", *_HEADINGS, "div", "section", "article", "main", "ul", "ol", "dl"]


def html_to_markdown(markup: str) -> Parsed:
    """The main content of an HTML page as Markdown-shaped text, and the page title.

    Args:
        markup: the decoded HTML.

    Returns:
        The text (headings from h1-h6 as `#` lines, tables as pipe tables, lists as `- ` items), the
        title, and a note of how many characters of hidden text were dropped, when any were.
    """
    with warnings.catch_warnings():
        # XHTML (`<?xml ...?>` first) is still read as HTML, on purpose: one parser for every page.
        warnings.simplefilter("ignore", XMLParsedAsHTMLWarning)
        soup = BeautifulSoup(markup, "html.parser")
    title = soup.title.get_text(strip=True) if soup.title else ""
    hidden = HiddenTest(soup)  # reads the <style> sheets, so before their bodies go
    for node in soup.find_all(string=lambda s: isinstance(s, (PreformattedString, Script, Stylesheet, TemplateString))):
        node.extract()  # comments, doctype, <?...?>, CDATA, declarations, script and style bodies
    for tag in soup.find_all(_NEVER_TEXT):
        tag.decompose()
    dropped = 0
    for tag in soup.find_all(hidden):
        if not tag.decomposed:  # not inside a hidden element already dropped
            dropped += len(" ".join(tag.get_text(" ").split()))
            tag.decompose()
    roots = _content_roots(soup)
    blocks: list[str] = []
    for root in roots:
        _drop_chrome(root)
        _blocks(root, blocks)
    notes = (f"dropped {plural(dropped, 'character')} of hidden text",) if dropped else ()
    return Parsed("\n\n".join(blocks), (), title, notes)


def _content_roots(soup: BeautifulSoup) -> list[Tag]:
    """`<main>` (or role=main) when the page has one, else its articles, else the body."""
    main = soup.find("main") or soup.find(attrs={"role": "main"})
    if main is not None:
        return [main]
    articles = [a for a in soup.find_all("article") if a.find_parent("article") is None]
    return articles or [soup.body or soup]


def _drop_chrome(root: Tag) -> None:
    """Remove navigation, site header/footer, sidebars, breadcrumbs and tables of contents under `root`.

    A `<header>` inside the content usually holds the article's own title, so its headings stay.
    """
    for tag in root.find_all(True):
        if tag.decomposed:
            continue
        role = (tag.get("role") or "").lower()
        names = " ".join([*(tag.get("class") or []), tag.get("id") or ""])
        if tag.name in _CHROME_TAGS or role in _CHROME_ROLES or _CHROME_NAMES.search(names):
            headings = tag.find_all(_HEADINGS) if tag.name == "header" else []
            if headings:
                tag.replace_with(*headings)
            else:
                tag.decompose()


def _blocks(node: Tag, blocks: list[str]) -> None:
    loose: list[str] = []

    def flush() -> None:
        text = " ".join("".join(loose).split())
        if text:
            blocks.append(text)
        loose.clear()

    for child in node.children:
        if isinstance(child, NavigableString):
            loose.append(str(child))
            continue
        if not isinstance(child, Tag):
            continue
        name = child.name.lower()
        if name in _HEADINGS:
            flush()
            text = " ".join(child.get_text(" ").split())
            if text:
                blocks.append("#" * int(name[1]) + " " + text)
        elif name == "table":
            flush()
            blocks.append(
                rows_to_markdown(
                    [[c.get_text(" ", strip=True) for c in tr.find_all(["td", "th"])] for tr in child.find_all("tr")]
                )
            )
        elif name == "pre":
            flush()
            blocks.append("```\n" + child.get_text().strip("\n") + "\n```")
        elif name == "dl":
            flush()
            blocks += _definition_list(child)
        elif name in _BLOCK_TAGS and not child.find([*_HEADINGS, "table"]):
            flush()
            text = " ".join(_inline(child).split())
            if text:
                blocks.append(("- " if name == "li" else "") + text)
        elif name == "br":
            loose.append("\n")
        elif child.find(_STRUCTURE):
            flush()
            _blocks(child, blocks)
        elif name in {"div", "section", "article", "main", "ul", "ol", "dl"}:
            flush()
            text = " ".join(_inline(child).split())
            if text:
                blocks.append(text)
        else:
            loose.append(_inline(child))
    flush()


def _definition_list(dl: Tag) -> list[str]:
    """Each term (its `<dt>`s) with its description (`<dd>`s, whose paragraphs and code are read as any block)
    as one item (rag.text.definitions), so no chunk starts with a description whose option ended the last."""
    items: list[str] = []
    terms: list[str] = []
    description: list[str] = []

    def close() -> None:
        if terms or description:
            items.append(definition_item(terms, description))
        terms.clear()
        description.clear()

    # HTML allows a <div> around each term and description group.
    children = [c for c in dl.children if isinstance(c, Tag)]
    children = [g for c in children for g in (c.find_all(["dt", "dd"], recursive=False) if c.name == "div" else [c])]
    for child in children:
        if child.name == "dt":
            if description:
                close()
            terms.append(" ".join(_inline(child).split()))
        elif child.name == "dd":
            _blocks(child, description)
    close()
    return [i for i in items if i]


def _inline(node: Tag) -> str:
    """A block's text as it reads: inline code in backticks (as Markdown writes it, so a full stop inside
    `git add .` ends no sentence), inline elements joined without an added space (no "git clean ." for
    `<code>git clean</code>.`), nested blocks kept apart by one."""
    out: list[str] = []
    for child in node.children:
        if isinstance(child, NavigableString):
            out.append(str(child))
        elif isinstance(child, Tag):
            name = child.name.lower()
            if name in ("code", "kbd", "samp", "tt") and child.get_text().strip():
                out.append(f"`{child.get_text()}`")
            elif name == "br":
                out.append("\n")
            elif name in _BLOCK_TAGS or name in {"div", "ul", "ol", "dl", "p", "section"}:
                out.append(" " + _inline(child) + " ")
            else:
                out.append(_inline(child))
    return "".join(out)


def parse_html(data: bytes, source: str) -> Parsed:
    return html_to_markdown(decode_text(data, source))
