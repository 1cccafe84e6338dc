"""Collections in the app: the sidebar picker, links that name a collection, isolation, create and delete.

Real models and the real embedded store; each collection is opened once by the page's process-wide
engine (ui/setup.get_components), which these tests reuse to look at what was stored.
"""

from __future__ import annotations

from pathlib import Path

from qdrant_server import PEERS, RecordedQdrant
from streamlit.testing.v1 import AppTest

from rag.catalog.collections import SAMPLE_COLLECTION, for_collection
from rag.components import build_components
from rag.ingest.pipeline import ingest_files
from rag.ingest.originals import Originals
from rag.retrieval.retrieve import retrieve
from rag.settings.config import Settings
from rag.store import open_store
from rag.store.base import CollectionModels
from rag.catalog.sample import sample_files
from ui import setup as ui_setup
from tests.apptest_pages import open_page

APP = str(Path(__file__).resolve().parent.parent / "app.py")
REFUND_Q = "How long does a refund take to reach my card?"
FERRY = b"# Ferry\n\n## Tickets\n\nA single ferry ticket costs four euros; refunds are not possible.\n"


def _engine(collection: str):
    """The page's own engine for `collection` (a second open of it would be refused: it is locked)."""
    return ui_setup.get_components(for_collection(ui_setup.get_settings(), collection))


def _run(at: AppTest) -> AppTest:
    at.run()
    assert not at.exception, at.exception
    return at


def _metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def _picker(at: AppTest):
    return at.sidebar.selectbox(key="ui_collection_picker")


def test_sample_docs_never_answer_in_the_default_collection(settings):
    mine = build_components(settings)
    assert not ingest_files(mine, [("ferry.md", FERRY)]).errors
    mine.close()
    at = _run(AppTest.from_file(APP, default_timeout=90))
    at.button(key="documents_sample").click()
    _run(at)
    assert _picker(at).value == SAMPLE_COLLECTION and _metrics(at)["Documents"] == str(len(sample_files()))
    assert set(_picker(at).options) == {"docs (default)", SAMPLE_COLLECTION}

    _picker(at).select("docs")
    _run(at)
    assert _metrics(at)["Documents"] == "1"
    result = retrieve(_engine("docs"), REFUND_Q)  # a question the sample help centre answers
    assert {c.chunk.chunk.source for c in result.candidates} == {"ferry.md"}
    assert "billing/plans.md" in {c.chunk.chunk.source for c in retrieve(_engine(SAMPLE_COLLECTION), REFUND_Q).final}

    # The session's collection follows it from page to page.
    at.switch_page("pages/ask.py")
    _run(at)
    assert _picker(at).value == "docs"


def test_a_link_naming_a_collection_opens_it(settings):
    sample = build_components(for_collection(settings, SAMPLE_COLLECTION))
    assert not ingest_files(sample, sample_files()).errors
    sample.close()
    at = open_page("pages/inspector.py", q=REFUND_Q, collection=SAMPLE_COLLECTION)
    assert not at.exception, at.exception
    assert _picker(at).value == SAMPLE_COLLECTION
    assert any("**sample**" in c.value for c in at.sidebar.caption)
    # A later pick is the user's, and the URL follows it (a reload keeps the pick, not the old link).
    _picker(at).select("docs")
    _run(at)
    assert _picker(at).value == "docs" and at.query_params["collection"] == "docs"


