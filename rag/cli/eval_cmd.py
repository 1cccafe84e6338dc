"""`ragscope eval`: score a question set (or a BEIR folder) with the app's own retrieval, store the run, compare."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import click

from rag.cli.collections_cmd import collection_option
from rag.cli.main import main, opened, progress_bar, settings_from_env
from rag.cli.options import retrieval_options, with_options
from rag.eval.answers import metric_text
from rag.eval.beir import beir_question_set, collection_name, ingest_beir, load_beir
from rag.eval.judge import FaithfulnessJudge
from rag.eval.metrics import CONTEXT_PRECISION
from rag.eval.qsets import read_question_set_file
from rag.eval.runner import run_eval
from rag.eval.runs import (
    FINAL_STAGE,
    HEADLINE,
    Comparison,
    EvalRun,
    baseline_of,
    compare_runs,
    list_runs,
    load_run,
    set_baseline,
)
from rag.eval.verdicts import verdict_title
from rag.settings.labels import config_label
from rag.settings.shared_home import SharedHome
from rag.store import shared_home
from rag.text.wording import STAGE_TITLES
from rag.text.words import plural

MIN_CANDIDATES = 20  # so that recall@20 / hit@20 can count


@main.command("eval")
@click.argument("qset", required=False, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--beir",
    "beir_dir",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Evaluate a BEIR folder (ingested into collection beir-<folder>).",
)
@click.option("--split", default="test", show_default=True, help="BEIR qrels split.")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Evaluate only the first N questions.")
@collection_option
@retrieval_options
@click.option("--name", default=None, help="Name the run (default: its settings in words).")
@click.option("--answers", is_flag=True, help="Also answer each question and score citations and abstentions.")
@click.option(
    "--judge",
    is_flag=True,
    help=(
        "With --answers: Claude judges each sentence's faithfulness and each answer's relevancy "
        "(needs ANTHROPIC_API_KEY)."
    ),
)
@click.option("--baseline", default=None, help="Compare with this run id, or 'marked' for the set's marked baseline.")
@click.option("--mark-baseline", is_flag=True, help="Mark this run as its set's baseline.")
@click.option("--list-runs", is_flag=True, help="List stored runs and exit.")
@click.option(
    "--json", "as_json", is_flag=True, help="Print JSON: run_id, metrics, per_stage, questions (and comparison)."
)
def eval_command(
    qset: Path | None, beir_dir: Path | None, split: str, limit: int | None, collection: str | None,
    name: str | None, answers: bool, judge: bool, baseline: str | None, mark_baseline: bool, list_runs: bool,
    as_json: bool, **options: object,
) -> None:  # fmt: skip
    """Evaluate retrieval (and optionally answers) on SET.jsonl or --beir DIR; every run is stored.

    Without --candidates the configured value is used, but at least 20 so that recall@20 / hit@20 can count.
    """
    if list_runs:  # the runs of every collection, where they are kept: no collection is read
        _print_runs(shared_home(settings_from_env(collection)), as_json)
        return
    if (qset is None) == (beir_dir is None):
        raise click.UsageError("give a question set file (SET.jsonl) or --beir DIR, not both")
    if judge and not answers:
        raise click.UsageError("--judge needs --answers")
    beir_collection = collection_name(beir_dir) if beir_dir else None
    with opened(collection or beir_collection, creates=beir_dir is not None) as components:
        if beir_dir is not None:
            data = load_beir(beir_dir, split)
            with _bar(len(data.corpus), "ingest") as bar:
                summary = ingest_beir(
                    components, data, lambda frac, _msg: bar.update(round(frac * len(data.corpus)) - bar.n)
                )
            click.echo(
                f"{summary.documents} documents ({summary.chunks_written} chunks written, "
                f"{len(summary.errors)} errors)",
                err=True,
            )
            questions = beir_question_set(data, limit)
        else:
            questions = read_question_set_file(qset)
            if limit:
                questions = dataclasses.replace(questions, questions=questions.questions[:limit])
        base = components.settings.retrieval
        config = with_options(
            base,
            {"candidates": max(base.candidates, MIN_CANDIDATES)} | {k: v for k, v in options.items() if v is not None},
        )
        llm_judge = FaithfulnessJudge.from_settings(components.settings) if judge else None
        if judge and llm_judge is None:
            raise click.UsageError("--judge needs ANTHROPIC_API_KEY")
        with _bar(len(questions.questions), "eval") as bar:
            run = run_eval(
                components,
                questions,
                config,
                answers=answers,
                judge=llm_judge,
                name=name,
                progress=lambda done, total, _m: bar.update(done - bar.n),
            )
        home = components.shared
        if mark_baseline:
            set_baseline(home, run.id)
        comparison = None
        if baseline:
            other = baseline_of(home, run.set_name) if baseline == "marked" else baseline
            if other is None:
                raise click.ClickException(f"no baseline is marked for set {run.set_name!r}; pass a run id")
            comparison = compare_runs(load_run(home, other), run)
    if as_json:
        out = run.as_json() | ({"comparison": comparison.as_json()} if comparison else {})
        click.echo(json.dumps(out, indent=2, ensure_ascii=False))
        return
    _print_run(run)
    if comparison:
        _print_comparison(comparison)


def _bar(total: int, label: str):  # noqa: ANN202
    return progress_bar(total, label, unit="question" if label == "eval" else "document")


def _print_run(run: EvalRun) -> None:
    version = f"  version {run.version}" if run.version else ""
    click.echo(
        f"run {run.label} ({run.id})  set {run.set_name}  collection {run.collection} ({run.fingerprint}){version}"
    )
    ran = run.models.get("reranker")
    click.echo(config_label(run.config) + ("" if ran == run.config.reranker else f"  (reranker ran: {ran})"))
    columns = (*HEADLINE, "recall@20", CONTEXT_PRECISION)
    click.echo("stage".ljust(16) + "".join(m.replace("context_precision", "ctx prec@k").rjust(11) for m in columns))
    for stage, title in STAGE_TITLES.items():
        click.echo(title.ljust(16) + "".join(_cell(run.per_stage[stage].get(m)) for m in columns))
    click.echo(f"gold in the final k: {run.metrics['hit@final']:.3f}")
    for name, value in run.answers.items():
        click.echo(f"{name}: {metric_text(name, value)}")
    failed = [q for q in run.questions if q.verdict]
    click.echo(f"{plural(len(failed), 'question')} failed of {len(run.questions) - len(run.invalid)} checked")
    for q in failed:
        click.echo(f"  {q.id}\t{q.verdict.title}\t{q.verdict.detail}")
    if run.parse_flagged:
        click.echo(f"{plural(len(run.parse_flagged), 'failed question')} with gold in chunks with parse problems")
        for q in run.parse_flagged:
            click.echo(f"  {q.id}\t{q.parse_note}")
    if run.invalid:
        click.echo(
            f"{plural(len(run.invalid), 'question')} left out of the metrics "
            "(invalid gold: it names what the collection lacks)"
        )
        for q in run.invalid:
            click.echo(f"  {q.id}\tINVALID\t{q.invalid}")


def _cell(value: float | None) -> str:
    """A metric cell; runs stored before a metric existed show '–' for it."""
    return f"{value:11.3f}" if value is not None else "–".rjust(11)


def _print_comparison(cmp: Comparison) -> None:
    click.echo(
        f"\nagainst run {cmp.a.label} ({cmp.a.id})" + ("" if cmp.same_collection else "  (collection changed since)")
    )
    for key, (old, new) in cmp.config_changes().items():
        click.echo(f"  {key}: {old} -> {new}")
    for m in HEADLINE:
        click.echo(f"  {m}: {cmp.deltas[FINAL_STAGE][m]:+.3f}, paired 95% interval {cmp.interval(m).words()}")
    click.echo(
        f"  {plural(len(cmp.wins), 'win')}, {plural(len(cmp.losses), 'loss', 'losses')}, "
        f"{plural(len(cmp.verdict_changes), 'verdict change')}"
    )
    for q in cmp.verdict_changes:
        old, new = (verdict_title(v) for v in (q.verdict_a, q.verdict_b))
        click.echo(f"  {q.id}: {old} -> {new}")


def _print_runs(home: SharedHome, as_json: bool) -> None:
    runs = list_runs(home)
    if as_json:
        click.echo(
            json.dumps([r.summary_json() | {"metrics": r.per_stage.get(FINAL_STAGE, {})} for r in runs], indent=2)
        )
        return
    for r in runs:
        mark = "*" if r.baseline else " "
        click.echo(
            f"{mark} {r.id}\t{r.label}\t{r.set_name}\t{r.collection}\t"
            f"ndcg@10 {r.per_stage.get(FINAL_STAGE, {}).get('ndcg@10', 0):.3f}"
        )
