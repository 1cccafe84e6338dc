"""DOCX (Word, LibreOffice): paragraphs in body order, tables as pipe tables.

Structure comes from paragraph styles, never from what the text looks like: Title, "Heading N" and a
paragraph or style outline level are headings; code (a preformatted or code style, or every run in a
monospace font) becomes a fenced block; LibreOffice's "List Heading" / "List Contents" pair (how it
writes a definition list) becomes one definition item (rag.text.definitions). Body text that Markdown
would read as structure (a `# comment` line, a ``` line, a setext underline) is escaped, so a code
listing typed in a body style cannot open a heading that the real headings after it nest under.

Text Word does not show is left out, as the HTML loader leaves out hidden elements (docs/security.md):
runs formatted hidden (`w:vanish`, directly or by their character or paragraph style) or under 2pt, and
the document notes how many characters went.
"""

from __future__ import annotations

import io
import re
from typing import Any

from rag.ingest.loaders.fences import fenced
from rag.ingest.loaders.parsed import Parsed
from rag.ingest.loaders.tables import rows_to_markdown
from rag.text.definitions import definition_item
from rag.text.words import plural

_HEADING_STYLE = re.compile(r"Heading (\d)")
# Style names of code: LibreOffice's "Preformatted Text" and "Source Text", Word's "HTML Preformatted",
# "HTML Code", "Macro Text", and any style a writer named "Code", "Listing" or "Verbatim".
_CODE_STYLE = re.compile(r"\b(?:preformatted|source text|code|listing|verbatim|macro text)\b", re.I)
_MONOSPACE = re.compile(
    r"courier|consolas|mono\b|monospace|menlo|monaco|lucida console|lucida sans typewriter|inconsolata"
    r"|source code|fira code|andale|cascadia|jetbrains|typewriter",
    re.I,
)
# Body lines Markdown would read as structure: an ATX heading, a fence, a setext underline.
_STRUCTURE_LINE = re.compile(r"^([ \t]{0,3})(#{1,6}(?:[ \t]|$)|`{3,}|~{3,}|=+[ \t]*$|-+[ \t]*$)", re.M)
_TERM_STYLES = {"list heading"}
_DESCRIPTION_STYLES = {"list contents"}
_BODY_OUTLINE_LEVEL = 9  # w:outlineLvl 9 is "body text"
_MIN_FONT_PT = 2.0  # smaller text is a line of dots in Word, not something a reader reads


def parse_docx(data: bytes, source: str) -> Parsed:
    import docx
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    document = docx.Document(io.BytesIO(data))
    # A document typed all in Courier says nothing by its font: then only code styles mark code.
    normal = next((s for s in document.styles if s.name == "Normal"), None)
    out = _Blocks(fonts_mark_code=not _MONOSPACE.search(_style_font(normal)))
    for element in document.element.body.iterchildren():
        tag = element.tag.rsplit("}", 1)[-1]
        if tag == "p":
            out.paragraph(Paragraph(element, document))
        elif tag == "tbl":
            out.flush()
            table = Table(element, document)
            rows = [[out.cell_text(cell) for cell in row.cells] for row in table.rows]
            out.blocks.append(rows_to_markdown(rows))
    out.flush()
    notes = (f"dropped {plural(out.hidden, 'character')} of hidden text",) if out.hidden else ()
    return Parsed("\n\n".join(b for b in out.blocks if b), (), out.title, notes)


