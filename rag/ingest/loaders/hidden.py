"""Which elements of an HTML page a browser does not show, so their text never becomes document text.

Hidden text is the classic carrier for instructions aimed at a model ("ignore the question and ...")
or for prices and claims a reader never sees: whatever is document text can be quoted in an answer.
A page hides text three ways, and all three are read here without a CSS engine:

- attributes: `hidden`, `aria-hidden="true"`;
- its inline `style`: `display:none`, `visibility:hidden|collapse`, `font-size:0`, `opacity:0`,
  off-screen positions (`position:absolute;left:-9999px`, `text-indent:-9999px`), clipping to nothing
  (`clip:rect(0 0 0 0)`, `clip-path:inset(50%)`, a 1px box with `overflow:hidden`), and text coloured
  like the background declared beside it;
- its `<style>` sheets: class, id, element and descendant selectors (whatever soupsieve matches)
  setting `display:none` or `visibility:hidden|collapse`, at the top level or in an `@media` block
  for every screen. A later or `!important` rule, an interactive one (`.menu:hover .sub`), one for
  some screens only (`@media (min-width: 768px)`) or the element's own style that shows the element
  again keeps it: text a reader can bring up is content.
  Selector specificity is not weighed, so when rules disagree the text is kept. A hidden element goes
  whole: a child that `visibility:visible` would show again goes with it. Sheets reveal only
  display and visibility: opacity and off-screen tricks in a sheet are also how pages animate content
  in, and dropping those would lose visible text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from bs4 import BeautifulSoup, Tag
import soupsieve
from soupsieve import SelectorSyntaxError

_COMMENT = re.compile(r"/\*.*?\*/", re.S)
# Pseudo-classes a reader's action turns on: a rule that shows through one shows the element to that reader.
_INTERACTIVE = re.compile(
    r":(?:hover|focus-within|focus-visible|focus|active|target|checked|visited|link|open|popover-open)\b", re.I
)
_SCREEN_MEDIA = re.compile(r"(?:only\s+)?(?:all|screen)?", re.I)
_PRINT_MEDIA = re.compile(r"(?:only\s+)?print\b", re.I)
_LENGTH = re.compile(r"([+-]?(?:\d+\.?\d*|\.\d+))(px|em|rem|pt|pc|cm|mm|in|ex|ch|%)?")
_PX_PER = {
    "px": 1.0, "em": 16.0, "rem": 16.0, "pt": 4 / 3, "pc": 16.0, "cm": 96 / 2.54, "mm": 96 / 25.4, "in": 96.0,
    "ex": 8.0, "ch": 8.0,
}  # fmt: skip
# Further than this off the page's edge is out of sight on any screen (the idiom is -9999px).
_OFF_SCREEN_PX = -500.0
_COLOR_WORDS = {
    "white": "#ffffff", "black": "#000000", "red": "#ff0000", "lime": "#00ff00", "green": "#008000",
    "blue": "#0000ff", "yellow": "#ffff00", "gray": "#808080", "grey": "#808080", "silver": "#c0c0c0",
    "transparent": "transparent",
}  # fmt: skip
_COLOR_TOKEN = re.compile(r"(?:rgba?|hsla?)\([^)]*\)|#[0-9a-f]+|[a-z]+", re.I)


def declarations(style: str) -> dict[str, tuple[str, bool]]:
    """A declaration block as property -> (value, important), as the cascade leaves it within one block:
    a later declaration wins unless an earlier one is `!important` and it is not."""
    out: dict[str, tuple[str, bool]] = {}
    for part in style.split(";"):
        prop, sep, value = part.partition(":")
        if not sep:
            continue
        value = value.strip().lower()
        important = bool(re.search(r"!\s*important$", value))
        value = re.sub(r"\s*!\s*important$", "", value)
        prop = prop.strip().lower()
        if prop in out and out[prop][1] and not important:
            continue
        out[prop] = (value, important)
    return out


def style_hides(style: str) -> bool:
    """Whether an element's own `style` attribute keeps its text out of sight."""
    d = {prop: value for prop, (value, _) in declarations(style).items()}
    font, opacity = _px(d.get("font-size", "")), _number(d.get("opacity", ""))
    return (
        _display_hides(d)
        or (font is not None and font < 1)
        or (opacity is not None and opacity < 0.05)
        or _off_screen(d)
        or _clipped(d)
        or _unseen_color(d)
    )


@dataclass(frozen=True)
class _Rule:
    selector: str
    prop: str  # "display" or "visibility"
    hides: bool
    important: bool


