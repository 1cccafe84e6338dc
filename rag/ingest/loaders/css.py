"""The little of CSS that decides whether text is seen: style sheets as rules, declarations, lengths, colours.

No CSS parser is a dependency, so this reads sheets the way browsers recover from errors, simply: rules
are `prelude { body }` with nested blocks for at-rules, declarations are `property: value` split at `;`.
Which rules apply on which screens is decided here (`Rule.conditional`), so the cascade in
rag.ingest.loaders.hidden can ask two questions, "hidden on a plain screen?" and "hidden on every
screen and after every interaction?", and drop only what is hidden both ways:

- `@media` for every screen (`all`, `screen`, `min-width` up to a phone's width) applies everywhere; one
  for some screens only (wider ones, a colour scheme, hover) is conditional; print-only ones never apply;
- `@supports` without `not` applies (what it asks, a current browser has); `@supports not (...)` never;
- a rule behind an interaction (`:hover`, `:focus`, `:checked`, `:target`) is conditional, its selector
  read without that pseudo-class: what a reader can bring up is content.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TypeVar
from urllib.parse import unquote_to_bytes

from PIL import ImageColor

_COMMENT = re.compile(r"/\*.*?\*/", re.S)
# Pseudo-classes a reader's action turns on: a rule that shows through one shows the element to that reader.
_INTERACTIVE = re.compile(
    r":(?:hover|focus-within|focus-visible|focus|active|target|checked|visited|link|open|popover-open)\b", re.I
)
_SCREEN_TYPES = {"", "all", "screen"}
_WIDTH_FEATURE = re.compile(r"\(\s*(min|max)-width\s*:\s*([^)]+)\)", re.I)
_ANY_FEATURE = re.compile(r"\([^)]*\)")
# Screens this narrow and this wide exist: a `min-width` below the first or a `max-width` above the second
# is every screen.
_NARROW_PX, _WIDE_PX = 320.0, 7680.0
_LENGTH = re.compile(r"([+-]?(?:\d+\.?\d*|\.\d+))(px|em|rem|pt|pc|cm|mm|in|ex|ch|q|vw|vh|vmin|vmax|%)?", re.I)
# em and rem at the default 16px; viewport units on a 1280x800 screen.
_PX_PER = {
    "px": 1.0, "em": 16.0, "rem": 16.0, "pt": 4 / 3, "pc": 16.0, "cm": 96 / 2.54, "mm": 96 / 25.4, "q": 96 / 101.6,
    "in": 96.0, "ex": 8.0, "ch": 8.0, "vw": 12.8, "vh": 8.0, "vmin": 8.0, "vmax": 12.8,
}  # fmt: skip
_FUNCTION_COLOR = re.compile(r"(rgba?|hsla?)\(\s*([^)]*)\)")
_MAX_NESTING = 8
_IMPORTANT = re.compile(r"\s*!\s*important\s*$", re.I)

T = TypeVar("T")
RGBA = tuple[float, float, float, float]  # 0-255 channels, alpha 0-1


@dataclass(frozen=True)
class Rule:
    """One selector of a style rule with its declarations: `conditional` when only some screens or a
    reader's action apply it; `order` is its place in its sheet."""

    selector: str
    declarations: dict[str, tuple[str, bool]]
    conditional: bool
    order: int


def sheet_rules(css: str, wanted: frozenset[str]) -> list[Rule]:
    """The style rules of one sheet that declare a property in `wanted` (or a custom `--property`)."""
    rules: list[Rule] = []
    for prelude, body, conditional in _style_rules(_COMMENT.sub(" ", css), False, 0):
        found = {p: v for p, v in declarations(body).items() if p in wanted or p.startswith("--")}
        if not found:
            continue
        for selector in split_selectors(prelude):
            interactive = bool(_INTERACTIVE.search(selector))
            selector = _INTERACTIVE.sub("", selector).strip() if interactive else selector
            if selector:
                rules.append(Rule(selector, found, conditional or interactive, len(rules)))
    return rules


