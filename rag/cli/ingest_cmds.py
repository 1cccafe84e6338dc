"""`ragscope ingest`, `docs`, `delete`, `optimize`."""

from __future__ import annotations

import json
from pathlib import Path

import click

from rag.cli import load_components, main, progress_bar
from rag.config import CHUNK_STRATEGIES, ChunkConfig
from rag.errors import RagError
from rag.ingest import FileResult, IngestSummary, collect_paths, delete_document, ingest_files, list_documents


@main.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--collection", default=None, help="Collection name (default: RAGSCOPE_COLLECTION or 'docs').")
@click.option("--strategy", type=click.Choice(CHUNK_STRATEGIES), default=None, help="Chunking strategy.")
@click.option("--size", type=int, default=None, help="Chunk size in characters.")
@click.option("--overlap", type=int, default=None, help="Overlap in characters (fixed/recursive).")
@click.option("--tags", default=None, help="Comma-separated tags for every document ingested.")
def ingest(paths: tuple[Path, ...], collection: str | None, strategy: str | None, size: int | None, overlap: int | None, tags: str | None) -> None:
    """Ingest files and folders (recursively); exits 1 if any file failed."""
    components = load_components(collection)
    base = components.settings.chunk
    try:
        config = ChunkConfig(strategy or base.strategy, size or base.size, base.overlap if overlap is None else overlap)
    except RagError as e:
        raise click.ClickException(str(e)) from None
    files = collect_paths(paths)
    if not files:
        raise click.ClickException("no supported files found (.md, .txt, .html, .pdf, .docx)")
    tag_list = [t.strip() for t in tags.split(",") if t.strip()] if tags is not None else None
    results: list[FileResult] = []
    with progress_bar(len(files), "ingest") as bar:
        for name, path in files:
            try:
                data = path.read_bytes()
            except OSError as e:
                results.append(FileResult(name, "error", error=f"{name}: cannot read ({e.strerror})"))
            else:
                results += ingest_files(components, [(name, data)], config, tag_list).files
            if results[-1].status == "error":
                click.echo(f"error: {results[-1].error}", err=True)
            bar.update(1)
    components.close()
    summary = IngestSummary(tuple(results))
    click.echo(
        f"{summary.documents} documents, {summary.chunks_written} chunks written, "
        f"{summary.chunks_unchanged} unchanged, {len(summary.errors)} errors",
        err=True,
    )
    if summary.errors:
        raise SystemExit(1)


@main.command()
@click.option("--collection", default=None)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def docs(collection: str | None, as_json: bool) -> None:
    """List ingested documents with chunk counts."""
    components = load_components(collection)
    rows = list_documents(components)
    components.close()
    if as_json:
        click.echo(json.dumps([r.__dict__ | {"tags": list(r.tags)} for r in rows], indent=2))
        return
    for r in rows:
        click.echo(f"{r.source}\t{r.chunks} chunks\t{r.size_bytes} B\t{','.join(r.tags)}\t{r.ingested_at}")


@main.command()
@click.argument("source")
@click.option("--collection", default=None)
def delete(source: str, collection: str | None) -> None:
    """Delete a document (all its chunks)."""
    components = load_components(collection)
    n = delete_document(components, source)
    components.close()
    if n == 0:
        raise click.ClickException(f"no document named {source!r}; `ragscope docs` lists them")
    click.echo(f"deleted {source} ({n} chunks)", err=True)


@main.command()
@click.option("--collection", default=None)
def optimize(collection: str | None) -> None:
    """Merge segments and build indexes (slow on large collections; run while the app is stopped)."""
    components = load_components(collection)
    components.store.optimize()
    components.close()
    click.echo("optimized", err=True)
