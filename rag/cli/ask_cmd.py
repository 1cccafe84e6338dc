"""`ragscope ask "QUESTION" [--json]`: the Ask page's answer on the command line, logged the same way."""

from __future__ import annotations

import json

import click

from rag.answer.result import Answer
from rag.ask.answerer import answer_question, stream_answer
from rag.ask.log import AskLog
from rag.cli.collections_cmd import collection_option
from rag.cli.main import main, opened
from rag.cli.options import retrieval_options, with_options
from rag.errors import RagError
from rag.settings.config import RetrievalConfig


@main.command()
@click.argument("question")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help=(
        "Print {answer, citations, abstained, reason, mode, retrieval_mode, sources} as JSON "
        "(with --mode other than plain: mode_stages, each search's query and final chunks)."
    ),
)
@collection_option
@retrieval_options
def ask(question: str, as_json: bool, collection: str | None, **options: object) -> None:
    """Answer QUESTION from the collection with cited sources; exits 1 on an error (an abstention is an answer).

    --mode runs a retrieval mode first (its searches are listed on stderr); the answer is checked the same way.
    """
    with opened(collection) as components:
        config = with_options(components.settings.retrieval, options)
        if as_json:
            answer = answer_question(components, question, config)
        else:
            answer = _stream_to_stdout(components, question, config)
        AskLog.for_home(components.shared).record(answer, components.settings.collection)
    if as_json:
        click.echo(json.dumps(answer.as_json(), ensure_ascii=False, indent=2))
    else:
        _print_details(answer)


def _stream_to_stdout(components, question: str, config: RetrievalConfig) -> Answer:  # noqa: ANN001
    for item in stream_answer(components, question, config):
        if isinstance(item, Answer):
            return item
        click.echo(item, nl=False)
    raise RagError("the answer stream ended early")  # unreachable unless a generator is broken


def _print_details(answer: Answer) -> None:
    """After the streamed text: the sources cited on stdout, the flags and mode on stderr."""
    click.echo()
    if answer.abstained:
        click.echo(f"abstained: {answer.reason}", err=True)
    for c in answer.citations:
        page = f", page {c.page}" if c.page else ""
        click.echo(f"[{c.label}] {c.source} > {c.heading} (chars {c.start}-{c.end}{page})")
    for ref in answer.invented:
        click.echo(f"error: cites [{ref}], which is not one of the sources sent", err=True)
    for sentence in answer.uncited_sentences:
        click.echo(f"warning: no citation: {sentence}", err=True)
    mr = answer.mode_result
    if mr is not None:
        for label, r in mr.searches():
            click.echo(
                f"{mr.mode} {label}: {r.question} -> {', '.join(c.id[:8] for c in r.final) or 'nothing'}", err=True
            )
        for note in mr.notes:
            click.echo(f"{mr.mode}: {note}", err=True)
    click.echo(
        f"answered by {answer.mode} ({answer.model}) in {answer.latency_ms:.0f} ms after "
        f"{answer.retrieval_mode} retrieval",
        err=True,
    )
