"""Documents into the collection: the one ingest driver the pages, the CLI, BEIR and the tests all call.

Each file is loaded and chunked (rag.ingest.loaders, rag.ingest.chunker), planned against what is stored
(plan), its new chunks embedded in groups across documents (embed), and its stored version replaced
atomically (write).
"""

from __future__ import annotations

from typing import Callable, Iterable, Sequence

from rag.components import Components
from rag.encoders.base import DenseEncoder
from rag.errors import RagError
from rag.ingest import fix_history
from rag.ingest.chunker import chunk_document
from rag.ingest.embed import ENCODE_GROUP, embed_plans
from rag.ingest.eta import Eta
from rag.ingest.fix_history import dropped_entry
from rag.ingest.fixes import dropped_fixes, refusal
from rag.ingest.loaders.document import load_document
from rag.ingest.neighbours import stored_neighbours
from rag.ingest.plan import Plan, name_clashes, plan_document, repeated_ids, repeated_message
from rag.ingest.repeated import SiteChrome
from rag.ingest.results import FileResult, IngestSummary, Prepared
from rag.ingest.write import keep_original, make_durable, save_plan
from rag.settings.config import ChunkConfig
from rag.store.base import PointData
from rag.text.words import plural
from rag.types import Chunk, Document

Progress = Callable[[float, str], None]


def preview(doc: Document, config: ChunkConfig, dense: DenseEncoder | None = None) -> list[Chunk]:
    """The chunks a document would become, without writing anything (`dense`: the collection's encoder,
    which the "semantic" strategy needs)."""
    return chunk_document(doc, config, dense)


def ingest_files(
    components: Components,
    files: Iterable[tuple[str, bytes] | Prepared],
    config: ChunkConfig | None = None,
    tags: Sequence[str] | None = None,
    progress: Progress | None = None,
    chrome: SiteChrome | None = None,
    drop_fixes: str = "",
) -> IngestSummary:
    """Load and ingest many files; a bad file is reported and the others still go in.

    New chunks of several documents are embedded together (see ENCODE_GROUP); each document is
    still replaced on its own, atomically, right after its group is embedded, and the store is
    flushed once per group.

    Two files that would be stored under one source name (the same name twice, or names that
    sanitise alike) are both refused with an error naming them: one would silently replace the other.

    Args:
        components: store and encoders.
        files: (name, bytes) pairs, names becoming sources (sanitised); or `Prepared` documents,
            written as they were chunked (a preview's chunks), without loading them again.
        config: chunking settings for the (name, bytes) pairs (defaults to the configured ones).
        tags: tags for every document; None keeps each document's current tags.
        progress: called with (fraction of files done, message) as files finish and while a group
            of chunks is being embedded.
        chrome: the site chrome found so far when `files` is one batch of a run (the CLI's); it learns
            this batch's, so a later batch too small to show repetition still drops it.
        drop_fixes: who allows dropping the fixes (edits, disables: rag.ingest.fixes) on passages that
            changed, recorded in the collection's history with each one dropped; "" refuses such a file,
            with its fixes named, and writes nothing of it.

    Returns:
        One result per file, in the order given.
    """
    files = list(files)
    config = config or components.settings.chunk
    batch = _Batch(components, len(files), tags, progress, drop_fixes)
    names = [item.doc.source if isinstance(item, Prepared) else item[0] for item in files]
    clashes = name_clashes([(name, f"file {i + 1} ({name!r})") for i, name in enumerate(names)])
    loaded = _load_all(components, files, names, clashes, chrome or SiteChrome())
    for i, (name, item) in enumerate(zip(names, files, strict=True)):
        if i in clashes:
            batch.finish(i, FileResult(name, "error", error=clashes[i]))
            continue
        try:
            doc = item.doc if isinstance(item, Prepared) else loaded[i]
            if isinstance(doc, RagError):
                raise doc
            plan = plan_document(
                components,
                doc,
                item.chunks if isinstance(item, Prepared) else chunk_document(doc, config, components.dense),
                tags,
            )
        except RagError as e:
            batch.finish(i, FileResult(name, "error", error=str(e)))
            continue
        if plan.unchanged:
            keep_original(components, doc)  # the file may differ where its chunks do not (an HTML page's navigation)
            batch.finish(i, plan.result("unchanged"))
            continue
        dropped = dropped_fixes(plan.diff)
        if dropped and not drop_fixes:
            batch.finish(i, FileResult(name, "error", error=refusal(doc.source, dropped)))
            continue
        batch.add(i, plan)
    batch.flush()
    return IngestSummary(tuple(r for r in batch.results if r is not None))


