"""`ragscope ingest`, `docs`, `delete`, `optimize`."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from rag.catalog.documents import delete_document, flagged_chunks, list_documents, sentence_vectors_stored
from rag.catalog.fixes import os_user
from rag.cli.collections_cmd import collection_option
from rag.cli.dry_run import previewer, show_dry_run, unread
from rag.cli.ingest_inputs import Bar, read_in_batches
from rag.cli.main import main, opened
from rag.cli.options import cluster_options
from rag.components import Components
from rag.ingest.pipeline import ingest_files
from rag.ingest.repeated import SiteChrome
from rag.ingest.results import FileResult, IngestSummary
from rag.ingest.sentences import sentence_vectors_note
from rag.settings.config import CHUNK_STRATEGIES, ChunkConfig
from rag.types import clean_tags


@main.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@collection_option
@click.option("--strategy", type=click.Choice(CHUNK_STRATEGIES), default=None, help="Chunking strategy.")
@click.option("--size", type=int, default=None, help="Chunk size in characters.")
@click.option("--overlap", type=int, default=None, help="Overlap in characters (fixed/recursive).")
@click.option("--tags", default=None, help="Comma-separated tags for every document ingested.")
@click.option(
    "--dry-run",
    is_flag=True,
    help="Write nothing: print each file's preview (new, changed or unchanged, its chunks added, unchanged and "
    "removed, what would be refused and why, warnings), as the Documents page previews an upload; exits 1 if "
    "any file would be refused.",
)
@click.option(
    "--drop-fixes",
    is_flag=True,
    help="Ingest a file even where a changed passage carries a fix (`ragscope chunk`): its fix is dropped, and the "
    "drop written to the collection's history. Without it such a file is refused, its fixes named, nothing written.",
)
@click.option("--json", "as_json", is_flag=True, help="Print each file's result and every file skipped as JSON.")
@cluster_options
def ingest(
    paths: tuple[Path, ...],
    collection: str | None,
    strategy: str | None,
    size: int | None,
    overlap: int | None,
    tags: str | None,
    dry_run: bool,
    drop_fixes: bool,
    as_json: bool,
    **cluster: Any,  # noqa: ANN401 - the ClusterConfig options, each its field's kind or None
) -> None:
    """Ingest files, folders (recursively, with the .zip archives in them) and .zip archives; exits 1 if
    any file failed (with --dry-run: if any would be refused).

    The cluster options (--shards, --replicas, ...) lay out a collection this ingest creates; an existing one
    keeps what it was made with (`ragscope collections` shows it).

    Everything left out (hidden and tool folders, unsupported types, archive entries) is listed on
    stderr with the reason, and under "skipped" in --json. Only regular files are read (a FIFO or
    device named is refused), never past the size limit. Inputs that would be stored as one document
    are all refused, with every path named, before anything is written; so is a file whose name cleans
    to a stored document's that came from a different file.
    """
    if dry_run:
        with opened(collection, creates=True) as components:
            config = _config(components, strategy, size, overlap)
            components.check_models()  # ingest would refuse every file of a collection built with other models
            previews, skipped = read_in_batches(components, paths, previewer(components, config), unread, "preview")
        show_dry_run(previews, skipped, as_json, drop_fixes)
        return
    with opened(collection, creates=True, cluster=cluster) as components:
        _layout_note(components, cluster)
        config = _config(components, strategy, size, overlap)
        results, skipped = read_in_batches(
            components, paths, _ingest_batch(components, config, tags, drop_fixes), _refused
        )
    summary = IngestSummary(tuple(results))
    line = (
        f"{summary.documents} documents, {summary.chunks_written} chunks written, "
        f"{summary.chunks_unchanged} unchanged, {len(summary.errors)} errors"
    )
    if as_json:  # stdout holds the JSON alone; the summary line goes beside the progress
        click.echo(
            json.dumps(
                {"files": [r.__dict__ for r in results], "skipped": [{"path": p, "reason": r} for p, r in skipped]},
                indent=2,
            )
        )
        click.echo(line, err=True)
    else:
        click.echo(line)
    if summary.errors:
        raise SystemExit(1)


def _layout_note(components: Components, cluster: dict[str, Any]) -> None:
    """Say on stderr which cluster settings a new collection cannot take here, or that an existing one keeps its
    layout when cluster options were given."""
    store = components.store
    if store.collection_models() is None:
        note = store.cluster_note()
        if note:
            click.echo(f"note: {note}", err=True)
    elif any(v is not None for v in cluster.values()):
        click.echo(
            f"note: collection {components.settings.collection!r} exists and keeps the layout it was made with "
            "(`ragscope collections` shows it); the cluster options lay out new collections only",
            err=True,
        )


def _config(components: Components, strategy: str | None, size: int | None, overlap: int | None) -> ChunkConfig:
    """The configured chunking with the options given."""
    base = components.settings.chunk
    return ChunkConfig(
        strategy or base.strategy,
        size or base.size,
        base.overlap if overlap is None else overlap,
        base.heading_weight,
        base.definition_sections,
    )


def _ingest_batch(
    components: Components, config: ChunkConfig, tags: str | None, drop_fixes: bool
) -> Callable[[list[tuple[str, bytes]], Bar], list[FileResult]]:
    """Ingests a batch of files, its errors and the loaders' warnings on stderr."""
    tag_list = clean_tags(tags.split(",")) if tags is not None else None
    chrome = SiteChrome()  # one for the run: what a batch shows to be chrome leaves the later ones too
    dropper = os_user() if drop_fixes else ""

    def run(batch: list[tuple[str, bytes]], bar: Bar) -> list[FileResult]:
        done = ingest_files(
            components, batch, config, tag_list, lambda _f, message: _advance(bar, message), chrome, dropper
        ).files
        for failed in (r for r in done if r.status == "error"):
            click.echo(f"error: {failed.error}", err=True)
        for result in done:
            for note in result.notes:
                click.echo(f"warning: {result.source}: {note}", err=True)
        return list(done)

    return run


