"""PowerPoint (.pptx) through python-pptx: each slide a section headed by its title, and a page of its own.

A slide's text boxes are read top to bottom, left to right (the order a reader takes them in, which the
shape tree does not keep), grouped shapes included, tables as pipe tables, and the speaker notes after
the slide's own text. Slides are also the document's pages, so a citation names the slide it opens.

A shape the slide show does not show is left out and counted, as hidden HTML is (docs/security.md): one
marked hidden (in the selection pane, or its group is) or placed wholly off the slide.
"""

from __future__ import annotations

import io
from typing import Any, Iterator

from rag.ingest.loaders.parsed import Parsed
from rag.ingest.loaders.tables import rows_to_markdown
from rag.text.words import plural


def parse_pptx(data: bytes, source: str) -> Parsed:
    from pptx import Presentation

    presentation = Presentation(io.BytesIO(data))
    parts: list[str] = []  # slide texts, joined once (text grown by `+=` is a copy per slide)
    pages: list[int] = []
    length = 0
    first_title = ""
    hidden = 0
    size = (presentation.slide_width or 0, presentation.slide_height or 0)
    for number, slide in enumerate(presentation.slides, start=1):
        title_shape = slide.shapes.title
        title = _one_line(title_shape.text_frame.text) if title_shape is not None and title_shape.has_text_frame else ""
        first_title = first_title or title
        blocks = ["# " + (title or f"Slide {number}")]
        for shape, shown in sorted(_shapes(slide.shapes, size), key=lambda s: (s[0].top or 0, s[0].left or 0)):
            if title_shape is not None and shape.shape_id == title_shape.shape_id:
                continue
            if not shown:
                hidden += sum(len(" ".join(b.split())) for b in _shape_blocks(shape))
                continue
            blocks += _shape_blocks(shape)
        if slide.has_notes_slide and slide.notes_slide.notes_text_frame is not None:
            notes = slide.notes_slide.notes_text_frame.text.strip()
            if notes:
                blocks.append("Notes: " + " ".join(notes.split()))
        slide_text = "\n\n".join(b for b in blocks if b)
        length += 2 if parts else 0
        pages.append(length)
        parts.append(slide_text)
        length += len(slide_text)
    core_title = (presentation.core_properties.title or "").strip()
    notes = (f"dropped {plural(hidden, 'character')} of hidden text",) if hidden else ()
    return Parsed("\n\n".join(parts), tuple(pages), core_title or first_title, notes)


def _shapes(shapes: Any, slide: tuple[int, int] | None, shown: bool = True) -> Iterator[tuple[Any, bool]]:  # noqa: ANN401
    """Every shape with whether the slide show shows it, the members of groups in place of the group.

    `slide` (width, height) places the top-level shapes; a group's members are placed in the group's own
    coordinates, so only being marked hidden (or in a hidden group) hides them."""
    from pptx.enum.shapes import MSO_SHAPE_TYPE

    for shape in shapes:
        seen = shown and not _unseen(shape, slide)
        if shape.shape_type == MSO_SHAPE_TYPE.GROUP:
            yield from _shapes(shape.shapes, None, seen)
        else:
            yield shape, seen


def _marked_hidden(shape: Any) -> bool:  # noqa: ANN401
    return str(shape._element._nvXxPr.cNvPr.get("hidden", "")).lower() in ("1", "true")


def _unseen(shape: Any, slide: tuple[int, int] | None) -> bool:  # noqa: ANN401
    """Hidden in the selection pane, or (given the slide's size) wholly outside the slide."""
    if _marked_hidden(shape):
        return True
    left, top, width, height = shape.left, shape.top, shape.width, shape.height
    if slide is None or None in (left, top, width, height) or not all(slide):
        return False
    return left >= slide[0] or top >= slide[1] or left + width <= 0 or top + height <= 0


def _shape_blocks(shape: Any) -> list[str]:  # noqa: ANN401
    if getattr(shape, "has_table", False):
        return [rows_to_markdown([[cell.text.strip() for cell in row.cells] for row in shape.table.rows])]
    if not shape.has_text_frame:
        return []
    blocks = []
    for para in shape.text_frame.paragraphs:
        line = _one_line("".join(run.text for run in para.runs) or para.text)
        if line:
            # A paragraph below the first outline level is a bullet point on a slide.
            blocks.append(("- " if para.level > 0 or _is_body(shape) else "") + line)
    return blocks


def _is_body(shape: Any) -> bool:  # noqa: ANN401
    """A body placeholder's paragraphs are bullet points even at level 0 (that is how slides show them)."""
    from pptx.enum.shapes import PP_PLACEHOLDER

    return bool(shape.is_placeholder and shape.placeholder_format.type in (PP_PLACEHOLDER.BODY, PP_PLACEHOLDER.OBJECT))


def _one_line(text: str) -> str:
    """Slide text with its soft line breaks (vertical tabs in the XML) and runs of spaces as single spaces."""
    return " ".join(text.replace("\x0b", " ").split())
