"""Reference structure kept: definition lists stay whole with their term, DOCX code is code.

Reference manuals list options as definition lists; flattened, a chunk could start with an option's
description while its name ended the chunk before. DOCX code in a preformatted style was read as
Markdown, its `# comment` lines opening headings that the real headings nested under.
"""

from __future__ import annotations

import dataclasses
import io

import docx
from docx.enum.style import WD_STYLE_TYPE

from rag.eval.gold import heading_names
from rag.ingest.chunker import chunk_document
from rag.ingest.loaders.document import load_document
from rag.settings.config import ChunkConfig, Settings
from rag.text.definitions import definition_items

OPTIONS = [
    ("-u", "--include-untracked", "All untracked files are also stashed and then cleaned up with git clean."),
    ("-k", "--keep-index", "All changes already added to the index are left intact in the working tree."),
    ("-q", "--quiet", "Quiet, suppress feedback messages about what the stash command did to the tree."),
    ("-p", "--patch", "Interactively select hunks from the diff between HEAD and the working tree to be stashed."),
    ("-a", "--all", "All ignored and untracked files are also stashed and then cleaned up with git clean."),
]


def _manual() -> bytes:
    items = "".join(
        f"<dt><code>{short}</code></dt><dt><code>{long}</code></dt>"
        f"<dd><p>{text} {text}</p><pre>git stash push {long}\n\n# then\ngit stash pop</pre></dd>"
        for short, long, text in OPTIONS
    )
    return (
        "<html><body><main><h1>git-stash</h1><h2>OPTIONS</h2>"
        f"<p>The options of git stash push.</p><dl>{items}</dl>"
        "<h2>SEE ALSO</h2><p>git-clean(1)</p></main></body></html>"
    ).encode()


def _chunks(definition_sections: bool, size: int = 300):
    doc = load_document("git-stash.html", _manual())
    return doc, chunk_document(doc, ChunkConfig("heading", size, 0, definition_sections=definition_sections))


def test_an_html_definition_item_is_one_unit_with_its_term():
    doc, chunks = _chunks(definition_sections=False)
    items = definition_items(doc.text)
    assert [i.term for i in items] == [f"{s}, {lg}" for s, lg, _ in OPTIONS]
    for short, long, text in OPTIONS:
        holding = [c for c in chunks if text in c.text]
        assert holding, text
        # the description never starts a chunk of its own: its term and its code are in the same chunk
        assert all(f"`{long}`" in c.text and f"git stash push {long}" in c.text for c in holding)
    # the "# then" line inside the code is no heading
    assert {c.heading_path for c in chunks} <= {("git-stash",), ("git-stash", "OPTIONS"), ("git-stash", "SEE ALSO")}


def test_in_a_long_section_each_item_is_a_sub_section_named_by_its_term():
    _, chunks = _chunks(definition_sections=True)
    paths = {c.heading_path for c in chunks}
    for short, long, text in OPTIONS:
        path = ("git-stash", "OPTIONS", f"{short}, {long}")
        assert path in paths
        assert all(text in c.text for c in chunks if c.heading_path == path)
    # the lead-in stays in the section itself, and a gold heading naming the section still covers every item
    assert any(c.heading_path == ("git-stash", "OPTIONS") and "options of git stash" in c.text for c in chunks)
    options = [c for c in chunks if c.heading_path[:2] == ("git-stash", "OPTIONS")]
    assert all(heading_names(c.heading_path, "OPTIONS") for c in options)
    assert all(heading_names(c.heading_path, "git-stash > OPTIONS") for c in options)
    assert heading_names(options[-1].heading_path, "OPTIONS > -a, --all")
    assert not heading_names(options[-1].heading_path, "SEE ALSO")


def test_a_section_that_fits_one_chunk_keeps_its_items_together():
    _, chunks = _chunks(definition_sections=True, size=5000)
    assert ("git-stash", "OPTIONS") in {c.heading_path for c in chunks}
    assert not any(len(c.heading_path) > 2 for c in chunks)


def test_the_setting_is_read_from_the_environment():
    assert Settings.from_env({"RAGSCOPE_DEFINITION_SECTIONS": "1"}).chunk.definition_sections is True
    assert Settings.from_env({}).chunk.definition_sections is False


