"""reStructuredText through docutils: its doctree walked into Markdown-shaped text (sections as `#` headings).

docutils parses; nothing of the document is executed or fetched. Directives that read files or URLs
(`include`, `csv-table :file:`, `raw :url:`) and raw HTML pass-through are switched off, system messages
are never reported or raised (report level 5, halt level 5), and a directive docutils does not know
(Sphinx's `automodule`, `toctree`) becomes an error node that is left out rather than a refusal.
"""

from __future__ import annotations

import io
import re

from rag.ingest.loaders.fences import fenced
from rag.ingest.loaders.tables import rows_to_markdown
from rag.ingest.loaders.text import decode_text

# Never read a file, a URL or raw markup; never stop or print on a problem in the text.
_SAFE_SETTINGS = {
    "file_insertion_enabled": False,
    "raw_enabled": False,
    "report_level": 5,
    "halt_level": 5,
    "doctitle_xform": False,  # a lone top section stays a section, so its title is a heading
    "sectsubtitle_xform": False,
    "_disable_config": True,  # no docutils.conf from the working directory
    "input_encoding": "unicode",
    "embed_stylesheet": False,
}


def parse_rst(data: bytes, source: str) -> tuple[str, tuple[int, ...], str]:
    from docutils.core import publish_doctree

    doctree = publish_doctree(
        decode_text(data, source),
        source_path=source,
        settings_overrides={**_SAFE_SETTINGS, "warning_stream": io.StringIO()},
    )
    blocks: list[str] = []
    _walk(doctree, 0, blocks)
    titles = [b for b in blocks if b.startswith("# ")]
    return "\n\n".join(b for b in blocks if b.strip()), (), titles[0][2:] if titles else ""


def _walk(node: object, depth: int, blocks: list[str]) -> None:
    """Append the Markdown blocks of `node`'s children; `depth` is the number of enclosing sections."""
    from docutils import nodes

    for child in node.children:  # type: ignore[attr-defined]
        if isinstance(child, (nodes.system_message, nodes.comment, nodes.raw, nodes.substitution_definition,
                              nodes.target, nodes.image, nodes.pending)):  # fmt: skip
            continue
        if isinstance(child, nodes.section):
            title = next((c for c in child.children if isinstance(c, nodes.title)), None)
            if title is not None:
                blocks.append("#" * min(depth + 1, 6) + " " + " ".join(_inline(title).split()))
            _walk(child, depth + 1, blocks)
        elif isinstance(child, nodes.title):
            continue  # written by its section (a topic's or admonition's title is read as text below)
        elif isinstance(child, (nodes.literal_block, nodes.doctest_block)):
            blocks.append(fenced(child.astext(), _language(child)))
        elif isinstance(child, (nodes.bullet_list, nodes.enumerated_list)):
            for item in child.children:
                blocks.append("- " + " ".join(_inline(item).split()))
        elif isinstance(child, nodes.definition_list):
            for item in child.children:
                term = " ".join(_inline(c) for c in item.children if isinstance(c, nodes.term))
                body = " ".join(_inline(c) for c in item.children if isinstance(c, nodes.definition))
                blocks.append(" ".join(f"{term}: {body}".split()))
        elif isinstance(child, nodes.field_list):
            for field in child.children:
                name, body = (" ".join(_inline(c).split()) for c in field.children[:2])
                blocks.append(f"{name}: {body}")
        elif isinstance(child, nodes.table):
            blocks.append(rows_to_markdown([[" ".join(_inline(e).split()) for e in row.children]
                                            for row in child.findall(nodes.row)]))  # fmt: skip
        elif isinstance(child, nodes.paragraph) or not child.children or isinstance(child, nodes.Text):
            text = " ".join(_inline(child).split())
            if text:
                blocks.append(text)
        else:  # admonitions, block quotes, topics, containers: their content, as blocks
            _walk(child, depth, blocks)


def _inline(node: object) -> str:
    """A node's text as it reads, inline literals in backticks (as the HTML loader writes `<code>`)."""
    from docutils import nodes

    if isinstance(node, nodes.Text):
        return str(node)
    if isinstance(node, (nodes.system_message, nodes.comment, nodes.raw, nodes.target, nodes.image)):
        return ""
    if isinstance(node, nodes.literal):
        return f"`{node.astext()}`"
    if isinstance(node, nodes.problematic):  # a role docutils does not know, most often Sphinx's
        return _SPHINX_ROLE.sub(_role_text, node.astext())
    parts = [_inline(c) for c in node.children]  # type: ignore[attr-defined]
    sep = " " if isinstance(node, (nodes.Element,)) and not isinstance(node, nodes.TextElement) else ""
    return sep.join(parts)


# `:mod:`email``, `:meth:`~email.message.Message.walk``, `:ref:`the intro <intro>``: as the reader sees them.
_SPHINX_ROLE = re.compile(r":[\w.:+-]+:`([^`]*)`")


def _role_text(match: re.Match[str]) -> str:
    target = match.group(1)
    label = re.fullmatch(r"(.*\S)\s*<[^<>]*>", target)
    if label:
        return label.group(1)
    return f"`{target.lstrip('~!').rsplit('.', 1)[-1] if target.startswith('~') else target.lstrip('!')}`"


def _language(block: object) -> str:
    classes = [c for c in block.get("classes", []) if c not in ("code", "literal-block")]  # type: ignore[attr-defined]
    return classes[0] if classes else ""
