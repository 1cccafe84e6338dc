"""The Search inspector page through AppTest: stage table, escaped detail, links, tracking, compare, health check."""

from __future__ import annotations

import re

import pytest
from apptest_pages import open_page
from carry_corpus import QUESTION as CARRY_QUESTION, ingest_guide
from retrieval_corpus import KEYWORD_QUESTION, PARAPHRASE_QUESTION, chunk_at, ingest_corpus
from streamlit.testing.v1 import AppTest

from rag.components import build_components
from rag.ingest.pipeline import ingest_files
from rag.retrieval.loss import LOSS_TITLES

HOSTILE = """# Tricks

## Garden tricks

Water the tomatoes <script>alert('x')</script> ![pixel](http://evil.example/p.png) [click](http://evil.example) :red[loud] at dawn, **daily**.
"""


@pytest.fixture
def store(settings):
    """The retrieval corpus plus a hostile document, then the store closed so the page's engine can open it."""
    components = build_components(settings)
    ingest_corpus(components)
    assert not ingest_files(components, [("tricks.md", HOSTILE.encode())], tags=["tricks"]).errors
    refunds = chunk_at(components, "billing.md", "Billing > Refunds").chunk.id
    components.close()
    return refunds


def _open(**params: str) -> AppTest:
    return open_page("pages/inspector.py", **params)


def _table(at: AppTest):
    return at.dataframe(key="inspector_table").value


def _frame_with(at: AppTest, *columns: str):
    """The first dataframe holding these columns (display-only dataframes carry no key in AppTest)."""
    return next(d.value for d in at.dataframe if set(columns) <= set(d.value.columns))


def test_link_parameters_drive_the_stage_table(store):
    at = _open(q=PARAPHRASE_QUESTION, fusion="union", candidates="3", k="2", reranker="dense-cosine")
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.title[0].value == "Search inspector"
    assert at.text_input(key="inspector_q").value == PARAPHRASE_QUESTION
    assert at.number_input(key="inspector_candidates").value == 3
    table = _table(at)
    assert list(table.columns) == [
        "final", "chunk id", "source > heading", "whole path", "dense #", "dense", "sparse #", "sparse", "fused #", "fused", "rerank #", "rerank", "movement",
    ]  # fmt: skip
    top = table.iloc[0]
    assert top["source > heading"] == "billing.md > Billing > Refunds" and top["final"] == 1
    assert top["dense #"] == 1 and pd_na(top["sparse #"]) and top["rerank #"] == 1
    assert top["movement"].startswith("D1 S– → F") and top["movement"].endswith(("▲1", "▲2", "▲3", "▲4", "▲5", "="))
    assert table["final"].dropna().tolist() == [1, 2]
    # The reranker is named once (the one asked for ran), not "Reranker ran: x · … rerank x".
    caption = next(c.value for c in at.caption if "candidates" in c.value).replace("\\", "")
    assert caption.count("dense-cosine") == 1 and "Reranker ran" not in caption
    # Stages that did not rank a chunk show a dash, not "None".
    assert at.dataframe(key="inspector_table").proto.placeholder == "–"
    # The first row's detail: its text, escaped, and the sentence that matched best. That is its heading path
    # "Billing > Refunds" (what sentence rescoring read: 0.51 against 0.39 for the body's one sentence),
    # quoted, not highlighted in a text it is not part of; the panel says where the cosines come from.
    assert any("Refunds are issued within 14 days of purchase to the original card\\." in m.value for m in at.markdown)
    assert not any(":blue-background[" in m.value for m in at.markdown)
    assert any(m.value.startswith("Best sentence (cosine") and m.value.endswith("the heading path:") for m in at.markdown)
    assert any(m.value == "> Billing \\> Refunds" for m in at.markdown), [m.value for m in at.markdown]
    assert any("sentence vectors stored at ingest" in c.value for c in at.caption)


