"""Which text of an HTML page a reader cannot see, decided from the styles a browser would apply.

Hidden text is the classic carrier for instructions aimed at a model ("ignore the question and ...")
or for prices and claims a reader never sees: whatever is document text can be quoted in an answer.
The rule (docs/security.md): text is dropped when a browser would not show it to a reader, and only then;
never because of an element's name, id or class, nor because of `aria-hidden` (it hides from screen
readers, not from eyes), nor for `<details>` content a reader opens with a click.

Every element's styles come from a small cascade: the page's sheets (`<style>`, and the linked sheets
the caller can read, e.g. an EPUB's own `.css` files) read by rag.ingest.loaders.css, the element's
`style` attribute, `!important`, specificity and source order, the `hidden` attribute as the browser's
own lowest rule, custom properties (`var(--x)`), and inheritance of what CSS inherits (visibility,
colour, font size, text indent). Text is unseen (rag.ingest.loaders.unseen reads each technique) when

- its box or an ancestor's is not drawn or drawn as nothing: `display:none`, `content-visibility:hidden`,
  opacity (multiplied down the tree, `filter: opacity()` too) under 5%, a transform or `scale` to zero,
  `clip-path` that leaves nothing (`inset(50%)`, `circle(0)`), `clip: rect()` of no area on a positioned
  box, a box of at most 1px (or `max-height:0`) that clips its overflow and has no padding to show it in,
  or a box moved 500px or more past the page's top or left edge (offsets, negative margins, translate);
- the text itself cannot be seen: `visibility:hidden|collapse` (a child may set `visible` again), a font
  under 2px (`font-size:0`, `font: 0/0 a`), a text indent past the edge, or a colour with no contrast
  (under 1.1:1) against the background behind it: the nearest background colour declared on the element
  or an ancestor (the body's included), unknown, so never compared, under a background image.

A page's rules for some screens or behind an interaction (rag.ingest.loaders.css) can only show text:
text is dropped when it is hidden on a plain screen and stays hidden with every such rule that reveals
applied (`.d-none` with `.d-md-block` is content; `.menu:hover .sub {display:block}` too).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from functools import lru_cache

import soupsieve
from bs4 import BeautifulSoup, NavigableString, Tag
from bs4.element import PreformattedString
from soupsieve import SelectorSyntaxError

from rag.ingest.loaders.css import RGBA, Rule, bucket, contrast, declarations, sheet_rules, specificity
from rag.ingest.loaders.unseen import (
    MIN_CONTRAST,
    MIN_FONT_PX,
    MIN_OPACITY,
    OFF_SCREEN_PX,
    ROOT_FONT_PX,
    backdrop,
    box_gone,
    color_of,
    font_px,
    hides_alone,
    indent_px,
    opacity_of,
    over,
)

_PROPERTIES = frozenset(
    {
        "display", "visibility", "opacity", "filter", "content-visibility", "font-size", "font", "color",
        "-webkit-text-fill-color", "background", "background-color", "background-image", "position", "top",
        "right", "bottom", "left", "margin-top", "margin-left", "text-indent", "clip", "clip-path", "transform",
        "scale", "translate", "width", "height", "max-width", "max-height", "overflow", "overflow-x",
        "overflow-y", "padding-top", "padding-right", "padding-bottom", "padding-left",
    }
)  # fmt: skip
_VAR = re.compile(r"var\(\s*(--[\w-]+)\s*(?:,\s*((?:[^()]|\([^()]*\))*))?\)")


@dataclass(frozen=True)
class _Seen:
    """What an element passes to its children and what decides its own text."""

    gone: bool = False  # this box (and so everything in it) is not drawn, or drawn as nothing
    opacity: float = 1.0
    visibility: str = "visible"
    font_px: float = ROOT_FONT_PX
    color: RGBA | None = (0.0, 0.0, 0.0, 1.0)  # None: a colour this does not read (so never judged unseen)
    fill: RGBA | None = None  # -webkit-text-fill-color, painted instead of `color`
    backdrop: tuple[float, float, float] | None = None  # the known colour behind the text
    indent_px: float = 0.0
    variables: dict[str, str] = field(default_factory=dict)

    def text_hidden(self) -> bool:
        if self.gone or self.visibility in ("hidden", "collapse") or self.font_px < MIN_FONT_PX:
            return True
        if self.indent_px <= OFF_SCREEN_PX:
            return True
        ink = self.fill or self.color
        if ink is None:
            return False
        if ink[3] < MIN_OPACITY:
            return True
        if self.backdrop is None:
            return False
        return contrast(over(ink, self.backdrop), self.backdrop) < MIN_CONTRAST


@dataclass(frozen=True)
class _Matcher:
    rule: Rule
    pattern: soupsieve.SoupSieve
    specificity: tuple[int, int, int]
    sheet: int = 0  # the sheet's place among the page's: with the rule's order, its source order


@lru_cache(maxsize=32)
def _matchers(css: str) -> tuple[tuple[tuple[str, str], _Matcher], ...]:
    """One sheet's rules compiled, with the bucket each goes in; cached, as every chapter of a book links
    the same sheets."""
    out = []
    for rule in sheet_rules(css, _PROPERTIES):
        pattern = _compile(rule.selector)
        if pattern is not None:
            out.append((bucket(rule.selector), _Matcher(rule, pattern, specificity(rule.selector))))
    return tuple(out)


class HiddenText:
    """The page's unseen text, decided on the whole page (selectors see every element), dropped later.

    Example:
        hidden = HiddenText(soup, sheets)   # before anything is removed from the page
        ...                                 # remove scripts, comments
        dropped = hidden.drop()             # characters of hidden text removed
    """

    def __init__(self, soup: BeautifulSoup, sheets: list[str]) -> None:
        self._buckets: dict[tuple[str, str], list[_Matcher]] = {}
        for index, css in enumerate(sheets):
            for key, matcher in _matchers(css):
                self._buckets.setdefault(key, []).append(replace(matcher, sheet=index))
        self._tags: list[Tag] = []
        self._strings: list[NavigableString] = []
        self._decide(soup)

    def drop(self) -> int:
        """Remove the unseen elements and text; how many characters of text went (runs of space as one)."""
        dropped = 0
        for tag in self._tags:
            if not tag.decomposed:
                dropped += len(" ".join(tag.get_text(" ").split()))
                tag.decompose()
        for string in self._strings:
            if string.parent is not None:
                dropped += len(" ".join(string.split()))
                string.extract()
        return dropped

    def _decide(self, soup: BeautifulSoup) -> None:
        tags = soup.find_all(True)
        root = (_Seen(), _Seen())
        states: dict[int, tuple[_Seen, _Seen]] = {id(soup): root}
        hidden: dict[int, bool] = {}
        for tag in tags:
            parent = states.get(id(tag.parent), root)
            base, revealed = self._declared(tag)
            state = parent if not base and not revealed else (_child(parent[0], base), _child(parent[1], revealed))
            states[id(tag)] = state
            hidden[id(tag)] = state[0].text_hidden() and state[1].text_hidden()
        whole: dict[int, bool] = {}  # hidden with everything in it
        for tag in reversed(tags):
            whole[id(tag)] = hidden[id(tag)] and all(whole[id(c)] for c in tag.children if isinstance(c, Tag))
        covered: set[int] = set()
        for tag in tags:
            if id(tag.parent) in covered or whole[id(tag)]:
                covered.add(id(tag))
                if id(tag.parent) not in covered:
                    self._tags.append(tag)
            elif hidden[id(tag)]:
                self._strings += [
                    c
                    for c in tag.children
                    if isinstance(c, NavigableString) and not isinstance(c, PreformattedString) and c.strip()
                ]

    def _declared(self, tag: Tag) -> tuple[dict[str, str], dict[str, str]]:
        """The values the cascade gives `tag` on a plain screen, and with every revealing conditional rule."""
        keys = [("tag", tag.name), ("any", ""), *(("class", c) for c in tag.get("class") or ())]
        keys += [("attribute", a.lower()) for a in tag.attrs if a not in ("class", "id")]
        if tag.get("id"):
            keys.append(("id", tag["id"]))
        won: list[dict[str, tuple[tuple[bool, bool, tuple[int, int, int], tuple[int, int]], str]]] = [{}, {}]
        for prop, value in _presentational(tag):
            for w in won:  # the browser's own rules, below every author rule
                w[prop] = ((False, False, (-1, 0, 0), (-1, 0)), value)
        for key in keys:
            for m in self._buckets.get(key, ()):
                if not m.pattern.match(tag):
                    continue
                for prop, (value, important) in m.rule.declarations.items():
                    rank = (important, False, m.specificity, (m.sheet, m.rule.order))
                    targets = [won[1]] if m.rule.conditional else won
                    if m.rule.conditional and hides_alone(prop, value):
                        continue
                    for w in targets:
                        if prop not in w or w[prop][0] < rank:
                            w[prop] = (rank, value)
        style = tag.get("style")
        if style:
            for prop, (value, important) in declarations(str(style)).items():
                rank = (important, True, (0, 0, 0), (0, 0))
                for w in won:
                    if prop not in w or w[prop][0] < rank:
                        w[prop] = (rank, value)
        return {p: v for p, (_, v) in won[0].items()}, {p: v for p, (_, v) in won[1].items()}


def _presentational(tag: Tag) -> list[tuple[str, str]]:
    """What the browser's own style sheet makes of the element's attributes: `hidden`, and the legacy
    colour attributes (`<font color>`, `bgcolor`) that still paint text and backgrounds."""
    hints = []
    if tag.has_attr("hidden") and str(tag.get("hidden")).lower() != "until-found":
        hints.append(("display", "none"))
    if tag.name == "font" and tag.get("color"):
        hints.append(("color", str(tag["color"]).strip().lower()))
    if tag.get("bgcolor"):
        hints.append(("background-color", str(tag["bgcolor"]).strip().lower()))
    return hints


def _compile(selector: str) -> soupsieve.SoupSieve | None:
    """`selector` compiled; None for what soupsieve cannot match (pseudo-elements, bad syntax)."""
    try:
        return soupsieve.compile(selector)
    except (SelectorSyntaxError, NotImplementedError, ValueError):
        return None


def _child(parent: _Seen, declared: dict[str, str]) -> _Seen:
    """The state of an element that declares `declared`, inside `parent`."""
    if not declared:
        return parent
    variables = parent.variables
    own = {p: v for p, v in declared.items() if p.startswith("--")}
    if own:
        variables = {**variables, **own}
    d = {p: _substitute(v, variables) for p, v in declared.items() if not p.startswith("--")}
    font = font_px(d, parent.font_px)
    opacity = parent.opacity * opacity_of(d)
    return replace(
        parent,
        gone=parent.gone or opacity < MIN_OPACITY or box_gone(d, font),
        opacity=opacity,
        visibility=_inherited(d, "visibility", parent.visibility, "visible"),
        font_px=font,
        color=color_of(d.get("color"), parent.color, parent.color),
        fill=color_of(d.get("-webkit-text-fill-color"), parent.fill, None),
        backdrop=backdrop(d, parent.backdrop),
        indent_px=indent_px(d.get("text-indent"), parent.indent_px, font),
        variables=variables,
    )


def _inherited(d: dict[str, str], prop: str, parent: str, initial: str) -> str:
    value = d.get(prop)
    if value is None or value in ("inherit", "unset", "revert", "revert-layer"):
        return parent
    return initial if value == "initial" else value


def _substitute(value: str, variables: dict[str, str]) -> str:
    """`var(--x, fallback)` replaced by the custom property's value (a few levels deep, as values nest)."""
    for _ in range(4):
        if "var(" not in value:
            break
        value = _VAR.sub(lambda m: variables.get(m.group(1), m.group(2) or "").strip().lower(), value)
    return value
