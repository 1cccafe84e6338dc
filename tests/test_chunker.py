"""The chunker on tricky Markdown: headings, tables, code fences, CJK, exact offsets for every strategy."""

from __future__ import annotations

import itertools
import re

import pytest

from rag.ingest.chunker import chunk_document, parse_sections
from rag.text.sentences import split_sentences
from rag.settings.config import CHUNK_STRATEGIES, ChunkConfig
from rag.ingest.loaders.document import load_document
from rag.catalog.sample import sample_files

TRICKY = """# Ferry guide

Welcome aboard. This guide covers tickets, the timetable and the rules on board.

## Tickets

A single ticket costs four euros. A day pass costs ten euros and is valid on every line.

| Ticket | Price | Valid |
|---|---|---|
| Single | 4 € | one trip |
| Day pass | 10 € | all day |
| Week pass | 30 € | seven days |
| Month pass | 90 € | thirty days |

## Scripts { #scripts }

```bash
# this is a comment, not a heading
## neither is this
ferry-cli buy --ticket single
```

~~~
# tilde fences hide headings too
~~~

### Deep heading ###

Text under a level-three heading with closing hashes.

## 中文说明

船票可以在售票亭购买。也可以在应用程序里购买！周末有额外的班次吗？有的，每小时一班。儿童半价；六岁以下免费。
"""

CJK = "# 常见问题\n\n## 退款\n\n" + "".join(
    f"第{i}条：退款会在五个工作日内退回到您的银行卡。如果超过时间没有收到，请联系客服！" for i in range(15)
) + "\n"

CJK_SENTENCE_END = "。！？；"


@pytest.fixture(scope="module")
def doc():
    return load_document("guide.md", TRICKY.encode())


def _all_docs():
    yield load_document("guide.md", TRICKY.encode())
    yield load_document("zh.md", CJK.encode())
    for name, data in sample_files():
        yield load_document(name, data)


@pytest.mark.parametrize("strategy", CHUNK_STRATEGIES)
@pytest.mark.parametrize("size,overlap", [(800, 100), (200, 40), (60, 0)])
def test_every_chunk_is_the_exact_span_of_the_text(strategy, size, overlap, default_dense):
    docs = list(_all_docs())
    assert len(docs) > 2  # the two written here and the sample docs
    for d in docs:
        chunks = chunk_document(d, ChunkConfig(strategy, size, overlap), default_dense)  # semantic reads it
        assert chunks, d.source
        for i, c in enumerate(chunks):
            assert d.text[c.start : c.end] == c.text, (d.source, strategy, c)
            assert c.text == c.text.strip() and c.text
            assert c.index == i and c.source == d.source
        assert [c.start for c in chunks] == sorted(c.start for c in chunks)
        assert len({c.id for c in chunks}) == len(chunks)


@pytest.mark.parametrize("strategy", ["heading", "sentence", "recursive"])
def test_structured_strategies_never_cross_a_heading_and_keep_all_body_text(doc, strategy):
    sections = parse_sections(doc.text)
    chunks = chunk_document(doc, ChunkConfig(strategy, 120, 20))
    assert chunks
    for c in chunks:
        (section,) = [s for s in sections if s.start <= c.start and c.end <= s.end]
        assert c.heading_path == section.path
    body = "".join(doc.text[s.start : s.end] for s in sections)
    covered = "".join(c.text for c in chunks)
    words = re.findall(r"\w+", body)
    assert words
    for word in words:
        assert word in covered  # nothing of a section body is dropped


def test_heading_paths(doc):
    paths = [c.heading_path for c in chunk_document(doc)]
    assert paths[0] == ("Ferry guide",)
    assert ("Ferry guide", "Tickets") in paths
    assert ("Ferry guide", "Scripts") in paths  # MkDocs attribute list dropped
    assert ("Ferry guide", "Scripts", "Deep heading") in paths  # closing hashes dropped
    assert ("Ferry guide", "中文说明") in paths  # a level-2 heading pops the level-3 one
    assert not any("comment" in " ".join(p) or "tilde" in " ".join(p) for p in paths)


def test_heading_strategy_keeps_a_table_whole_even_when_larger_than_size(doc):
    chunks = chunk_document(doc, ChunkConfig("heading", 60, 0))
    (table,) = [c for c in chunks if c.text.startswith("| Ticket")]
    assert table.text.endswith("| Month pass | 90 € | thirty days |")
    assert len(table.text) > 60
    assert all(len(c.text) <= 60 for c in chunks if c is not table and not c.text.startswith("```"))


def test_code_fence_with_hash_lines_is_one_unit(doc):
    chunks = chunk_document(doc, ChunkConfig("heading", 800, 0))
    (code,) = [c for c in chunks if "ferry-cli" in c.text]
    assert code.text.startswith("```bash\n# this is a comment, not a heading\n## neither is this")
    assert code.heading_path == ("Ferry guide", "Scripts")


