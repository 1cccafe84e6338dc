"""The Eval tab (drawn inside the Ask page): question sets, runs with progress, verdicts, comparisons.

Thin: every number comes from `rag.eval`; this file only lays out widgets, tables and charts.
Question text, gold and verdict details are untrusted: they appear in dataframes, `st.text`, or
escaped Markdown, never as HTML. Cancelling a run uses Streamlit's own interruption: clicking
"Cancel" starts a rerun, which stops the running script at its next progress update; the run is
stored only once complete, so a cancelled run leaves no trace.
"""

from __future__ import annotations

import dataclasses

import altair as alt
import pandas as pd
import streamlit as st

from rag.components import Components
from rag.errors import RagError
from rag.eval.answers import metric_text
from rag.eval.judge import FaithfulnessJudge
from rag.eval.metrics import CONTEXT_PRECISION, KS
from rag.eval.qsets import (
    decode_upload,
    delete_question_set,
    install_sample_set,
    list_question_sets,
    load_question_set,
    save_question_set,
    set_name,
)
from rag.eval.runner import run_eval
from rag.eval.runs import (
    FINAL_STAGE,
    Comparison,
    EvalRun,
    QuestionResult,
    baseline_of,
    compare_runs,
    list_runs,
    load_run,
    rename_run,
    set_baseline,
)
from rag.eval.verdicts import INVALID, VERDICTS, verdict_title
from rag.settings.config import RetrievalConfig
from rag.settings.labels import config_label
from rag.settings.links import inspector_url
from rag.settings.shared_home import SharedHome
from rag.text.wording import STAGE_TITLES
from rag.text.words import plural, readable_time
from ui import forms, gen_set_view, parse_view, report_download, tune_view
from ui.question_notes import no_term_questions
from ui.render import md_escape
from ui.safe import say

INSPECTOR = "pages/inspector.py"
MIN_CANDIDATES = 20
METRIC_COLUMNS = ("ndcg@10", "mrr@10", *(f"recall@{k}" for k in KS), *(f"hit@{k}" for k in KS), CONTEXT_PRECISION)
CHART_METRICS = ("ndcg@10", "mrr@10", "recall@5", "recall@10", "recall@20")


def render(components: Components) -> None:
    """Draw the whole Eval tab."""
    home = components.shared
    force = tune_view.settings_in_force(components)  # a damaged stored file: its message and Reset, first
    st.subheader("Question sets")
    gen_set_view.render(components)  # before the set picker: saving a reviewed set selects it
    name = _question_sets(components)
    if name is None:
        return
    runs = _runs(home, name)  # newest first; storing a run reruns the tab, so this list stays current
    _last_run_note(runs[0] if runs else None, components.settings.collection)
    st.subheader(f"Run {md_escape(name)}")
    _run_form(components, name)
    if force is not None:
        tune_view.render(components, name, force)
    if not runs:
        return
    st.subheader("Results")
    ids = [r.id for r in runs]
    if st.session_state.get("eval_run_id") not in ids:
        st.session_state["eval_run_id"] = ids[0]
    chosen = st.selectbox(
        "Run", ids, key="eval_run_id", format_func=lambda i: _run_label(next(r for r in runs if r.id == i))
    )
    run = load_run(home, chosen)
    _rename(home, run)
    _results(components, run)
    st.subheader("History and comparison")
    _history(home, runs, run)


