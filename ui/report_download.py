"""The failure report's download buttons, the same two files from the inspector and from each Eval verdict.

The report itself is built in rag.inspect.report (no Streamlit); this file only offers it as Markdown and
as JSON.
"""

from __future__ import annotations

import re

import streamlit as st

from rag.components import Components
from rag.errors import RagError
from rag.eval.runs import EvalRun, QuestionResult
from rag.eval.verdict_report import verdict_report
from rag.inspect.report import FailureReport, failure_report, report_input
from rag.inspect.track import TrackReport
from rag.retrieval.result import RetrievalResult
from ui import kept
from ui.safe import say

MIME = {"markdown": "text/markdown", "json": "application/json"}
SUFFIX = {"markdown": "md", "json": "json"}
LABEL = {"markdown": "Download report (Markdown)", "json": "Download report (JSON)"}


def offer(
    components: Components, result: RetrievalResult, track: TrackReport | None, came_from: str, key: str
) -> FailureReport | None:
    """Download buttons for this question's report (`key`: the page's widget-key prefix); the report, or None
    after saying why it could not be made."""
    try:
        report = failure_report(report_input(components, result, track, came_from))
    except RagError as e:
        say("error", "The failure report could not be made: {e}", e=e)
        return None
    buttons(report, key)
    return report


def verdict_offer(components: Components, run: EvalRun, question: QuestionResult) -> None:
    """An Eval verdict's report: made on request (it re-runs the question and tracks its gold, seconds), then
    offered for download while the run, the collection and its documents are the same."""
    key = f"eval_report_{run.id}_{question.id}"
    if run.collection != components.settings.collection:
        say("caption", "The failure report re-runs the question: open collection {name} to make it.",
            name=run.collection)  # fmt: skip
        return
    pressed = st.button("Make the failure report", key=f"{key}_make", help="Re-run the question with the run's "
                        "settings, track its gold, and offer the report as Markdown and JSON")  # fmt: skip
    if not pressed and key not in st.session_state:
        return
    # What the report depends on, read only once one is asked for (it lists the documents).
    scope = (kept.documents_scope(components), components.settings.retrieval)
    if pressed:
        try:
            with st.spinner("Re-running the question and tracking its gold…"):
                kept.keep(key, verdict_report(components, run, question), scope)
        except RagError as e:
            say("error", "The failure report could not be made: {e}", e=e)
    report: FailureReport | None = kept.kept(key, scope)
    if report is not None:
        buttons(report, key)


def buttons(report: FailureReport, key: str) -> None:
    """The report's two download buttons, Markdown and JSON."""
    name = file_stem(report.question)
    left, right, _ = st.columns([1, 1, 2])  # side by side, not spread over the page
    for column, fmt in ((left, "markdown"), (right, "json")):
        column.download_button(
            LABEL[fmt],
            report.text(fmt),
            file_name=f"{name}.{SUFFIX[fmt]}",
            mime=MIME[fmt],
            key=f"{key}_report_{fmt}",
            on_click="ignore",  # a download is no reason to rerun (and re-track) the page
            help="One question's report to share: question, settings and where each came from, stage table, "
            "target, where it was lost, what ranked above it, the verified fix",
        )


def file_stem(question: str) -> str:
    """A file name from the question's first words: ASCII letters, digits and dashes only."""
    words = re.findall(r"[a-z0-9]+", question.lower())[:8]
    return "report-" + ("-".join(words)[:60] or "question")
