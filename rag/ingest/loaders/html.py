"""HTML to Markdown-shaped text: the page's main content as a reader sees it, nothing else.

What a browser does not show must not become document text, because whatever is document text can
be quoted in an answer: comments (`<!-- staff price is 1 euro -->`), the doctype, `<?xml ...?>`
processing instructions, script/style/template/noscript bodies, and text the page's styles keep out of
sight (rag.ingest.loaders.hidden: its `<style>` sheets, the linked ones the caller can read, inline
styles, inheritance); how much hidden text was dropped is noted with the document, so a person sees that
the file carried some. Page chrome is not content either: navigation, site headers and footers,
sidebars, breadcrumbs and tables of contents repeat on every page and would match every question. They
are known by their element or role; a class or id name (`menu`, `sidebar`) marks chrome only on a block
that is mostly links, so a restaurant's `<section id="menu">` of dishes is read. When the page marks its
content (`<main>`, `role="main"`, `<article>`) only that is read. What a click shows (`<details>`, tab
panels, blocks a control toggles) is content, each under its label as a heading (rag.ingest.loaders.toggled).

The page is parsed by lxml's HTML parser, which closes elements where a browser does (`<p>` before a
`<div>`, an open `<li>` at the next one): html.parser nested every unclosed `<li>` inside the last, so a
long list took quadratic time, then overflowed the stack, and a hidden `<p>` swallowed the visible
blocks after it. A page's declared encoding (`<meta charset>`, the XML declaration) decodes it.
"""

from __future__ import annotations

import re
import warnings
from typing import Callable

from bs4 import BeautifulSoup, NavigableString, Tag, XMLParsedAsHTMLWarning
from bs4.dammit import EncodingDetector
from bs4.element import PreformattedString, Script, Stylesheet, TemplateString

from rag.ingest.loaders.css import data_url_sheet
from rag.ingest.loaders.hidden import HiddenText
from rag.ingest.loaders.parsed import Parsed
from rag.ingest.loaders.tables import rows_to_markdown
from rag.ingest.loaders.text import decode_text
from rag.ingest.loaders.toggled import reveal_toggled
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
    "select",  # form controls: a search box's options and a "show" button are no part of what the page says
    "button",
]
_CHROME_TAGS = ["nav", "aside", "footer", "header", "menu"]
_CHROME_ROLES = {"navigation", "banner", "contentinfo", "complementary", "menu", "menubar", "doc-toc", "search"}
# class/id words that mark page chrome; matched as whole words of `toc-list`, `site_nav`, `sidebar`.
_CHROME_NAMES = re.compile(
    r"(?:^|[-_\s])(toc|nav|navbar|navigation|sidebar|side-bar|breadcrumbs?|menu|menubar|table-of-contents|skip-link)(?:[-_\s]|$)",
    re.I,
)
# A block named like chrome is chrome when at least this share of its text is link text.
_CHROME_LINK_SHARE = 0.5
# The bars documentation generators name as such (DocBook's previous/next tables, whose links are images
# beside chapter titles): chrome whatever their share of link text. Blocks no name marks are caught by
# their repetition across the pages of one ingest (rag.ingest.repeated).
_BAR_NAMES = {"navheader", "navfooter"}
# What WHATWG decodes a page labelled Latin-1 or ASCII as: Windows-1252 (curly quotes in 0x80-0x9F).
_WINDOWS_1252_LABELS = {"iso-8859-1", "latin-1", "latin1", "l1", "ascii", "us-ascii", "iso8859-1", "cp819"}
_INERT = ["template", "noscript"]
_MARKS = {"¶", "#", "§", "🔗"}
_HEADINGS = ["h1", "h2", "h3", "h4", "h5", "h6"]
_BLOCK_TAGS = {"p", "li", "pre", "blockquote", "dt", "dd", "figcaption", "caption", "address"}
_STRUCTURE = [*_BLOCK_TAGS, "table", *_HEADINGS, "div", "section", "article", "main", "ul", "ol", "dl"]


def html_to_markdown(markup: str, linked: Callable[[str], str | None] | None = None) -> Parsed:
    """The main content of an HTML page as Markdown-shaped text, and the page title.

    Args:
        markup: the decoded HTML.
        linked: the text of a `<link rel="stylesheet">` by its href, None when there is none; only a
            container that holds the page's own sheets (an EPUB) passes one. Without it linked sheets
            are not read (a `data:` URL's sheet always is: it is in the page): a page's styles are never
            fetched from the network or the disk.

    Returns:
        The text (headings from h1-h6 as `#` lines, tables as pipe tables, lists as `- ` items), the
        title, and a note of how many characters of hidden text were dropped, when any were.
    """
    with warnings.catch_warnings():
        # XHTML (`<?xml ...?>` first) is still read as HTML, on purpose: one parser for every page.
        warnings.simplefilter("ignore", XMLParsedAsHTMLWarning)
        soup = BeautifulSoup(markup, "lxml")
    title = soup.title.get_text(strip=True) if soup.title else ""
    reveal_toggled(soup)  # what a click shows (<details>, tabs, toggled blocks) is read, under its label
    hidden = HiddenText(soup, _style_sheets(soup, linked))  # decided on the whole page, before anything goes
    for node in soup.find_all(string=lambda s: isinstance(s, (PreformattedString, Script, Stylesheet, TemplateString))):
        node.extract()  # comments, doctype, <?...?>, CDATA, declarations, script and style bodies
    for tag in soup.find_all(_NEVER_TEXT):
        tag.decompose()
    dropped = hidden.drop()
    roots = _content_roots(soup)
    blocks: list[str] = []
    for root in roots:
        _drop_chrome(root)
        _blocks(root, blocks)
    notes = (f"dropped {plural(dropped, 'character')} of hidden text",) if dropped else ()
    return Parsed("\n\n".join(blocks), (), title, notes)