def data_url_sheet(href: str) -> str | None:
    """The sheet a `data:text/css,...` URL carries (percent-encoded or base64): part of the page itself, so
    read like a `<style>`, where other URLs never are. None for any other href."""
    head, sep, payload = href.strip().partition(",")
    if not sep or not head.lower().startswith("data:"):
        return None
    kind = head[5:].lower().split(";")
    if kind[0] not in ("", "text/css"):
        return None
    try:
        data = base64.b64decode(unquote_to_bytes(payload)) if "base64" in kind[1:] else unquote_to_bytes(payload)
    except ValueError:
        return None
    return data.decode("utf-8", errors="replace")


def declarations(style: str) -> dict[str, tuple[str, bool]]:
    """A declaration block as property -> (value, important), as the cascade leaves it within one block:
    a later declaration wins unless an earlier one is `!important` and it is not. Shorthands of the
    box offsets (`inset`, `margin`, `padding`) are written out to their sides."""
    out: dict[str, tuple[str, bool]] = {}
    for part in style.split(";"):
        prop, sep, value = part.partition(":")
        if not sep:
            continue
        prop = prop.strip()
        prop = prop if prop.startswith("--") else prop.lower()  # custom properties are case-sensitive
        value = value.strip()
        important = bool(_IMPORTANT.search(value))
        value = _IMPORTANT.sub("", value)
        value = value if prop.startswith("--") else value.lower()
        for name, side in _longhands(prop, value):
            if name in out and out[name][1] and not important:
                continue
            out[name] = (side, important)
    return out


def _longhands(prop: str, value: str) -> list[tuple[str, str]]:
    if prop not in ("inset", "margin", "padding"):
        return [(prop, value)]
    parts = value.split()
    if not parts or len(parts) > 4:
        return [(prop, value)]
    top, right, bottom, left = box_sides(parts)
    prefix = "" if prop == "inset" else prop + "-"
    return [(prefix + "top", top), (prefix + "right", right), (prefix + "bottom", bottom), (prefix + "left", left)]


def box_sides(values: list[T]) -> tuple[T, T, T, T]:
    """top, right, bottom, left of a box shorthand's 1 to 4 values (`margin: 0 auto`)."""
    if len(values) == 1:
        return values[0], values[0], values[0], values[0]
    if len(values) == 2:
        return values[0], values[1], values[0], values[1]
    if len(values) == 3:
        return values[0], values[1], values[2], values[1]
    return values[0], values[1], values[2], values[3]


def _style_rules(css: str, conditional: bool, depth: int) -> Iterator[tuple[str, str, bool]]:
    """(selector list, declaration block, conditional) of each style rule, at-rule blocks read as the
    module docstring says. Each block is scanned once for its closing brace, and once more per at-rule
    around it: at-rules nested deeper than _MAX_NESTING (no real sheet has them) are not read."""
    if depth > _MAX_NESTING:
        return
    i, n = 0, len(css)
    while (start := css.find("{", i)) >= 0:
        depth, j = 1, start + 1
        while j < n and depth:
            brace = _next_brace(css, j)
            if brace < 0:
                j = n
                break
            depth += 1 if css[brace] == "{" else -1
            j = brace + 1
        prelude, body = css[i:start].rsplit(";", 1)[-1].strip(), css[start + 1 : j - 1 if not depth else j]
        i = j
        at = prelude.lower()
        if at.startswith("@media"):
            applies = media_applies(at[6:])
            if applies != "never":
                yield from _style_rules(body, conditional or applies == "some", depth + 1)
        elif at.startswith("@supports"):
            if not re.search(r"\bnot\b", at):
                yield from _style_rules(body, conditional, depth + 1)
        elif at.startswith("@layer"):
            yield from _style_rules(body, conditional, depth + 1)
        elif at.startswith("@container"):
            yield from _style_rules(body, True, depth + 1)
        elif not at.startswith("@"):
            yield prelude, body, conditional


