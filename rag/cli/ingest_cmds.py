"""`ragscope ingest`, `docs`, `delete`, `optimize`."""

from __future__ import annotations

import json
import posixpath
from pathlib import Path

import click

from rag.catalog.documents import delete_document, flagged_chunks, list_documents, sentence_vectors_stored
from rag.cli.collections_cmd import collection_option
from rag.cli.main import main, opened, progress_bar
from rag.components import Components
from rag.errors import RagError
from rag.ingest.loaders.archive import ArchiveLimits, expand_zip, is_zip_name
from rag.ingest.loaders.formats import format_suffixes
from rag.ingest.pipeline import ingest_files
from rag.ingest.plan import name_clashes
from rag.ingest.reading import read_regular
from rag.ingest.results import FileResult, IngestSummary
from rag.ingest.sentences import sentence_vectors_note
from rag.ingest.walk import collect_paths
from rag.settings.config import CHUNK_STRATEGIES, ChunkConfig
from rag.types import clean_tags

# Files read and handed to ingest_files at a time: enough documents for its cross-document embedding
# batches, few enough that a folder of large PDFs is never all in memory at once.
_BATCH_FILES = 32
_BATCH_BYTES = 64 * 1024 * 1024


@main.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@collection_option
@click.option("--strategy", type=click.Choice(CHUNK_STRATEGIES), default=None, help="Chunking strategy.")
@click.option("--size", type=int, default=None, help="Chunk size in characters.")
@click.option("--overlap", type=int, default=None, help="Overlap in characters (fixed/recursive).")
@click.option("--tags", default=None, help="Comma-separated tags for every document ingested.")
@click.option("--json", "as_json", is_flag=True, help="Print each file's result and every file skipped as JSON.")
def ingest(
    paths: tuple[Path, ...],
    collection: str | None,
    strategy: str | None,
    size: int | None,
    overlap: int | None,
    tags: str | None,
    as_json: bool,
) -> None:
    """Ingest files, folders (recursively, with the .zip archives in them) and .zip archives; exits 1 if
    any file failed.

    Everything left out (hidden and tool folders, unsupported types, archive entries) is listed on
    stderr with the reason, and under "skipped" in --json. Only regular files are read (a FIFO or
    device named is refused), never past the size limit. Inputs that would be stored as one document
    are all refused, with every path named, before anything is written; so is a file whose name cleans
    to a stored document's that came from a different file.
    """
    with opened(collection, creates=True) as components:
        results, skipped = _ingest_paths(components, paths, strategy, size, overlap, tags)
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


def _ingest_paths(
    components: Components,
    paths: tuple[Path, ...],
    strategy: str | None,
    size: int | None,
    overlap: int | None,
    tags: str | None,
) -> tuple[list[FileResult], list[tuple[str, str]]]:
    """Collect, read and ingest `paths` in batches: each file's result, and what was skipped with why."""
    base = components.settings.chunk
    config = ChunkConfig(
        strategy or base.strategy,
        size or base.size,
        base.overlap if overlap is None else overlap,
        base.heading_weight,
        base.definition_sections,
    )
    collected = collect_paths(paths, own_folders=[components.settings.data_dir])
    skipped = list(collected.skipped)
    for path, reason in skipped:
        click.echo(f"skipped {path}: {reason}", err=True)
    files = list(collected.files)
    if not files:
        raise click.ClickException(f"no supported files found ({format_suffixes()}, .zip)")
    tag_list = clean_tags(tags.split(",")) if tags is not None else None
    limits = ArchiveLimits.for_upload_mb(components.settings.max_upload_mb)
    clashes = _clashes(files, components.settings.max_upload_mb, limits)
    results: list[FileResult] = []
    batch: list[tuple[str, bytes]] = []
    with progress_bar(len(files), "ingest") as bar:

        def run_batch() -> None:
            done = ingest_files(components, batch, config, tag_list, lambda _f, message: _advance(bar, message)).files
            results.extend(done)
            for failed in (r for r in done if r.status == "error"):
                click.echo(f"error: {failed.error}", err=True)
            for result in done:
                for note in result.notes:
                    click.echo(f"warning: {result.source}: {note}", err=True)
            batch.clear()

        def refuse(name: str, error: str) -> None:
            results.append(FileResult(name, "error", error=error))
            click.echo(f"error: {error}", err=True)
            bar.update(1)

        for name, path in files:
            if str(path) in clashes:
                refuse(name, clashes[str(path)])
                continue
            try:
                data = _read(path, name, components.settings.max_upload_mb, limits)
            except RagError as e:
                refuse(name, str(e))
                continue
            if is_zip_name(name):
                try:
                    archive = expand_zip(name, data, limits)
                except RagError as e:
                    refuse(name, str(e))
                    continue
                for message in archive.skipped:
                    click.echo(message, err=True)
                    skipped.append((name, message))
                bar.total += len(archive.files) - 1
                for inner, body in _members(name, archive.files):
                    if _member(path, inner) in clashes:
                        refuse(inner, clashes[_member(path, inner)])
                    else:
                        batch.append((inner, body))
            else:
                batch.append((name, data))
            if len(batch) >= _BATCH_FILES or sum(len(d) for _, d in batch) >= _BATCH_BYTES:
                run_batch()
        if batch:
            run_batch()
    return results, skipped


def _members(name: str, files: list[tuple[str, bytes]]) -> list[tuple[str, bytes]]:
    """An archive's files as source names: an archive found in a folder stands for its folder, so they
    keep its prefix."""
    folder = posixpath.dirname(name)
    return [(posixpath.join(folder, inner), body) for inner, body in files]


def _read(path: Path, name: str, max_upload_mb: int, limits: ArchiveLimits) -> bytes:
    """The file's bytes, if it is a regular file within its limit: an archive's is what it may
    expand to, a document's the upload limit (`rag.ingest.reading`: a FIFO or /dev/zero is refused)."""
    if is_zip_name(name):
        return read_regular(path, name, limits.max_total_bytes, "what an archive may expand to")
    return read_regular(path, name, max_upload_mb * 1024 * 1024)


def _member(archive: Path, inner: str) -> str:
    return f"{archive} ({inner})"


def _clashes(files: list[tuple[str, Path]], max_upload_mb: int, limits: ArchiveLimits) -> dict[str, str]:
    """Inputs (file paths, or `_member` for a file inside a zip) that would be stored under one source
    name, each with its error; found across the whole command before anything is written, although
    files are then read and ingested in batches. Zips are expanded here only for their names."""
    entries: list[tuple[str, str]] = []
    for name, path in files:
        if not is_zip_name(name):
            entries.append((name, str(path)))
            continue
        try:
            archive = expand_zip(name, _read(path, name, max_upload_mb, limits), limits)
        except RagError:
            continue  # reported when the archive's turn comes
        entries += [(inner, _member(path, inner)) for inner, _ in _members(name, archive.files)]
    return {entries[i][1]: message for i, message in name_clashes(entries).items()}


def _advance(bar, message: str) -> None:  # noqa: ANN001 - tqdm
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
