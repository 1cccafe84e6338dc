"""Retrieval-setting widgets shared by the inspector, Ask and the Eval tab."""

from __future__ import annotations

import streamlit as st

from rag.config import RetrievalConfig
from rag.rerank import RERANKERS

# The RetrievalConfig fields `expansion_inputs` draws; their widget keys are `<prefix>_<field>`.
EXPANSION_FIELDS = ("prf", "prf_docs", "prf_terms", "prf_weight", "dense_prf", "dense_prf_docs", "dense_prf_weight")


def reranker_choices(base: RetrievalConfig) -> list[str]:
    """The reranker picker's names: the configured one first as itself (e.g. "maxsim-fusion:0.6"), then the built-ins."""
    return list(dict.fromkeys([base.reranker, *RERANKERS]))


def set_expansion_state(prefix: str, config: RetrievalConfig, *, only_missing: bool = False) -> None:
    """Put a config's query-expansion settings into the widgets of `expansion_inputs(prefix, ...)`.

    Values go in through session state (not `value=`) so a link or an "Apply" button can set them
    without a conflict; `only_missing` fills defaults without undoing the user's edits.
    """
    for name in EXPANSION_FIELDS:
        key = f"{prefix}_{name}"
        if not (only_missing and key in st.session_state):
            st.session_state[key] = getattr(config, name)


def expansion_inputs(prefix: str, base: RetrievalConfig) -> dict[str, object]:
    """The query-expansion toggles and their numbers (inspector sidebar, Eval tab), defaulting to `base`.

    Returns:
        The RetrievalConfig fields they set, for `dataclasses.replace`. Out-of-range numbers are left
        to RetrievalConfig's own checks, which say what is wrong.
    """
    set_expansion_state(prefix, base, only_missing=True)
    ss = st.session_state
    with st.expander("Query expansion", expanded=bool(ss[f"{prefix}_prf"] or ss[f"{prefix}_dense_prf"])):
        prf = st.checkbox("PRF: expand the BM25 query with terms of its top hits", key=f"{prefix}_prf")
        docs = st.number_input("PRF feedback documents", min_value=1, key=f"{prefix}_prf_docs", disabled=not prf)
        terms = st.number_input("PRF terms added", min_value=1, key=f"{prefix}_prf_terms", disabled=not prf)
        weight = st.number_input("PRF term weight", min_value=0.0, max_value=1.0, step=0.05, key=f"{prefix}_prf_weight", disabled=not prf)
        dense = st.checkbox("Dense PRF: move the question vector toward its top fused hits, re-run dense", key=f"{prefix}_dense_prf")
        dense_docs = st.number_input("Dense PRF feedback documents", min_value=1, key=f"{prefix}_dense_prf_docs", disabled=not dense)
        dense_weight = st.number_input("Dense PRF weight", min_value=0.0, max_value=1.0, step=0.05, key=f"{prefix}_dense_prf_weight", disabled=not dense)
    return {
        "prf": bool(prf), "prf_docs": int(docs), "prf_terms": int(terms), "prf_weight": float(weight),
        "dense_prf": bool(dense), "dense_prf_docs": int(dense_docs), "dense_prf_weight": float(dense_weight),
    }  # fmt: skip