def _question_sets(components: Components) -> str | None:
    """Upload, load the sample, list, view and delete sets; returns the selected set's name."""
    home = components.shared
    cols = st.columns([3, 1])
    upload = cols[0].file_uploader("Upload a question set (JSONL)", type=["jsonl"], key="eval_upload")
    if upload is not None and st.session_state.get("eval_uploaded") != upload.file_id:
        st.session_state["eval_uploaded"] = upload.file_id
        try:
            qset = save_question_set(home, set_name(upload.name), decode_upload(upload.getvalue(), upload.name))
            st.session_state["eval_set"] = qset.name
            st.success(f"Stored {len(qset.questions)} questions as “{md_escape(qset.name)}”.")
        except RagError as e:
            say("error", "{e}", e=e)
    if cols[1].button("Load sample question set", key="eval_load_sample"):
        st.session_state["eval_set"] = install_sample_set(home).name
    names = list_question_sets(home)
    if not names:
        st.info(
            'No question sets yet. Upload a JSONL file (one {"question": ..., "gold": ...} per line) '
            "or load the sample set."
        )
        return None
    if st.session_state.get("eval_set") not in names:
        st.session_state["eval_set"] = names[0]
    name = st.selectbox("Question set", names, key="eval_set")
    try:
        qset = load_question_set(home, name)
    except RagError as e:
        say("error", "{e}", e=e)
        return None
    no_term_questions(components, [(q.id, q.question) for q in qset.questions])
    with st.expander(f"{len(qset.questions)} questions ({qset.unanswerable} unanswerable)"):
        rows = [
            {"id": q.id, "question": q.question, "answerable": q.answerable, "gold": str(q.as_json().get("gold", ""))}
            for q in qset.questions
        ]
        st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
        if st.button("Delete this set", key="eval_delete_set"):
            delete_question_set(home, name)
            st.session_state.pop("eval_set", None)
            st.rerun()
    return name


def _last_run_note(run: EvalRun | None, collection: str) -> None:
    """Where and when the set last ran, as a caption (a picker's option labels are not redrawn while its
    value stays, so they would go stale); and a warning when that was another collection, whose numbers
    are not comparable with a run here."""
    if run is None:
        st.caption("This set has never run.")
        return
    st.caption(
        f"Last run: “{md_escape(run.label)}” on collection {md_escape(run.collection)}, "
        f"{readable_time(run.created_at, st.context.timezone)}."
    )
    if run.collection != collection:
        st.info(
            f"This set last ran on collection “{md_escape(run.collection)}” (run “{md_escape(run.label)}”); "
            f"a run now scores “{md_escape(collection)}”, the collection picked in the sidebar."
        )


def _run_form(components: Components, name: str) -> None:
    """Settings for a run, the run button, and the progress bar with its cancel button."""
    base = components.settings.retrieval
    has_key = bool(components.settings.anthropic_api_key)
    with st.expander("Retrieval settings"):
        config = forms.retrieval_form(
            "eval", dataclasses.replace(base, candidates=max(base.candidates, MIN_CANDIDATES)), base, claude=has_key
        )
    answers = st.checkbox(
        "Also answer each question and score the answers",
        key="eval_answers",
        help="Claude with a key, else the offline extractive answerer.",
    )
    judge = st.checkbox(
        "Judge the answers with Claude: faithfulness per sentence and answer relevancy",
        key="eval_judge",
        disabled=not (answers and has_key),
        help=None if has_key else "Needs ANTHROPIC_API_KEY.",
    )
    if config is not None and config.candidates < MIN_CANDIDATES:
        st.caption(f"With {config.candidates} candidates the @20 metrics can only count {config.candidates} chunks.")
    if notice := st.session_state.pop("eval_stored", None):
        st.success(notice)
    if st.session_state.get("eval_cancel"):
        st.info("Run cancelled; nothing was stored.")
    if not st.button("Run eval", key="eval_start", type="primary", disabled=config is None):
        return
    try:
        qset = load_question_set(components.shared, name)
        bar = st.progress(0.0, text=f"0/{len(qset.questions)}")
        cancel_slot = st.empty()
        cancel_slot.button("Cancel", key="eval_cancel")
        llm_judge = FaithfulnessJudge.from_settings(components.settings) if judge else None
        run = run_eval(
            components,
            qset,
            config,
            answers=answers,
            judge=llm_judge,
            progress=lambda d, n, m: bar.progress(d / n, text=md_escape(m)),
        )
    except RagError as e:
        say("error", "{e}", e=e)
        return
    bar.empty()
    cancel_slot.empty()  # the run is stored: a Cancel button left on screen would claim otherwise
    st.session_state["eval_run_id"] = run.id
    # Rerun so everything drawn above the form (the set picker's last run) shows the new run; the notice survives it.
    st.session_state["eval_stored"] = (
        f"Run “{md_escape(run.label)}” stored: nDCG@10 {run.metrics['ndcg@10']:.3f}, gold in the final k for "
        f"{run.metrics['hit@final']:.0%} of answerable questions."
    )
    st.rerun()


