"""`ragscope tune SET.jsonl --vary ...`: find the settings that serve a collection best; `--apply` stores them for it.

And `ragscope settings`: the retrieval settings a collection runs with and where each came from; `--reset`
deletes the collection's stored ones (back to the configured settings).
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from rag.cli.collections_cmd import collection_option
from rag.cli.main import main, opened, progress_bar, settings_from_env
from rag.cli.options import retrieval_options
from rag.eval.qsets import read_question_set_file
from rag.eval.tune import (
    BUDGET,
    METRIC,
    NOTHING_BEAT,
    Sweep,
    apply_best,
    list_sweeps,
    load_sweep,
    run_sweep,
    start_sweep,
)
from rag.settings.collection_settings import in_force, reset_collection_settings
from rag.settings.config import RetrievalConfig
from rag.settings.labels import config_label
from rag.store import shared_home


@main.command()
@click.argument("qset", required=False, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--vary", default="", metavar="SETTING,...",
              help="Settings to vary, e.g. fusion,candidates,reranker,collapse,prf,mode.")  # fmt: skip
@click.option("--budget", type=click.IntRange(min=1), default=BUDGET, show_default=True,
              help="Most configurations to run, the current settings included.")  # fmt: skip
@click.option("--metric", default=METRIC, show_default=True, help="What ranks the configurations.")
@click.option("--resume", "resume_id", default=None, metavar="SWEEP_ID", help="Finish a stored sweep.")
@click.option("--list", "list_only", is_flag=True, help="List stored sweeps and exit.")
@click.option("--apply", "apply", is_flag=True,
              help="Store the best configuration whose gain interval is above 0 for the collection.")  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="Print {sweep_id, ranked: [{changes, score, interval}], ...}.")
@collection_option
@retrieval_options
def tune(
    qset: Path | None, vary: str, budget: int, metric: str, resume_id: str | None, list_only: bool, apply: bool,
    as_json: bool, collection: str | None, **options: object,
) -> None:  # fmt: skip
    """Sweep the --vary settings on SET.jsonl from the current ones (retrieval options change the start) and rank
    each configuration, with its paired-bootstrap 95% interval against the current settings (* excludes 0).

    Each finished configuration is stored at once: a cancelled sweep continues with --resume SWEEP_ID.
    """
    with opened(collection) as components:
        home = components.shared
        if list_only:
            _list(list_sweeps(home, components.settings.collection), as_json)
            return
        if resume_id:
            sweep = load_sweep(home, resume_id)
        else:
            if qset is None or not vary.strip():
                raise click.UsageError("give SET.jsonl and --vary SETTING,... (or --resume SWEEP_ID)")
            start = in_force(components.settings, components.shared).given(options)
            sweep = start_sweep(
                components, read_question_set_file(qset), vary.split(","), base=start.config, budget=budget,
                metric=metric,
            )  # fmt: skip
            click.echo(f"sweep {sweep.id}: {len(sweep.plan)} configurations from {start.describe()}", err=True)
        total = len(sweep.plan) * sum(1 for line in sweep.questions.splitlines() if line.strip())
        with progress_bar(total, "tune", unit="question") as bar:
            try:
                sweep = run_sweep(components, sweep, progress=lambda done, _n, _m: bar.update(done - bar.n))
            except KeyboardInterrupt:
                raise click.ClickException(
                    f"cancelled; finished configurations are stored: --resume {sweep.id}"
                ) from None
        current = in_force(components.settings, components.shared).config  # ties go to its values
        configured = settings_from_env(collection).retrieval
        stored = apply_best(components.shared, sweep, current, configured) if apply and sweep.finished else None
    if as_json:
        click.echo(json.dumps(sweep.as_json(current) | {"applied": stored.as_json() if stored else None}, indent=2))
    else:
        _print(sweep, current)
    if apply:
        # Not an error: the current settings are as good as anything tried, which is worth knowing (exit 0).
        done = f"stored for collection {sweep.collection}: {stored.words()}" if stored else NOTHING_BEAT
        if stored and current != sweep.base:
            done += f"; the gain is against the sweep's start, not the settings it ran with ({config_label(current)})"
        unfinished = f"the sweep is not finished (--resume {sweep.id}); nothing stored"
        click.echo(done if sweep.finished else unfinished, err=as_json)


def _print(sweep: Sweep, current: RetrievalConfig) -> None:
    click.echo(
        f"sweep {sweep.id}  set {sweep.set_name}  collection {sweep.collection}  "
        f"{len(sweep.results)}/{len(sweep.plan)} configurations  ranked by {sweep.metric}"
    )
    click.echo(f"current: {config_label(sweep.base)}")
    click.echo(f"{'#':>3}  {sweep.metric:>9}  {'vs current [95% interval]':<28}  changes")
    for i, r in enumerate(sweep.ranked(current), 1):
        vs = "—" if r.is_current else r.interval.words()
        click.echo(f"{i:>3}  {r.score:>9.3f}  {vs:<28}  {r.changes_words()}")
    click.echo("* the interval excludes 0: a difference beyond noise on this set", err=True)


def _list(sweeps: list[Sweep], as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps([s.as_json() for s in sweeps], indent=2))
        return
    for s in sweeps:
        best = s.best()
        click.echo(
            f"{s.id}\t{s.set_name}\t{len(s.results)}/{len(s.plan)}\t{','.join(s.vary)}\t"
            f"best: {best.changes_words() if best else '-'}"
        )


@main.command("settings")
@collection_option
@click.option("--reset", is_flag=True, help="Delete the collection's stored settings (back to the configured ones).")
@click.option("--json", "as_json", is_flag=True, help="Print {config, origins, stored, in_words}.")
def settings_command(collection: str | None, reset: bool, as_json: bool) -> None:
    """The retrieval settings the collection runs with, and where each came from."""
    s = settings_from_env(collection)  # as configured: the stored ones are read (and reset) here
    home = shared_home(s)
    if reset:
        had = reset_collection_settings(home, s.collection)
        click.echo(f"collection {s.collection}: " + ("stored settings deleted" if had else "had none"), err=True)
    force = in_force(s, home)
    click.echo(json.dumps(force.as_json(), indent=2) if as_json else force.describe())
