"""The one retrieval-settings form, shared by the inspector, Ask and the Eval tab; and `setting_widgets`, the
same widgets for one group of another config's settings (a new collection's cluster layout).

Every widget is derived from RetrievalConfig's field descriptions (rag/settings/spec.py): its kind,
label, help, range and the fusions it applies to. A setting that does nothing under the chosen fusion
(RRF k under dbsf, the dense weight outside weighted_rrf) or with its switch off (PRF numbers) is
disabled, and the form says why. Widget keys are `<prefix>_<link name>` (e.g. `inspector_k`).
The mode picker names what each mode does with the backend at hand (offline or Claude); a mode that
cannot run (the agent without a key) is marked unavailable, and choosing it makes the form invalid
with the reason.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

import streamlit as st

from rag.errors import RagError
from rag.modes.options import AGENT_OFFLINE, describe_mode
from rag.settings.config import RetrievalConfig
from rag.settings.rerankers import RERANKERS, describe_reranker, offered_reranker
from rag.settings.spec import Knob, knobs
from ui.safe import say

CUSTOM = "other…"  # the reranker picker's entry for a name typed by hand
GROUPS = ("mode", "core", "fusion", "cut", "expansion")
C = TypeVar("C")


def reranker_choices(base: RetrievalConfig) -> list[str]:
    """The reranker picker's names: the configured one first as itself (e.g. "maxsim-fusion:0.6"), then the
    built-ins."""
    return list(dict.fromkeys([base.reranker, *RERANKERS]))


def reranker_label(name: str) -> str:
    """`name: what it does` for the picker (a parameterised name uses its base's description)."""
    what = describe_reranker(name)
    return f"{name}: {what}" if what else name


def widget_key(prefix: str, knob: Knob) -> str:
    return f"{prefix}_{knob.link or knob.name}"


def set_form_state(prefix: str, config: C, configured: C, *, only_missing: bool = False) -> None:
    """Put a config into the widgets of `retrieval_form(prefix, ..., configured)` (or of `setting_widgets`).

    Values go in through session state (not `value=`) so a link, an "Apply" or an "Ask again" button
    can set them without a conflict; `only_missing` fills defaults without undoing the user's edits.
    """
    state: dict[str, Any] = {}
    for knob in knobs(type(config)):
        key, value = widget_key(prefix, knob), getattr(config, knob.name)
        if knob.widget == "reranker":
            pickable = value in reranker_choices(configured)
            state[key], state[f"{key}_custom"] = (value, "") if pickable else (CUSTOM, value)
        elif knob.optional:
            state[f"{prefix}_use_{knob.link or knob.name}"] = value is not None
            state[key] = knob.kind(value or 0)
        else:
            state[key] = value
    for key, value in state.items():
        if not (only_missing and key in st.session_state):
            st.session_state[key] = value


def retrieval_form(
    prefix: str, base: RetrievalConfig, configured: RetrievalConfig | None = None, *, claude: bool = False
) -> RetrievalConfig | None:
    """Draw every retrieval setting, defaulting to `base`; the config they make, or None after saying why it is invalid.

    Args:
        prefix: the page's session-state prefix ("inspector", "ask", "eval").
        base: the values the widgets start with (and the settings the form cannot change).
        configured: the deployment's settings (default `base`): its reranker is offered by name.
        claude: an Anthropic key is configured, so the modes use Claude (and the agent can run).
    """
    configured = configured or base
    set_form_state(prefix, base, configured, only_missing=True)
    values: dict[str, Any] = {}
    for group in GROUPS:
        members = [k for k in knobs(type(base)) if k.group == group]
        if not members:
            continue
        box = st.container(border=True) if group == "expansion" else st.container()
        with box:
            if group == "expansion":
                st.caption("**Query expansion**")
            unused = []
            for knob in members:
                why = knob.applies(values)
                values[knob.name] = (
                    _mode_picker(prefix, knob, claude)
                    if knob.widget == "mode"
                    else _widget(prefix, knob, configured, why)
                )
                if why and knob.fusions:
                    unused.append(knob.label)
            if unused:
                st.caption(f"Not used with fusion {values.get('fusion')}: {', '.join(unused)}.")
    if values.get("mode") == "agent" and not claude:
        return None  # _mode_picker said why, under the picker
    try:
        offered_reranker(values["reranker"], configured.reranker)  # typed names, as link values: no arbitrary model
        return dataclasses.replace(base, **values)
    except RagError as e:
        say("error", "{e}", e=e)
        return None


def setting_widgets(prefix: str, config: C, group: str) -> C | None:
    """One widget per setting of `group` in `config`'s class, starting at `config`'s values; the config they
    make, or None after saying why it is invalid (a rule across settings, like write consistency and replicas)."""
    set_form_state(prefix, config, config, only_missing=True)
    values = {k.name: _widget(prefix, k, config, "") for k in knobs(type(config)) if k.group == group}
    try:
        return dataclasses.replace(config, **values)
    except RagError as e:
        say("error", "{e}", e=e)
        return None


def _mode_picker(prefix: str, knob: Knob, claude: bool) -> str:
    """The mode selectbox, each mode named with what it does here; the chosen one's description below it."""
    picked = st.selectbox(
        knob.label,
        knob.choices,
        format_func=lambda m: describe_mode(m, claude),
        key=widget_key(prefix, knob),
        help=f"{knob.help}.",
    )
    if picked == "agent" and not claude:
        # Here, not below the whole form: in the inspector's sidebar that is a screen further down, out of view.
        st.error(f"Mode agent is unavailable: {AGENT_OFFLINE}.")
    elif picked != "plain":
        st.caption(
            f"{'With Claude' if claude else 'Offline'}: {describe_mode(picked, claude)}. "
            "Each extra search is shown as a stage."
        )
    return picked


def _widget(prefix: str, knob: Knob, configured: C, why: str) -> Any:  # noqa: ANN401
    """One setting's widget (disabled, with the reason in its help, when `why` says it does not apply);
    `configured` is the deployment's config (a RetrievalConfig: its reranker is offered by name)."""
    key = widget_key(prefix, knob)
    helptext = f"{knob.help}. Not used now: {why}." if why else f"{knob.help}."
    if knob.kind is int or knob.kind is float:
        helptext += f" Allowed: {knob.allowed}."
    common: dict[str, Any] = {"key": key, "help": helptext, "disabled": bool(why)}
    if knob.widget == "reranker":
        picked = st.selectbox(knob.label, [*reranker_choices(configured), CUSTOM], format_func=reranker_label, **common)
        if picked != CUSTOM:
            return picked
        typed = st.text_input(knob.label, key=f"{key}_custom", placeholder="sentence-maxsim:0.7", disabled=bool(why))
        return typed.strip() or "none"
    if knob.choices:
        names = dict(knob.names)
        return st.selectbox(knob.label, knob.choices, format_func=lambda c: names.get(c, c), **common)
    if knob.kind is bool:
        return st.checkbox(knob.label, **common)
    if knob.kind is str:
        return st.text_input(knob.label, **common).strip()
    if knob.optional:
        use = st.checkbox(
            f"Set {knob.label.lower()}", key=f"{prefix}_use_{knob.link or knob.name}", help=helptext, disabled=bool(why)
        )
        common["disabled"] = bool(why) or not use
        value = _number(knob, common)
        return value if use else None
    return _number(knob, common)


def _number(knob: Knob, common: dict[str, Any]) -> int | float:
    bounds = {
        "min_value": knob.kind(knob.lo) if knob.lo is not None else None,
        "max_value": knob.kind(knob.hi) if knob.hi is not None else None,
    }
    if knob.widget == "slider":
        return float(st.slider(knob.label, bounds["min_value"], bounds["max_value"], step=knob.step, **common))
    if knob.kind is int:
        return int(st.number_input(knob.label, step=1, **bounds, **common))
    return float(st.number_input(knob.label, step=knob.step or 0.01, format="%.4f", **bounds, **common))
