"""Citation markers: parsing, sentence attribution, validation against the sources sent, safe rendering."""

from __future__ import annotations

from rag.answer.checks import check_answer
from rag.answer.citations import answer_sentences, parse_citations
from rag.answer.prompt import NOT_IN_SOURCES
from rag.answer.citations import strip_markers
from rag.retrieval.context import Piece, stitch
from ui.render import answer_html, context_html, md_escape
from rag.ingest.chunker import chunk_document
from rag.settings.config import ChunkConfig
from rag.types import Document

A = "0b7a3f2e-1111-4c2d-9e8f-aaaaaaaaaaaa"
B = "0b7a3f2e-2222-4c2d-9e8f-bbbbbbbbbbbb"


def ids(text: str) -> list[tuple[str, ...]]:
    return [m.ids for m in parse_citations(text)]


def test_marker_forms_are_parsed_and_normalised():
    assert ids("Refunds take 5 days [S1].") == [("S1",)]
    assert ids("Both [S1, S3] and [s2;S4].") == [("S1", "S3"), ("S2", "S4")]
    assert ids("Adjacent [S1][S3].") == [("S1",), ("S3",)]
    assert ids("Numbered [2].") == [("S2",)]
    assert ids(f"By id [{A.upper()}].") == [(A,)]


def test_brackets_that_are_not_citations_are_ignored():
    assert ids("Read arr[0] and x[S1] in code.") == []
    assert ids("See [the docs](https://example.com) or [Source 1] or [note].") == []


def test_marker_positions_cover_the_brackets():
    text = "Five days [S1]."
    (m,) = parse_citations(text)
    assert text[m.start : m.end] == "[S1]"
    assert strip_markers(text) == "Five days."


def test_markers_after_the_full_stop_belong_to_the_sentence_before():
    sentences = answer_sentences("Refunds take five days. [S1] Monthly plans are not refunded [S2].\n[S3]")
    assert [(s.text, s.ids) for s in sentences] == [
        ("Refunds take five days.", ("S1",)),
        ("Monthly plans are not refunded.", ("S2", "S3")),
    ]


def test_short_sentences_need_no_citation_but_statements_do():
    short, statement, cjk = answer_sentences("Yes.\nThe reset link is valid for 30 minutes.\n退款需要五到十个工作日。")
    assert not short.needs_citation
    assert statement.needs_citation and cjk.needs_citation


def test_check_flags_invented_ids_and_uncited_sentences():
    text = "Refunds take five days [S1]. Yearly plans get refunds within 14 days [S7]. Owners can cancel at any time."
    check = check_answer(text, [A, B])
    assert check.cited == (A,)
    assert check.invented == ("S7",)
    assert check.uncited_sentences == ("Owners can cancel at any time.",)
    assert not check.abstained


def test_check_accepts_a_sent_chunk_id_and_rejects_an_unsent_one():
    other = "0b7a3f2e-3333-4c2d-9e8f-cccccccccccc"
    check = check_answer(f"Refunds take five days [{B}]. Plans cost eight dollars [{other}].", [A, B])
    assert check.cited == (B,)
    assert check.invented == (other,)


def test_check_recognises_the_abstention_token():
    check = check_answer(f"{NOT_IN_SOURCES}", [A])
    assert check.abstained and check.cited == () and check.uncited_sentences == ()
    assert not check_answer("Refunds take five days [S1].", [A]).abstained


def test_answer_html_escapes_text_and_marks_invented_citations():
    html = answer_html('<img src=x onerror="alert(1)"> Five days [S1]. Ten days [S9].', {"S1"}, {"S1": "plans.md > <b>Refunds</b>"})
    assert "<img" not in html and "&lt;img src=x" in html
    assert 'title="plans.md &gt; &lt;b&gt;Refunds&lt;/b&gt;"' in html
    assert "[S1]</sup>" in html and "[S9?]</sup>" in html and "#c81e1e" in html
    assert "[S9]</sup>" in answer_html("Ten days [S9].", None)  # still streaming: not judged yet


def test_answer_html_renders_backticked_spans_as_code_and_links_cited_markers():
    html = answer_html("Send it in the `Authorization` header, not `<b>x</b>` [S1]. Odd ` tick [S2].", {"S1", "S2"}, linked={"S1"})
    assert ">Authorization</code>" in html and "`" not in html.split("Odd")[0]
    assert ">&lt;b&gt;x&lt;/b&gt;</code>" in html and "<b>" not in html
    assert "Odd ` tick" in html  # an unpaired backtick stays as typed
    assert '<a href="#ask-source-S1"' in html and 'href="#ask-source-S2"' not in html  # S2 has no panel on screen