class _Batch:
    """The planned documents waiting to be embedded together: `add` a plan (flushed once the group is
    big enough), `flush` (embed the group, write each document, make the store durable once), `finish` a
    file's result (with progress)."""

    def __init__(
        self,
        components: Components,
        files: int,
        tags: Sequence[str] | None,
        progress: Progress | None,
        drop_fixes: str,
    ) -> None:
        self.components, self.tags, self.progress, self.drop_fixes = components, tags, progress, drop_fixes
        self.results: list[FileResult | None] = [None] * files
        self.pending: list[tuple[int, Plan]] = []
        # One clock per embedding stage of a group (its total tells them apart).
        self.etas: dict[tuple[str, int], Eta] = {}

    def finish(self, i: int, result: FileResult) -> None:
        self.results[i] = result
        if self.progress:
            done = sum(r is not None for r in self.results)
            self.progress(done / len(self.results), f"{done}/{len(self.results)} {result.source}: {result.status}")

    def encoding(self, what: str, done: int, total: int) -> None:
        if self.progress:
            finished = sum(r is not None for r in self.results)
            left = self.etas.setdefault((what, total), Eta()).left(done, total)
            if done >= total:
                self.etas.pop((what, total))
            files = plural(len(self.pending), "file")
            self.progress(
                finished / len(self.results),
                f"embedding {what} {done:,}/{total:,} ({files})" + (f", {left}" if left else ""),
            )

    def add(self, i: int, plan: Plan) -> None:
        self.pending.append((i, plan))
        if sum(len(p.added) for _, p in self.pending) >= ENCODE_GROUP:
            self.flush()

    def flush(self) -> None:
        self._refuse_repeated()
        if not self.pending:
            return
        try:
            groups = embed_plans(self.components, [p for _, p in self.pending], self.encoding)
        except RagError as e:  # an encoder failure fails the whole group; nothing of it was written
            for i, plan in self.pending:
                self.finish(i, FileResult(plan.doc.source, "error", error=str(e)))
            self.pending.clear()
            return
        for i, result in self._write(groups):
            self.finish(i, result)
        self.pending.clear()

    def _refuse_repeated(self) -> None:
        """Ids are unique per document (checked in the plan) and contain the source; this is the check across
        the group, before anything of it is written."""
        pending = self.pending
        if not pending:
            return
        repeated = repeated_ids(c for _, p in pending for c in p.chunks)
        for i, plan in [(i, p) for i, p in pending if repeated & {c.id for c in p.chunks}]:
            message = repeated_message((c for _, p in pending for c in p.chunks), repeated)
            self.finish(i, FileResult(plan.doc.source, "error", error=f"{plan.doc.source}: {message}"))
            pending.remove((i, plan))

    def _write(self, groups: list[list[PointData]]) -> list[tuple[int, FileResult]]:
        """Each document of the group replaced on its own, then the store flushed once for them all."""
        done: list[tuple[int, FileResult]] = []
        for (i, plan), points in zip(self.pending, groups):
            try:
                result = save_plan(self.components, plan, points, self.tags, durable=False)
            except RagError as e:
                result = FileResult(plan.doc.source, "error", error=str(e))
            done.append((i, result))
        written = [r for _, r in done if r.status != "error"]
        dropped = [
            f for (_, plan), (_, r) in zip(self.pending, done) if r.status != "error" for f in dropped_fixes(plan.diff)
        ]
        fix_history.append(self.components.settings, [dropped_entry(f, self.drop_fixes) for f in dropped])
        try:
            if written:
                make_durable(self.components, [r.source for r in written])
        except RagError as e:
            message = f"written but not flushed ({e}); the next open of the store finishes it"
            done = [
                (i, r if r.status == "error" else FileResult(r.source, "error", error=f"{r.source}: {message}"))
                for i, r in done
            ]
        return done


def _load_all(
    components: Components,
    files: list[tuple[str, bytes] | Prepared],
    names: list[str],
    clashes: dict[int, str],
    chrome: SiteChrome,
) -> dict[int, Document | RagError]:
    """Every (name, bytes) file loaded (or its error), before any is chunked: a site's blocks repeated across
    the batch's pages, or across them and their stored neighbours, are its chrome and go (rag.ingest.repeated)."""
    max_bytes = components.settings.max_upload_mb * 1024 * 1024
    loaded: dict[int, Document | RagError] = {}
    for i, (name, item) in enumerate(zip(names, files, strict=True)):
        if i in clashes or isinstance(item, Prepared):
            continue
        try:
            loaded[i] = load_document(name, item[1], max_bytes=max_bytes)
        except RagError as e:
            loaded[i] = e
    good = [i for i, d in loaded.items() if isinstance(d, Document)]
    docs = [loaded[i] for i in good]
    loaded.update(zip(good, chrome.drop(docs, stored_neighbours(components, docs))))
    return loaded
