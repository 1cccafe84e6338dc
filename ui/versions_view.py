"""The Versions part of the Eval tab: take a version of the collection, list, restore or delete one (confirmed), and
compare two on a question set, each fixed or broken question with an inspector link on both versions."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd
import streamlit as st

from rag.catalog.versions import Version, delete_version, list_versions, restore_version, take_version
from rag.components import Components
from rag.errors import RagError
from rag.eval.qsets import list_question_sets, load_question_set
from rag.eval.version_diff import Outcome, VersionDiff, diff_versions
from rag.settings.links import inspector_url
from rag.text.sizes import MIB
from ui import kept, outcome
from ui.safe import say

_NOTICE = "versions_notice"
_CONFIRM = "versions_confirm"  # (verb, version name): the one action asked about
_ACTIONS = {"restore": "Restore", "delete": "Delete"}
_QUESTIONS = {
    "restore": "Replace collection {collection} with version {name}? The collection as it is now is kept first "
    "as a version.",
    "delete": "Delete version {name} of collection {collection}? The collection and its other versions stay as "
    "they are.",
}
_DIFF = "versions_diff"


def render(components: Components) -> None:
    """Draw the Versions part: what a version holds, take, the list with restore and delete, and the diff."""
    outcome.heading(
        "Versions",
        "A version keeps the collection as it is: its chunks, stored settings, documents list and originals. "
        "Restoring one keeps the collection as it was first, as an automatic version.",
        _NOTICE,
    )
    cols = st.columns([3, 1])
    cols[0].text_input("Version name", key="versions_name", placeholder="e.g. v3")
    cols[1].button("Take version", key="versions_take", on_click=_take, args=(components,))
    try:
        versions = list_versions(components.settings)
    except RagError as e:
        say("error", "{e}", e=e)
        return
    if not versions:
        st.info("No versions of this collection yet: name one above and take it.")
        return
    _table(versions)
    _pick(components, versions)
    _diff(components, versions)


def _act(action: Callable[[], Any], success: Callable[[Any], str]) -> None:
    """Run a button's action (in its callback); the outcome shows at the top of the next run."""
    outcome.act(_NOTICE, action, success)


def _take(components: Components) -> None:
    name = st.session_state.get("versions_name", "").strip()
    _act(lambda: take_version(components, name), lambda v: f"Version {v.name} taken: {v.chunks:,} chunks.")


def _table(versions: list[Version]) -> None:
    rows = [
        {"version": v.name, "taken": pd.to_datetime(v.created_at, utc=True), "size (MiB)": round(v.size_bytes / MIB, 1),
         "chunks": v.chunks, "documents": v.documents, "note": v.note}
        for v in versions
    ]  # fmt: skip
    st.dataframe(pd.DataFrame(rows), hide_index=True, alt="Versions of the collection")


def _pick(components: Components, versions: list[Version]) -> None:
    """A version, and Restore… or Delete…; a confirmation naming the version and what it does; it runs on Yes."""
    collection = components.settings.collection
    cols = st.columns([3, 1, 1])
    name = cols[0].selectbox("Version to restore or delete", [v.name for v in versions], key="versions_restore_pick")
    for col, (verb, label) in zip(cols[1:], _ACTIONS.items(), strict=True):
        if col.button(f"{label}…", key=f"versions_{verb}"):
            kept.keep(_CONFIRM, (verb, name), collection)  # asked in this collection: another's version is not it
    asked = kept.kept(_CONFIRM, collection)
    if asked is None or asked[1] != name:
        return
    verb = asked[0]
    say("warning", _QUESTIONS[verb], collection=collection, name=name)
    yes, no = st.columns(2)
    yes.button(f"Yes, {verb}", type="primary", key=f"versions_{verb}_yes", on_click=_do, args=(components, verb, name))
    no.button("Cancel", key=f"versions_{verb}_no", on_click=st.session_state.pop, args=(_CONFIRM, None))


def _do(components: Components, verb: str, name: str) -> None:
    st.session_state.pop(_CONFIRM, None)
    if verb == "restore":
        _act(
            lambda: restore_version(components, name),
            lambda done: f"Restored version {done[0].name}; the collection as it was is version {done[1].name}.",
        )
    else:
        _act(lambda: delete_version(components, name), lambda v: f"Deleted version {v.name}.")


def _diff(components: Components, versions: list[Version]) -> None:
    """Two versions and a question set; Compare evaluates both and shows what moved."""
    settings = components.settings
    sets = list_question_sets(components.shared)
    if len(versions) < 2 or not sets:
        st.caption("Comparing needs two versions and a question set.")
        return
    names = [v.name for v in versions]  # newest first: B defaults to the newest, A to the one before
    cols = st.columns(3)
    a = cols[0].selectbox("Compare version A", names, index=1, key="versions_a")
    b = cols[1].selectbox("with version B", names, index=0, key="versions_b")
    set_name = cols[2].selectbox("on question set", sets, key="versions_set")
    scope = (settings.collection, a, b, set_name)
    if st.button("Compare", key="versions_compare", disabled=a == b):
        bar = st.progress(0.0, text="Evaluating both versions…")
        try:
            qset = load_question_set(components.shared, set_name)
            total = 2 * len(qset.questions)
            done = iter(range(1, total + 1))
            result = diff_versions(
                settings, a, b, qset, progress=lambda _d, _t, msg: bar.progress(next(done) / total, text=msg)
            )
        except RagError as e:
            say("error", "{e}", e=e)
            return
        finally:
            bar.empty()
        kept.keep(_DIFF, result, scope)
    result = kept.kept(_DIFF, scope)
    if result is not None:
        _show_diff(result)


def _show_diff(result: VersionDiff) -> None:
    say("markdown", "**{headline}**", headline=result.headline())
    moved = [q for q in result.questions if q.outcome in (Outcome.FIXED, Outcome.BROKE)]
    if not moved:
        st.caption("No question moved between the two versions.")
        return
    link_a, link_b = f"inspector on {result.a}", f"inspector on {result.b}"
    rows = [
        {"outcome": q.outcome, "id": q.id, "question": q.question, link_a: inspector_url(q.inspector_a),
         link_b: inspector_url(q.inspector_b)}
        for q in moved
    ]  # fmt: skip
    links = st.column_config.LinkColumn(display_text="open")
    st.dataframe(
        pd.DataFrame(rows),
        hide_index=True,
        alt="Questions the later version fixed or broke",
        column_config={link_a: links, link_b: links},
    )
    if result.left_out:
        say("caption", "Left out (not scored in both versions): {ids}", ids=", ".join(result.left_out))
