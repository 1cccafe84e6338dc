"""Document in, chunks out. Every chunk is an exact span of the document's text.

The default strategy follows the document's own structure: a chunk never crosses a heading, a section
that fits the size limit is one chunk, tables, code blocks (fenced, indented, or fenced inside an
indented list item or admonition) and definition-list items (a term and its description,
rag.text.definitions) stay whole units, and a longer section is cut on paragraphs into parts
of even length, each keeping the section's heading path. "sentence" packs
sentences the same way, "recursive" runs langchain's splitter inside each section, and "fixed" cuts
plain windows with overlap across headings (snapped to sentence ends or spaces). "semantic" cuts each
section where the dense model sees the topic change (rag.ingest.semantic), and "code" is "heading" with
every code block kept whole up to the table limit (a Python file's functions and classes are code blocks
of their own, rag.ingest.loaders.code). Sentence splitting knows CJK full stops, so Chinese text is never
cut mid-sentence.
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rag.errors import ConfigError
from rag.ingest.semantic import semantic_breaks
from rag.settings.config import ChunkConfig
from rag.settings.extensions import STRATEGIES, check_dispatch
from rag.text.definitions import definition_items
from rag.text.headings import ATX_HEADING, stored_title
from rag.text.sentences import SENTENCE_END, split_sentences, trim_span
from rag.types import Chunk, Document

if TYPE_CHECKING:
    from rag.encoders.base import DenseEncoder

# A setext underline: "Title" over "=====" is a level-1 heading, over "-----" level 2 (CommonMark).
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
# Lines that start another block, so a "---" under them is a rule or list syntax, never a setext underline.
_NOT_SETEXT_TITLE = re.compile(r"^(?: {4}|\t| {0,3}(?:[-+*>|]|\d{1,9}[.)])(?:\s|$)| {0,3}#{1,6}(?:\s|$))")
# A fence may be indented: MkDocs admonitions and list items indent theirs by four spaces or more.
_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})")
# An indented code block line (CommonMark: four spaces or a tab). Its "# comment" lines are never headings.
_INDENTED = re.compile(r"^(?: {4}|\t)")
_TABLE_LINE = re.compile(r"^[ \t]*\|")


@dataclass(frozen=True)
class Section:
    """The body of one heading: text[start:end] under heading path `path`."""

    path: tuple[str, ...]
    start: int
    end: int


@dataclass(frozen=True)
class _Block:
    start: int
    end: int
    kind: str  # "para" | "code" | "table" | "item" (a definition) | "unit" (code the "code" strategy keeps whole)


def chunk_document(doc: Document, config: ChunkConfig | None = None, dense: DenseEncoder | None = None) -> list[Chunk]:
    """Cut `doc` into chunks with the configured strategy.

    Args:
        doc: a loaded document.
        config: strategy, size (chars) and overlap (chars, for "fixed" and "recursive").
        dense: the collection's dense encoder; only "semantic" uses it (and needs it).

    Returns:
        Chunks in document order, each with `text == doc.text[start:end]`, its heading path and a
        content-addressed id.
    """
    config = config or ChunkConfig()
    sections = parse_sections(doc.text)
    if config.definition_sections:
        sections = definition_sections(doc.text, sections, config.size)
    spans = _SPANS[config.strategy](doc.text, sections, config, dense)
    return _make_chunks(doc, sections, spans, config.heading_weight)


def parse_sections(text: str) -> list[Section]:
    """Split Markdown-shaped text at headings: ATX ("## Title") and setext ("Title" underlined with = or -).

    `#` lines inside code fences are never headings. A setext title is a one-line paragraph (at the start,
    or after a blank line, a heading or a fence): a "---" under a longer paragraph, a list item or a table
    is left as text, and after a blank line it is a thematic break, as CommonMark reads them.
    """
    sections: list[Section] = []
    stack: list[tuple[int, str]] = []
    body_start = 0
    fence: str | None = None
    pos = 0
    current: tuple[str, ...] = ()
    # The line before, if it could be a setext title: (its start offset, its text).
    title: tuple[int, str] | None = None
    before_blank = True  # the line before the previous one ended a block: blank, a heading, a fence (or none)

    def open_section(start: int, level: int, name: str, body: int) -> None:
        nonlocal stack, current, body_start
        if start > body_start:
            sections.append(Section(current, body_start, start))
        stack = [(lvl, t) for lvl, t in stack if lvl < level] + [(level, stored_title(name))]
        current = tuple(t for _, t in stack)
        body_start = body

    for line in text.split("\n"):
        line_end = pos + len(line)
        candidate: tuple[int, str] | None = None
        ends_block = not line.strip()
        fence_match = _FENCE.match(line)
        if fence_match:
            ends_block = True  # a paragraph may start right after a fence line
            marker = fence_match.group(1)
            if fence is None:
                fence = marker[0] * 3
            elif marker.startswith(fence):
                fence = None
        elif fence is None:
            heading = ATX_HEADING.match(line)
            underline = _SETEXT.match(line)
            if heading:
                open_section(pos, len(heading.group(1)), heading.group(2), min(line_end + 1, len(text)))
                ends_block = True
            elif underline and title is not None:
                open_section(title[0], 1 if underline.group(1)[0] == "=" else 2, title[1], min(line_end + 1, len(text)))
                ends_block = True
            elif line.strip() and before_blank and not _NOT_SETEXT_TITLE.match(line):
                candidate = (pos, line.strip())
        before_blank = ends_block
        title = candidate
        pos = line_end + 1
    if len(text) > body_start:
        sections.append(Section(current, body_start, len(text)))
    return [s for s in sections if text[s.start : s.end].strip()]


def definition_sections(text: str, sections: list[Section], size: int) -> list[Section]:
    """`sections` with each definition item of a section longer than `size` as a sub-section of its own,
    titled by its term ("OPTIONS > -u, --include-untracked"), so a hit, a citation or a tracked chunk
    names the option, not the whole 10-chunk OPTIONS section. Text between items stays in the section."""
    out: list[Section] = []
    for section in sections:
        items = definition_items(text, section.start, section.end) if section.end - section.start > size else []
        items = [i for i in items if i.term]  # a term of only markup names nothing
        cursor = section.start
        for item in items:
            out.append(Section(section.path, cursor, item.start))
            out.append(Section((*section.path, item.term), item.start, item.end))
            cursor = item.end
        out.append(Section(section.path, cursor, section.end))
    return [s for s in out if text[s.start : s.end].strip()]


def heading_path_at(sections: list[Section], offset: int) -> tuple[str, ...]:
    """Heading path of the last section starting at or before `offset` (sections are in text order).

    A binary search: a linear scan per chunk made a file with 100,000 headings take minutes to chunk.
    """
    i = bisect.bisect_right(sections, offset, key=lambda s: s.start)
    return sections[i - 1].path if i else ()


def _blocks(text: str, start: int, end: int) -> list[_Block]:
    """Paragraphs, code blocks (fenced or indented) and tables inside one section body.

    An indented block after a blank line is code and stays one unit across its own blank lines (an
    indented line right after a paragraph line only continues that paragraph, as in Markdown).
    """
    blocks: list[_Block] = []
    pos = start
    cur_start: int | None = None
    cur_kind = "para"
    fence: str | None = None

    def close(at: int) -> None:
        nonlocal cur_start
        if cur_start is not None:
            span = trim_span(text, cur_start, at)
            if span:
                blocks.append(_Block(span[0], span[1], cur_kind))
        cur_start = None

    for line in text[start:end].split("\n"):
        line_end = pos + len(line)
        fence_match = _FENCE.match(line)
        if fence is not None:
            if fence_match and fence_match.group(1).startswith(fence):
                fence = None
                close(line_end)
        elif cur_kind == "indented" and cur_start is not None and (not line.strip() or _INDENTED.match(line)):
            pass  # still inside the indented block (its trailing blank lines are trimmed on close)
        elif fence_match:
            close(pos)
            fence, cur_start, cur_kind = fence_match.group(1)[0] * 3, pos, "code"
        elif not line.strip():
            close(pos)
        elif _INDENTED.match(line) and cur_start is None:
            cur_start, cur_kind = pos, "indented"
        elif _TABLE_LINE.match(line):
            if cur_kind != "table":
                close(pos)
            if cur_start is None:
                cur_start, cur_kind = pos, "table"
        else:
            if cur_kind in ("table", "indented"):
                close(pos)
            if cur_start is None:
                cur_start, cur_kind = pos, "para"
        pos = line_end + 1
    close(min(pos, end))
    return [_Block(b.start, b.end, "code") if b.kind == "indented" else b for b in blocks]


def _unit_blocks(text: str, start: int, end: int) -> list[_Block]:
    """`_blocks`, with the blocks of each definition item (its term, description paragraphs, code) as one."""
    blocks = _blocks(text, start, end)
    items = definition_items(text, start, end)
    if not items:
        return blocks
    out: list[_Block] = []
    at = 0  # blocks and items are both in text order: one walk over each
    for block in blocks:
        while at < len(items) and items[at].end <= block.start:
            at += 1
        item = items[at] if at < len(items) and items[at].start <= block.start else None
        if item is None:
            out.append(block)
        elif out and out[-1].kind == "item" and out[-1].start == item.start:
            out[-1] = _Block(item.start, max(out[-1].end, block.end), "item")  # a later block of the same item
        else:
            out.append(_Block(item.start, max(item.end, block.end), "item"))
    return out


def _sentence_blocks(text: str, start: int, end: int) -> list[_Block]:
    out: list[_Block] = []
    for block in _unit_blocks(text, start, end):
        if block.kind == "para":
            out += [_Block(a, b, "para") for a, b in split_sentences(text, block.start, block.end)]
        else:
            out.append(block)
    return out


def _code_units(text: str, start: int, end: int) -> list[_Block]:
    return [_Block(b.start, b.end, "unit") if b.kind == "code" else b for b in _unit_blocks(text, start, end)]


def _semantic(text: str, sections: list[Section], size: int, dense: DenseEncoder | None) -> list[tuple[int, int]]:
    """Each section's sentences (code blocks and tables whole) cut at rag.ingest.semantic's breakpoints, and
    each piece packed within `size` as "sentence" packs a section."""
    if dense is None:
        raise ConfigError("the semantic chunk strategy needs the collection's dense model to find its breakpoints")
    units = [_sentence_blocks(text, s.start, s.end) for s in sections]
    breaks = semantic_breaks([[text[u.start : u.end] for u in us] for us in units], dense)
    spans: list[tuple[int, int]] = []
    for us, cuts in zip(units, breaks, strict=True):
        bounds = [0, *cuts, len(us)]
        for a, b in zip(bounds, bounds[1:]):
            spans += _pack(text, us[a:b], size)
    return spans


def _pack(text: str, blocks: list[_Block], size: int) -> list[tuple[int, int]]:
    """Pack blocks into spans of at most `size` chars and about even length; oversize blocks are split by kind."""
    units: list[_Block] = []
    for block in blocks:
        length = block.end - block.start
        if length <= size or (block.kind in ("table", "unit", "item") and length <= _table_limit(size)):
            units.append(block)  # a table stays whole: half a table means little, a description without its term too
        elif block.kind in ("code", "table", "unit", "item"):
            # Giant tables (a dump, a 5 MB pipe line) are cut at row boundaries rather than becoming one
            # chunk that no encoder can read past its first few hundred tokens.
            units += [_Block(a, b, "code") for a, b in _split_lines(text, block.start, block.end, size)]
        else:
            for a, b in split_sentences(text, block.start, block.end):
                units += [_Block(x, y, "para") for x, y in _hard_split(text, a, b, size)]
    # A section that does not fit is cut into parts of even length (target), not greedily into full parts
    # and a short tail: a tail of one sentence is a poor chunk on its own.
    target = (units[-1].end - units[0].start) / math.ceil((units[-1].end - units[0].start) / size) if units else size
    spans: list[tuple[int, int]] = []
    cur: tuple[int, int] | None = None
    for unit in units:
        if cur and unit.end - cur[0] <= size and cur[1] - cur[0] < target:
            cur = (cur[0], unit.end)
        else:
            if cur:
                spans.append(cur)
            cur = (unit.start, unit.end)
    if cur:
        spans.append(cur)
    return spans


def _table_limit(size: int) -> int:
    return max(8 * size, 8000)


def _split_lines(text: str, start: int, end: int, size: int) -> list[tuple[int, int]]:
    spans, cur_start, pos = [], start, start
    for line in text[start:end].split("\n"):
        line_end = pos + len(line)
        if line_end - cur_start > size and pos > cur_start:
            spans.append((cur_start, pos - 1))
            cur_start = pos
        pos = line_end + 1
    spans.append((cur_start, end))
    out: list[tuple[int, int]] = []
    for a, b in spans:
        out += _hard_split(text, a, b, size)
    return out


def _hard_split(text: str, start: int, end: int, size: int) -> list[tuple[int, int]]:
    """Last resort for a run with no boundary (a 5 MB line): cut at whitespace near the limit."""
    spans = []
    while end - start > size:
        cut = text.rfind(" ", start + size // 2, start + size)
        cut = cut if cut > start else start + size
        spans.append((start, cut))
        start = cut
        while start < end and text[start].isspace():
            start += 1
    if end > start:
        spans.append((start, end))
    return [t for t in (trim_span(text, a, b) for a, b in spans) if t]


def _fixed(text: str, size: int, overlap: int) -> list[tuple[int, int]]:
    """Windows of at most `size` chars, each starting `overlap` chars before the last one ended.

    A window ends at the last sentence end, else line break, else space in its second half, and
    the next starts at the first such boundary inside the overlap, so neither cuts a word or a
    sentence (CJK included) unless the text has no boundary there.
    """
    spans: list[tuple[int, int]] = []
    start = 0
    while start < len(text):
        while start < len(text) and text[start].isspace():
            start += 1  # windows start on text, so each starts after the previous one
        end = min(start + size, len(text))
        if end < len(text):
            end = _boundary(text, start + size // 2, end, last=True) or end
        spans.append((start, end))
        if end >= len(text):
            break
        nxt = max(end - overlap, start + 1)
        start = _boundary(text, nxt, end - 1, last=False) or nxt
    return [t for t in (trim_span(text, a, b) for a, b in spans) if t]


_BOUNDARIES = (SENTENCE_END, re.compile(r"\n"), re.compile(r" "))


def _boundary(text: str, lo: int, hi: int, last: bool) -> int | None:
    """The last (or first) offset in (lo, hi] just after a sentence end, newline or space, best kind first."""
    for pattern in _BOUNDARIES:
        ends = [m.end() for m in pattern.finditer(text, lo, hi) if lo < m.end() <= hi]
        if ends:
            return ends[-1] if last else ends[0]
    return None


def _recursive(text: str, start: int, end: int, size: int, overlap: int) -> list[tuple[int, int]]:
    """langchain's recursive splitter inside one section body (so, like every structured strategy,
    it never crosses a heading); separators from paragraphs down to CJK and Western sentence ends."""
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    splitter = RecursiveCharacterTextSplitter(
        chunk_size=size,
        chunk_overlap=overlap,
        add_start_index=True,
        keep_separator="end",
        separators=["\n\n", "\n", "。", "！", "？", "；", ". ", " ", ""],
        strip_whitespace=True,
    )
    body = text[start:end]
    spans = []
    for piece in splitter.create_documents([body]):
        at = piece.metadata["start_index"]
        if at < 0:
            at = body.find(piece.page_content)
        spans.append((start + at, start + at + len(piece.page_content)))
    return spans


def _make_chunks(
    doc: Document, sections: list[Section], spans: list[tuple[int, int]], heading_weight: int = 1
) -> list[Chunk]:
    seen: dict[tuple[tuple[str, ...], str], int] = {}
    chunks = []
    for index, (start, end) in enumerate(spans):
        body = doc.text[start:end]
        path = heading_path_at(sections, start)
        occurrence = seen.get((path, body), 0)
        seen[(path, body)] = occurrence + 1
        chunks.append(
            Chunk(
                id=Chunk.make_id(doc.source, path, body, occurrence, heading_weight),
                source=doc.source,
                heading_path=path,
                start=start,
                end=end,
                text=body,
                index=index,
                page=doc.page_at(start),
                heading_weight=heading_weight,
                role=doc.role_of(path),
            )
        )
    return chunks


_Spans = Callable[[str, "list[Section]", ChunkConfig, "DenseEncoder | None"], list[tuple[int, int]]]


def _per_section(blocks: Callable[[str, int, int], list[_Block]]) -> _Spans:
    """A strategy that packs `blocks` (units of one section) up to the size, section by section."""
    return lambda text, sections, config, _dense: [
        span for s in sections for span in _pack(text, blocks(text, s.start, s.end), config.size)
    ]


# strategy -> its spans; the names and what each does are registered in rag/settings/extensions.py, and a
# strategy registered there without spans here fails at import.
_SPANS: dict[str, _Spans] = {
    "heading": _per_section(_unit_blocks),
    "sentence": _per_section(_sentence_blocks),
    "code": _per_section(_code_units),
    "fixed": lambda text, _sections, config, _dense: _fixed(text, config.size, config.overlap),
    "semantic": lambda text, sections, config, dense: _semantic(text, sections, config.size, dense),
    "recursive": lambda text, sections, config, _dense: [
        span for s in sections for span in _recursive(text, s.start, s.end, config.size, config.overlap)
    ],
}
check_dispatch("chunk strategies", STRATEGIES, _SPANS)