STATEMENTS = """# Bank

## Statements

Monthly statements list every card payment, transfer and fee of the month, in date order.

Statements for business accounts also show the VAT on each fee, for your bookkeeping.

Older statements stay downloadable as PDF for ten years from the account page.
"""


def test_repeated_headings_are_told_apart_and_bm25_headers_fit(settings):
    from rag.settings.config import ChunkConfig

    components = build_components(settings)
    assert not ingest_files(components, [("bank.md", STATEMENTS.encode())], ChunkConfig("heading", 120, 0)).errors
    components.close()
    at = _open(q="Which statements show fees?", fusion="rrf", reranker="none")
    assert not at.exception, at.exception
    labels = _table(at)["source > heading"].tolist()
    assert len(labels) == 3 and len(set(labels)) == 3  # three chunks under one heading, three different labels
    assert all(re.fullmatch(r"bank\.md > Bank > Statements · #\d+", label) for label in labels), labels
    whole = _table(at)["whole path"].tolist()
    assert all(re.fullmatch(r"bank\.md > Bank > Statements · chunk \d+: \S+( \S+){5}…", w) for w in whole), whole
    assert any(w.endswith(": Monthly statements list every card payment,…") for w in whole), whole
    terms = next(d for d in at.dataframe if "stored tf part" in d.value.columns)
    columns = terms.proto.columns
    for short in ('"label": "tf"', '"label": "adds"', '"label": "q weight"', '"label": "df"'):
        assert short in columns.replace('":"', '": "'), columns


def pd_na(value) -> bool:
    import pandas as pd

    return value is pd.NA or pd.isna(value)


def test_document_text_is_escaped_never_rendered(store):
    at = _open(q="When should I water the tomatoes?", source="tricks.md", reranker="none")
    assert not at.exception
    assert _table(at).iloc[0]["source > heading"] == "tricks.md > Tricks > Garden tricks"
    shown = "\n".join(m.value for m in at.markdown)
    assert "\\<script\\>" in shown and "\\!\\[pixel\\]" in shown and "\\:red\\[loud\\]" in shown
    assert "<script>" not in shown and "](http" not in shown
    assert not any(getattr(m.proto, "allow_html", False) for m in at.markdown)
    assert not at.get("html")


def test_tracking_from_a_link_says_why_no_small_change_works(store):
    # Refunds shares no word with the keyword question and is the last chunk by dense similarity:
    # only "candidates >= 8 and final k >= 8" (every chunk of the collection) would surface it.
    at = _open(q=KEYWORD_QUESTION, fusion="rrf", candidates="2", k="2", reranker="none", track=store)
    assert not at.exception, at.exception
    assert any("Missed by dense and sparse" in w.value and "final_k" not in w.value for w in at.warning)
    standing = _frame_with(at, "stage", "would-be rank")
    assert standing["stage"].tolist() == ["dense", "sparse", "fused", "rerank", "final"]
    assert pd_na(standing.iloc[0]["rank"]) and standing.iloc[0]["would-be rank"] > 2
    assert [d.proto.placeholder for d in at.dataframe if "would-be rank" in d.value.columns] == ["–"]
    [why] = [i.value for i in at.info if i.value.startswith("No small change")]
    assert "does not match the question in either search space" in why and "BM25 score 0" in why
    assert not [b for b in at.button if b.key and b.key.startswith("inspector_apply_")]