class HiddenTest:
    """`test(tag)`: whether the page hides `tag`. Build it before the page's `<style>` bodies are removed.

    Example:
        hidden = HiddenTest(soup)
        for tag in soup.find_all(hidden): ...
    """

    def __init__(self, soup: BeautifulSoup) -> None:
        rules = [
            (rule, pattern)
            for style in soup.find_all("style")
            for rule in _sheet_rules(style.get_text())
            if (pattern := _compile(rule.selector)) is not None
        ]
        # Only what a hiding rule matches can be hidden: each of those is then decided by the last
        # rule that matches it (the `!important` ones after the rest), not every element by every rule.
        ordered = sorted(rules, key=lambda pair: pair[0].important)  # stable: source order within each level
        candidates = {id(tag): tag for rule, pattern in rules if rule.hides for tag in pattern.select(soup)}
        self._sheet: dict[tuple[int, str], _Rule] = {}  # (element id, property) -> the hiding rule that decides it
        self._tags = list(candidates.values())  # alive while their ids are keys
        for tag in self._tags:
            for prop in ("display", "visibility"):
                last = None
                for rule, pattern in ordered:
                    if rule.prop == prop and pattern.match(tag):
                        last = rule
                if last is not None and last.hides:
                    self._sheet[(id(tag), prop)] = last

    def __call__(self, tag: Tag) -> bool:
        if tag.has_attr("hidden") or tag.get("aria-hidden") == "true":
            return True
        style = tag.get("style") or ""
        if style and style_hides(style):
            return True
        if not self._sheet:  # most pages: every tag is asked, few have a style
            return False
        own = declarations(style)  # the element's own style beats the sheet's rules unless they are !important
        return any(
            (rule := self._sheet.get((id(tag), prop))) is not None and (rule.important or prop not in own)
            for prop in ("display", "visibility")
        )


def _sheet_rules(css: str) -> Iterator[_Rule]:
    """The display and visibility rules of one style sheet, in source order."""
    for selectors, body, conditional in _style_rules(_COMMENT.sub(" ", css)):
        d = declarations(body)
        for prop in ("display", "visibility"):
            if prop not in d:
                continue
            value, important = d[prop]
            hides = _display_hides({prop: value})
            if hides and conditional:
                continue  # hidden on some screens only: others show it
            for selector in _split_selectors(selectors):
                if _INTERACTIVE.search(selector):
                    if hides:
                        continue  # hidden only while a reader interacts: shown the rest of the time
                    selector = _INTERACTIVE.sub("", selector)  # shown on interaction: the element is reachable
                yield _Rule(selector, prop, hides, important)


def _style_rules(css: str, conditional: bool = False) -> Iterator[tuple[str, str, bool]]:
    """(selector list, declaration block, whether only some screens apply it) of each style rule.

    `@media` for every screen (`all`, `screen`) applies everywhere; other `@media` (widths, colour
    schemes) and `@supports` only on some screens, so only what they show counts (`.d-none` with a
    `.d-md-block` that shows it on wide screens is content); print-only `@media` and the other at-rules
    (fonts, keyframes) hold nothing a screen shows.
    """
    i = 0
    while (start := css.find("{", i)) >= 0:
        depth, j = 1, start + 1
        while j < len(css) and depth:
            depth += {"{": 1, "}": -1}.get(css[j], 0)
            j += 1
        prelude, body = css[i:start].rsplit(";", 1)[-1].strip(), css[start + 1 : j - 1 if not depth else j]
        i = j
        at = prelude.lower()
        if at.startswith("@media"):
            queries = [q.strip() for q in at[6:].split(",")]
            if not all(_PRINT_MEDIA.match(q) for q in queries):
                everywhere = any(_SCREEN_MEDIA.fullmatch(q) for q in queries)
                yield from _style_rules(body, conditional or not everywhere)
        elif at.startswith(("@supports", "@layer", "@container")):
            yield from _style_rules(body, conditional or not at.startswith("@layer"))
        elif not at.startswith("@"):
            yield prelude, body, conditional


