"""Issue 29, first use: the collection in the URL, tables that fit, progress that tells, limits said plainly, wording.

Through AppTest on real data (the sample docs, real encoders), plus the small helpers the pages use.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

from streamlit.testing.v1 import AppTest

from rag.catalog.collections import for_collection
from rag.components import build_components
from rag.errors import LoaderError
from rag.ingest.eta import Eta, duration
from rag.ingest.loaders.document import load_document
from rag.ingest.pipeline import ingest_files
from rag.text.sizes import mib
from ui.inspector_view import COMPACT, GLOSSARY, stage_columns
from ui.model_notes import model_notes

APP = str(Path(__file__).resolve().parent.parent / "app.py")
GUIDE = b"# Ferry guide\n\n## Timetable\n\nThe ferry leaves at nine, back at five.\n\n## Tickets\n\nBuy on board.\n"
OTHER = ("other.md", b"# Other\n\nAnother text.\n")


def plain(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


def _run(at: AppTest) -> AppTest:
    at.run()
    assert not at.exception, at.exception
    return at


def _open(page: str | None = None, **params: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=90)
    at.query_params.update(params)
    _run(at)
    if page:
        at.switch_page(page)
        _run(at)
    return at


def _upload(at: AppTest, *files: tuple[str, bytes]) -> AppTest:
    (uploader,) = [u for u in at.file_uploader if u.key.startswith("documents_upload_")]
    uploader.set_value([(name, data, "application/octet-stream") for name, data in files])
    return _run(at)


# 2. The collection in every URL ----------------------------------------------------------------------------


def test_the_collection_is_in_the_url_from_the_first_visit_and_follows_the_sample_docs(settings):
    at = _open()
    assert at.query_params.get("collection") == "docs"  # a reload of this address opens the same collection
    at.button(key="documents_sample").click()
    _run(at)
    assert at.query_params.get("collection") == "sample"
    assert any("Collection **sample**" in c.value for c in at.sidebar.caption)
    # A new session opened on that address (a reload, a new tab, a shared link) is on the sample collection.
    again = _open(collection=at.query_params["collection"])
    assert any("Collection **sample**" in c.value for c in again.sidebar.caption)
    assert again.query_params.get("collection") == "sample"


def test_the_picker_puts_its_collection_in_the_url(settings):
    components = build_components(for_collection(settings, "ferries"))
    assert not ingest_files(components, [("guide.md", GUIDE)]).errors
    components.close()
    at = _open()
    at.sidebar.selectbox(key="ui_collection_picker").select("ferries")
    _run(at)
    assert at.query_params.get("collection") == "ferries"


def test_the_ask_placeholder_comes_from_the_collections_own_documents(sample_store):
    at = _open("pages/ask.py")
    hint = at.text_input(key="ask_question").placeholder
    assert hint.startswith("e.g. What does the “") and hint.endswith("” section say?"), hint
    heading = hint.split("“")[1].split("”")[0]
    docs = Path(__file__).resolve().parent.parent / "rag" / "resources" / "sample_docs"
    assert any(f"# {heading}\n" in f.read_text() for f in docs.rglob("*.md")), heading  # the collection's own


def test_an_empty_collection_gets_no_ask_placeholder(settings):
    at = _open("pages/ask.py")
    assert at.text_input(key="ask_question").placeholder == ""


# 3. Tables that fit ------------------------------------------------------------------------------------------


def test_stage_table_shows_a_compact_set_with_tooltips_and_a_glossary(sample_store):
    at = _open("pages/inspector.py")
    at.text_input(key="inspector_q").input("How long does a refund take?")
    _run(at)
    table = next(d for d in at.dataframe if "fused #" in d.value.columns)
    assert list(table.proto.column_order) == COMPACT
    assert {"fused #", "rerank #", "movement"} <= set(COMPACT) and "chunk id" not in COMPACT
    assert all(spec.get("help") for spec in stage_columns().values()), "every header has a tooltip"
    assert any(e.label == "What the columns and names mean" for e in at.expander)
    for word in ("dense #", "sparse #", "fused #", "rerank #", "movement", "DBSF", "RRF", "MaxSim"):
        assert word in GLOSSARY
    at.toggle(key="inspector_table_details").set_value(True)
    _run(at)
    table = next(d for d in at.dataframe if "fused #" in d.value.columns)
    assert "chunk id" in table.proto.column_order and "fused" in table.proto.column_order


# 7. Limits said plainly --------------------------------------------------------------------------------------


def test_one_size_unit_for_the_page_and_the_cli():
    assert mib(50 * 1024 * 1024) == "50.0 MiB"
    try:
        load_document("big.md", b"# Big\n\n" + b"x" * (2 * 1024 * 1024), max_bytes=1024 * 1024)
    except LoaderError as e:
        assert str(e) == "big.md: 2.0 MiB is over the 1.0 MiB limit per file (RAGSCOPE_MAX_UPLOAD_MB)"
    else:
        raise AssertionError("not refused")


def test_an_upload_over_the_limit_gets_a_visible_error_in_mib(monkeypatch, settings):
    monkeypatch.setenv("RAGSCOPE_MAX_UPLOAD_MB", "1")
    at = _open()
    label = next(u for u in at.file_uploader if u.key.startswith("documents_upload_")).label
    assert "up to 1.0 MiB each" in label
    _upload(at, ("huge.md", b"# Big\n\n" + b"The ferry leaves at nine. " * 60_000))
    assert any(plain(e.value).startswith("huge.md: 1.5 MiB is over the 1.0 MiB limit per file") for e in at.error)
    assert not [b for b in at.button if b.key == "documents_ingest"]


def test_a_file_over_the_chunk_limit_is_not_offered_for_ingest(monkeypatch, settings):
    monkeypatch.setenv("RAGSCOPE_MAX_CHUNKS", "2")
    many = b"".join(b"## Part %d\n\nText %d.\n\n" % (i, i) for i in range(9))
    at = _upload(_open(), ("guide.md", GUIDE), ("many.md", many))
    assert any("many.md: " in plain(e.value) and "not offered for ingest" in e.value for e in at.error)
    assert at.button(key="documents_ingest").label == "Ingest 1 file"


def test_pypdf_warnings_are_folded_into_the_files_message(capfd):
    logging.getLogger().addHandler(handler := logging.StreamHandler())  # as a server's root logger would print
    try:
        try:
            load_document("broken.pdf", b"hello, not a PDF at all")
        except LoaderError as e:
            message = str(e)
        else:
            raise AssertionError("not refused")
    finally:
        logging.getLogger().removeHandler(handler)
    assert message.startswith("broken.pdf: could not read this PDF file")
    assert "pypdf also said: invalid pdf header" in message and "EOF marker not found" in message
    err = capfd.readouterr().err
    assert "invalid pdf header" not in err and "EOF marker" not in err


# 6. Progress that tells --------------------------------------------------------------------------------------


def test_an_estimate_follows_the_rate_since_the_first_report():
    eta = Eta(started=0.0)
    assert eta.left(10, 100, now=0.0) == ""  # the first report: no rate yet
    assert eta.left(20, 100, now=10.0) == "about 80 s left"  # 10 per 10 s, 80 to go
    assert eta.left(100, 100, now=20.0) == ""
    assert (duration(42), duration(600), duration(4000)) == ("40 s", "10 min", "1 h 7 min")


class _Slot:
    """Where model_notes writes: records what a page placeholder would show."""

    def __init__(self) -> None:
        self.shown: list[str] = []

    def info(self, text: str) -> None:
        self.shown.append(text)

    def empty(self) -> None:
        self.shown.append("")


def test_one_time_model_work_is_said_while_it_runs_then_cleared():
    slot = _Slot()
    with model_notes(slot):  # type: ignore[arg-type]
        logging.getLogger("rag.encoders").info("exporting dense model to ONNX from its weights (once): a -> b")
        logging.getLogger("rag.encoders").info("loading dense model x")  # an ordinary load: not one-time work
    assert len(slot.shown) == 2 and slot.shown[1] == ""
    assert slot.shown[0].startswith("Preparing the models once for this data dir")
    assert "exporting dense model to ONNX" in slot.shown[0]


# 8. Wording ------------------------------------------------------------------------------------------------


def test_wording_on_the_documents_page(settings):
    at = _upload(_open(), ("guide.md", GUIDE))
    assert at.button(key="documents_ingest").label == "Ingest 1 file"
    at.button(key="documents_ingest").click()
    _run(at)
    assert any(s.value == "1 document ingested: 2 chunks written." for s in at.success), [s.value for s in at.success]
    # The sidebar: the collection and where it is stored, in words; counts in the right number.
    captions = [c.value for c in at.sidebar.caption]
    assert any(c.startswith("Collection **docs**, stored by the embedded engine in ") for c in captions), captions
    assert "1 document · 2 chunks" in captions
    assert not any("blocks the whole app" in w.value for w in at.warning), "the optimize warning waits for its button"
    # The chunk filter: one chunk contains, several contain.
    at.text_input(key="documents_chunks_filter").input("nine")
    _run(at)
    assert "1 chunk of 2 contains this text." in [c.value for c in at.caption]
    # A re-upload with one new section: "1 chunk added", and the box after ingest counts what the button counted.
    at = _upload(at, ("guide.md", GUIDE + b"\n## Pets\n\nDogs travel free.\n"), OTHER)
    assert any("1 chunk added" in plain(c.value) for c in at.caption), [c.value for c in at.caption]
    at = _upload(at, ("guide.md", GUIDE), OTHER)
    assert at.button(key="documents_ingest").label == "Ingest 1 file"
    at.button(key="documents_ingest").click()
    _run(at)
    assert any(
        s.value == "1 document ingested: 1 chunk written; 1 document already stored, unchanged." for s in at.success
    ), [s.value for s in at.success]


def test_demo_view_is_full_width_without_sidebar_or_settings(sample_store):
    at = _open("pages/ask.py")
    assert any(e.label == "Retrieval settings" for e in at.expander) and len(at.sidebar.caption)
    at.toggle(key="ask_demo").set_value(True)
    _run(at)
    assert not any(e.label == "Retrieval settings" for e in at.expander)
    assert len(at.sidebar.caption) == 0 and len(at.sidebar.selectbox) == 0
    at.text_input(key="ask_question").input("How long does a refund take to reach my card?")
    next(b for b in at.button if b.label == "Ask").click()
    _run(at)
    assert "5 to 10 business days" in at.get("html")[0].proto.body
