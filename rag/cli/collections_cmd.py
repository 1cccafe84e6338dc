"""`ragscope collections`, and the `--collection` option every command that reads or writes one takes."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import click

from rag.cli.main import main, settings_from_env
from rag.store.layout import ClusterStatus


def collection_option(command: Callable[..., Any]) -> Callable[..., Any]:
    """`--collection NAME`, the same on every command (None: RAGSCOPE_COLLECTION, else 'docs')."""
    return click.option(
        "--collection",
        default=None,
        metavar="NAME",
        help="Collection to use (default: RAGSCOPE_COLLECTION, else 'docs'; `ragscope collections` lists them).",
    )(command)


@main.command()
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help=(
        "Print [{name, default, dense_model, dense_runtime, sparse_model, sentence_vectors, dense_vectors, chunks, "
        "documents, layout, cluster, error}]."
    ),
)
def collections(as_json: bool) -> None:
    """List the collections with their models (every dense vector), chunk and document counts, whether they store
    sentence vectors, what they were made with (shards, replicas, on-disk storage, quantization) and their cluster
    status."""
    from rag.catalog.collections import describe_collections

    settings = settings_from_env()
    infos = describe_collections(settings)  # a RagError is one clean line (rag.cli.main._Group)
    if as_json:
        click.echo(json.dumps([i.as_json() | {"default": i.name == settings.collection} for i in infos], indent=2))
        return
    unreported = ""
    for i in infos:
        mark = "*" if i.name == settings.collection else " "
        if i.error:
            click.echo(f"{mark} {i.name}\tunavailable: {i.error}")
            continue
        if i.models is None:
            click.echo(f"{mark} {i.name}\tempty")
            continue
        vectors = "sentence vectors" if i.sentence_vectors else "no sentence vectors"
        layout = f"\tmade with {i.layout.describe()}" if i.layout else ""
        reported = i.cluster is not None and i.cluster.reported
        others = "".join(f", also {s.name} ({s.model})" for s in i.models.other_dense)
        click.echo(
            f"{mark} {i.name}\t{i.documents} documents\t{i.chunks} chunks\t"
            f"dense {i.models.dense_model} ({i.models.dense_runtime}){others}\tsparse {i.models.sparse_model}\t"
            f"{vectors}"
            f"{layout}" + (f"\tcluster: {i.cluster.describe()}" if reported else "")
        )
        if reported:
            _shard_lines(i.cluster)
        elif i.cluster is not None:
            unreported = i.cluster.why
    click.echo("* the default collection (RAGSCOPE_COLLECTION)", err=True)
    if unreported:  # the same for every collection of one backend: said once
        click.echo(f"Cluster status: {unreported}.", err=True)
    note = next((i.note for i in infos if i.note), "")
    if note:
        click.echo(f"Note: {note}.", err=True)


def _shard_lines(status: ClusterStatus) -> None:
    """Each shard's replicas with their peer and state, one indented line per shard."""
    for shard in sorted({r.shard for r in status.replicas}):
        replicas = [r for r in status.replicas if r.shard == shard]
        where = ", ".join(
            f"{r.state} on peer {r.peer}" + (f" ({r.points} points)" if r.points is not None else "") for r in replicas
        )
        click.echo(f"      shard {shard}: {where}")
