"""Where a chunk sits, as the inspector's tables show it: the end of its `source > heading` path.

A table cell cuts long text at its end, so "apt.html > Chapter 6. Maintenance a…" read the same on every row of
one chapter (issue 38, item 3). The cell keeps the end instead, where sections differ, and the source in front
when it is short; the whole path is in its own column and in the row detail.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from rag.types import StoredChunk

# The column keeps Streamlit's "medium" width, so the compact stage table still fits a 1,280 px window
# (tests/e2e/test_e2e_first_use.py); it showed 35 characters before cutting ("apt.html > Chapter 6. Maintenance a…").
COLUMN_WIDTH = "medium"
WIDTH = 35


def path_tail(parts: Sequence[str], width: int = WIDTH) -> str:
    """`source > heading > …` within `width` characters, headings dropped from the front: the last headings
    are kept whole, the source in front when it is short and there is room."""
    parts = [p for p in parts if p]
    whole = " > ".join(parts)
    if len(whole) <= width or len(parts) < 2:
        return whole if len(whole) <= width else "…" + whole[-(width - 1) :]
    source, headings = parts[0], parts[1:]
    for prefix in ([f"{source} > …"] if len(source) <= width // 3 else []) + ["…"]:
        if kept := _last_whole(headings, width - len(prefix) - len(" > ")):
            return f"{prefix} > {kept}"
    return "…" + headings[-1][-(width - 1) :]


def _last_whole(headings: Sequence[str], room: int) -> str:
    """As many of the last headings as fit `room` whole, joined; "" when even the last does not."""
    kept: list[str] = []
    for heading in reversed(headings):
        if len(" > ".join([heading, *kept])) > room:
            break
        kept.insert(0, heading)
    return " > ".join(kept)


def first_words(text: str, n: int = 6) -> str:
    words = text.split()
    return " ".join(words[:n]) + ("…" if len(words) > n else "")


def where_labels(chunks: list[StoredChunk]) -> list[tuple[str, str]]:
    """(short, whole) per chunk: the path's end for the cell, the whole path for its own column.

    Where a heading repeats in the list, the chunk's number tells the rows apart ("· #3", after the heading, so the
    cell still shows it) and the whole path adds the chunk's first words."""
    repeats = Counter(c.chunk.location for c in chunks)
    labels = []
    for c in chunks:
        location = c.chunk.location
        if repeats[location] == 1:
            labels.append((path_tail((c.chunk.source, *c.chunk.heading_path)), location))
            continue
        number = f" · #{c.chunk.index + 1}"  # short, so the heading before it still fits the cell
        short = path_tail((c.chunk.source, *c.chunk.heading_path), WIDTH - len(number)) + number
        labels.append((short, f"{location} · chunk {c.chunk.index + 1}: {first_words(c.chunk.text)}"))
    return labels