def test_markdown_definition_lists_are_items_too():
    text = "# Tool\n\n## Options\n\n`--dry-run`\n:   Show what would be done.\n\n    Nothing is changed.\n\nAfter.\n"
    (item,) = definition_items(text)
    assert item.term == "--dry-run"
    assert text[item.start : item.end].endswith("Nothing is changed.")


def _docx(build) -> bytes:  # noqa: ANN001 - a function of the python-docx Document
    document = docx.Document()
    build(document)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def _code_style(document, name: str = "Preformatted Text") -> None:  # noqa: ANN001
    style = document.styles.add_style(name, WD_STYLE_TYPE.PARAGRAPH)
    style.base_style = document.styles["Normal"]
    style.font.name = "Liberation Mono"


def test_docx_preformatted_text_is_a_code_block_and_its_hash_lines_no_headings():
    def build(document) -> None:  # noqa: ANN001
        _code_style(document)
        document.add_heading("Setup guide", level=1)
        document.add_paragraph("Edit the configuration file:")
        for line in ("# the server section", "[server]", "port = 8080", "", "# [...]", "[...]"):
            document.add_paragraph(line, style="Preformatted Text")
        document.add_heading("Running", level=2)
        document.add_paragraph("# not a heading either, typed in the body")
        document.add_paragraph("Start the server.")

    doc = load_document("guide.docx", _docx(build))
    assert "```\n# the server section\n[server]\nport = 8080\n\n# [...]\n[...]\n```" in doc.text
    chunks = chunk_document(doc, ChunkConfig("heading", 800, 0))
    paths = {c.heading_path for c in chunks}
    assert paths == {("Setup guide",), ("Setup guide", "Running")}
    assert not any(c.text.strip() == "[...]" for c in chunks)
    running = next(c for c in chunks if c.heading_path == ("Setup guide", "Running"))
    assert "\\# not a heading either" in running.text


def test_docx_runs_in_a_monospace_font_are_code():
    def build(document) -> None:  # noqa: ANN001
        document.add_heading("Shell", level=1)
        document.add_paragraph("Run:")
        for line in ("## list the files", "ls -la"):
            document.add_paragraph().add_run(line).font.name = "Courier New"
        document.add_paragraph("Done.")

    doc = load_document("shell.docx", _docx(build))
    assert "```\n## list the files\nls -la\n```" in doc.text
    assert {c.heading_path for c in chunk_document(doc, ChunkConfig("heading", 800, 0))} == {("Shell",)}


def test_docx_code_styles_by_name_and_outline_levels():
    def build(document) -> None:  # noqa: ANN001
        document.styles.add_style("Code", WD_STYLE_TYPE.PARAGRAPH)
        document.add_paragraph("Intro text.")
        document.add_paragraph("# shell comment", style="Code")
        outline = document.add_paragraph("Chapter by outline")
        ppr = outline._p.get_or_add_pPr()
        level = ppr.makeelement(docx.oxml.ns.qn("w:outlineLvl"), {docx.oxml.ns.qn("w:val"): "0"})
        ppr.append(level)
        document.add_paragraph("Body of the chapter.")

    doc = load_document("styles.docx", _docx(build))
    assert "```\n# shell comment\n```" in doc.text
    assert "## Chapter by outline" in doc.text


def test_docx_libreoffice_definition_lists_are_items():
    def build(document) -> None:  # noqa: ANN001
        for name in ("List Heading", "List Contents"):
            document.styles.add_style(name, WD_STYLE_TYPE.PARAGRAPH)
        document.add_heading("Options", level=1)
        document.add_paragraph("--force", style="List Heading")
        document.add_paragraph("Overwrite files that exist.", style="List Contents")
        document.add_paragraph("--verbose", style="List Heading")
        document.add_paragraph("Say what is done.", style="List Contents")

    doc = load_document("opts.docx", _docx(build))
    assert "--force\n: Overwrite files that exist." in doc.text
    assert [i.term for i in definition_items(doc.text)] == ["--force", "--verbose"]
    config = dataclasses.replace(ChunkConfig("heading", 50, 0), definition_sections=True)
    paths = {c.heading_path for c in chunk_document(doc, config)}
    assert ("Options", "--force") in paths and ("Options", "--verbose") in paths
