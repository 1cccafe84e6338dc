"""`ragscope versions take|list|restore|delete|diff`: named copies of a collection; two of them compared on a set."""

from __future__ import annotations

import json
from pathlib import Path

import click

from rag.catalog.versions import delete_version, list_versions, restore_version, take_version
from rag.cli.collections_cmd import collection_option
from rag.cli.main import main, opened, progress_bar, settings_from_env
from rag.eval.qsets import read_question_set_file
from rag.eval.version_diff import Outcome, diff_versions
from rag.settings.links import inspector_url
from rag.text.sizes import mib
from rag.text.words import plural

_JSON = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")


@main.group()
def versions() -> None:
    """Keep named versions of a collection (points, settings, documents list), restore one, compare two."""


@versions.command("take")
@click.argument("name")
@collection_option
@_JSON
def take(name: str, collection: str | None, as_json: bool) -> None:
    """Keep the collection as it is now as version NAME (the embedded shard copied, or a server snapshot)."""
    with opened(collection) as components:
        version = take_version(components, name)
    if as_json:
        click.echo(json.dumps(version.as_json(), indent=2, ensure_ascii=False))
        return
    click.echo(
        f"version {version.name} of {version.collection}: {plural(version.chunks, 'chunk')} in "
        f"{plural(version.documents, 'document')}, {mib(version.size_bytes)}"
    )


@versions.command("list")
@collection_option
@_JSON
def list_(collection: str | None, as_json: bool) -> None:
    """List the collection's versions, newest first, with their date, size and counts."""
    found = list_versions(settings_from_env(collection))
    if as_json:
        click.echo(json.dumps([v.as_json() for v in found], indent=2, ensure_ascii=False))
        return
    for v in found:
        extra = f"\t{v.note}" if v.note else ""
        click.echo(f"{v.name}\t{v.created_at}\t{mib(v.size_bytes)}\t{v.chunks} chunks\t{v.documents} documents{extra}")
    if not found:
        click.echo("no versions yet: `ragscope versions take NAME` keeps one", err=True)


@versions.command("restore")
@click.argument("name")
@collection_option
def restore(name: str, collection: str | None) -> None:
    """Bring the collection back to version NAME: its chunks, settings and originals, exactly. The collection
    as it was is kept first as an automatic version (before-restore-<time>)."""
    with opened(collection) as components:
        version, kept = restore_version(components, name)
    click.echo(
        f"restored {version.name}: {plural(version.chunks, 'chunk')}; the collection as it was is version {kept.name}"
    )


@versions.command("delete")
@click.argument("name")
@collection_option
def delete(name: str, collection: str | None) -> None:
    """Delete version NAME, and nothing else: the collection and its other versions stay as they are."""
    with opened(collection) as components:
        version = delete_version(components, name)
    click.echo(f"deleted version {version.name} of {version.collection}: {mib(version.size_bytes)} freed")


@versions.command("diff")
@click.argument("a")
@click.argument("b")
@click.option(
    "--set", "qset_path", required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="The question set (JSONL) both versions are evaluated on.",
)  # fmt: skip
@collection_option
@_JSON
def diff(a: str, b: str, qset_path: Path, collection: str | None, as_json: bool) -> None:
    """Evaluate versions A and B on a question set, each with its own settings, and list the questions B fixed
    and broke, each with an inspector link on both versions."""
    settings = settings_from_env(collection)
    qset = read_question_set_file(qset_path)
    with progress_bar(2 * len(qset.questions), "diff", "question") as bar:
        result = diff_versions(settings, a, b, qset, progress=lambda done, total, msg: bar.update(1))
    if as_json:
        click.echo(json.dumps(result.as_json(), indent=2, ensure_ascii=False))
        return
    click.echo(result.headline())
    for outcome in (Outcome.FIXED, Outcome.BROKE):
        for q in result.having(outcome):
            click.echo(f"  {outcome}\t{q.id}\t{q.question}")
            click.echo(f"    {a}: {inspector_url(q.inspector_a)}")
            click.echo(f"    {b}: {inspector_url(q.inspector_b)}")
    if result.left_out:
        click.echo(f"left out (not scored in both): {', '.join(result.left_out)}", err=True)
