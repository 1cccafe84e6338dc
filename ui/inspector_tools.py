"""The inspector's two tools beside tracking: two configs side by side, and the collection's health check.

Each keeps its result with what it was computed on (ui.kept), so a stale comparison or health check is
never shown after the question, the settings or the documents changed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable

import streamlit as st

from rag.components import Components
from rag.errors import RagError
from rag.inspect.compare import Comparison, compare
from rag.inspect.probe import ProbeReport, probe
from rag.settings.config import RetrievalConfig
from rag.settings.labels import config_label
from rag.types import ChunkFilter
from ui import forms, inspector_view, kept
from ui.safe import say


def compare_section(
    components: Components, question: str, config: RetrievalConfig, flt: ChunkFilter, scope: Hashable
) -> None:
    say("caption", "A = the settings in the sidebar: {label}", label=config_label(config))
    with st.expander("B: the settings to compare with", expanded=True):
        config_b = forms.retrieval_form(
            "inspector_cmp",
            dataclasses.replace(config, fusion="dense", reranker="none", mode="plain"),
            components.settings.retrieval,
            claude=bool(components.settings.anthropic_api_key),
        )
    here = (scope, config_b)
    if st.button("Compare", key="inspector_cmp_button") and config_b is not None:
        try:
            with st.spinner("Running both configs…"):
                kept.keep("inspector_cmp", compare(components, question, config, config_b, flt), here)
        except RagError as e:
            say("error", "{e}", e=e)
    comparison: Comparison | None = kept.kept("inspector_cmp", here)
    if comparison is not None:
        inspector_view.show_comparison(comparison)
    elif kept.outdated("inspector_cmp", here) is not None:
        st.info(
            "The question, A or B, the collection or its documents changed since the last comparison: "
            "press Compare to run it again."
        )


def health_section(components: Components, config: RetrievalConfig, flt: ChunkFilter) -> None:
    st.caption(
        "Searches a sentence lifted from each sampled chunk: a healthy chunk comes back first for its own words."
    )
    sample = st.number_input("Chunks to probe", 1, 1000, value=20, key="inspector_probe_n")
    pressed = st.button("Run health check", key="inspector_probe_button")
    # What a health check depends on; read only when one is run or kept (it lists the documents).
    here = (kept.documents_scope(components), config, flt) if pressed or "inspector_probe" in st.session_state else None
    if pressed:
        bar = st.progress(0.0, text="Probing…")
        try:
            kept.keep(
                "inspector_probe",
                probe(components, int(sample), config, flt, progress=lambda f, m: bar.progress(f, text=m)),
                here,
            )
        except RagError as e:
            say("error", "{e}", e=e)
        bar.empty()
    report: ProbeReport | None = kept.kept("inspector_probe", here)
    if report is None:
        if kept.outdated("inspector_probe", here) is not None:
            st.info(
                "The settings, filter, collection or its documents changed since the last health check: run it again."
            )
        return
    st.metric(
        "Own chunk at rank 1",
        f"{report.share_at_1:.0%}",
        help=f"{len(report.cases) - len(report.failures)} of {len(report.cases)} probed chunks",
    )
    inspector_view.probe_failures(report)
