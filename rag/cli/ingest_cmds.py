"""`ragscope ingest`, `docs`, `delete`, `optimize`."""

from __future__ import annotations

import json
import posixpath
from pathlib import Path

import click

from rag.cli import load_components, main, progress_bar
from rag.config import CHUNK_STRATEGIES, ChunkConfig
from rag.errors import RagError
from rag.archive import ArchiveLimits, expand_zip, is_zip_name
from rag.documents import clean_tags, delete_document, list_documents, sentence_vectors_stored
from rag.ingest import FileResult, IngestSummary, collect_paths, ingest_files
from rag.sentences import sentence_vectors_note


# Files read and handed to ingest_files at a time: enough documents for its cross-document embedding
# batches, few enough that a folder of large PDFs is never all in memory at once.
_BATCH_FILES = 32
_BATCH_BYTES = 64 * 1024 * 1024


@main.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--collection", default=None, help="Collection name (default: RAGSCOPE_COLLECTION or 'docs').")
@click.option("--strategy", type=click.Choice(CHUNK_STRATEGIES), default=None, help="Chunking strategy.")
@click.option("--size", type=int, default=None, help="Chunk size in characters.")
@click.option("--overlap", type=int, default=None, help="Overlap in characters (fixed/recursive).")
@click.option("--tags", default=None, help="Comma-separated tags for every document ingested.")
@click.option("--json", "as_json", is_flag=True, help="Print each file's result and every file skipped as JSON.")
def ingest(
    paths: tuple[Path, ...], collection: str | None, strategy: str | None, size: int | None, overlap: int | None, tags: str | None, as_json: bool
) -> None:
    """Ingest files, folders (recursively, with the .zip archives in them) and .zip archives; exits 1 if any file failed.

    Everything left out (hidden and tool folders, unsupported types, archive entries) is listed on
    stderr with the reason, and under "skipped" in --json.
    """
    components = load_components(collection)
    base = components.settings.chunk
    try:
        config = ChunkConfig(strategy or base.strategy, size or base.size, base.overlap if overlap is None else overlap)
    except RagError as e:
        components.close()
        raise click.ClickException(str(e)) from None
    collected = collect_paths(paths)
    skipped = list(collected.skipped)
    for path, reason in skipped:
        click.echo(f"skipped {path}: {reason}", err=True)
    files = collected.files
    if not files:
        components.close()
        raise click.ClickException("no supported files found (.md, .txt, .html, .pdf, .docx, .zip)")
    tag_list = clean_tags(tags.split(",")) if tags is not None else None
    limits = ArchiveLimits.for_upload_mb(components.settings.max_upload_mb)
    results: list[FileResult] = []
    batch: list[tuple[str, bytes]] = []
    with progress_bar(len(files), "ingest") as bar:

        def run_batch() -> None:
            done = ingest_files(components, batch, config, tag_list, lambda _f, message: _advance(bar, message)).files
            results.extend(done)
            for failed in (r for r in done if r.status == "error"):
                click.echo(f"error: {failed.error}", err=True)
            batch.clear()

        for name, path in files:
            try:
                data = path.read_bytes()
            except OSError as e:
                results.append(FileResult(name, "error", error=f"{name}: cannot read ({e.strerror})"))
                click.echo(f"error: {results[-1].error}", err=True)
                bar.update(1)
                continue
            if is_zip_name(name):
                try:
                    archive = expand_zip(name, data, limits)
                except RagError as e:
                    results.append(FileResult(name, "error", error=str(e)))
                    click.echo(f"error: {e}", err=True)
                    bar.update(1)
                    continue
                for message in archive.skipped:
                    click.echo(message, err=True)
                    skipped.append((name, message))
                bar.total += len(archive.files) - 1
                # An archive found in a folder stands for its folder: its files keep the folder's prefix.
                folder = posixpath.dirname(name)
                batch += [(posixpath.join(folder, inner), body) for inner, body in archive.files]
            else:
                batch.append((name, data))
            if len(batch) >= _BATCH_FILES or sum(len(d) for _, d in batch) >= _BATCH_BYTES:
                run_batch()
        if batch:
            run_batch()
    components.close()
    summary = IngestSummary(tuple(results))
    if as_json:
        click.echo(json.dumps({"files": [r.__dict__ for r in results], "skipped": [{"path": p, "reason": r} for p, r in skipped]}, indent=2))
    click.echo(
        f"{summary.documents} documents, {summary.chunks_written} chunks written, "
        f"{summary.chunks_unchanged} unchanged, {len(summary.errors)} errors",
        err=True,
    )
    if summary.errors:
        raise SystemExit(1)


def _advance(bar, message: str) -> None:  # noqa: ANN001 - tqdm
    """One step per finished file; embedding progress goes in the bar's postfix."""
    if message.startswith("embedding"):
        bar.set_postfix_str(message)
    else:
        bar.update(1)


@main.command()
@click.option("--collection", default=None)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def docs(collection: str | None, as_json: bool) -> None:
    """List ingested documents with chunk counts (and, on stderr, whether sentence vectors are stored)."""
    components = load_components(collection)
    rows = list_documents(components)
    stored = sentence_vectors_stored(components)
    components.close()
    if as_json:
        click.echo(json.dumps([r.__dict__ | {"tags": list(r.tags)} for r in rows], indent=2))
        return
    click.echo(sentence_vectors_note(stored), err=True)
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
