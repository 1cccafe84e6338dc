"""What a page's rerun recomputes: each typed question reruns the inspector, and work that depends only on the
collection's data is done once per data version, not once per rerun (issue 38, item 10)."""

from __future__ import annotations

from test_cjk import POLICY, SHIPPING

import ui.links
from rag.catalog.language import dense_language_note
from rag.components import build_components
from rag.ingest.pipeline import ingest_files


def test_the_language_warning_reads_the_collection_once_per_data_version(settings, monkeypatch):
    from apptest_pages import open_page

    components = build_components(settings)
    assert not ingest_files(components, [("退货.md", POLICY.encode())]).errors
    components.close()
    judged = []

    def counted(c):  # noqa: ANN001, ANN202 - the real judgement, counted
        judged.append(c.settings.collection)
        return dense_language_note(c)

    monkeypatch.setattr(ui.links, "dense_language_note", counted)
    at = open_page("pages/inspector.py")
    for question in ("多久内能退货？", "运费是多少？", "退货"):
        at.text_input(key="inspector_q").input(question).run()
        assert not at.exception, [e.value for e in at.exception]
        assert any("Chinese, Japanese or Korean" in w.value for w in at.warning)
    assert len(judged) == 1, judged  # four runs of the page, one judgement
    # New data is a new version: judged again, on what the collection now holds.
    writer = build_components(settings)
    try:
        assert not ingest_files(writer, [("shipping.md", SHIPPING.encode())]).errors
    finally:
        writer.close()
    at.text_input(key="inspector_q").input("运费").run()
    assert not at.exception, [e.value for e in at.exception]
    assert len(judged) == 2, judged
