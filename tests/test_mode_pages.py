"""The retrieval modes on the pages (AppTest, real models and store, two-hop corpus): the inspector shows a
mode's searches as stages and tracks a chunk through them; Ask answers from the mode's final list and
shows its stages; a link carries the mode; the agent is refused offline in the form.
"""

from __future__ import annotations


import re
from urllib.parse import parse_qs

import pytest
from apptest_pages import open_page
from modes_corpus import FILES, TWO_HOP_QUESTION

from rag.ask.log import AskLog
from rag.components import build_components
from rag.settings.config import Settings
from rag.eval.runs import list_runs
from rag.ingest.pipeline import ingest_files
from rag.types import ChunkFilter

MAKER = "Manufacturers > Halberd Instruments"
MAKER_END = ("makers.md", "Halberd Instruments")


@pytest.fixture
def maker(settings):
    """The two-hop corpus ingested, store closed for the page; returns the maker chunk's id."""
    components = build_components(settings)
    assert not ingest_files(components, [(n, t.encode()) for n, t in FILES.items()]).errors
    chunk = next(r.chunk for r in components.store.records(ChunkFilter(sources=("makers.md",))) if r.chunk.heading == MAKER)
    components.close()
    return chunk.id


def _texts(at) -> str:  # noqa: ANN001
    """Everything the page wrote, with the Markdown escaping of document-derived text taken out."""
    parts = [m.value for m in (*at.markdown, *at.caption, *at.text, *at.warning, *at.info)] + [e.label for e in at.expander]
    return re.sub(r"\\(.)", r"\1", "\n".join(parts))


def test_inspector_shows_each_hop_and_tracks_the_chunk_to_the_hop_that_found_it(maker):
    at = open_page("pages/inspector.py", q=TWO_HOP_QUESTION, mode="multi_hop", k="3", track=maker)
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.selectbox(key="inspector_mode").value == "multi_hop"
    shown = _texts(at)
    assert "Mode: multi-hop (2 hops: hop 2 adds salient terms of hop 1's best chunk)" in shown
    assert f"hop 1: {TWO_HOP_QUESTION}" in shown and f"hop 2: {TWO_HOP_QUESTION} halberd instruments" in shown
    assert "Carried to the next hop from chunk" in shown and "halberd, instruments" in shown
    # Each hop's own list, then the fused final list in the main table.
    # (AppTest gives display-only dataframes no key: they are found by their columns, in page order.)
    hop1, hop2 = [d.value for d in at.dataframe if "rerank #" in d.value.columns and "movement" not in d.value.columns]
    # The cell keeps the source and the end of the path (issue 38, item 3): compare source and last heading.
    final_of = lambda frame: [(c.split(" > ")[0], c.split(" > ")[-1]) for c in frame[frame["final"].notna()]["source > heading"]]  # noqa: E731
    assert MAKER_END not in final_of(hop1) and MAKER_END in final_of(hop2)
    assert len(final_of(hop1)) == len(final_of(hop2)) == 3
    assert MAKER_END in final_of(at.dataframe(key="inspector_table").value)
    # Tracking: hop 1 did not hold the maker in its top 3, hop 2 did; the mode's final list kept it.
    trail = next(d.value for d in at.dataframe if "what happened" in d.value.columns)
    assert trail["search"].tolist() == ["hop 1", "hop 2", "final"]
    assert pd_isna(trail["final rank"][0]) and trail["final rank"][1] >= 1 and trail["final rank"][2] >= 1
    assert "first appeared in hop 2" in shown


def test_inspector_shows_corrective_grades_and_the_threshold(maker):
    at = open_page("pages/inspector.py", q="What is the capital of Peru?", mode="corrective", k="3")
    assert not at.exception and not at.error
    shown = _texts(at)
    assert "Abstained: no chunk reached the dense cosine threshold of 0.25" in shown
    assert "Action: first pass · grades by dense cosine; relevant at or above 0.25" in shown
    grades = next(d.value for d in at.dataframe if "grade" in d.value.columns)
    assert len(grades) == 3 and not grades["relevant"].any() and (grades["grade"] < 0.25).all()


def test_inspector_shows_the_hyde_pseudo_document(maker):
    at = open_page("pages/inspector.py", q=TWO_HOP_QUESTION, mode="hyde", k="3")
    assert not at.exception and not at.error
    shown = _texts(at)
    assert "Mode: HyDE (pseudo-document: extractive first pass)" in shown
    # Said once: the answerer's own description already says it quotes the first pass.
    assert "Pseudo-document (not written), by the offline extractive answerer (quoted from the first pass); searched dense only:" in shown
    assert any("Vexora" in t.value for t in at.text)  # the quoted passage, shown as plain text


def test_ask_answers_from_the_modes_final_list_shows_its_stages_and_logs_the_mode(maker, settings):
    at = open_page("pages/ask.py")
    at.selectbox(key="ask_mode").set_value("multi_hop").run()
    at.text_input(key="ask_question").input(TWO_HOP_QUESTION)
    next(b for b in at.button if b.label == "Ask").click()
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    shown = _texts(at)
    assert "after **multi_hop** retrieval" in shown
    assert "How the multi_hop mode searched (the sources below are its final list)" in shown
    assert f"hop 2: {TWO_HOP_QUESTION} halberd instruments" in shown
    (record,) = AskLog.for_settings(Settings.from_env()).recent()
    assert record.config.mode == "multi_hop"
    link = next(p for p in at.get("page_link") if p.proto.label == "Open in inspector")
    assert parse_qs(link.proto.query_string)["mode"] == ["multi_hop"]


def test_ask_form_refuses_the_agent_offline(maker):
    at = open_page("pages/ask.py")
    at.selectbox(key="ask_mode").set_value("agent").run()
    assert "Mode agent is unavailable: the agent mode needs Claude (set ANTHROPIC_API_KEY)" in at.error[0].value
    assert not at.exception


def pd_isna(value) -> bool:  # noqa: ANN001
    import pandas as pd

    return bool(pd.isna(value))


def test_eval_tab_runs_a_mode_and_compares_it_with_plain(sample_store):
    at = open_page("pages/ask.py", timeout=180)
    at.button(key="eval_load_sample").click()
    at.run()
    at.button(key="eval_start").click()
    at.run()
    at.selectbox(key="eval_mode").set_value("multi_hop").run()
    at.button(key="eval_start").click()
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    # Newest first, in the order they ran even when both were stored within one second (no timing assumed).
    mode_run, plain_run = list_runs(sample_store.data_dir, "sample")
    assert (plain_run.config.mode, mode_run.config.mode) == ("plain", "multi_hop") and "multi-hop mode" in mode_run.name
    assert at.selectbox(key="eval_run_id").value == mode_run.id
    assert any("mode plain → multi_hop" in c.value.replace("\\", "") for c in at.caption)
