"""The sidebar's collection picker and collection management, and which collection a session uses.

A session's collection comes from a link's `?collection=` (applied once per distinct link, like the
inspector applies its links), else from the picker, else RAGSCOPE_COLLECTION. The engine for each
collection is opened once per process (ui/setup.py `get_components`, cached per Settings), sharing
the models: switching is cheap after the first time.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import pandas as pd
import streamlit as st

from rag.catalog.collections import (
    create_collection,
    delete_collection,
    describe_collection,
    for_collection,
    require_collection,
)
from rag.components import Components
from rag.errors import RagError
from rag.settings.config import ClusterConfig, Settings
from rag.settings.links import COLLECTION
from ui.forms import setting_widgets
from ui.render import md_escape
from ui.safe import say

ACTIVE = "ui_collection"  # the session's collection name
_LINKED = "ui_collection_link"  # the last ?collection= applied
_NOTICE = "ui_collection_notice"
_PICKER = "ui_collection_picker"

Opener = Callable[[Settings], Components]


def session_settings(settings: Settings) -> Settings:
    """The process's settings on the session's collection (a bad or missing name in a link falls back to the
    default, with an error naming the close names and every collection; the default is used even before
    anything is written to it)."""
    linked = st.query_params.get(COLLECTION)
    fresh = bool(linked) and linked != st.session_state.get(_LINKED)
    if fresh:
        st.session_state[_LINKED] = linked
        st.session_state[ACTIVE] = linked
    try:
        chosen = for_collection(settings, st.session_state.get(ACTIVE, settings.collection))
        if fresh:  # a link may name one that does not exist; the picker and the app's own switches never do
            require_collection(chosen, settings.collection)
    except RagError as e:
        say("error", "Collection not opened: {e}", e=e)
        st.session_state.pop(ACTIVE, None)
        chosen = settings
    _in_url(chosen.collection)
    return chosen


def _in_url(name: str) -> None:
    """Put the session's collection in the address bar, so a reload, a new tab or a shared link opens it too
    (a page switch clears the query parameters; the next run puts it back)."""
    if st.query_params.get(COLLECTION) != name:
        st.query_params[COLLECTION] = name
    st.session_state[_LINKED] = name


def switch_collection(name: str) -> None:
    """Make `name` the session's collection, in the URL too (so a reload keeps it)."""
    st.session_state[ACTIVE] = name
    _in_url(name)


def _names(base: Settings, components: Components) -> list[str]:
    """The collections on the backend, asked through the open store (no new connection per run), plus the
    default and the active one."""
    return sorted({*components.store.list_collections(), base.collection, components.settings.collection})


def picker(base: Settings, components: Components) -> None:
    """Choose the session's collection among those on the backend (the active one listed even before it
    holds anything)."""
    active = components.settings.collection
    try:
        names = _names(base, components)
    except RagError as e:
        say("caption", "Collections unavailable: {e}", e=e)
        return
    st.session_state[_PICKER] = active  # follows switches made elsewhere (a link, the sample docs)
    st.selectbox("Collection", names, key=_PICKER, on_change=lambda: switch_collection(st.session_state[_PICKER]),
                 format_func=lambda n: f"{n} (default)" if n == base.collection else n)  # fmt: skip


def manage(base: Settings, components: Components, open_components: Opener) -> None:
    """Create a collection, delete the active one (its name typed to confirm), and list them all with their models."""
    shown = st.session_state.pop(_NOTICE, None)
    if shown:
        st.success(md_escape(shown))
    with st.expander("Manage collections"):
        new = st.text_input("New collection", key="ui_collection_new", placeholder="name")
        cluster = _layout_form(base, components)
        if st.button("Create and switch", key="ui_collection_create", disabled=not new.strip() or cluster is None):
            try:
                info = create_collection(open_components(for_collection(base, new.strip())), cluster)
                switch_collection(info.name)
                made = f" ({info.layout.describe()})" if info.layout else ""
                st.session_state[_NOTICE] = f"Created collection {info.name}{made}."
                st.rerun()
            except RagError as e:
                say("error", "{e}", e=e)
        name = components.settings.collection
        typed = st.text_input(
            f"Type {md_escape(name)} to delete it",
            key="ui_collection_confirm",
            help=(
                "Deletes every document and chunk of the active collection; question sets, eval runs and the "
                "ask log stay."
            ),
        )
        if st.button("Delete collection", key="ui_collection_delete", disabled=typed.strip() != name):
            try:
                delete_collection(components, typed)
                switch_collection(base.collection)
                st.session_state[_NOTICE] = f"Deleted collection {name}."
                st.rerun()
            except RagError as e:
                say("error", "{e}", e=e)
        if st.toggle(
            "Show every collection's models and counts",
            key="ui_collection_details",
            help="Opens each collection (its counts and models record).",
        ):
            details(base, components, open_components)


def _layout_form(base: Settings, components: Components) -> ClusterConfig | None:
    """The new collection's layout, one widget per setting fixed at creation (ClusterConfig's `create` group),
    starting at the configured values; what this backend would not apply of it is said under it."""
    with st.container(border=True):
        st.caption("**Layout of the new collection**")
        cluster = setting_widgets("ui_collection_layout", base.cluster, "create")
        note = components.store.cluster_note(cluster) if cluster is not None else ""
        if note:
            st.caption(md_escape(f"Here {note}."))
    return cluster


def details(base: Settings, components: Components, open_components: Opener) -> None:
    rows, shards = [], []
    for name in _names(base, components):
        try:
            info = describe_collection(open_components(for_collection(base, name)))
        except RagError as e:
            rows.append({"collection": name, "error": str(e)})
            continue
        models = info.models
        rows.append({
            "collection": name, "documents": info.documents, "chunks": info.chunks,
            "dense": models.dense_model if models else "", "dense runtime": models.dense_runtime if models else "",
            "other dense vectors": ", ".join(f"{v.name} ({v.model})" for v in models.other_dense) if models else "",
            "sparse": models.sparse_model if models else "",
            "sentence vectors": info.sentence_vectors,
            "made with": info.layout.describe() if info.layout else "",
            "cluster": info.cluster.describe() if info.cluster and info.layout else "",
        })  # fmt: skip
        if info.cluster is not None and info.cluster.reported:
            shards.extend({"collection": name, **dataclasses.asdict(r)} for r in info.cluster.replicas)
    st.dataframe(pd.DataFrame(rows), hide_index=True, alt="Collections")
    if shards:
        st.caption("Each shard's replicas, as the server reports them")
        st.dataframe(pd.DataFrame(shards), hide_index=True, alt="Shard replicas")