def _next_brace(css: str, at: int) -> int:
    a, b = css.find("{", at), css.find("}", at)
    if a < 0:
        return b
    return a if b < 0 else min(a, b)


def media_applies(queries: str) -> str:
    """ "always", "some" or "never": on which screens a media query list (`screen and (min-width: 768px)`,
    `print`) is true."""
    results = [_query_applies(q.strip()) for q in queries.split(",")] or ["always"]
    if "always" in results:
        return "always"
    return "some" if "some" in results else "never"


def _query_applies(query: str) -> str:
    words = _ANY_FEATURE.sub(" ", query).replace(" and ", " ").split()
    negated = bool(words) and words[0] == "not"
    words = [w for w in words if w not in ("only", "not", "and")]
    media_type = words[0] if words else ""
    on_screens = media_type in _SCREEN_TYPES
    if negated:  # `not print`: every screen; `not screen and (...)`: a screen only when the features fail
        return "always" if not on_screens else "some"
    if not on_screens:
        return "never"
    features = _ANY_FEATURE.findall(query)
    every = all(_width_always(f) for f in features)
    return "always" if every else "some"


def _width_always(feature: str) -> bool:
    match = _WIDTH_FEATURE.fullmatch(feature.strip())
    if not match:
        return False
    px = length_px(match.group(2))
    if px is None:
        return False
    return px <= _NARROW_PX if match.group(1).lower() == "min" else px >= _WIDE_PX


def split_selectors(selectors: str) -> list[str]:
    """A selector list split at its top-level commas (`:is(.a, .b)` stays whole)."""
    out, depth, start = [], 0, 0
    for k, ch in enumerate(selectors):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append(selectors[start:k])
            start = k + 1
    out.append(selectors[start:])
    return [s.strip() for s in out if s.strip()]


_WHERE = re.compile(r":where\((?:[^()]|\([^()]*\))*\)", re.I)
_ATTRIBUTE = re.compile(r"\[[^\]]*\]")
_IDS = re.compile(r"#[\w-]+")
_CLASSES = re.compile(r"\.[\w-]+")
_PSEUDO_CLASSES = re.compile(r"(?<!:):(?!is\(|not\(|has\(|matches\()[\w-]+", re.I)
_TYPES = re.compile(r"(?:^|[\s>+~(,])([a-z][\w-]*)", re.I)
_PSEUDO_ELEMENTS = re.compile(r"::[\w-]+")


def specificity(selector: str) -> tuple[int, int, int]:
    """(ids, classes/attributes/pseudo-classes, types) of a selector; `:where()` counts nothing and the
    arguments of `:is()`, `:not()`, `:has()` count as if written out (close to their largest argument)."""
    s = _ATTRIBUTE.sub("[]", _WHERE.sub("", selector))
    classes = len(_CLASSES.findall(s)) + s.count("[]") + len(_PSEUDO_CLASSES.findall(s))
    return len(_IDS.findall(s)), classes, len(_TYPES.findall(s)) + len(_PSEUDO_ELEMENTS.findall(s))


def bucket(selector: str) -> tuple[str, str]:
    """What an element must have for the selector to match it: ("id", x), ("class", x), ("tag", x),
    ("attribute", name) or ("any", "") — read from the selector's last compound, so each element is tried
    only against the rules that could match it."""
    depth, cut = 0, 0
    for k, ch in enumerate(selector):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif depth == 0 and ch in " >+~":
            cut = k + 1
    compound = selector[cut:]
    if "\\" in compound:
        return "any", ""  # an escaped name (Tailwind's `.md\:block`) is not what it reads as here
    attribute = re.match(r"\*?\[\s*([\w-]+)", compound)
    compound = re.sub(r"\([^()]*\)|\[[^\]]*\]", "", compound)
    if "(" in compound:
        return "any", ""
    if m := re.search(r"#([\w-]+)", compound):
        return "id", m.group(1)
    if m := re.search(r"\.([\w-]+)", compound):
        return "class", m.group(1)
    if m := re.match(r"([a-z][\w-]*)", compound, re.I):
        return "tag", m.group(1).lower()
    if attribute and not compound.strip("*"):
        return "attribute", attribute.group(1).lower()
    return "any", ""