def test_embed_text_starts_with_source_and_heading_path(doc):
    chunk = next(c for c in chunk_document(doc) if c.heading_path[-1:] == ("Tickets",))
    assert chunk.embed_text == f"guide.md > Ferry guide > Tickets\n{chunk.text}"


@pytest.mark.parametrize("strategy", CHUNK_STRATEGIES)
def test_cjk_chunks_end_on_a_sentence_end(strategy, default_dense):
    d = load_document("zh.md", CJK.encode())
    chunks = chunk_document(d, ChunkConfig(strategy, 100, 20), default_dense)
    chunks = [c for c in chunks if c.heading_path == ("常见问题", "退款")]
    assert len(chunks) > 5
    for c in chunks:
        assert c.text[-1] in CJK_SENTENCE_END, (strategy, c.text)
        assert len(c.text) <= 100


@pytest.mark.parametrize("strategy", ["heading", "sentence", "recursive"])
def test_cjk_chunks_start_on_a_sentence_start(strategy):
    d = load_document("zh.md", CJK.encode())
    chunks = chunk_document(d, ChunkConfig(strategy, 100, 20))
    assert len(chunks) > 1  # the first chunk starts the text: only the others test a cut
    for c in chunks:
        before = d.text[: c.start].rstrip()
        assert not before or before[-1] in CJK_SENTENCE_END or before.endswith("退款"), c.text


def test_split_sentences_western_and_cjk():
    text = 'He said "stop." Then he left! Really? 是的。好的！完了'
    assert [text[a:b] for a, b in split_sentences(text)] == ['He said "stop."', "Then he left!", "Really?", "是的。", "好的！", "完了"]


def test_fixed_windows_overlap_and_never_cut_words():
    text = " ".join(f"word{i}" for i in range(200))
    d = load_document("w.txt", text.encode())
    chunks = chunk_document(d, ChunkConfig("fixed", 100, 30))
    for a, b in itertools.pairwise(chunks):
        assert 0 < a.end - b.start <= 30  # consecutive windows share up to `overlap` chars
    words = set(text.split())
    assert all(set(c.text.split()) <= words for c in chunks)  # every piece is a whole word
    assert chunks[-1].text.endswith("word199")


def test_ids_are_stable_and_depend_on_content_and_place(doc):
    again = chunk_document(load_document("guide.md", TRICKY.encode()))
    assert [c.id for c in chunk_document(doc)] == [c.id for c in again]
    renamed = chunk_document(load_document("other.md", TRICKY.encode()))
    assert not {c.id for c in renamed} & {c.id for c in again}
    repeated = load_document("r.md", b"# A\n\nSame text.\n\n# B\n\nSame text.\n\n# A\n\nSame text.\n")
    assert len({c.id for c in chunk_document(repeated)}) == 3



def test_ordinary_table_stays_whole_but_a_giant_table_is_cut_at_rows():
    from rag.ingest.chunker import _table_limit

    header = "| id | value |\n|---|---|\n"
    small = header + "".join(f"| {i} | v{i} |\n" for i in range(60))  # over the chunk size, under the table limit
    doc = load_document("t.md", f"# T\n\n{small}".encode())
    chunks = chunk_document(doc, ChunkConfig(size=200, overlap=0))
    assert [c.text for c in chunks] == [small.strip()]

    rows = _table_limit(200) // 10 + 100
    giant = header + "".join(f"| {i} | v{i} |\n" for i in range(rows))
    doc = load_document("g.md", f"# G\n\n{giant}".encode())
    chunks = chunk_document(doc, ChunkConfig(size=200, overlap=0))
    assert len(chunks) > 1
    for c in chunks:
        assert doc.text[c.start : c.end] == c.text and len(c.text) <= 200
        assert all(line.startswith("|") and line.endswith("|") for line in c.text.split("\n"))  # whole rows only


SECTIONED = """# Deploy guide

## Install

Run the installer from the release page. It asks for a folder and a port.

    # this indented line is a shell comment, not a heading
    ./install --port 8080

    # a second comment after a blank line in the same block
    ./install --check

Then open the dashboard.

## Admonition

!!! note
    Fences inside admonitions are indented.

    ```bash
    # not a heading either
    systemctl restart app
    ```

## Long section

""" + "\n\n".join(f"Paragraph {i} explains one more step of the rollout in plain words." for i in range(12)) + "\n"


@pytest.fixture(scope="module")
def sectioned():
    return load_document("deploy.md", SECTIONED.encode())


def test_heading_like_lines_in_indented_or_indented_fenced_code_are_not_headings(sectioned):
    paths = {s.path for s in parse_sections(sectioned.text)}
    assert paths == {("Deploy guide", "Install"), ("Deploy guide", "Admonition"), ("Deploy guide", "Long section")}


