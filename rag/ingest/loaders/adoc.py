"""AsciiDoc to Markdown-shaped text: a small converter of what documentation uses, not a full AsciiDoc processor.

There is no maintained pure-Python AsciiDoc parser, and Asciidoctor is Ruby, so the structure that
retrieval needs is read line by line: section titles (`=` .. `======`, and Markdown-style `#`) become `#`
headings, listing, literal and passthrough blocks (`----`, `....`, `++++`, indented literal paragraphs)
become fences (their `[source,lang]` kept as the fence's language), tables (`|===`) pipe tables, list items
`- ` items, and paragraphs stay paragraphs. Comments, attribute entries, block attributes, the document
header's author/revision lines and block macros are left out; `include::` is never followed, so a file
can only ever yield its own text.

Attribute references (`{price}`) read as the rendered page shows them: an entry (`:price: 4 euros`, in the
header or anywhere before the reference, `:price!:` unsets it) gives its value from there on, the author
and revision lines give `{author}`, `{firstname}`, `{email}`, `{revnumber}` and the like, and the character
built-ins (`{nbsp}`, `{plus}`, `{startsb}` ...) their character. A reference to nothing stays as written
(Asciidoctor's default), so does `\\{price}` (without its backslash), and listing and literal blocks are
verbatim, as Asciidoctor leaves them.
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
_ATTRIBUTE_ENTRY = re.compile(r"^:(!?)(\w[\w-]*)(!?):(?:[ \t]+(.*?))?[ \t]*$")
_REFERENCE = re.compile(r"(\\?)\{(\w[\w-]*)\}")
_REVISION = re.compile(r"^v?(\d[\w.-]*)(?:,[ \t]*([^:]*))?(?::[ \t]*(.*))?$")
_AUTHOR = re.compile(r"^([^:<>\[\]{}]+?)(?:[ \t]+<([^<>\s]+)>)?[ \t]*$")
# Asciidoctor's character replacement attributes (its "built-in" ones a document uses in prose).
_BUILT_IN = {
    "empty": "", "blank": "", "sp": " ", "nbsp": "\u00a0", "zwsp": "\u200b", "wj": "\u2060", "apos": "'",
    "quot": '"', "lsquo": "\u2018", "rsquo": "\u2019", "ldquo": "\u201c", "rdquo": "\u201d", "deg": "\u00b0",
    "plus": "+", "brvbar": "\u00a6", "vbar": "|", "amp": "&", "lt": "<", "gt": ">", "startsb": "[", "endsb": "]",
    "caret": "^", "asterisk": "*", "tilde": "~", "backslash": "\\", "backtick": "`", "two-colons": "::",
    "two-semicolons": ";;", "cpp": "C++", "pp": "++",
}  # fmt: skip


@dataclass
class _State:
    blocks: list[str] = field(default_factory=list)
    para: list[str] = field(default_factory=list)
    language: str = ""  # from the last `[source,lang]` line, for the next listing block
    attributes: dict[str, str] = field(default_factory=lambda: dict(_BUILT_IN))

    def flush(self) -> None:
        text = " ".join(" ".join(self.para).split())
        if text:
            self.blocks.append(self.resolve(text))
        self.para.clear()

    def resolve(self, text: str) -> str:
        """`text` with its attribute references replaced, in one pass (values were resolved when set)."""
        return _REFERENCE.sub(self._reference, text) if "{" in text else text

    def _reference(self, match: re.Match[str]) -> str:
        if match.group(1):
            return match.group(0)[1:]  # \{name}: the reference as written, without its escape
        value = self.attributes.get(match.group(2).lower())
        return match.group(0) if value is None else value

    def entry(self, lines: list[str], i: int) -> int:
        """Read the attribute entry at `lines[i]` (its value may go on over lines ending in ` \\`) when it is
        one; the index of the line after it, or `i` when it is not an entry."""
        match = _ATTRIBUTE_ENTRY.match(lines[i].rstrip())
        if not match:
            return i
        value = match.group(4) or ""
        while value.endswith(" \\") and i + 1 < len(lines):
            i += 1
            value = value[:-2].rstrip() + " " + lines[i].strip()
        name = match.group(2).lower()
        if match.group(1) or match.group(3):
            self.attributes.pop(name, None)
        else:
            self.attributes[name] = self.resolve(value)
        return i + 1


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
                state.blocks.append(state.resolve(_table(body)))
            elif not _COMMENT_BLOCK.match(line):
                state.blocks.append(fenced("\n".join(body), state.language))
            state.language = ""
            i = end + 1
            continue
        heading = _TITLE.match(line)
        if heading and not state.para:
            level = len(heading.group(1))
            if level == 1 and heading.group(1) == "=" and not title:
                i = _header(lines, i + 1, state)  # author and revision lines, header attributes
                title = state.attributes["doctitle"] = state.resolve(heading.group(2))  # the header's attributes too
                state.blocks.append("# " + title)
                continue
            state.blocks.append("#" * level + " " + state.resolve(heading.group(2)))
        elif not line.strip() or _WRAPPER.match(line):
            state.flush()
        elif _SKIP_LINE.match(line):
            state.flush()
            if (after := state.entry(lines, i)) > i:
                i = after
                continue
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
            state.blocks.append(state.resolve(_BLOCK_TITLE.match(line).group(1).strip()))  # type: ignore[union-attr]
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


def _header(lines: list[str], start: int, state: _State) -> int:
    """Past the document header's lines after `= Title` (they run to the first blank line), its attribute
    entries read, its author line giving `{author}` and `{email}`, its revision line `{revnumber}` and such."""
    first = start
    while start < len(lines) and lines[start].strip() and not _TITLE.match(lines[start]):
        if (after := state.entry(lines, start)) > start:
            start = after
            continue
        line = lines[start].strip()
        author = _AUTHOR.match(line) if start == first and not re.match(r"//|v\d", line) else None
        revision = _REVISION.match(line) if start in (first, first + 1) and not author else None
        if author:
            names = author.group(1).split()
            state.attributes.update(author=" ".join(names), firstname=names[0], lastname=names[-1])
            if author.group(2):
                state.attributes["email"] = author.group(2)
        elif revision:
            for key, value in zip(("revnumber", "revdate", "revremark"), revision.groups()):
                if value:
                    state.attributes[key] = value.strip()
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
