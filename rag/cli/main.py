"""The `ragscope` group and what every command shares: settings, the engine for one command, progress on stderr."""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import sys
import time
from collections.abc import Iterator, Mapping
from typing import Any

import click

from rag.catalog.collections import for_collection, require_collection
from rag.cli.options import with_options
from rag.components import Components, build_components
from rag.errors import RagError
from rag.settings.config import Settings
from rag.text.words import plural


def settings_from_env(collection: str | None = None) -> Settings:
    """Settings from the environment, on --collection when given, which must exist (a typo is refused with
    did-you-mean, as `opened` refuses it: `settings --reset --collection docz` once reset nothing and exit 0);
    errors become exit 1."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        base = Settings.from_env()
        if collection is None:
            return base
        settings = for_collection(base, collection)
        require_collection(settings, base.collection)
        return settings
    except RagError as e:
        raise click.ClickException(str(e)) from None


@contextlib.contextmanager
def opened(
    collection: str | None = None, creates: bool = False, cluster: Mapping[str, Any] | None = None
) -> Iterator[Components]:
    """The engine on `--collection` (see `settings_from_env`) for one command, closed when it ends.

    The collection must exist (exit 1 naming the close names and every collection, see
    `require_collection`) unless the command `creates` it (ingest), whose `cluster` options (ClusterConfig
    fields, None: not given) lay out a new collection over the configured ones.

    A RagError inside becomes one clean line and exit 1 (`_Group` does the same for errors raised
    outside), so no command repeats the translate-and-close block. Its retrieval settings are the
    collection's in force (rag.settings.collection_settings): stored ones over the configured.

    Example:
        with opened(collection) as components:
            result = retrieve(components, question)
    """
    base = settings_from_env()
    try:
        settings = base if collection is None else for_collection(base, collection)
        if cluster:
            settings = dataclasses.replace(settings, cluster=with_options(settings.cluster, cluster))
        if not creates:
            require_collection(settings, base.collection)
    except RagError as e:
        raise click.ClickException(str(e)) from None
    components = _build(settings)
    try:
        components = components.with_stored_settings()
        yield components
    except RagError as e:
        raise click.ClickException(str(e)) from None
    finally:
        components.close()


def _build(settings: Settings) -> Components:
    try:
        return build_components(settings)
    except RagError as e:
        raise click.ClickException(str(e)) from None


def progress_bar(total: int, label: str, unit: str = "file"):  # noqa: ANN201
    """Progress on stderr (stdout stays clean for --json): a tqdm bar on a terminal, else a `LineProgress`."""
    if not sys.stderr.isatty():
        return LineProgress(total, label, unit)
    from tqdm import tqdm

    return tqdm(total=total, desc=label, file=sys.stderr, unit=unit)


class LineProgress:
    """The part of tqdm's interface the commands use, printed as one line every few seconds.

    For stderr that is not a terminal (a log file, CI, `2>&1 | tee`): tqdm would print nothing there
    (`disable=None`) or redraw with carriage returns, and a 28-minute BEIR run looked hung.
    """

    def __init__(self, total: int, label: str, unit: str, every_s: float = 5.0) -> None:
        self.total, self.label, self.unit, self.every_s = total, label, unit, every_s
        self.n = 0
        self.postfix = ""
        self._start = self._last = time.monotonic()

    def update(self, n: int = 1) -> None:
        self.n += n
        self._maybe_print()

    def set_postfix_str(self, text: str) -> None:
        self.postfix = text
        self._maybe_print()

    def _maybe_print(self, force: bool = False) -> None:
        now = time.monotonic()
        if force or now - self._last >= self.every_s:
            self._last = now
            extra = f" ({self.postfix})" if self.postfix else ""
            click.echo(
                f"{self.label}: {self.n:,}/{plural(self.total, self.unit)} after {now - self._start:.0f} s{extra}",
                err=True,
            )

    def __enter__(self) -> "LineProgress":
        return self

    def __exit__(self, *exc: object) -> None:
        self._maybe_print(force=True)


class _Group(click.Group):
    """Every command's RagError becomes one clean line ("Error: ...") and exit 1, here once for all
    commands: a RagError's message is written for the person, a traceback is not."""

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except RagError as e:
            raise click.ClickException(str(e)) from None


@click.group(cls=_Group)
@click.version_option(package_name="ragscope")
def main() -> None:
    """ragscope: ingest documents, inspect retrieval, ask and evaluate over a Qdrant collection."""
    _show_model_loads()


def _show_model_loads() -> None:
    """rag.encoders.base logs one line per model load: print it on stderr (stdout stays clean for --json)."""
    log = logging.getLogger("rag.encoders")
    if not log.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(message)s…"))
        log.addHandler(handler)
    log.setLevel(logging.INFO)
