"""DOCX (Word, LibreOffice): paragraphs in body order, Title and Heading styles as headings, tables as pipe tables."""

from __future__ import annotations

import io
import re

from rag.ingest.loaders.tables import rows_to_markdown


def parse_docx(data: bytes, source: str) -> tuple[str, tuple[int, ...], str]:
    import docx
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    document = docx.Document(io.BytesIO(data))
    blocks: list[str] = []
    title = ""
    for element in document.element.body.iterchildren():
        tag = element.tag.rsplit("}", 1)[-1]
        if tag == "p":
            para = Paragraph(element, document)
            text = para.text.strip()
            if not text:
                continue
            style = (para.style.name if para.style is not None else "") or ""
            level = re.fullmatch(r"Heading (\d)", style)
            if style == "Title":
                title = title or text
                blocks.append("# " + text)
            elif level:
                # One level below the Title (which is `#`), so "Title > Heading 1" stays one path.
                blocks.append("#" * min(int(level.group(1)) + 1, 6) + " " + text)
            elif style.startswith("List"):
                blocks.append("- " + text)
            else:
                blocks.append(text)
        elif tag == "tbl":
            table = Table(element, document)
            blocks.append(rows_to_markdown([[cell.text.strip() for cell in row.cells] for row in table.rows]))
    return "\n\n".join(b for b in blocks if b), (), title