def _split_selectors(selectors: str) -> list[str]:
    """A selector list split at its top-level commas (`:is(.a, .b)` stays whole)."""
    out, depth, start = [], 0, 0
    for k, ch in enumerate(selectors):
        depth += {"(": 1, "[": 1, ")": -1, "]": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            out.append(selectors[start:k])
            start = k + 1
    out.append(selectors[start:])
    return [s.strip() for s in out if s.strip()]


def _compile(selector: str) -> soupsieve.SoupSieve | None:
    """`selector` compiled; None for what soupsieve cannot match (pseudo-elements, bad syntax)."""
    try:
        return soupsieve.compile(selector)
    except (SelectorSyntaxError, NotImplementedError, ValueError):
        return None


def _display_hides(d: dict[str, str]) -> bool:
    return d.get("display") == "none" or d.get("visibility") in ("hidden", "collapse")


def _px(value: str) -> float | None:
    """A CSS length in pixels (em and rem at the default 16px); None for anything else (percentages, calc)."""
    m = _LENGTH.fullmatch(value.strip())
    if not m or m.group(2) == "%" or (m.group(2) is None and float(m.group(1)) != 0):
        return None
    return float(m.group(1)) * _PX_PER.get(m.group(2) or "px", 1.0)


def _number(value: str) -> float | None:
    m = _LENGTH.fullmatch(value.strip())
    if not m or m.group(2) not in (None, "%"):
        return None
    return float(m.group(1)) / (100 if m.group(2) == "%" else 1)


def _off_screen(d: dict[str, str]) -> bool:
    """Moved far past the page's edge: an absolute or fixed box's offsets, or the text's own indent."""
    indent = _px(d.get("text-indent", ""))
    if indent is not None and indent <= _OFF_SCREEN_PX:
        return True
    if d.get("position") not in ("absolute", "fixed"):
        return False
    offsets = (_px(d.get(side, "")) for side in ("left", "top", "right", "bottom"))
    return any(px is not None and px <= _OFF_SCREEN_PX for px in offsets)


def _clipped(d: dict[str, str]) -> bool:
    """Clipped to nothing: `clip:rect()` of no area, `clip-path` inset by half or more or a zero circle,
    or a box of at most 1px that hides its overflow (the screen-reader-only idiom)."""
    rect = re.fullmatch(r"rect\((.*)\)", d.get("clip", ""))
    if rect and d.get("position") in ("absolute", "fixed"):
        sides = [_px(s) for s in re.split(r"[\s,]+", rect.group(1).strip())]
        if len(sides) == 4 and None not in sides:
            top, right, bottom, left = sides
            if bottom <= top or right <= left:  # type: ignore[operator]
                return True
    path = d.get("clip-path", "")
    inset = re.match(r"inset\(\s*([\d.]+)%", path)
    if (inset and float(inset.group(1)) >= 50) or re.match(r"(?:circle|ellipse)\(\s*0(?:px|%)?[\s)]", path):
        return True
    if d.get("overflow") in ("hidden", "clip"):
        sizes = (_px(d.get(p, "")) for p in ("width", "height", "max-width", "max-height"))
        return any(px is not None and px <= 1 for px in sizes)
    return False


def _unseen_color(d: dict[str, str]) -> bool:
    """Transparent text, or text in the colour of the background declared on the same element."""
    color = _color(d.get("color", ""))
    if color == "transparent":
        return True
    background = d.get("background-color") or d.get("background", "")
    if color is None or not background or "url(" in background or "gradient" in background:
        return False  # a picture behind the text may show it whatever the fallback colour
    colors = [c for c in map(_color, _COLOR_TOKEN.findall(background)) if c is not None]
    return bool(colors) and colors[0] == color


def _color(value: str) -> str | None:
    """A colour as `#rrggbb` (or "transparent" for no alpha); None when `value` is not one this reads."""
    value = value.strip().lower()
    if value in _COLOR_WORDS:
        return _COLOR_WORDS[value]
    hexa = re.fullmatch(r"#([0-9a-f]{3,4}|[0-9a-f]{6}|[0-9a-f]{8})", value)
    if hexa:
        digits = hexa.group(1)
        digits = "".join(c * 2 for c in digits) if len(digits) <= 4 else digits
        return "transparent" if digits[6:] == "00" else "#" + digits[:6]
    rgb = re.fullmatch(r"rgba?\(\s*([\d.]+%?)[\s,]+([\d.]+%?)[\s,]+([\d.]+%?)(?:[\s,/]+([\d.]+%?))?\s*\)", value)
    if not rgb:
        return None
    alpha = rgb.group(4)
    if alpha is not None and float(alpha.rstrip("%")) == 0:
        return "transparent"
    channels = [float(c[:-1]) * 2.55 if c.endswith("%") else float(c) for c in rgb.groups()[:3]]
    return "#" + "".join(f"{min(255, round(c)):02x}" for c in channels)