def _runs(home: SharedHome, name: str) -> list[EvalRun]:
    try:
        return list_runs(home, name)
    except RagError as e:
        say("error", "{e}", e=e)
        return []


def _run_label(run: EvalRun) -> str:
    mark = " · baseline" if run.baseline else ""
    where = f"{run.collection} {run.version}" if run.version else run.collection  # the version it was made on
    return f"{run.label} · {where} · {readable_time(run.created_at, st.context.timezone)}{mark}"


def _rename(home: SharedHome, run: EvalRun) -> None:
    """An editable name for the selected run; the settings it ran with stay visible below it."""
    key = f"eval_run_name_{run.id}"
    name = st.text_input(
        "Run name",
        value=run.label,
        key=key,
        help="Saved when you press Enter. By default: the run's settings in words.",
    )
    if name != run.label:
        try:
            rename_run(home, run.id, name)
            st.rerun()
        except RagError as e:
            say("error", "{e}", e=e)
    st.caption(
        f"Settings: {md_escape(config_label(run.config))} · collection {md_escape(run.collection)} · run id {run.id}"
    )


def _results(components: Components, run: EvalRun) -> None:
    """Per-stage metrics (table and chart), answer rates, verdict counts, and the per-question table."""
    st.caption(
        f"Collection {md_escape(run.collection)} (fingerprint {run.fingerprint}) · "
        f"dense {md_escape(run.models.get('dense', ''))} · sparse {md_escape(run.models.get('sparse', ''))}"
    )
    rows = [{"stage": STAGE_TITLES[s], **{m: run.per_stage[s].get(m) for m in METRIC_COLUMNS}} for s in STAGE_TITLES]
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch", key="eval_stage_table")
    long = pd.DataFrame(
        [
            {"stage": STAGE_TITLES[s], "metric": m, "value": run.per_stage[s][m]}
            for s in STAGE_TITLES
            for m in CHART_METRICS
        ]
    )
    chart = (
        alt.Chart(long)
        .mark_bar()
        .encode(
            x=alt.X("metric:N", sort=list(CHART_METRICS), title=None),
            xOffset=alt.XOffset("stage:N", sort=list(STAGE_TITLES.values())),
            y=alt.Y("value:Q", scale=alt.Scale(domain=[0, 1])),
            color=alt.Color("stage:N", sort=list(STAGE_TITLES.values())),
            tooltip=["stage", "metric", alt.Tooltip("value:Q", format=".3f")],
        )
    )
    st.altair_chart(chart, width="stretch")
    if run.answers:
        st.dataframe(
            pd.DataFrame(
                [{"answer metric": k.replace("_", " "), "value": metric_text(k, v)} for k, v in run.answers.items()]
            ),
            hide_index=True,
            key="eval_answer_table",
        )
    _invalid(run)
    counts = run.verdict_counts()
    failed = sum(counts.values())
    checked = len(run.questions) - len(run.invalid)
    st.markdown(
        f"**{failed} of {plural(checked, 'question')} failed**"
        + ("" if not counts else ": " + ", ".join(f"{VERDICTS[c]} ({n})" for c, n in counts.items()))
    )
    parse_view.eval_note(run)
    only_failed = st.toggle("Only failed questions", key="eval_only_failed", value=failed > 0)
    table = [_question_row(q) for q in run.questions if q.failed or not only_failed]
    st.dataframe(
        pd.DataFrame(table),
        hide_index=True,
        width="stretch",
        key="eval_question_table",
        placeholder="–",  # a stage that did not rank the gold
        column_config={
            "inspector": st.column_config.LinkColumn(
                "inspector",
                display_text="open ↗",
                help="The inspector on this question and config, tracking the gold chunk",
            )
        },
    )
    for q in run.questions:
        if q.verdict:
            with st.expander(f"{md_escape(q.id)} · {q.verdict.title}"):
                st.text(
                    f"Question: {q.question}\n"
                    f"Gold: {', '.join(q.gold_labels) or '(none: the documents should not answer it)'}\n"
                    f"Why: {q.verdict.detail}" + (f"\nParse problems: {q.parse_note}" if q.parse_note else "")
                )
                if q.answer and not q.answer.abstained:
                    st.text(f"Answer: {q.answer.text}")
                label = "Open in the inspector, gold tracked" if "track" in q.inspector else "Open in the inspector"
                st.page_link(INSPECTOR, label=label, icon="🔬", query_params=dict(q.inspector))
                report_download.verdict_offer(components, run, q)