def _refused(name: str, error: str) -> FileResult:
    click.echo(f"error: {error}", err=True)
    return FileResult(name, "error", error=error)


def _advance(bar: Bar, message: str) -> None:
    """One step per finished file; embedding progress goes in the bar's postfix."""
    if message.startswith("embedding"):
        bar.set_postfix_str(message)
    else:
        bar.update(1)


@main.command()
@collection_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option(
    "--flagged",
    is_flag=True,
    help="List instead the chunks the injection scan flagged or marked unchecked (text it cannot read), with why.",
)
def docs(collection: str | None, as_json: bool, flagged: bool) -> None:
    """List ingested documents with chunk counts (and, on stderr, whether sentence vectors are stored)."""
    if flagged:
        _flagged(collection, as_json)
        return
    with opened(collection) as components:
        rows = list_documents(components)
        stored = sentence_vectors_stored(components)
    if as_json:
        click.echo(json.dumps([r.__dict__ | {"tags": list(r.tags)} for r in rows], indent=2))
        return
    click.echo(sentence_vectors_note(stored), err=True)
    for r in rows:
        click.echo(f"{r.source}\t{r.chunks} chunks\t{r.size_bytes} B\t{','.join(r.tags)}\t{r.ingested_at}")


def _flagged(collection: str | None, as_json: bool) -> None:
    """`docs --flagged`: each chunk to review, with its id (for quarantine on the Documents page) and reasons."""
    with opened(collection) as components:
        records = flagged_chunks(components)
    rows = [
        {
            "id": r.chunk.id,
            "where": r.chunk.location,
            "index": r.chunk.index,
            "status": "quarantined" if r.quarantined else "active",
            "flags": list(r.flags),
            "flagged": r.flag_reason or ", ".join(r.flags) or None,  # chunks scanned before reasons were stored
            "unchecked": r.unchecked or None,
        }
        for r in records
    ]
    if as_json:
        click.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    if not rows:
        click.echo("the injection scan flagged no chunk and read every chunk", err=True)
    for row in rows:
        reasons = [f"{k}: {row[k]}" for k in ("flagged", "unchecked") if row[k]]
        click.echo(f"{row['where']} #{row['index']}\t{row['id']}\t{row['status']}\t" + "\t".join(reasons))


@main.command()
@click.argument("source")
@collection_option
def delete(source: str, collection: str | None) -> None:
    """Delete a document (all its chunks)."""
    with opened(collection) as components:
        n = delete_document(components, source)
    if n == 0:
        raise click.ClickException(f"no document named {source!r}; `ragscope docs` lists them")
    click.echo(f"deleted {source} ({n} chunks)")


@main.command()
@collection_option
def optimize(collection: str | None) -> None:
    """Merge segments and build indexes (slow on large collections; run while the app is stopped)."""
    with opened(collection) as components:
        components.store.optimize()
    click.echo("optimized", err=True)
