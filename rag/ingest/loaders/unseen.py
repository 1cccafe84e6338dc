"""What keeps a box or its text out of a reader's sight, read from the values the cascade gave it.

rag.ingest.loaders.hidden runs the cascade and inheritance; these functions read one element's declared
values (`d`, property -> lowercased value): whether its box is not drawn or drawn as nothing
(`box_gone`), the font size, indent, opacity, colours and backdrop it passes on, and whether one
declaration hides by itself (`hides_alone`). The thresholds are what a reader cannot see; the module
docstring of hidden.py lists the techniques.
"""

from __future__ import annotations

import re

from rag.ingest.loaders.css import RGBA, box_sides, color, length_px, number

# Further than this past the page's top or left edge is out of sight on any screen (the idiom is -9999px).
OFF_SCREEN_PX = -500.0
MIN_FONT_PX = 2.0  # smaller text is a line of dots, not something a reader reads
MIN_OPACITY = 0.05
MIN_CONTRAST = 1.1
ROOT_FONT_PX = 16.0
_FONT_KEYWORDS = {
    "xx-small": 9.0, "x-small": 10.0, "small": 13.0, "medium": 16.0, "large": 18.0, "x-large": 24.0,
    "xx-large": 32.0, "xxx-large": 48.0,
}  # fmt: skip
_SCALE_FUNCTION = re.compile(r"(scale(?:x|y|z|3d)?|matrix)\(([^)]*)\)")
_TRANSLATE_FUNCTION = re.compile(r"(translate(?:x|y|3d)?)\(([^)]*)\)")
_CLIPPING = ("hidden", "clip", "auto", "scroll")


def font_px(d: dict[str, str], parent: float) -> float:
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


def indent_px(value: str | None, parent: float, font: float) -> float:
    if value is None or value in ("inherit", "unset"):
        return parent
    px = length_px(value.split()[0], em=font) if value.split() else None
    return 0.0 if px is None else px


def opacity_of(d: dict[str, str]) -> float:
    value = 1.0
    if (opacity := number(d.get("opacity", ""))) is not None:
        value *= max(0.0, min(1.0, opacity))
    for m in re.finditer(r"opacity\(\s*([^)]*)\)", d.get("filter", "")):
        if (f := number(m.group(1))) is not None:
            value *= max(0.0, min(1.0, f))
    return value


def color_of(value: str | None, parent: RGBA | None, inherited: RGBA | None) -> RGBA | None:
    if value is None or value in ("inherit", "unset", "revert"):
        return inherited
    if value == "currentcolor":
        return parent
    return color(value)


def backdrop(d: dict[str, str], parent: tuple[float, float, float] | None) -> tuple[float, float, float] | None:
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
    return None if parent is None else over(paint, parent)


def over(paint: RGBA, behind: tuple[float, float, float]) -> tuple[float, float, float]:
    a = paint[3]
    return (paint[0] * a + behind[0] * (1 - a), paint[1] * a + behind[1] * (1 - a), paint[2] * a + behind[2] * (1 - a))


def box_gone(d: dict[str, str], font: float) -> bool:
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
        return px is not None and px <= OFF_SCREEN_PX

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


def hides_alone(prop: str, value: str) -> bool:
    """Whether one declaration hides by itself: such a one in a conditional rule is never applied when
    asking what a reader can bring up."""
    if prop == "display":
        return value == "none"
    if prop == "visibility":
        return value in ("hidden", "collapse")
    if prop in ("opacity", "filter"):
        return opacity_of({prop: value}) < MIN_OPACITY
    if prop in ("font-size", "font"):
        return font_px({prop: value}, ROOT_FONT_PX) < MIN_FONT_PX
    if prop in ("color", "-webkit-text-fill-color"):
        paint = color(value)
        return paint is not None and paint[3] < MIN_OPACITY
    if prop in ("width", "height", "max-width", "max-height"):
        px = length_px(value)
        return px is not None and px <= 1
    return box_gone({prop: value, "position": "absolute", "overflow": "hidden"}, ROOT_FONT_PX) or (
        prop == "text-indent" and indent_px(value, 0.0, ROOT_FONT_PX) <= OFF_SCREEN_PX
    )