def test_applying_a_fix_re_tracks_so_the_panel_matches_the_table(store):
    # Rrf with k=1 puts Refunds second: lost at the final k, with small verified fixes.
    at = _open(q=PARAPHRASE_QUESTION, fusion="rrf", candidates="3", k="1", reranker="none", track=store)
    assert not at.exception, at.exception
    assert any("Ranked below the final k" in w.value for w in at.warning)
    fixes = [m.value for m in at.markdown if m.value.startswith(("Smallest change", "Also works"))]
    assert fixes and "verified: final rank" in fixes[0]
    smallest = re.search(r"`(.+?)`", fixes[0]).group(1)
    at.button(key="inspector_apply_0").click()
    at.run()
    assert not at.exception
    # The fix names the settings it changes, and Apply put each into its widget.
    widgets = {"fusion": "inspector_fusion", "candidates": "inspector_candidates", "final k": "inspector_k", "dense weight": "inspector_dense_weight", "rrf k": "inspector_rrf_k"}
    checked = 0
    for part in smallest.split(", "):
        if m := re.fullmatch(r"(candidates|final k|dense weight|rrf k) >= ([\d.]+)", part):
            value = next(w.value for w in [*at.number_input, *at.slider] if w.key == widgets[m.group(1)])
            assert float(value) >= float(m.group(2)), (part, value)
            checked += 1
        elif m := re.fullmatch(r"fusion (\w+)", part):
            assert at.selectbox(key="inspector_fusion").value == m.group(1)
            checked += 1
    assert checked, smallest
    # With the fix applied, the tracked chunk is in the final top-k of the main table...
    table = _table(at).set_index("chunk id")
    final = int(table.loc[store, "final"])
    # ...and the tracking panel below says the same, at the same rank: it was re-tracked, not left stale.
    assert not at.warning, [w.value for w in at.warning]
    assert [s.value.replace("\\", "") for s in at.success] == [f"found: final rank {final}"]
    assert _frame_with(at, "stage", "would-be rank").set_index("stage").loc["final", "rank"] == final


def test_track_by_pasted_text_compare_and_health_check(store):
    at = _open(q=PARAPHRASE_QUESTION, fusion="rrf", candidates="3", k="1", reranker="none")
    at.radio(key="inspector_track_by").set_value("pasted text")
    at.run()
    at.text_area(key="inspector_track_text").input("issued within 14 days of purchase")
    at.button(key="inspector_track_button").click()
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any("**Ranked below the final k**: reranked to" in w.value for w in at.warning)

    at.button(key="inspector_cmp_button").click()
    at.run()
    changes = _frame_with(at, "rank A", "rank B")
    assert {"rank A", "rank B", "change", "in"} <= set(changes.columns)
    refunds = changes[changes["source > heading"] == "billing.md > Billing > Refunds"].iloc[0]
    # B defaults to dense only, which puts Refunds first; A (rrf, k=1) does not keep it.
    assert refunds["rank B"] == 1 and pd_na(refunds["rank A"]) and refunds["in"] == "only B"

    at.number_input(key="inspector_probe_n").set_value(4)
    at.button(key="inspector_probe_button").click()
    at.run()
    assert not at.exception
    assert any(m.label == "Own chunk at rank 1" for m in at.metric)
    # Changing a setting re-tracks: with k=3 the panel follows the chunk to its new verdict, as the table shows it.
    at.number_input(key="inspector_k").set_value(3)
    at.run()
    assert [s.value.replace("\\", "") for s in at.success] == [f"found: final rank {int(_table(at).set_index('chunk id').loc[store, 'final'])}"]


def test_bad_link_and_bad_settings_show_errors(store):
    at = _open(q="refunds", candidates="lots")
    assert not at.exception
    assert any("link parameter candidates must be a whole number from 1 to 2000; got 'lots'" in e.value.replace("\\", "") for e in at.error)
    assert at.text_input(key="inspector_q").value == "refunds"  # the rest of the link still applies
    at.selectbox(key="inspector_reranker").set_value("other…")
    at.run()
    at.text_input(key="inspector_reranker_custom").input("magic")
    at.run()
    assert any("reranker 'magic' is not offered here" in e.value.replace("\\", "") for e in at.error), [e.value for e in at.error] + [x.value for x in at.exception]


