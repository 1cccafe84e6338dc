"""`ragscope chunk disable|enable|edit|history`: fix stored chunks by hand, as the Documents page does.

Each fix is made by the OS user (rag.catalog.fixes.os_user) and written to the collection's history.
"""

from __future__ import annotations

import json
import textwrap

import click

from rag.catalog.fixes import disable_chunks, edit_chunk, enable_chunks, os_user
from rag.cli.collections_cmd import collection_option
from rag.cli.main import main, opened, settings_from_env
from rag.ingest import fix_history
from rag.ingest.fixes import edited_words
from rag.text.words import plural


@main.group()
def chunk() -> None:
    """Fix stored chunks: disable, enable, edit their text; list the collection's fixes (history)."""


@chunk.command()
@click.argument("ids", nargs=-1, required=True)
@collection_option
@click.option("--why", default="", help="Why, written with the fix (shown where the chunk is).")
def disable(ids: tuple[str, ...], collection: str | None, why: str) -> None:
    """Disable chunks by id: kept and shown, never retrieved (search, ask, eval) until enabled again."""
    with opened(collection) as components:
        n = disable_chunks(components, ids, os_user(), why.strip())
    click.echo(f"{plural(n, 'chunk')} disabled" + (f" ({len(ids) - n} disabled already)" if n < len(ids) else ""))


@chunk.command()
@click.argument("ids", nargs=-1, required=True)
@collection_option
def enable(ids: tuple[str, ...], collection: str | None) -> None:
    """Enable disabled (or quarantined) chunks by id: retrieval returns them again."""
    with opened(collection) as components:
        n = enable_chunks(components, ids, os_user())
    click.echo(f"{plural(n, 'chunk')} enabled" + (f" ({len(ids) - n} were not disabled)" if n < len(ids) else ""))


@chunk.command()
@click.argument("chunk_id", metavar="ID")
@click.option("--text", required=True, help="The chunk's new text (its passage's own text restores it).")
@collection_option
def edit(chunk_id: str, text: str, collection: str | None) -> None:
    """Replace a chunk's text: its dense, sparse and sentence vectors are encoded again from the new text. The
    fix is kept by later ingests while the chunk's passage is unchanged in its file."""
    with opened(collection) as components:
        record = edit_chunk(components, chunk_id, text, os_user())
    click.echo(
        f"{record.chunk.location} #{record.chunk.index} ({record.chunk.id}): {edited_words(record) or 'restored'}"
    )


@chunk.command()
@collection_option
@click.option("--json", "as_json", is_flag=True, help="Print [{at, by, action, chunk_id, where, details}].")
def history(collection: str | None, as_json: bool) -> None:
    """Every fix made in the collection, oldest first: edits, disables, enables, and fixes an ingest dropped."""
    entries = fix_history.read(settings_from_env(collection))
    if as_json:
        click.echo(json.dumps([e.as_json() | {"details": e.details} for e in entries], indent=2, ensure_ascii=False))
        return
    if not entries:
        click.echo("no chunk of this collection was ever fixed", err=True)
    for e in entries:
        details = {k: v for k, v in e.details.items() if k != "old"}
        if "new" in details:  # an edit: the start of its text, on the one line
            details["new"] = textwrap.shorten(str(details["new"]), 80)
        extra = "; ".join(f"{k}: {v}" for k, v in details.items())
        click.echo(f"{e.at}\t{e.by}\t{e.action}\t{e.where}\t{e.chunk_id}" + (f"\t{extra}" if extra else ""))
