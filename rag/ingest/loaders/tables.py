"""Table rows as a Markdown pipe table: how every loader (HTML, DOCX) writes a table so the chunker keeps it whole."""

from __future__ import annotations


def rows_to_markdown(rows: list[list[str]]) -> str:
    """Table rows as a pipe table, the first row as its header (`|` in cells escaped)."""
    rows = [r for r in rows if any(cell for cell in r)]
    if not rows:
        return ""
    width = max(len(r) for r in rows)
    rows = [[c.replace("|", "\\|").replace("\n", " ") for c in r] + [""] * (width - len(r)) for r in rows]
    lines = ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * width]
    lines += ["| " + " | ".join(r) + " |" for r in rows[1:]]
    return "\n".join(lines)
