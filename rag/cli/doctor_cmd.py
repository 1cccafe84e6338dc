"""`ragscope doctor`: check the data dir's state files, and repair what is safe with --fix."""

from __future__ import annotations

import os

import click

from rag.cli.main import main
from rag.settings.config import Settings
from rag.text.words import plural


@main.command()
@click.option(
    "--fix",
    is_flag=True,
    help=(
        "Repair what can be repaired (damaged journal entries, a lost models record, damaged stored settings, "
        "question sets and histories set aside, a damaged ONNX graph exported again), saying what was done."
    ),
)
def doctor(fix: bool) -> None:
    """Check every file kept under the data dir (models records, crash journal, locks, collections, stored settings,
    ONNX graphs, question sets, histories, the ask log); exits 1 while problems remain."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from rag.catalog.doctor import check  # here: it opens the stores, whose engines `--help` never needs
    from rag.eval.checkup import check_eval_files

    settings = Settings.from_env()
    findings = check(settings, fix) + check_eval_files(settings, fix)
    for finding in findings:
        click.echo(f"{finding.level}: {finding.message}")
    problems = sum(f.level == "problem" for f in findings)
    if problems:
        click.echo(
            f"{plural(problems, 'problem')} left" + ("" if fix else "; `ragscope doctor --fix` repairs what it can"),
            err=True,
        )
        raise SystemExit(1)
