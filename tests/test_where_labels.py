"""The inspector's "source > heading" cells keep the END of the path, where sections differ (issue 38, item 3):
at the data level on real chunks, then on the page (stage table, row detail, Compare's tables)."""

from __future__ import annotations

from apptest_pages import open_page

from rag.catalog.documents import document_chunks
from rag.components import build_components
from rag.ingest.pipeline import ingest_files
from ui.where import WIDTH, path_tail, where_labels

CHAPTER = "Chapter 6. Maintenance and upgrades of the Debian system"
HANDBOOK = f"""# Administrator's handbook

## {CHAPTER}

### 6.1 Keeping the package lists fresh

Run apt update before installing anything, so the package lists name the newest versions.

### 6.2 Upgrading to a new stable release

Edit the sources list to name the new release, then run apt full-upgrade to upgrade every package.

### 6.3 Removing packages nobody needs

Run apt autoremove to remove the packages that were installed only as dependencies.
""".encode()
SECTIONS = ("6.1 Keeping the package lists fresh", "6.2 Upgrading to a new stable release", "6.3 Removing packages nobody needs")


def test_a_long_path_keeps_its_last_heading_whole():
    parts = ("apt.html", "Administrator's handbook", CHAPTER, "6.2 Upgrading to a new stable release")
    assert path_tail(parts, 44) == "… > 6.2 Upgrading to a new stable release"  # no room for the source too
    assert path_tail((*parts[:-1], "6.2 Upgrading"), 44) == "apt.html > … > 6.2 Upgrading"  # room: the source too
    assert path_tail(("a.md", "Short")) == "a.md > Short"  # what fits is left whole
    long_source = ("a-very-long-file-name-for-a-documentation-page.html", "Install")
    assert path_tail(long_source) == "… > Install"
    assert path_tail(("a.md", "x" * 60)) == "…" + "x" * (WIDTH - 1)  # one heading longer than the cell: its end
    short = path_tail(parts)  # at the column's own width: the end of the last heading, never its start
    assert len(short) <= WIDTH and short.startswith("…") and short.endswith("a new stable release")


def test_labels_of_chunks_end_with_their_last_heading(settings):
    components = build_components(settings)
    assert not ingest_files(components, [("apt-handbook.md", HANDBOOK)]).errors
    chunks = [c for c in document_chunks(components, "apt-handbook.md") if c.chunk.heading_path[-1] in SECTIONS]
    components.close()
    labels = where_labels(chunks)
    assert len(labels) == 3 and len({short for short, _ in labels}) == 3  # the rows no longer read the same
    for chunk, (short, whole) in zip(chunks, labels, strict=True):
        assert short.endswith(chunk.chunk.heading_path[-1][-(WIDTH - 1) :]) and len(short) <= WIDTH, short
        assert whole == chunk.chunk.location and CHAPTER in whole


def test_the_stage_table_and_compare_show_the_end_and_the_whole_path(settings):
    components = build_components(settings)
    assert not ingest_files(components, [("apt-handbook.md", HANDBOOK)]).errors
    components.close()
    at = open_page("pages/inspector.py", q="How do I upgrade to a new stable release?", reranker="none")
    assert not at.exception and not at.error, [e.value for e in at.error]
    table = at.dataframe(key="inspector_table")
    frame = table.value
    rows = frame[frame["whole path"].str.contains("6\\.")]
    assert len(rows) == 3
    for short, whole in zip(rows["source > heading"], rows["whole path"], strict=True):
        assert whole.startswith(f"apt-handbook.md > Administrator's handbook > {CHAPTER} > 6.")
        assert short.endswith(whole.rsplit(" > ", 1)[1][-(WIDTH - 1) :]) and len(short) <= WIDTH
    assert "whole path" not in table.proto.column_order  # the compact table at 1,280 px; the toggle shows it
    assert "where sections differ" in str(table.proto.columns)  # the column's tooltip (its help)
    top = frame.iloc[0]["whole path"]
    assert any(m.value.replace("\\", "") == f"#### {top}" for m in at.markdown)  # the row detail: the whole path
    at.button(key="inspector_cmp_button").click()
    at.run()
    assert not at.exception
    compared = [d.value for d in at.dataframe if {"source > heading", "whole path"} <= set(d.value.columns)]
    assert len(compared) >= 3  # A, B and the changes
    for frame in compared:
        for short, whole in zip(frame["source > heading"], frame["whole path"], strict=True):
            assert short.endswith(whole.rsplit(" > ", 1)[1][-(WIDTH - 1) :]) and len(short) <= WIDTH, (short, whole)