def test_empty_question_offers_the_health_check(store):
    at = _open()
    assert not at.exception
    assert any("Type a question" in i.value for i in at.info)
    # The health check runs without a question: every chunk probed, the share shown is what its table says.
    at.number_input(key="inspector_probe_n").set_value(1000)
    at.button(key="inspector_probe_button").click()
    at.run()
    assert not at.exception
    (metric,) = [m for m in at.metric if m.label == "Own chunk at rank 1"]
    probed = int(re.search(r"of (\d+) probed", metric.proto.help).group(1))
    failed = len(_frame_with(at, "lifted sentence", "own rank")) if any(d.key == "inspector_probe_failures" for d in at.dataframe) else 0
    chunks = int(re.search(r"(\d+) chunks", " ".join(c.value for c in at.sidebar.caption)).group(1))
    assert probed == chunks and metric.value == f"{(probed - failed) / probed:.0%}"


def test_link_parameters_parse_on_top_of_the_defaults():
    from rag.settings.config import RetrievalConfig
    from rag.errors import ConfigError
    from rag.settings.links import parse_inspector_params

    base = RetrievalConfig()
    req = parse_inspector_params(
        {"q": ["why?"], "k": ["7"], "dense_weight": ["0.7"], "min_score": ["0.2"], "source": ["a.md", "b.md", "a.md"], "tag": ["x"], "track": ["abc"], "utm": ["1"]},
        base,
    )
    assert (req.question, req.config.final_k, req.config.dense_weight, req.config.min_score) == ("why?", 7, 0.7, 0.2)
    assert req.config.candidates == base.candidates and req.config.fusion == base.fusion
    assert (req.flt.sources, req.flt.tags, req.track) == (("a.md", "b.md"), ("x",), "abc")
    with pytest.raises(ConfigError, match="fusion must be one of"):
        parse_inspector_params({"fusion": ["best"]}, base)


def test_filter_matching_nothing_says_so(store):
    at = _open(q="refunds", source="missing.md")
    assert not at.exception
    assert any("No chunk matched" in i.value for i in at.info)
    assert not any(d.key == "inspector_table" for d in at.dataframe)


def test_empty_collection_points_to_the_documents_page():
    at = _open()
    assert not at.exception
    assert any("has no documents yet" in i.value and "Load sample docs" in i.value for i in at.info)
    # Its stable URL path (app.py), on the same collection: a followed link starts a new session.
    assert any("[Go to Documents](documents?collection=docs)" in m.value for m in at.markdown)


def test_a_stored_collection_shows_no_empty_notice(store):
    at = _open()
    assert not any("has no documents yet" in i.value for i in at.info)


def test_no_panel_outlives_the_search_it_was_computed_on(store):
    """Comparison, health check and tracking each belong to one question, settings, collection and state of
    the documents: after any changes, none is shown as if it described the search on screen."""
    from ui import setup as ui_setup

    at = _open(q=PARAPHRASE_QUESTION, fusion="rrf", candidates="3", k="1", reranker="none", track=store)
    at.button(key="inspector_cmp_button").click()
    at.run()
    at.number_input(key="inspector_probe_n").set_value(3)
    at.button(key="inspector_probe_button").click()
    at.run()
    assert not at.exception
    assert any(m.label == "Own chunk at rank 1" for m in at.metric)
    assert any({"rank A", "rank B"} <= set(d.value.columns) for d in at.dataframe)

    # A setting changes: the comparison (A was k=1) and the health check (run with k=1) are not shown.
    at.number_input(key="inspector_k").set_value(3)
    at.run()
    assert not any({"rank A", "rank B"} <= set(d.value.columns) for d in at.dataframe)
    assert not any(m.label == "Own chunk at rank 1" for m in at.metric)
    infos = " ".join(i.value for i in at.info)
    assert "since the last comparison" in infos and "since the last health check" in infos

    # The tracked chunk's document is re-ingested with other text (by the page's own engine, as the
    # Documents page would): the chunk is gone, and the tracking panel says so instead of its old verdict.
    engine = ui_setup.get_components(ui_setup.get_settings())
    changed = "# Billing\n\n## Refunds\n\nRefunds now take thirty days and go to store credit only.\n"
    assert not ingest_files(engine, [("billing.md", changed.encode())], tags=["billing"]).errors
    at.run()
    assert not at.exception
    assert not at.success  # no "found: final rank" left from before
    assert any("no longer stored" in e.value for e in at.error), [e.value for e in at.error]