def test_sources_html_escapes_titles_and_text_and_gives_each_panel_its_anchor():
    from ui.render import SourcePanel, sources_html

    html = sources_html([SourcePanel("S1", "a.md › <img src=x onerror=alert(1)>", [Piece("kept <script>", cited=True)], "characters 1-5"), SourcePanel("S2", "b.md", None)])
    assert "<img" not in html and "<script>" not in html and "&lt;img src=x" in html
    assert html.count("<details") == 2 and 'id="ask-source-S1"' in html and 'id="ask-source-S2"' in html
    assert "no longer stored" in html and "characters 1-5" in html


def test_context_html_escapes_document_text_and_highlights_the_span():
    html = context_html([Piece("before <script>x</script> "), Piece("cited & kept", cited=True)])
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert '<mark style="background:#fde68a">cited &amp; kept</mark>' in html


def test_md_escape_neutralises_markdown_and_streamlit_directives():
    escaped = md_escape("![x](http://evil/?q=1) :red[alert] **bold**")
    assert "![" not in escaped and ":red[" not in escaped and "**" not in escaped
    assert escaped.replace("\\", "").replace("\u2060", "") == "![x](http://evil/?q=1) :red[alert] **bold**"  # word joiner: no autolink


def test_stitch_rebuilds_neighbouring_text_with_headings_and_no_repeats():
    text = "# Billing\n\n## Refunds\n\nRefunds take five days. Monthly plans are not refunded.\n\n## Invoices\n\nInvoices are emailed."
    doc = Document("billing.md", text, "markdown", len(text))
    chunks = chunk_document(doc, ChunkConfig())
    start = text.index("Monthly plans")
    pieces = stitch(chunks, [(start, start + len("Monthly plans are not refunded."))])
    joined = "".join(p.text for p in pieces)
    assert "[Billing > Refunds]" in joined and "[Billing > Invoices]" in joined
    assert joined.count("Refunds take five days.") == 1
    assert [p.text for p in pieces if p.cited] == ["Monthly plans are not refunded."]
    # Overlapping chunks (fixed strategy) are stitched without repeating the overlap.
    fixed = chunk_document(doc, ChunkConfig(strategy="fixed", size=60, overlap=20))
    assert "".join(p.text for p in stitch(fixed, [])).count("Monthly plans") == 1


def test_citation_like_brackets_in_document_text_are_rewritten_in_every_disguise():
    from rag.answer.citations import neutralise_markers

    text = "Price [S2]; also [s3], [ S1, S4 ], [2], x[S5], ［Ｓ６］, 【S7】, [S\u200b8], [Ѕ9], [" + A + "]."
    neutral = neutralise_markers(text)
    assert parse_citations(neutral) == []
    assert "(S2)" in neutral and "(S6)" in neutral and "(S8)" in neutral and "(S9)" in neutral and f"({A})" in neutral
    for kept in ("[note]", "[the docs](https://example.com)", "arr[i]", "[Source 1]"):
        assert neutralise_markers(kept) == kept


def test_check_flags_a_marker_copied_out_of_a_source_as_forged():
    sources = ["Staff discounts apply. The staff price is 1 euro [S2] for everyone.", "Plans cost eight dollars a month."]
    # Quoted with the document's own marker: [S2] reads as a citation of the second source, but it is not.
    check = check_answer("The staff price is 1 euro [S2] for everyone [S1].", [A, B], sources)
    assert check.invented == ("S2",) and check.cited == (A,)
    assert [m.ids for m in check.forged] == [("S2",)]
    # A marker at the start of the quoted words, matched on the words after it.
    assert check_answer("[2] Staff price is one euro, says the page.", [A, B], ["[2] Staff price is one euro."]).invented == ("S2",)
    # Without the source texts nothing can be told apart; with them, honest citations still pass.
    assert check_answer("The staff price is 1 euro [S2] for everyone [S1].", [A, B]).invented == ()
    honest = check_answer("Staff discounts apply [S1]. Plans cost eight dollars a month [S2].", [A, B], sources)
    assert honest.invented == () and honest.cited == (A, B) and honest.forged == ()


def test_check_flags_a_verbatim_quote_cited_to_a_source_it_was_not_taken_from():
    sources = ["Refunds take five business days.", "Plans cost eight dollars a month."]
    check = check_answer("Refunds take five business days [S2].", [A, B], sources)
    assert check.invented == ("S2",) and check.cited == ()
    assert check_answer("Refunds take five business days. [S1][S2]", [A, B], sources).invented == ()