def _style_sheets(soup: BeautifulSoup, linked: Callable[[str], str | None] | None) -> list[str]:
    """The page's style sheets in document order: `<style>` bodies and the linked sheets `linked` reads,
    each under its `media` attribute (`media="print"` applies to no screen)."""
    sheets = []
    for tag in soup.find_all(["style", "link"]):
        if tag.find_parent(_INERT) is not None:
            continue  # a template's or noscript's content is not the page a reader with scripts sees
        if tag.name == "style":
            css = tag.get_text()
        else:
            rel = [r.lower() for r in (tag.get("rel") or [])]
            href = tag.get("href")
            if "stylesheet" not in rel or "alternate" in rel or not href:
                continue
            css = data_url_sheet(str(href))
            if css is None:
                if linked is None:
                    continue
                css = linked(str(href)) or ""
        media = str(tag.get("media") or "").strip()
        sheets.append(f"@media {media} {{{css}}}" if media and css else css)
    return sheets


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
        named = bool(_CHROME_NAMES.search(names)) and _mostly_links(tag) or bool(_BAR_NAMES & set(names.split()))
        if tag.name in _CHROME_TAGS or role in _CHROME_ROLES or named:
            headings = tag.find_all(_HEADINGS) if tag.name == "header" else []
            if headings:
                tag.replace_with(*headings)
            else:
                tag.decompose()


def _mostly_links(tag: Tag) -> bool:
    """Whether the block reads as navigation: a link, no text, or mostly the text of its links."""
    if tag.name == "a":
        return True
    text = len("".join(tag.get_text().split()))
    links = sum(len("".join(a.get_text().split())) for a in tag.find_all("a"))
    return text == 0 or links >= _CHROME_LINK_SHARE * text


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
            text = _plain(child)
            if text:
                blocks.append("#" * int(name[1]) + " " + text)
        elif name == "table":
            flush()
            blocks.append(
                rows_to_markdown([[_plain(c) for c in tr.find_all(["td", "th"])] for tr in child.find_all("tr")])
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
        elif not _permalink(child):
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


def _inline(node: Tag, code: str = "`") -> str:
    """A block's text as it reads: inline code in backticks (as Markdown writes it, so a full stop inside
    `git add .` ends no sentence), inline elements joined without an added space (no "git clean ." for
    `<code>git clean</code>.`), nested blocks kept apart by one. Headings and table cells pass `code=""`:
    their text is what a person copies from the page ("dpkg's options") and gives as a gold heading."""
    out: list[str] = []
    for child in node.children:
        if isinstance(child, NavigableString):
            out.append(str(child))
        elif isinstance(child, Tag):
            name = child.name.lower()
            if name in ("code", "kbd", "samp", "tt") and child.get_text().strip():
                out.append(f"{code}{child.get_text()}{code}")
            elif name == "br":
                out.append("\n")
            elif name in _BLOCK_TAGS or name in {"div", "ul", "ol", "dl", "p", "section"}:
                out.append(" " + _inline(child, code) + " ")
            elif not _permalink(child):
                out.append(_inline(child, code))
    return "".join(out)


def _plain(node: Tag) -> str:
    """A heading's or table cell's text as the page shows it, code without backticks."""
    return " ".join(_inline(node, code="").split())


def _permalink(tag: Tag) -> bool:
    """A heading's or term's own link mark (Sphinx's `¶`, `#`, `§`), shown on hover: not part of its text."""
    return tag.name == "a" and str(tag.get("href") or "").startswith("#") and tag.get_text().strip() in _MARKS


def parse_html(data: bytes, source: str) -> Parsed:
    return html_to_markdown(decode_text(data, source, declared_encoding(data)))


def declared_encoding(data: bytes) -> str | None:
    """The encoding the page declares (`<meta charset>`, `http-equiv`, the XML declaration), as a browser
    reads the label; None for UTF-8 or no declaration, which the text loader's detection handles."""
    label = EncodingDetector.find_declared_encoding(data, is_html=True)
    if not label or label.lower().replace("_", "-") in ("utf-8", "utf8"):
        return None
    return "cp1252" if label.lower() in _WINDOWS_1252_LABELS else label
