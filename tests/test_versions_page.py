"""The Versions part of the Eval tab through AppTest, on the set made to move (tests/versions_corpus.py): the
list, the diff table with its inspector links on both versions, take, and restore behind its confirmation."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import pytest
from apptest_pages import open_page
from streamlit.testing.v1 import AppTest
from versions_corpus import FIXED, QSET, V2, V3, two_versions

from rag.catalog.versions import list_versions
from rag.components import build_components
from rag.eval.qsets import save_question_set


@pytest.fixture
def moving(settings):
    """v2 and v3 of the help page, the set saved as "moving", the store closed for the page's own engine."""
    components = build_components(settings)
    try:
        two_versions(components)
    finally:
        components.close()
    save_question_set(settings.data_dir, "moving", QSET)
    return settings


def ok(at: AppTest) -> AppTest:
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    return at


def shown(elements) -> str:  # noqa: ANN001 - AppTest's element list
    """Every message of one kind as a reader sees it (ui.safe escapes Markdown with backslashes)."""
    return "\n".join(e.value.replace("\\", "") for e in elements)


def versions_table(at: AppTest):
    return next(df.value for df in at.dataframe if "version" in df.value.columns)


def test_the_version_diff_shows_what_moved_with_an_inspector_link_on_both_versions(moving):
    at = ok(open_page("pages/ask.py", timeout=180))
    assert list(versions_table(at)["version"]) == ["v3", "v2"]
    assert (at.selectbox(key="versions_a").value, at.selectbox(key="versions_b").value) == ("v2", "v3")
    at.selectbox(key="versions_set").set_value("moving")
    at.button(key="versions_compare").click()
    ok(at.run())
    assert "**v3 against v2: 4 questions fixed, 1 broke**" in shown(at.markdown)
    moved = next(df.value for df in at.dataframe if "outcome" in df.value.columns)
    assert set(moved[moved["outcome"] == "fixed"]["id"]) == FIXED
    assert list(moved[moved["outcome"] == "broke"]["id"]) == ["api"]
    row = moved.set_index("id").loc["refund"]
    on_a, on_b = urlparse(row["inspector on v2"]), urlparse(row["inspector on v3"])
    assert on_a.path == on_b.path == "inspector"
    assert parse_qs(on_a.query)["collection"] == ["docs--v2"] and parse_qs(on_b.query)["collection"] == ["docs--v3"]
    assert parse_qs(on_b.query)["q"] == ["How long until a refund reaches my card?"]


def test_take_and_a_confirmed_restore_on_the_page(moving):
    at = ok(open_page("pages/ask.py", timeout=180))
    at.text_input(key="versions_name").input("v4")
    at.button(key="versions_take").click()
    ok(at.run())
    assert "Version v4 taken: 6 chunks." in shown(at.success)
    assert list(versions_table(at)["version"]) == ["v4", "v3", "v2"]

    at.selectbox(key="versions_restore_pick").set_value("v2")
    at.button(key="versions_restore").click()
    ok(at.run())
    assert "Replace collection docs with version v2? The collection as it is now is kept first" in shown(at.warning)
    assert [v.name for v in list_versions(moving)][0] == "v4"  # nothing restored before Yes
    at.button(key="versions_restore_yes").click()
    ok(at.run())
    assert "Restored version v2; the collection as it was is version before-restore-" in shown(at.success)
    assert list(versions_table(at)["version"])[0].startswith("before-restore-")
    components = build_components(moving)
    try:
        assert sorted(r.chunk.text for r in components.store.records()) == sorted(V2)
    finally:
        components.close()


def test_delete_asks_first_then_drops_only_that_version(moving):
    at = ok(open_page("pages/ask.py", timeout=180))
    at.selectbox(key="versions_restore_pick").set_value("v2")
    at.button(key="versions_delete").click()
    ok(at.run())
    assert "Delete version v2 of collection docs? The collection and its other versions stay" in shown(at.warning)
    assert [v.name for v in list_versions(moving)] == ["v3", "v2"]  # nothing deleted before Yes
    at.button(key="versions_delete_yes").click()
    ok(at.run())
    assert "Deleted version v2." in shown(at.success)
    assert list(versions_table(at)["version"]) == ["v3"]
    assert [v.name for v in list_versions(moving)] == ["v3"]
    components = build_components(moving)
    try:
        assert sorted(r.chunk.text for r in components.store.records()) == sorted(V3)
    finally:
        components.close()