def test_create_then_delete_only_once_the_name_is_typed():
    at = _run(AppTest.from_file(APP, default_timeout=90))
    at.sidebar.text_input(key="ui_collection_new").input("notes")
    _run(at)
    at.sidebar.button(key="ui_collection_create").click()
    _run(at)
    assert _picker(at).value == "notes" and "notes" in _picker(at).options
    assert any("Created collection notes" in s.value for s in at.sidebar.success)
    assert _engine("notes").store.collection_models() is not None  # created, with its models
    notes = _engine("notes")
    assert not ingest_files(notes, [("memo.md", b"# Memo\n\nThe memo.")]).errors
    assert Originals(notes.settings.originals_dir).has("memo.md")

    at.sidebar.toggle(key="ui_collection_details").set_value(True)
    _run(at)
    (table,) = [d.value for d in at.sidebar.dataframe if d.proto.alt == "Collections"]
    row = table.set_index("collection").loc["notes"]
    assert (row["chunks"], row["dense"], row["dense runtime"], bool(row["sentence vectors"])) == (1, "all-MiniLM-L6-v2", "onnx", True)

    delete = at.sidebar.button(key="ui_collection_delete")
    assert delete.disabled
    at.sidebar.text_input(key="ui_collection_confirm").input("note")
    _run(at)
    assert at.sidebar.button(key="ui_collection_delete").disabled  # a near miss does not unlock it
    at.sidebar.text_input(key="ui_collection_confirm").input("notes")
    _run(at)
    at.sidebar.button(key="ui_collection_delete").click()
    _run(at)
    assert _picker(at).value == "docs" and "notes" not in _picker(at).options
    assert any("Deleted collection notes" in s.value for s in at.sidebar.success)
    assert _engine("notes").store.collection_models() is None
    assert not notes.settings.originals_dir.exists()  # its kept source files go with it


def test_the_create_form_lays_out_the_new_collection_and_says_what_the_embedded_engine_cannot():
    at = _run(AppTest.from_file(APP, default_timeout=90))
    at.sidebar.text_input(key="ui_collection_new").input("packed")
    at.sidebar.selectbox(key="ui_collection_layout_quantization").select("binary")
    at.sidebar.checkbox(key="ui_collection_layout_on_disk_vectors").check()
    at.sidebar.checkbox(key="ui_collection_layout_use_shards").check()
    _run(at)
    at.sidebar.number_input(key="ui_collection_layout_shards").set_value(6)
    _run(at)
    assert any(
        "shards (RAGSCOPE_SHARDS=6) does not apply on the embedded engine" in c.value.replace("\\", "")
        for c in at.sidebar.caption
    )
    at.sidebar.button(key="ui_collection_create").click()
    _run(at)
    assert _picker(at).value == "packed"
    (notice,) = [s.value for s in at.sidebar.success if "Created collection packed" in s.value]
    assert "vectors on disk" in notice and "binary quantization" in notice
    layout = _engine("packed").store.layout()  # the page's own engine: switching opened no second store
    assert (layout.quantization, layout.on_disk_vectors) == ("binary", True)

    at.sidebar.toggle(key="ui_collection_details").set_value(True)
    _run(at)
    (table,) = [d.value for d in at.sidebar.dataframe if d.proto.alt == "Collections"]
    row = table.set_index("collection").loc["packed"]
    assert row["made with"] == "1 shard, 1 replica, vectors on disk, payload on disk, binary quantization"
    assert "does not report cluster status" in row["cluster"]


def test_the_collections_view_shows_a_servers_shards_and_replicas(tmp_path, monkeypatch):
    with RecordedQdrant() as server:
        for name, value in {"QDRANT_URL": server.url, "RAGSCOPE_SHARDS": "6", "RAGSCOPE_REPLICAS": "2"}.items():
            monkeypatch.setenv(name, value)
        store = open_store(Settings.from_env())
        store.ensure_collection(CollectionModels("all-MiniLM-L6-v2", 384, "Qdrant/bm25", sentence_vectors=True))
        store.close()
        at = _run(AppTest.from_file(APP, default_timeout=90))
        at.sidebar.toggle(key="ui_collection_details").set_value(True)
        _run(at)
        (table,) = [d.value for d in at.sidebar.dataframe if d.proto.alt == "Collections"]
        (shards,) = [d.value for d in at.sidebar.dataframe if d.proto.alt == "Shard replicas"]
    row = table.set_index("collection").loc["docs"]
    assert row["made with"].startswith("6 shards, 2 replicas, write consistency 1")
    assert row["cluster"] == "6 shards, 12 replicas on 3 peers: 12 Active"
    assert len(shards) == 12 and set(shards["shard"]) == set(range(6)) and set(shards["state"]) == {"Active"}
    assert set(shards["peer"]) == set(PEERS)
