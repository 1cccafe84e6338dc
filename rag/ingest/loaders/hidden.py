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
colour, font size, text indent). Text is unseen when

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

from rag.ingest.loaders.css import (
    RGBA,
    Rule,
    box_sides,
    bucket,
    color,
    contrast,
    declarations,
    length_px,
    number,
    sheet_rules,
    specificity,
)

# Further than this past the page's top or left edge is out of sight on any screen (the idiom is -9999px).
_OFF_SCREEN_PX = -500.0
_MIN_FONT_PX = 2.0  # smaller text is a line of dots, not something a reader reads
_MIN_OPACITY = 0.05
_MIN_CONTRAST = 1.1
_ROOT_FONT_PX = 16.0
_PROPERTIES = frozenset(
    {
        "display", "visibility", "opacity", "filter", "content-visibility", "font-size", "font", "color",
        "-webkit-text-fill-color", "background", "background-color", "background-image", "position", "top",
        "right", "bottom", "left", "margin-top", "margin-left", "text-indent", "clip", "clip-path", "transform",
        "scale", "translate", "width", "height", "max-width", "max-height", "overflow", "overflow-x",
        "overflow-y", "padding-top", "padding-right", "padding-bottom", "padding-left",
    }
)  # fmt: skip
_FONT_KEYWORDS = {
    "xx-small": 9.0, "x-small": 10.0, "small": 13.0, "medium": 16.0, "large": 18.0, "x-large": 24.0,
    "xx-large": 32.0, "xxx-large": 48.0,
}  # fmt: skip
_VAR = re.compile(r"var\(\s*(--[\w-]+)\s*(?:,\s*((?:[^()]|\([^()]*\))*))?\)")
_SCALE_FUNCTION = re.compile(r"(scale(?:x|y|z|3d)?|matrix)\(([^)]*)\)")
_TRANSLATE_FUNCTION = re.compile(r"(translate(?:x|y|3d)?)\(([^)]*)\)")
_CLIPPING = ("hidden", "clip", "auto", "scroll")


