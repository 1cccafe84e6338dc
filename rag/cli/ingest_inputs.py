"""The files an ingest command reads, for `ragscope ingest` and its `--dry-run`: collected from the paths named
(rag.ingest.walk), refused before anything is written when two would be stored as one document, each read
within its limit, zips expanded, and handed on in batches."""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from rag.cli.main import progress_bar
from rag.components import Components
from rag.errors import RagError
from rag.ingest.loaders.archive import ArchiveLimits, expand_zip, is_zip_name
from rag.ingest.loaders.formats import format_suffixes
from rag.ingest.plan import name_clashes
from rag.ingest.reading import read_regular
from rag.ingest.walk import collect_paths

# Files read and handed on at a time: enough documents for ingest_files' cross-document embedding
# batches, few enough that a folder of large PDFs is never all in memory at once.
_BATCH_FILES = 32
_BATCH_BYTES = 64 * 1024 * 1024

Bar = Any  # a tqdm bar or a LineProgress (rag.cli.main.progress_bar)
T = TypeVar("T")


def read_in_batches(
    components: Components,
    paths: tuple[Path, ...],
    run_batch: Callable[[list[tuple[str, bytes]], Bar], list[T]],
    refuse: Callable[[str, str], T],
    label: str = "ingest",
) -> tuple[list[T], list[tuple[str, str]]]:
    """Collect and read `paths` in batches, handing each to `run_batch`; an input that clashes with another's name
    or cannot be read goes to `refuse` (name, error). Each file's outcome, and what was skipped with why; the
    progress on stderr under `label`."""
    collected = collect_paths(paths, own_folders=[components.settings.data_dir])
    skipped = list(collected.skipped)
    for path, reason in skipped:
        click.echo(f"skipped {path}: {reason}", err=True)
    files = list(collected.files)
    if not files:
        raise click.ClickException(f"no supported files found ({format_suffixes()}, .zip)")
    limits = ArchiveLimits.for_upload_mb(components.settings.max_upload_mb)
    clashes = _clashes(files, components.settings.max_upload_mb, limits)
    results: list[T] = []
    batch: list[tuple[str, bytes]] = []
    with progress_bar(len(files), label) as bar:

        def flush() -> None:
            results.extend(run_batch(batch, bar))
            batch.clear()

        def refused(name: str, error: str) -> None:
            results.append(refuse(name, error))
            bar.update(1)

        for name, path in files:
            if str(path) in clashes:
                refused(name, clashes[str(path)])
                continue
            try:
                data = _read(path, name, components.settings.max_upload_mb, limits)
            except RagError as e:
                refused(name, str(e))
                continue
            if is_zip_name(name):
                try:
                    archive = expand_zip(name, data, limits)
                except RagError as e:
                    refused(name, str(e))
                    continue
                for message in archive.skipped:
                    click.echo(message, err=True)
                    skipped.append((name, message))
                bar.total += len(archive.files) - 1
                for inner, body in _members(name, archive.files):
                    if _member(path, inner) in clashes:
                        refused(inner, clashes[_member(path, inner)])
                    else:
                        batch.append((inner, body))
            else:
                batch.append((name, data))
            if len(batch) >= _BATCH_FILES or sum(len(d) for _, d in batch) >= _BATCH_BYTES:
                flush()
        if batch:
            flush()
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
