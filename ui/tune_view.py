"""The Eval tab's sweep: vary some settings on the selected set, rank the configurations, store the best for the
collection.

Thin: plans, runs, intervals and storage live in rag/eval/tune.py and rag/settings/collection_settings.py.
Cancel works as the eval run's does (the Cancel button's rerun stops the script at its next progress
update); each configuration is stored as it finishes, so a cancelled sweep shows a Resume button.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from rag.components import Components
from rag.errors import ConfigError, RagError
from rag.eval.qsets import load_question_set
from rag.eval.tune import (
    ANSWER_ONLY,
    BUDGET,
    NOTHING_BEAT,
    RANK_METRICS,
    Sweep,
    apply_best,
    list_sweeps,
    run_sweep,
    start_sweep,
    tunable,
)
from rag.settings.collection_settings import InForce, in_force, reset_collection_settings
from rag.settings.config import RetrievalConfig
from rag.settings.spec import knobs
from ui import forms
from ui.safe import safe_text, say
from ui.setup import get_settings

FORMS = ("ask", "eval", "inspector")  # the session-state prefixes of the retrieval forms (ui/forms.py)


def settings_in_force(components: Components) -> InForce | None:
    """The collection's settings in force; None, with the problem and the Reset button that repairs it, when its
    stored settings file is damaged (the tab goes on with the configured settings, as ui/setup does)."""
    try:
        return in_force(components.settings, components.shared)
    except ConfigError as e:
        say("error", "{e}", e=e)
        _reset_button(components)
        return None
    except RagError as e:  # on a server, its metadata collection could not be read: the message says what to check
        say("error", "{e}", e=e)
        return None


def render(components: Components, set_name: str, force: InForce) -> None:
    """Sweep settings on `set_name`, show the latest sweep of it, and the collection's stored settings (`force`:
    `settings_in_force`)."""
    st.subheader(safe_text("Tune the settings on {name}", name=set_name))
    say("caption", "Settings in force: {settings}", settings=force.describe())
    knobs = {k.name: k for k in tunable().values() if k.name not in ANSWER_ONLY}
    vary = st.multiselect("Settings to vary", list(knobs), default=["fusion", "reranker"], key="tune_vary",
                          format_func=lambda n: knobs[n].label)  # fmt: skip
    cols = st.columns(2)
    budget = cols[0].number_input("Budget (configurations)", 1, 500, BUDGET, key="tune_budget")
    metric = cols[1].selectbox("Rank by", RANK_METRICS, key="tune_metric")
    home = components.shared
    try:
        mine = [s for s in list_sweeps(home, components.settings.collection) if s.set_name == set_name]
    except RagError as e:
        say("error", "{e}", e=e)
        return
    latest = mine[0] if mine else None
    start = st.button("Start sweep", key="tune_start", type="primary", disabled=not vary)
    resume = (
        latest is not None
        and not latest.finished
        and st.button(f"Resume sweep {latest.id} ({len(latest.results)}/{len(latest.plan)} done)", key="tune_resume")
    )
    if start or resume:
        try:
            sweep = latest if resume else start_sweep(
                components, load_question_set(home, set_name), vary, budget=int(budget), metric=metric
            )  # fmt: skip
            latest = _run(components, sweep)
        except RagError as e:
            say("error", "{e}", e=e)
            return
    if latest is not None:
        _results(components, latest, force.config)
    if force.stored is not None:
        say("caption", "This collection's stored settings: {stored}", stored=force.stored.words())
        _reset_button(components)


def _reset_button(components: Components) -> None:
    if st.button("Reset this collection's settings (back to the configured ones)", key="tune_reset"):
        reset_collection_settings(components.shared, components.settings.collection)
        restart_forms()
        st.rerun()


def _run(components: Components, sweep: Sweep) -> Sweep:
    bar = st.progress(0.0, text=f"sweep {sweep.id}")
    cancel_slot = st.empty()
    cancel_slot.button("Cancel", key="tune_cancel", help="Finished configurations stay stored: resume later.")
    done = run_sweep(components, sweep, progress=lambda d, n, m: bar.progress(d / n, text=safe_text("{m}", m=m)))
    bar.empty()
    cancel_slot.empty()
    return done


def _results(components: Components, sweep: Sweep, current: RetrievalConfig) -> None:
    """The configurations best first (ties to the `current` settings in force), with the interval against the
    sweep's start, and the apply button."""
    ranked = sweep.ranked(current)
    st.caption(
        f"Sweep {sweep.id}: {len(sweep.results)}/{len(sweep.plan)} configurations, ranked by {sweep.metric}; "
        "the interval is the paired-bootstrap 95% interval of the difference from the current settings, "
        "and ✔ marks one that excludes 0 (a difference beyond noise on this set)."
    )
    rows = [
        {"rank": i, sweep.metric: r.score, "vs current": "" if r.is_current else r.interval.words(),
         "beyond noise": "✔" if r.interval.excludes_zero and not r.is_current else "", "changes": r.changes_words(),
         "seconds": round(r.result.seconds, 1)}
        for i, r in enumerate(ranked, 1)
    ]  # fmt: skip
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch", key="tune_table")
    if not ranked or not sweep.finished:
        return
    best = sweep.winner(current)
    if best is None:
        st.info(NOTHING_BEAT.capitalize() + ".")
        return
    if best.result.position != ranked[0].result.position:
        st.caption("The configurations ranked above it score higher within noise (their intervals include 0).")
    if st.button(f"Use these settings for this collection ({best.changes_words()})", key="tune_apply"):
        stored = apply_best(components.shared, sweep, current, get_settings().retrieval)
        restart_forms()
        st.session_state["tune_applied"] = safe_text(
            "Stored for {name}: {stored}", name=sweep.collection, stored=stored.words() if stored else "-"
        )
        st.rerun()
    if notice := st.session_state.pop("tune_applied", None):
        st.success(notice)


def restart_forms() -> None:
    """Forget the settings forms' values (Ask, Eval, inspector), so they start again from the settings now in force."""
    for prefix in FORMS:
        for knob in knobs(RetrievalConfig):
            key = forms.widget_key(prefix, knob)
            for k in (key, f"{key}_custom", f"{prefix}_use_{knob.link or knob.name}"):
                st.session_state.pop(k, None)