@pytest.mark.parametrize("pinned", [False, True])
def test_a_new_question_clears_the_tracking_unless_the_target_is_pinned(store, pinned):
    at = _open(q=PARAPHRASE_QUESTION, fusion="rrf", candidates="3", k="1", reranker="none", track=store)
    assert any("Ranked below the final k" in w.value for w in at.warning)
    if pinned:
        at.checkbox(key="inspector_track_pin").check().run()
    at.text_input(key="inspector_q").input(KEYWORD_QUESTION).run()
    assert not at.exception, at.exception
    lost = tuple(f"**{title}**" for title in LOSS_TITLES.values())
    panels = [w.value for w in at.warning if w.value.startswith(lost)] + [s.value for s in at.success]
    if pinned:
        assert panels, "a pinned target is followed for the new question"
    else:
        assert panels == [], panels


def test_a_section_link_tracks_the_section_found_at_rank_1_as_found(store):
    """Eval's links for section gold name the section: the inspector follows all its chunks, and a section
    whose best chunk is final rank 1 is found at rank 1 (not "lost" because some other chunk of it was)."""
    at = _open(q="When are refunds issued to the original card?", track_source="billing.md", track_heading="Billing > Refunds")
    assert not at.exception, at.exception
    assert at.radio(key="inspector_track_by").value == "source + heading"
    final = int(_table(at).set_index("chunk id").loc[store, "final"])
    assert final == 1
    assert [s.value.replace("\\", "") for s in at.success] == ["found: final rank 1"]
    assert not [w.value for w in at.warning if w.value.startswith("**")]


def test_the_answer_in_the_second_chunk_of_the_first_section_is_listed_under_it_and_found_there(settings):
    """One hit per section used to hide the answering chunk, ranked 2nd behind a chunk of its own section. It is
    carried with that chunk (rag/retrieval/collapse.py): listed right under it at its final rank, and tracking it
    says found at that rank, with nothing to fix."""
    components = build_components(settings)
    answer = ingest_guide(components)
    components.close()
    at = _open(q=CARRY_QUESTION, collapse="1")
    assert not at.exception, at.exception
    rows = _table(at).reset_index(drop=True)
    assert list(rows["chunk id"]).index(answer) == 1, rows[["final", "movement"]]  # right under its section's chunk
    assert rows.loc[1, "final"] == rows.loc[0, "final"] == 1
    assert all(rows.loc[i, "source > heading"].startswith("guide.md > Guide > Refunds") for i in (0, 1))
    assert "carried with its section's chunk" in rows.loc[1, "movement"]
    at = _open(q=CARRY_QUESTION, collapse="1", track=answer)
    assert not at.exception, at.exception
    [found] = [s.value.replace("\\", "") for s in at.success]
    assert found.startswith("found: final rank 1, carried with") and "guide.md" in found
    assert not [b for b in at.button if b.key and b.key.startswith("inspector_apply_")]  # nothing to fix

