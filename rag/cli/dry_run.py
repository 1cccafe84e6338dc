"""`ragscope ingest --dry-run`'s report: rag.ingest.preview's decision for each file, printed with the messages
the Documents page shows for an upload, nothing written."""

from __future__ import annotations

import json
from collections.abc import Callable

import click

from rag.cli.ingest_inputs import Bar
from rag.components import Components
from rag.ingest.fixes import refusal
from rag.ingest.preview import FilePreview, preview_batch
from rag.ingest.repeated import SiteChrome
from rag.settings.config import ChunkConfig
from rag.text.words import plural

_OUTCOMES = ("new", "changed", "unchanged", "refused")


def previewer(
    components: Components, config: ChunkConfig
) -> Callable[[list[tuple[str, bytes]], Bar], list[FilePreview]]:
    """Previews a batch of files (rag.ingest.preview) read as ingest reads them (rag.cli.ingest_inputs), in the
    same batches, sharing the run's site chrome as ingest does: a batch's repeated blocks, and those an earlier
    batch showed, are dropped.

    A batch holds no two files of one name (the inputs that would be stored as one document are refused
    before, with every path named), so the batch's same-name warnings, the page's, are always empty here."""
    chrome = SiteChrome()  # one for the run, as ingest shares one across its batches

    def run(batch: list[tuple[str, bytes]], bar: Bar) -> list[FilePreview]:
        previewed = preview_batch(components, batch, config, chrome=chrome)
        bar.update(len(batch))
        return list(previewed.files)

    return run


def unread(name: str, error: str) -> FilePreview:
    """An input refused before it was read (a name clash, a file that cannot be read): its preview is the error."""
    return FilePreview(name, b"", error=error)


def show_dry_run(
    previews: list[FilePreview], skipped: list[tuple[str, str]], as_json: bool, drop_fixes: bool = False
) -> None:
    """One entry per file (its state and chunk counts, why it would be refused, the fixes it would drop, the
    loader's warnings), then the sum; exits 1 if any file would be refused, as the ingest would fail on it (a
    file whose changed passages carry fixes is, without `drop_fixes`)."""
    refusals = {id(p): _refusal(p, drop_fixes) for p in previews}
    outcomes = ["refused" if refusals[id(p)] else p.state for p in previews]
    counts = ", ".join(f"{outcomes.count(o)} {o}" for o in _OUTCOMES)
    embed = sum(len(p.diff.added) for p in previews if not refusals[id(p)])
    line = f"dry run, nothing written: {counts}; {plural(embed, 'chunk')} to embed"
    if as_json:  # stdout holds the JSON alone, as ingest's
        entries = [_entry(p, refusals[id(p)]) for p in previews]
        click.echo(json.dumps({"files": entries, "skipped": [{"path": p, "reason": r} for p, r in skipped]}, indent=2))
        click.echo(line, err=True)
    else:
        for preview in previews:
            click.echo("\n".join(_lines(preview, refusals[id(preview)])))
        click.echo(line)
    if "refused" in outcomes:
        raise SystemExit(1)


def _refusal(preview: FilePreview, drop_fixes: bool) -> str:
    """Why ingest would write nothing of the file: the preview's reason, or the fixes it would drop unasked."""
    if preview.refused or drop_fixes or not preview.dropped or preview.doc is None:
        return preview.refused
    return refusal(preview.doc.source, preview.dropped)


def _warnings(preview: FilePreview) -> list[str]:
    """What loading left out, as the page words it ("{source}: {note}")."""
    return [f"{preview.doc.source}: {note}" for note in preview.doc.notes] if preview.doc else []


def _lines(preview: FilePreview, refused: str) -> list[str]:
    if preview.doc is None:
        return [f"{preview.name}: refused: {refused}"]
    diff = preview.diff
    lines = [
        f"{preview.doc.source}: {preview.state}, {plural(len(preview.chunks), 'chunk')}: {len(diff.added):,} added, "
        f"{len(diff.unchanged):,} unchanged, {len(diff.removed):,} removed"
    ]
    if refused:
        lines.append(f"  refused: {refused}")
    lines += [f"  drops fix: {f.where} ({f.chunk_id}): {f.words}" for f in preview.dropped]
    return lines + [f"  warning: {w}" for w in _warnings(preview)]


def _entry(preview: FilePreview, refused: str) -> dict[str, object]:
    return {
        "source": preview.doc.source if preview.doc else preview.name,
        "state": preview.state,  # the page's column: "new", "changed", "unchanged", "over the chunk limit", "error"
        "chunks": len(preview.chunks),
        "added": len(preview.diff.added),
        "unchanged": len(preview.diff.unchanged),
        "removed": len(preview.diff.removed),
        "refused": refused or None,
        "warnings": _warnings(preview),
        # Only where the file's changed passages carry fixes (`ragscope chunk`), which ingest would drop.
        **({"drops_fixes": [f.as_json() for f in preview.dropped]} if preview.dropped else {}),
    }
