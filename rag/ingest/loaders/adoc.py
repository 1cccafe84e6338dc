"""AsciiDoc to Markdown-shaped text: a small converter of what documentation uses, not a full AsciiDoc processor.

There is no maintained pure-Python AsciiDoc parser, and Asciidoctor is Ruby, so the structure that
retrieval needs is read line by line: section titles (`=` .. `======`, and Markdown-style `#`) become `#`
headings, listing, literal and passthrough blocks (`----`, `....`, `++++`, indented literal paragraphs)
become fences (their `[source,lang]` kept as the fence's language), tables (`|===`) pipe tables, list items
`- ` items, and paragraphs stay paragraphs. Comments, attribute entries, block attributes, the document
header's author/revision lines and block macros are left out; `include::` is never followed, so a file
can only ever yield its own text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rag.ingest.loaders.fences import fenced
from rag.ingest.loaders.tables import rows_to_markdown
from rag.ingest.loaders.text import decode_text

_TITLE = re.compile(r"^(={1,6}|#{1,6})[ \t]+(\S.*?)(?:[ \t]+\1)?[ \t]*$")
# Delimited blocks whose content is verbatim (listing, literal, passthrough): 4 or more of one character.
_VERBATIM = re.compile(r"^(-{4,}|\.{4,}|\+{4,})[ \t]*$")
# Delimiters of blocks whose content is ordinary text (example, sidebar, quote, open block): dropped.
_WRAPPER = re.compile(r"^(={4,}|\*{4,}|_{4,}|--)[ \t]*$")
_COMMENT_BLOCK = re.compile(r"^/{4,}[ \t]*$")
_TABLE = re.compile(r"^[|!,:]===[ \t]*$")
_SKIP_LINE = re.compile(
    r"^(?://(?!/).*|:!?[\w-]+!?:.*|\[.*\]|'{3,}|<{3}|\+|\w[\w-]*::\S*\[.*\])[ \t]*$"
)  # line comment, attribute entry, block attributes, breaks, list continuation, block macro (include::, image::)
_SOURCE_ATTR = re.compile(r"^\[(?:source)?,\s*([\w+#.-]+)")
_BLOCK_TITLE = re.compile(r"^\.([^.\s].*)$")
_LIST_ITEM = re.compile(r"^[ \t]*(?:\*{1,5}|-|\.{1,5}|\d+\.)[ \t]+(.*)$")
_DESCRIPTION = re.compile(r"^(\S.*?)(?::{2,4}|;;)(?:[ \t]+(.*))?$")
_INDENTED = re.compile(r"^[ \t]+\S")


@dataclass
class _State:
    blocks: list[str] = field(default_factory=list)
    para: list[str] = field(default_factory=list)
    language: str = ""  # from the last `[source,lang]` line, for the next listing block

    def flush(self) -> None:
        text = " ".join(" ".join(self.para).split())
        if text:
            self.blocks.append(text)
        self.para.clear()


def adoc_to_markdown(text: str) -> tuple[str, str]:
    """AsciiDoc source as Markdown-shaped text, and the document title (its `= Title`)."""
    lines = text.split("\n")
    state = _State()
    title = ""
    i = 0
    while i < len(lines):
        line = lines[i].rstrip()
        if _COMMENT_BLOCK.match(line) or _VERBATIM.match(line) or _TABLE.match(line):
            state.flush()
            end = _closing(lines, i)
            body = lines[i + 1 : end]
            if _TABLE.match(line):
                state.blocks.append(_table(body))
            elif not _COMMENT_BLOCK.match(line):
                state.blocks.append(fenced("\n".join(body), state.language))
            state.language = ""
            i = end + 1
            continue
        heading = _TITLE.match(line)
        if heading and not state.para:
            level = len(heading.group(1))
            state.blocks.append("#" * level + " " + heading.group(2))
            if level == 1 and heading.group(1) == "=" and not title:
                title = heading.group(2)
                i = _skip_header(lines, i + 1)  # author and revision lines, header attributes
                continue
        elif not line.strip() or _WRAPPER.match(line):
            state.flush()
        elif _SKIP_LINE.match(line):
            state.flush()
            source = _SOURCE_ATTR.match(line)
            state.language = source.group(1) if source else state.language
        elif _INDENTED.match(line) and not state.para:
            end = i
            while end < len(lines) and lines[end].strip():
                end += 1
            state.blocks.append(fenced(_dedent(lines[i:end]), state.language))
            i = end
            continue
        elif _BLOCK_TITLE.match(line) and not state.para:
            state.blocks.append(_BLOCK_TITLE.match(line).group(1).strip())  # type: ignore[union-attr]
        elif item := _LIST_ITEM.match(line):
            state.flush()
            state.para.append("- " + item.group(1))
        elif term := _DESCRIPTION.match(line):
            state.flush()
            state.para.append(f"{term.group(1)}: {term.group(2) or ''}")
        else:
            state.para.append(line.removesuffix(" +"))
        i += 1
    state.flush()
    return "\n\n".join(state.blocks), title


def _closing(lines: list[str], start: int) -> int:
    """Index of the line that closes the block opened at `start` (the same delimiter), or the end."""
    delimiter = lines[start].strip()
    for j in range(start + 1, len(lines)):
        if lines[j].strip() == delimiter:
            return j
    return len(lines)


def _skip_header(lines: list[str], start: int) -> int:
    """Past the document header's lines after `= Title`: they run to the first blank line."""
    while start < len(lines) and lines[start].strip() and not _TITLE.match(lines[start]):
        start += 1
    return start


def _dedent(lines: list[str]) -> str:
    indent = min(len(x) - len(x.lstrip()) for x in lines if x.strip())
    return "\n".join(x[indent:].rstrip() for x in lines)


def _table(body: list[str]) -> str:
    """A `|===` table's cells as a pipe table: as many columns as its first row has cells."""
    rows_of_cells = [[c.strip() for c in line.split("|")[1:]] for line in body if line.strip().startswith("|")]
    if not rows_of_cells:
        return "\n".join(body)
    width = len(rows_of_cells[0]) or 1
    cells = [c for row in rows_of_cells for c in row]
    return rows_to_markdown([cells[k : k + width] for k in range(0, len(cells), width)])


def parse_adoc(data: bytes, source: str) -> tuple[str, tuple[int, ...], str]:
    text, title = adoc_to_markdown(decode_text(data, source).replace("\r\n", "\n"))
    return text, (), title