def _invalid(run: EvalRun) -> None:
    """Questions whose gold names what the collection lacks: said loudly, listed with the reason, never scored."""
    if not run.invalid:
        return
    st.warning(
        f"{plural(len(run.invalid), 'question')} left out of the metrics: the gold names a chunk, document or heading "
        "this collection does not have. Fix the set (or ingest the document) and run again."
    )
    st.dataframe(
        pd.DataFrame([
            {"id": q.id, "question": q.question, "gold": ", ".join(q.gold_labels), "why it is invalid": q.invalid}
            for q in run.invalid
        ]),
        hide_index=True, width="stretch", key="eval_invalid_table", column_config=INVALID_COLUMNS,
    )  # fmt: skip


# Widths that fit a 1,280 px window with the reason readable; each header says what it holds.
INVALID_COLUMNS = {
    "id": st.column_config.TextColumn("id", width="small", help="The question's id in its set"),
    "question": st.column_config.TextColumn("question", width="medium", help="The question as the set has it"),
    "gold": st.column_config.TextColumn("gold", width="medium", help="What the set names as the right answer's source"),
    "why it is invalid": st.column_config.TextColumn(
        "why invalid", width="large", help="What the gold names that this collection does not have"
    ),
}


def _question_row(q: QuestionResult) -> dict:
    row = {
        "id": q.id,
        "question": q.question,
        "gold": ", ".join(q.gold_labels) or ("(unanswerable)" if not q.answerable else ""),
    }
    row |= {f"{STAGE_TITLES[s]} rank": q.gold_ranks.get(s) for s in STAGE_TITLES} | {
        "final rank": q.gold_ranks.get("final")
    }
    row["ndcg@10"] = q.scores.get(FINAL_STAGE, {}).get("ndcg@10")
    if q.answer:
        row["answer"] = "abstained" if q.answer.abstained else q.answer.text
    row["verdict"] = q.verdict.title if q.verdict else verdict_title(INVALID) if q.invalid else ""
    row["why"] = q.verdict.detail if q.verdict else q.invalid or ""
    row["inspector"] = inspector_url(q.inspector)
    return row


