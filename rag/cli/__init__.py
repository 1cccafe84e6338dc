"""`ragscope` command line: thin parsing and printing around the same functions the pages call."""

from __future__ import annotations

import dataclasses
import os
import sys

import click

from rag.components import Components, build_components
from rag.config import Settings
from rag.errors import RagError


def load_components(collection: str | None = None) -> Components:
    """Settings from the environment (plus --collection), then the engine; errors become exit 1."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        settings = Settings.from_env()
        if collection:
            settings = dataclasses.replace(settings, collection=collection)
        return build_components(settings)
    except RagError as e:
        raise click.ClickException(str(e)) from None


def progress_bar(total: int, label: str, unit: str = "file"):  # noqa: ANN201
    """A tqdm bar on stderr (stdout stays clean for --json)."""
    from tqdm import tqdm

    return tqdm(total=total, desc=label, file=sys.stderr, unit=unit, disable=None)


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


from rag.cli import ingest_cmds  # noqa: E402,F401  (registers commands on `main`)
from rag.cli import ask_cmd  # noqa: E402,F401
from rag.cli import eval_cmd  # noqa: E402,F401
from rag.cli import search_cmd  # noqa: E402,F401
from rag.cli import doctor_cmd  # noqa: E402,F401
