"""Small wording helpers for messages people read (the pages, the CLI, abstention reasons)."""

from __future__ import annotations


def plural(n: int, word: str, many: str | None = None) -> str:
    """`n` and the word in the right number: plural(1, "file") -> "1 file", plural(3, "entry", "entries") -> "3 entries".

    One helper instead of "file(s)": issue 12 found "(s)" read as unfinished on every page.
    """
    return f"{n:,} {word if n == 1 else many or word + 's'}"