def _history(home: SharedHome, runs: list[EvalRun], run: EvalRun) -> None:
    """The per-run trend, the baseline mark, and a comparison of two runs."""
    if st.button("Mark this run as the baseline", key="eval_mark_baseline", disabled=run.baseline):
        set_baseline(home, run.id)
        st.rerun()
    if len(runs) < 2:  # one point is no trend: show the numbers
        cols = st.columns(2)
        for col, m in zip(cols, ("ndcg@10", "recall@10"), strict=True):
            col.metric(f"{m} (reranked)", f"{run.per_stage[FINAL_STAGE][m]:.3f}")
        st.caption("Run the set again with other settings to see a trend and compare.")
        return
    trend = pd.DataFrame(
        [
            {"run": f"{i}. {r.label}", "created": r.created_at, "metric": m, "value": r.per_stage[FINAL_STAGE][m]}
            for i, r in enumerate(reversed(runs), 1)
            for m in ("ndcg@10", "recall@10")
        ]
    )
    line = alt.Chart(trend).mark_line(point=True).encode(
        x=alt.X("run:N", sort=None, title="run (oldest first)", axis=alt.Axis(labelAngle=0, labelLimit=160)),
        y=alt.Y("value:Q", scale=alt.Scale(domain=[0, 1])), color="metric:N",
        tooltip=["run", "created", "metric", alt.Tooltip("value:Q", format=".3f")],
    )  # fmt: skip
    st.altair_chart(line, width="stretch")
    others = [r.id for r in runs if r.id != run.id]
    default = baseline_of(home, run.set_name)
    if st.session_state.get("eval_compare_with") not in others:
        st.session_state["eval_compare_with"] = default if default in others else others[0]
    against = st.selectbox(
        "Compare the selected run with",
        others,
        key="eval_compare_with",
        format_func=lambda i: _run_label(next(r for r in runs if r.id == i)),
    )
    cmp = compare_runs(load_run(home, against), run)
    if not cmp.same_collection:
        st.warning(
            "The collection changed between these runs (different chunks or models): differences mix retrieval "
            "and content changes."
        )
    changes = cmp.config_changes()
    st.caption(
        "Changed: "
        + (
            ", ".join(f"{md_escape(k)} {md_escape(str(a))} → {md_escape(str(b))}" for k, (a, b) in changes.items())
            or "nothing in the settings"
        )
    )
    deltas = [
        {"stage": STAGE_TITLES[s], **{m: cmp.deltas[s].get(m) for m in METRIC_COLUMNS}}
        for s in STAGE_TITLES
        if s in cmp.deltas
    ]
    st.dataframe(pd.DataFrame(deltas), hide_index=True, width="stretch", key="eval_delta_table")
    intervals = ", ".join(f"{m} {cmp.interval(m).words()}" for m in ("ndcg@10", "mrr@10", "recall@5"))
    st.caption(f"Final stage, B - A with its paired-bootstrap 95% interval (* excludes 0): {intervals}")
    st.markdown(
        f"**{plural(len(cmp.wins), 'win')}, {plural(len(cmp.losses), 'loss', 'losses')}, "
        f"{plural(len(cmp.verdict_changes), 'verdict change')}**"
    )
    changed = [q for q in cmp.questions if q.outcome != "same" or q.verdict_a != q.verdict_b]
    rows = [
        {"id": q.id, "question": q.question, "outcome": q.outcome, "ndcg@10 before": q.score_a,
         "ndcg@10 after": q.score_b, "rank before": q.rank_a, "rank after": q.rank_b,
         "verdict before": verdict_title(q.verdict_a), "verdict after": verdict_title(q.verdict_b)}
        for q in changed
    ]  # fmt: skip
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch", key="eval_change_table")
    _rank_shift(cmp, run.config)


def _rank_shift(cmp: Comparison, config: RetrievalConfig) -> None:
    """How far each question's best gold chunk moved in the final ranking (positive: moved up)."""
    missing = (
        max(cmp.a.config.candidates, config.candidates) + 1
    )  # "not retrieved" plotted just past the last candidate
    shifts = [
        {
            "question": q.id,
            "shift": (q.rank_a or missing) - (q.rank_b or missing),
            "before": q.rank_a or "not retrieved",
            "after": q.rank_b or "not retrieved",
        }
        for q in cmp.questions
        if q.rank_a != q.rank_b
    ]
    if not shifts:
        st.caption("No gold chunk changed rank.")
        return
    bars = (
        alt.Chart(pd.DataFrame(shifts))
        .mark_bar()
        .encode(
            x=alt.X("question:N", sort="-y"),
            y=alt.Y("shift:Q", title="rank shift (up is better)"),
            color=alt.condition("datum.shift > 0", alt.value("#2e7d32"), alt.value("#c62828")),
            tooltip=["question", "before", "after", "shift"],
        )
    )
    st.altair_chart(bars, width="stretch")
