"""`ragscope docs --parse`: each document's chunks with parse problems, by signal (rag.catalog.parse)."""

from __future__ import annotations

import json

import click

from rag.catalog.parse import parse_overview
from rag.cli.main import opened
from rag.ingest.parse_signals import SIGNALS, flag_titles


def print_parse(collection: str | None, as_json: bool) -> None:
    """Documents with the most flagged chunks first, each flagged chunk under its document with its signals."""
    with opened(collection) as components:
        docs = sorted(parse_overview(components), key=lambda d: (-d.total, d.source))
    if as_json:
        click.echo(json.dumps([d.as_json() for d in docs], indent=2, ensure_ascii=False))
        return
    if not any(d.total for d in docs):
        click.echo("no chunk has a parse problem the signals flag", err=True)
    for d in docs:
        counts = ", ".join(f"{name} {d.counts[name]}" for name in SIGNALS if d.counts[name])
        now = f"\t({d.measured_now} measured now: stored before the signals)" if d.measured_now else ""
        click.echo(f"{d.source}\t{d.total} of {d.chunks} chunks flagged" + (f"\t{counts}" if counts else "") + now)
        for p in d.flagged:
            chunk = p.record.chunk
            click.echo(f"  #{chunk.index}\t{chunk.id}\t{chunk.location}\t{flag_titles(p.flags)}")