class _Blocks:
    """The document's blocks so far, with the code lines and definition item still being collected."""

    def __init__(self, fonts_mark_code: bool) -> None:
        self.fonts_mark_code = fonts_mark_code
        self.blocks: list[str] = []
        self.title = ""
        self.code: list[str] = []
        self.terms: list[str] = []
        self.description: list[str] = []
        # python-docx finds a paragraph's or run's style by scanning every style of the document (the default
        # one on each call), so each style id is looked up once: per paragraph it made the loader crawl.
        self._styles: dict[tuple[str, str | None], Any] = {}
        self.hidden = 0  # characters of hidden text left out
        self._flags: dict[str | None, tuple[bool | None, Any]] = {}

    def text(self, para: Any, style: Any) -> str:  # noqa: ANN401 - a python-docx Paragraph and its style
        """The paragraph's text without the runs Word hides (its links' runs included)."""
        from docx.text.run import Run

        parts = []
        for item in para.iter_inner_content():
            for run in [item] if isinstance(item, Run) else item.runs:
                if self._run_hidden(run, style):
                    self.hidden += len(" ".join(run.text.split()))
                else:
                    parts.append(run.text)
        return "".join(parts)

    def _run_hidden(self, run: Any, para_style: Any) -> bool:  # noqa: ANN401 - a python-docx Run and a style
        """Hidden (vanish) or tiny: the run's own formatting first, then its character style's, its paragraph's."""
        hidden, size = run.font.hidden, run.font.size
        for style in (self.style(run), para_style):
            if hidden is None or size is None:
                inherited = self._font_flags(style)
                hidden = inherited[0] if hidden is None else hidden
                size = inherited[1] if size is None else size
        return bool(hidden) or (size is not None and size.pt < _MIN_FONT_PT)

    def _font_flags(self, style: Any) -> tuple[bool | None, Any]:  # noqa: ANN401 - a style, a Length
        """(hidden, size) a style gives its text, from it or the styles it is based on; looked up once per style."""
        key = getattr(style, "style_id", None)
        if key not in self._flags:
            hidden = size = None
            while style is not None and (hidden is None or size is None):
                hidden = style.font.hidden if hidden is None else hidden
                size = style.font.size if size is None else size
                style = style.base_style
            self._flags[key] = (hidden, size)
        return self._flags[key]

    def cell_text(self, cell: Any) -> str:  # noqa: ANN401 - a python-docx table cell
        return "\n".join(self.text(p, self.style(p)) for p in cell.paragraphs).strip()

    def style(self, item: Any) -> Any:  # noqa: ANN401 - a python-docx Paragraph or Run, and its style
        element = getattr(item, "_p", None)
        key = ("p", element.style) if element is not None else ("r", item._r.style)
        if key not in self._styles:
            self._styles[key] = item.style
        return self._styles[key]

    def paragraph(self, para: Any) -> None:  # noqa: ANN401 - a python-docx Paragraph
        style = self.style(para)
        names = _style_names(style)
        level = _heading_level(para, style, names)
        if level is None and _is_code(para, style, names, self.fonts_mark_code, self.style):
            self._close_item()
            self.code.append(self.text(para, style).rstrip())
            return
        text = self.text(para, style).strip()
        if not text:
            return  # an empty body paragraph ends nothing: Word spaces code and lists with them
        self._close_code()
        name = names[0].casefold() if names else ""
        if name in _TERM_STYLES:
            if self.description:
                self._close_item()
            self.terms.append(text)
            return
        if name in _DESCRIPTION_STYLES and self.terms:
            self.description.append(_escaped(text))
            return
        self._close_item()
        if level is not None:
            heading = " ".join(text.split())
            if names[0] == "Title":
                self.title = self.title or heading
            self.blocks.append("#" * min(level, 6) + " " + heading)
        elif name.startswith("list"):
            self.blocks.append("- " + _escaped(text))
        else:
            self.blocks.append(_escaped(text))

    def flush(self) -> None:
        self._close_code()
        self._close_item()

    def _close_code(self) -> None:
        while self.code and not self.code[-1].strip():
            self.code.pop()
        if self.code:
            self.blocks.append(fenced("\n".join(self.code)))
        self.code = []

    def _close_item(self) -> None:
        if self.terms or self.description:
            self.blocks.append(definition_item([_escaped(t) for t in self.terms], self.description))
        self.terms, self.description = [], []


def _style_names(style: Any) -> list[str]:  # noqa: ANN401 - a python-docx style
    """The paragraph's style name and those of the styles it is based on, nearest first."""
    names: list[str] = []
    while style is not None and len(names) < 10:
        names.append(style.name or "")
        style = style.base_style
    return names


def _is_code(para: Any, style: Any, names: list[str], fonts: bool, style_of: Any) -> bool:  # noqa: ANN401
    """A code style (its own or one it is based on); when `fonts`, also a monospace style font or every run
    in a monospace font."""
    if any(_CODE_STYLE.search(n) for n in names):
        return True
    if not fonts:
        return False
    if _MONOSPACE.search(_style_font(style)):
        return True
    runs = [r for r in para.runs if r.text.strip()]
    return bool(runs) and all(_MONOSPACE.search(_run_font(r, style_of(r))) for r in runs)


def _style_font(style: Any) -> str:  # noqa: ANN401 - a python-docx style
    while style is not None:
        if style.font.name:
            return style.font.name
        style = style.base_style
    return ""


def _run_font(run: Any, style: Any) -> str:  # noqa: ANN401 - a python-docx Run and its style
    """The run's own font, else its character style's (LibreOffice's "Source Text"), whose name counts too."""
    if run.font.name:
        return run.font.name
    if style is not None and style.name and _CODE_STYLE.search(style.name):
        return "monospace"
    return _style_font(style) if style is not None else ""


def _heading_level(para: Any, style: Any, names: list[str]) -> int | None:  # noqa: ANN401 - a Paragraph, its style
    """How many `#` the heading gets: 1 for the Title, 1 + its level for a heading (so "Title > Heading 1" stays
    one path), None for body text.

    A paragraph's own outline level wins, then its style's (or a style it is based on).
    """
    if names and names[0] == "Title":
        return 1
    own = _outline_level(para._p.pPr)
    if own is not None:
        return None if own >= _BODY_OUTLINE_LEVEL else own + 2
    while style is not None:
        heading = _HEADING_STYLE.fullmatch(style.name or "")
        if heading:
            return int(heading.group(1)) + 1
        level = _outline_level(style.element.pPr)
        if level is not None:
            return None if level >= _BODY_OUTLINE_LEVEL else level + 2
        style = style.base_style
    return None


def _outline_level(ppr: Any) -> int | None:  # noqa: ANN401 - an lxml pPr element, or None
    if ppr is None:
        return None
    found = [e for e in ppr if e.tag.endswith("}outlineLvl")]
    if not found:
        return None
    value = next((v for k, v in found[0].attrib.items() if k.endswith("}val")), None)
    return int(value) if value is not None and value.isdigit() else None


def _escaped(text: str) -> str:
    """Body text with a backslash before each line start Markdown would read as a heading, fence or underline."""
    return _STRUCTURE_LINE.sub(lambda m: m.group(1) + "\\" + m.group(2), text)