def test_a_section_found_below_rank_1_is_told_with_what_ranked_above_it_and_why(settings):
    """Issue 38, item 5: "found" at rank 2 says which chunk ranked first and why; lost at k 1, the smallest change
    offered is the smallest final k that shows the section (2), not its rerank rank (4)."""
    components = build_components(settings)
    ingest_guide(components)
    components.close()
    at = _open(q=CARRY_QUESTION, collapse="1", k="2", track_source="guide.md", track_heading="Invoices")
    assert not at.exception, at.exception
    assert [s.value.replace("\\", "") for s in at.success] == ["found: final rank 2"]
    [above] = [m.value.replace("\\", "") for m in at.markdown if m.value.startswith("Ranked above it:")]
    first = _table(at).iloc[0]
    assert first["source > heading"].startswith("guide.md > Guide > Refunds") and first["final"] == 1
    assert f"1. **guide.md > Guide > Refunds**, score {first['rerank']:.4f}: higher rerank score" in above
    assert "fusion put it above already: fused rank 1 vs 4" in above
    at = _open(q=CARRY_QUESTION, collapse="1", k="1", track_source="guide.md", track_heading="Invoices")
    assert not at.exception, at.exception
    assert "Smallest change: `final k >= 2`, verified: final rank 2" in [m.value for m in at.markdown]
    assert not [m.value for m in at.markdown if m.value.startswith("Ranked above it:")]  # lost: nothing to explain


def test_the_url_holds_the_question_as_soon_as_it_is_asked(store):
    """Issue 38, item 4: a reload (the URL opened again) shows the new question, and the link's settings stay."""
    at = _open(q=PARAPHRASE_QUESTION, fusion="union", track=store)
    assert at.query_params["q"] == PARAPHRASE_QUESTION
    at.number_input(key="inspector_candidates").set_value(7)
    at.text_input(key="inspector_q").input(KEYWORD_QUESTION).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.query_params["q"] == KEYWORD_QUESTION and at.query_params["fusion"] == "union"
    assert "track" not in at.query_params  # the tracked chunk was the old question's
    # The URL written back is not taken for a new link: the sidebar keeps what the user set.
    assert at.number_input(key="inspector_candidates").value == 7
    reloaded = _open(**at.query_params)
    assert reloaded.text_input(key="inspector_q").value == KEYWORD_QUESTION
    at.text_input(key="inspector_q").input("  ").run()
    assert "q" not in at.query_params


def test_the_sidebar_says_the_stage_settings_after_apply(store):
    """Issue 38, item 11: after Apply the sidebar's retrieval line names the settings the table ran with, and
    (issue 40, item 3) how they differ from what Ask and Eval run."""
    at = _open(q=PARAPHRASE_QUESTION, fusion="rrf", candidates="3", k="1", reranker="none", track=store)
    assert not at.exception, at.exception
    at.button(key="inspector_apply_0").click()
    at.run()
    assert not at.exception
    lines = [c.value.replace("\\", "") for c in at.sidebar.caption if c.value.startswith("Retrieval")]
    assert len(lines) == 1, lines
    found = re.fullmatch(r"Retrieval on this page: (.+) · differs from Ask and Eval in: (.+)", lines[0])
    assert found and "dense weight 1 (Ask: 0.5)" in found.group(2), lines  # the fix applied: weighted RRF, w=1
    ran = [c.value.replace("\\", "") for c in at.caption if c.value.endswith(" ms")]  # the table's own settings line
    assert len(ran) == 1 and ran[0].startswith(found.group(1) + " · "), (ran, found.group(1))


def test_tracking_a_disabled_chunk_says_it_is_disabled_and_by_whom(settings):
    """Issue 41, item 1: a chunk disabled on the Documents page (or `ragscope chunk disable`) is never retrieved;
    the inspector, tracking it, says so with who disabled it and when."""
    from rag.catalog.fixes import disable_chunks

    components = build_components(settings)
    ingest_corpus(components)
    refunds = chunk_at(components, "billing.md", "Billing > Refunds").chunk.id
    disable_chunks(components, [refunds], "ana", "out of date")
    components.close()
    at = _open(q=PARAPHRASE_QUESTION, track=refunds)
    assert not at.exception, at.exception
    [shown] = [w.value for w in (*at.info, *at.warning) if "retrieval never returns it" in w.value]
    assert "the chunk is disabled by ana at " in shown and "out of date" in shown, shown
