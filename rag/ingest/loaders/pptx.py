"""PowerPoint (.pptx) through python-pptx: each slide a section headed by its title, and a page of its own.

A slide's text boxes are read top to bottom, left to right (the order a reader takes them in, which the
shape tree does not keep), grouped shapes included, tables as pipe tables, and the speaker notes after
the slide's own text. Slides are also the document's pages, so a citation names the slide it opens.
"""

from __future__ import annotations

import io
from typing import Any, Iterator

from rag.ingest.loaders.tables import rows_to_markdown


def parse_pptx(data: bytes, source: str) -> tuple[str, tuple[int, ...], str]:
    from pptx import Presentation

    presentation = Presentation(io.BytesIO(data))
    parts: list[str] = []  # slide texts, joined once (text grown by `+=` is a copy per slide)
    pages: list[int] = []
    length = 0
    first_title = ""
    for number, slide in enumerate(presentation.slides, start=1):
        title_shape = slide.shapes.title
        title = _one_line(title_shape.text_frame.text) if title_shape is not None and title_shape.has_text_frame else ""
        first_title = first_title or title
        blocks = ["# " + (title or f"Slide {number}")]
        for shape in sorted(_shapes(slide.shapes), key=lambda s: (s.top or 0, s.left or 0)):
            if title_shape is not None and shape.shape_id == title_shape.shape_id:
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
    return "\n\n".join(parts), tuple(pages), core_title or first_title


def _shapes(shapes: Any) -> Iterator[Any]:  # noqa: ANN401 - python-pptx shape collections are untyped
    """Every shape, the members of groups in place of the group."""
    from pptx.enum.shapes import MSO_SHAPE_TYPE

    for shape in shapes:
        if shape.shape_type == MSO_SHAPE_TYPE.GROUP:
            yield from _shapes(shape.shapes)
        else:
            yield shape


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