@dataclass(frozen=True)
class _Seen:
    """What an element passes to its children and what decides its own text."""

    gone: bool = False  # this box (and so everything in it) is not drawn, or drawn as nothing
    opacity: float = 1.0
    visibility: str = "visible"
    font_px: float = _ROOT_FONT_PX
    color: RGBA | None = (0.0, 0.0, 0.0, 1.0)  # None: a colour this does not read (so never judged unseen)
    fill: RGBA | None = None  # -webkit-text-fill-color, painted instead of `color`
    backdrop: tuple[float, float, float] | None = None  # the known colour behind the text
    indent_px: float = 0.0
    variables: dict[str, str] = field(default_factory=dict)

    def text_hidden(self) -> bool:
        if self.gone or self.visibility in ("hidden", "collapse") or self.font_px < _MIN_FONT_PX:
            return True
        if self.indent_px <= _OFF_SCREEN_PX:
            return True
        ink = self.fill or self.color
        if ink is None:
            return False
        if ink[3] < _MIN_OPACITY:
            return True
        if self.backdrop is None:
            return False
        return contrast(_over(ink, self.backdrop), self.backdrop) < _MIN_CONTRAST


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
                    if m.rule.conditional and _hides_alone(prop, value):
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
    font = _font_px(d, parent.font_px)
    opacity = parent.opacity * _opacity(d)
    return replace(
        parent,
        gone=parent.gone or opacity < _MIN_OPACITY or _box_gone(d, font),
        opacity=opacity,
        visibility=_inherited(d, "visibility", parent.visibility, "visible"),
        font_px=font,
        color=_color_of(d.get("color"), parent.color, parent.color),
        fill=_color_of(d.get("-webkit-text-fill-color"), parent.fill, None),
        backdrop=_backdrop(d, parent.backdrop),
        indent_px=_indent(d.get("text-indent"), parent.indent_px, font),
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


def _font_px(d: dict[str, str], parent: float) -> float:
    value = d.get("font-size")
    if value is None and "font" in d:
        value = next((t.split("/")[0] for t in d["font"].split() if _size(t.split("/")[0], parent) is not None), None)
    if value is None:
        return parent
    size = _size(value, parent)
    return parent if size is None else size


def _size(value: str, parent: float) -> float | None:
    if value in _FONT_KEYWORDS:
        return _FONT_KEYWORDS[value]
    if value == "smaller":
        return parent / 1.2
    if value == "larger":
        return parent * 1.2
    if value.endswith("%"):
        fraction = number(value)
        return None if fraction is None else parent * fraction
    return length_px(value, em=parent)


def _indent(value: str | None, parent: float, font: float) -> float:
    if value is None or value in ("inherit", "unset"):
        return parent
    px = length_px(value.split()[0], em=font) if value.split() else None
    return 0.0 if px is None else px


def _opacity(d: dict[str, str]) -> float:
    value = 1.0
    if (opacity := number(d.get("opacity", ""))) is not None:
        value *= max(0.0, min(1.0, opacity))
    for m in re.finditer(r"opacity\(\s*([^)]*)\)", d.get("filter", "")):
        if (f := number(m.group(1))) is not None:
            value *= max(0.0, min(1.0, f))
    return value


def _color_of(value: str | None, parent: RGBA | None, inherited: RGBA | None) -> RGBA | None:
    if value is None or value in ("inherit", "unset", "revert"):
        return inherited
    if value == "currentcolor":
        return parent
    return color(value)


def _backdrop(d: dict[str, str], parent: tuple[float, float, float] | None) -> tuple[float, float, float] | None:
    """The colour behind the element's text: its own background over what is behind it, unknown (None)
    under a picture or a gradient, the parent's where it declares none."""
    shorthand = d.get("background", "")
    image = d.get("background-image", "none")
    if "url(" in shorthand or "gradient" in shorthand or image not in ("none", "initial", "unset"):
        return None
    value = d.get("background-color")
    if value is None and shorthand:
        value = next((t for t in re.findall(r"(?:rgba?|hsla?)\([^)]*\)|#[0-9a-f]+|[a-z]+", shorthand)
                      if color(t) is not None), None)  # fmt: skip
    paint = color(value) if value else None
    if paint is None or paint[3] == 0:
        return parent
    if paint[3] >= 1:
        return paint[:3]
    return None if parent is None else _over(paint, parent)


def _over(paint: RGBA, behind: tuple[float, float, float]) -> tuple[float, float, float]:
    a = paint[3]
    return (paint[0] * a + behind[0] * (1 - a), paint[1] * a + behind[1] * (1 - a), paint[2] * a + behind[2] * (1 - a))


def _box_gone(d: dict[str, str], font: float) -> bool:
    """Whether the element's box is not drawn, drawn as nothing or drawn out of sight (with all it holds)."""
    if d.get("display") == "none" or d.get("content-visibility") == "hidden":
        return True
    return _collapsed(d) or _off_screen(d, font) or _clipped(d, font)


def _collapsed(d: dict[str, str]) -> bool:
    """Scaled to nothing by `transform` (scale, scaleX/Y, a matrix of no area) or the `scale` property."""
    factors: list[float] = []
    for name, args in _SCALE_FUNCTION.findall(d.get("transform", "")):
        values = [number(a) for a in re.split(r"[\s,]+", args.strip()) if a]
        if None in values or not values:
            continue
        if name == "matrix" and len(values) == 6:
            a, b, c, e = values[0], values[1], values[2], values[3]
            factors.append(abs(a * e - b * c))  # type: ignore[operator]
        elif name != "matrix":
            factors += [abs(v) for v in values[:2]]  # type: ignore[arg-type]
    scale = [number(v) for v in d.get("scale", "").split()]
    factors += [abs(v) for v in scale[:2] if v is not None]
    return any(f < 0.01 for f in factors)


def _off_screen(d: dict[str, str], font: float) -> bool:
    """Moved far past the page's top or left edge: a positioned box's offsets, negative margins, translate."""
    def far(value: str | None) -> bool:
        px = length_px(value, em=font) if value else None
        return px is not None and px <= _OFF_SCREEN_PX

    if d.get("position") in ("absolute", "fixed", "relative") and any(
        far(d.get(side)) for side in ("left", "top", "right", "bottom")
    ):
        return True
    if far(d.get("margin-left")) or far(d.get("margin-top")):
        return True
    shifts = [a for _, args in _TRANSLATE_FUNCTION.findall(d.get("transform", "")) for a in re.split(r"[\s,]+", args)]
    return any(far(s) for s in shifts + d.get("translate", "").split())


def _clipped(d: dict[str, str], font: float) -> bool:
    """Clipped to nothing: `clip:rect()` of no area on a positioned box, `clip-path` that leaves no area,
    or a box of at most 1px (height or width, or their maximum) that clips its overflow and has no padding
    on that axis to show it in."""
    rect = re.fullmatch(r"rect\((.*)\)", d.get("clip", ""))
    if rect and d.get("position") in ("absolute", "fixed"):
        sides = [length_px(s, em=font) for s in re.split(r"[\s,]+", rect.group(1).strip())]
        if len(sides) == 4 and None not in sides:
            top, right, bottom, left = sides
            if bottom <= top or right <= left:  # type: ignore[operator]
                return True
    if _clip_path_empty(d.get("clip-path", "")):
        return True
    overflow = d.get("overflow", "visible").split() or ["visible"]
    x = d.get("overflow-x", overflow[0])
    y = d.get("overflow-y", overflow[-1])
    for clips, sizes, pads in (
        (y in _CLIPPING, ("height", "max-height"), ("padding-top", "padding-bottom")),
        (x in _CLIPPING, ("width", "max-width"), ("padding-left", "padding-right")),
    ):
        if not clips or any(_padded(d.get(p), font) for p in pads):
            continue
        if any((px := length_px(d.get(p, ""), em=font)) is not None and px <= 1 for p in sizes):
            return True
    return False


def _padded(value: str | None, font: float) -> bool:
    """Padding that leaves room to show overflow in: more than 1px, or a size this cannot tell (`50%`)."""
    if value is None:
        return False
    px = length_px(value, em=font)
    return px is None or px > 1


def _clip_path_empty(path: str) -> bool:
    """`inset()` of 50% from opposite sides or more, a circle or ellipse of radius 0, a polygon of one point."""
    if m := re.match(r"inset\(([^)]*)\)", path):
        sides = [number(s) if s.endswith("%") else None for s in m.group(1).split(" round")[0].split()]
        if 1 <= len(sides) <= 4 and None not in sides:
            top, right, bottom, left = box_sides(sides)  # type: ignore[arg-type]
            return top + bottom >= 1 or left + right >= 1
    if m := re.match(r"(?:circle|ellipse)\(\s*([^\s)]+)(?:\s+([^\s)]+))?", path):
        radii = [number(r) if r.endswith("%") else length_px(r) for r in m.groups() if r]
        return any(r is not None and r <= 0 for r in radii)
    if m := re.match(r"polygon\(([^)]*)\)", path):
        return len({" ".join(p.split()) for p in m.group(1).split(",")}) == 1
    return False


def _hides_alone(prop: str, value: str) -> bool:
    """Whether one declaration hides by itself: such a one in a conditional rule is never applied when
    asking what a reader can bring up."""
    if prop == "display":
        return value == "none"
    if prop == "visibility":
        return value in ("hidden", "collapse")
    if prop in ("opacity", "filter"):
        return _opacity({prop: value}) < _MIN_OPACITY
    if prop in ("font-size", "font"):
        return _font_px({prop: value}, _ROOT_FONT_PX) < _MIN_FONT_PX
    if prop in ("color", "-webkit-text-fill-color"):
        paint = color(value)
        return paint is not None and paint[3] < _MIN_OPACITY
    if prop in ("width", "height", "max-width", "max-height"):
        px = length_px(value)
        return px is not None and px <= 1
    return _box_gone({prop: value, "position": "absolute", "overflow": "hidden"}, _ROOT_FONT_PX) or (
        prop == "text-indent" and _indent(value, 0.0, _ROOT_FONT_PX) <= _OFF_SCREEN_PX
    )
