"""Content a click shows is content, and the label a reader clicks is its heading.

A reader opens a `<details>` by its `<summary>`, a tab panel by its tab, a block a script toggles by the
control beside it (SQLite's "show" buttons, Bootstrap's `data-bs-toggle` collapses): all of it is read as
text, each under its label as a heading one level below the heading before it, so that every item of a
page of such blocks is a section of its own. A block counts as toggled only when a control on the page
names it (its id in an `onclick`, an `aria-controls`, a toggling link's `href`) or it is a tab panel: a
block hidden with nothing that shows it is text no reader can see, and rag.ingest.loaders.hidden drops it.

A heading hidden from view whose words the reader sees right after it (SQLite's pragma pages put a
`<h style="display:none"> PRAGMA cache_size</h>` above each pragma's visible syntax line) is structure,
not text: it becomes a heading. It adds no word the reader does not see there, so no hidden instruction
can come in through it. Runs before the hidden-text cascade, which then sees these blocks as shown.
"""

from __future__ import annotations

import copy
import re

from bs4 import BeautifulSoup, NavigableString, Tag
from bs4.element import PreformattedString, Script, Stylesheet, TemplateString

_HEADINGS = ["h1", "h2", "h3", "h4", "h5", "h6"]
_TOGGLES = ("data-toggle", "data-bs-toggle")
# How far after a hidden heading its words must all be seen for it to count as the visible item's heading.
_HEADING_SEEN_WITHIN = 300
_WORD = re.compile(r"\w+")
_NOT_READ = (PreformattedString, Script, Stylesheet, TemplateString)  # comments, script and style bodies
_MADE = "data-ragscope-label"  # marks the headings made here, which set no level for the next label


def reveal_toggled(soup: BeautifulSoup) -> None:
    """Mark what a click shows as shown, and give each such block its label as a heading (in place)."""
    for summary in soup.find_all("summary"):
        _reopen(summary.parent, _to_heading(summary))
    controls = _controlled_ids(soup)
    labels = _tab_labels(soup)
    for tag in soup.find_all(True):
        ident = tag.get("id")
        if (tag.get("role") or "").lower() == "tabpanel" or (ident and ident in controls):
            _show(tag)
            label = labels.get(ident or "") or _labelled_by(soup, tag)
            if label and (tag.get("role") or "").lower() == "tabpanel":
                heading = soup.new_tag("h6")
                heading.string = label
                tag.insert(0, heading)
                _reopen(tag, _to_heading(heading))
    for tablist in soup.find_all(attrs={"role": "tablist"}):
        tablist.decompose()  # its labels now head their panels
    for heading in soup.find_all(["h", *_HEADINGS]):
        if _inline_hidden(heading) and _seen_after(heading):
            _show(heading)
            _to_heading(heading)


def _controlled_ids(soup: BeautifulSoup) -> set[str]:
    """The ids a control on the page shows or hides: named by `aria-controls` (of a tab or an element with
    `aria-expanded`), by the `href`/`data-target` of a `data-toggle` link, or quoted in an `onclick`."""
    ids: set[str] = set()
    quoted = re.compile(r"""["']([\w:.-]+)["']""")
    for tag in soup.find_all(True):
        if tag.get("aria-controls") and (tag.has_attr("aria-expanded") or (tag.get("role") or "") == "tab"):
            ids.update(str(tag["aria-controls"]).split())
        if any(tag.has_attr(a) for a in _TOGGLES):
            for target in (tag.get("href"), tag.get("data-target"), tag.get("data-bs-target")):
                if target and str(target).startswith("#"):
                    ids.add(str(target)[1:])
        if tag.get("onclick"):
            ids.update(quoted.findall(str(tag["onclick"])))
    return ids


def _tab_labels(soup: BeautifulSoup) -> dict[str, str]:
    """Each tab panel's id -> the text of the tab that shows it."""
    return {
        str(tab["aria-controls"]): " ".join(tab.get_text(" ").split())
        for tab in soup.find_all(attrs={"role": "tab"})
        if tab.get("aria-controls")
    }


def _labelled_by(soup: BeautifulSoup, tag: Tag) -> str:
    ident = tag.get("aria-labelledby")
    label = soup.find(id=str(ident)) if ident else None
    return " ".join(label.get_text(" ").split()) if label is not None else ""


def _show(tag: Tag) -> None:
    """Shown as after the click: the `hidden` attribute gone, `display` set inline (above any sheet's rule)."""
    if tag.has_attr("hidden"):
        del tag["hidden"]
    style = re.sub(r"(?i)(^|;)\s*display\s*:[^;]*", r"\1", str(tag.get("style") or "")).strip(" ;")
    tag["style"] = (style + ";" if style else "") + "display:block"


def _to_heading(tag: Tag) -> Tag | None:
    """Rename `tag` to the heading one level below the nearest heading of the page's own before it (h2 on a
    page without one), a level further for each `<details>` it is in: the labels of a run of items are
    siblings, not each the child of the one before."""
    before = tag.find_previous(lambda t: t.name in _HEADINGS and not t.has_attr(_MADE))
    depth = len(tag.find_parents("details")) - (tag.parent is not None and tag.parent.name == "details")
    level = (int(before.name[1]) if before is not None else 1) + 1 + depth
    tag.name = f"h{min(level, 6)}"
    tag[_MADE] = ""
    return before


def _reopen(block: Tag, parent: Tag | None) -> None:
    """After the last of a run of labelled blocks, the text that follows is the parent section's again: its
    heading is repeated there (a Markdown heading cannot be closed), so it is not read as the last item's."""
    after = block.find_next_sibling(True)
    while after is None and block.parent is not None and block.parent.name not in ("body", "main", "[document]"):
        block = block.parent
        after = block.find_next_sibling(True)
    if parent is None or after is None or after.name in _HEADINGS or _labelled(after):
        return
    heading = copy.copy(parent)
    heading[_MADE] = ""
    after.insert_before(heading)


def _labelled(tag: Tag) -> bool:
    """Whether `tag` is itself an item with a label of its own (another `<details>`, another tab panel)."""
    return tag.name == "details" or (tag.get("role") or "").lower() in ("tabpanel", "tablist") or tag.has_attr(_MADE)


def _inline_hidden(tag: Tag) -> bool:
    style = str(tag.get("style") or "").lower().replace(" ", "")
    return tag.has_attr("hidden") or "display:none" in style


def _seen_after(heading: Tag) -> bool:
    """Whether every word of `heading` is in the text that follows it, within _HEADING_SEEN_WITHIN characters."""
    words = _WORD.findall(heading.get_text().lower())
    if not words:
        return False
    after = ""
    for node in heading.next_elements:
        if not isinstance(node, NavigableString) or isinstance(node, _NOT_READ) or heading in node.parents:
            continue
        after += " " + node
        if len(after) >= _HEADING_SEEN_WITHIN:
            break
    seen = set(_WORD.findall(after[:_HEADING_SEEN_WITHIN].lower()))
    return all(w in seen for w in words)