def test_indented_and_admonition_code_blocks_stay_whole_units(sectioned):
    chunks = chunk_document(sectioned, ChunkConfig("heading", 200, 0))
    install = [c.text for c in chunks if c.heading_path[-1] == "Install"]
    block = "    # this indented line is a shell comment, not a heading\n    ./install --port 8080\n\n    # a second comment after a blank line in the same block\n    ./install --check"
    assert any(block.strip() in t for t in install), install  # one chunk holds the whole block, its blank line too
    fenced = [c.text for c in chunks if c.heading_path[-1] == "Admonition"]
    assert any("```bash\n    # not a heading either\n    systemctl restart app\n    ```" in t for t in fenced), fenced


def test_a_section_that_fits_is_one_chunk_and_a_long_one_is_cut_evenly_with_its_heading(sectioned):
    whole = chunk_document(sectioned, ChunkConfig("heading", 5000, 0))
    assert [c.heading_path[-1] for c in whole] == ["Install", "Admonition", "Long section"]
    long_body = next(c for c in whole if c.heading_path[-1] == "Long section").text
    parts = [c for c in chunk_document(sectioned, ChunkConfig("heading", 500, 0)) if c.heading_path[-1] == "Long section"]
    assert len(parts) == -(-len(long_body) // 500)  # as few parts as the limit allows
    lengths = [len(c.text) for c in parts]
    assert max(lengths) <= 500 and min(lengths) > 0.6 * max(lengths), lengths  # even parts, no one-line tail
    assert all(c.heading_path == ("Deploy guide", "Long section") for c in parts)
    assert all(c.embed_text.startswith("deploy.md > Deploy guide > Long section\n") for c in parts)


def test_heading_weight_repeats_the_heading_path_for_the_encoders_and_survives_the_store(sectioned):
    from rag.store.base import chunk_payload, stored_chunk

    plain = chunk_document(sectioned, ChunkConfig("heading", 500, 0))
    heavy = chunk_document(sectioned, ChunkConfig("heading", 500, 0, heading_weight=3))
    assert [c.text for c in plain] == [c.text for c in heavy]
    where = "deploy.md > Deploy guide > Install"
    assert plain[0].embed_text == f"{where}\n{plain[0].text}"
    assert heavy[0].embed_text == f"{where}\n{where}\n{where}\n{heavy[0].text}"
    assert chunk_document(sectioned, ChunkConfig("heading", 500, 0, heading_weight=0))[0].embed_text == plain[0].text
    # other vectors, so other ids: changing the weight re-embeds on the next ingest
    assert not {c.id for c in plain} & {c.id for c in heavy}
    back = stored_chunk(heavy[0].id, chunk_payload(heavy[0], {}))
    assert back.chunk == heavy[0] and back.chunk.embed_text == heavy[0].embed_text


SETEXT = """Ferry handbook
==============

Welcome aboard.

Tickets
-------

A single ticket costs four euros.
Children ride free
---

Timetable notes

---

The first ferry leaves at seven.

- deck chairs
---

```text
Not a title
-----------
```

Night service
=============

The last ferry leaves at midnight.
## Winter
Storms
------
Crossings stop in storms.
```text
code
```
Docking
-------
Ropes first.
"""


def test_setext_headings_are_headings_and_rules_lists_and_code_are_not():
    doc = load_document("ferry.md", SETEXT.encode())
    sections = parse_sections(doc.text)
    # A title may follow a heading or a fence line directly, as CommonMark reads it.
    assert [s.path for s in sections] == [
        ("Ferry handbook",), ("Ferry handbook", "Tickets"), ("Night service",), ("Night service", "Storms"), ("Night service", "Docking"),
    ]  # fmt: skip
    chunks = chunk_document(doc, ChunkConfig("heading", 2000, 0))
    tickets = next(c for c in chunks if c.heading_path == ("Ferry handbook", "Tickets"))
    # A "---" under a two-line paragraph, after a blank line (a rule), under a list item and inside a fence
    # leaves the text in the section it is in.
    for text in ("Children ride free\n---", "Timetable notes\n\n---", "- deck chairs\n---", "Not a title\n-----------"):
        assert text in tickets.text
    assert all(c.text == doc.text[c.start : c.end] for c in chunks)
    assert not any("====" in c.text or "Tickets\n---" in c.text for c in chunks)  # title and underline are the heading


def test_a_title_is_stored_as_written_after_its_markers():
    """Only the heading's own "#" markers and a trailing attribute list are dropped: a title that starts
    with "#" ("# of users") keeps it."""
    text = "## # of users\n\nCounted daily.\n\n## C# tips { #csharp }\n\nUse var.\n"
    assert [s.path for s in parse_sections(text)] == [("# of users",), ("C# tips",)]