def length_px(value: str, em: float = 16.0) -> float | None:
    """A CSS length in pixels (em relative to `em`); None for anything else (percentages, calc, keywords)."""
    m = _LENGTH.fullmatch(value.strip())
    if not m:
        return None
    unit = (m.group(2) or "").lower()
    number = float(m.group(1))
    if unit == "%" or (not unit and number != 0):
        return None
    return number * (em if unit == "em" else _PX_PER.get(unit or "px", 1.0))


def number(value: str) -> float | None:
    """A plain number or a percentage as a fraction (`0.5`, `50%`)."""
    m = _LENGTH.fullmatch(value.strip())
    if not m or (m.group(2) or "") not in ("", "%"):
        return None
    return float(m.group(1)) / (100 if m.group(2) == "%" else 1)


def color(value: str) -> RGBA | None:
    """A colour as (r, g, b, alpha); None when `value` is not one (a keyword like `currentcolor`, a `var()`).

    Named colours are the CSS list as Pillow keeps it; both the comma and the space syntax of rgb() and
    hsl() are read."""
    value = value.strip().lower()
    if value == "transparent":
        return (0.0, 0.0, 0.0, 0.0)
    if m := re.fullmatch(r"#([0-9a-f]{3,4}|[0-9a-f]{6}|[0-9a-f]{8})", value):
        digits = m.group(1)
        digits = "".join(c * 2 for c in digits) if len(digits) <= 4 else digits
        alpha = int(digits[6:8], 16) / 255 if len(digits) == 8 else 1.0
        return (float(int(digits[0:2], 16)), float(int(digits[2:4], 16)), float(int(digits[4:6], 16)), alpha)
    if m := _FUNCTION_COLOR.fullmatch(value):
        parts = [p for p in re.split(r"[\s,/]+", m.group(2).strip()) if p]
        if len(parts) not in (3, 4):
            return None
        alpha = number(parts[3]) if len(parts) == 4 else 1.0
        if alpha is None:
            return None
        try:
            r, g, b = _hsl(parts[:3]) if m.group(1).startswith("hsl") else [_channel(p) for p in parts[:3]]
        except ValueError:
            return None
        return (r, g, b, max(0.0, min(1.0, alpha)))
    if value.isalpha():
        try:
            rgb = ImageColor.getrgb(value)
        except ValueError:
            return None
        return (float(rgb[0]), float(rgb[1]), float(rgb[2]), 1.0)
    return None


def _channel(part: str) -> float:
    v = float(part[:-1]) * 2.55 if part.endswith("%") else float(part)
    return max(0.0, min(255.0, v))


def _hsl(parts: list[str]) -> list[float]:
    hue = float(re.sub(r"deg$", "", parts[0])) / 360 % 1
    sat, light = (max(0.0, min(1.0, float(p.rstrip("%")) / 100)) for p in parts[1:3])
    q = light * (1 + sat) if light < 0.5 else light + sat - light * sat
    p = 2 * light - q

    def channel(t: float) -> float:
        t %= 1
        if t < 1 / 6:
            return p + (q - p) * 6 * t
        if t < 1 / 2:
            return q
        if t < 2 / 3:
            return p + (q - p) * (2 / 3 - t) * 6
        return p

    return [255 * channel(hue + 1 / 3), 255 * channel(hue), 255 * channel(hue - 1 / 3)]


def contrast(a: tuple[float, float, float], b: tuple[float, float, float]) -> float:
    """The WCAG contrast ratio of two opaque colours: 1 for the same colour, 21 for black on white."""
    la, lb = _luminance(a), _luminance(b)
    return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)


def _luminance(rgb: tuple[float, float, float]) -> float:
    def linear(c: float) -> float:
        c /= 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (linear(c) for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b
