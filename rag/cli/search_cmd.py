"""`ragscope search "QUESTION"`: every retrieval stage's rank and score, as the inspector shows them."""

from __future__ import annotations

import json
from typing import Sequence

import click

from rag.cli.collections_cmd import collection_option
from rag.cli.main import main, opened
from rag.cli.options import retrieval_options, with_options
from rag.components import Components
from rag.inspect.arithmetic import explained_rows, score_arithmetic
from rag.inspect.compare import feedback_notes
from rag.inspect.question_terms import QuestionTerms, question_terms, summary
from rag.retrieval.result import STAGES, Candidate, RetrievalResult
from rag.retrieval.retrieve import retrieve
from rag.settings.collection_settings import InForce, in_force
from rag.settings.config import RetrievalConfig
from rag.settings.labels import config_label
from rag.types import ChunkFilter


@main.command()
@click.argument("question")
@retrieval_options
@click.option(
    "--filter",
    "filters",
    multiple=True,
    metavar="source=NAME|tag=NAME|pages=all",
    help="Restrict to a source or tag (repeatable); pages=all also searches contents and index pages.",
)
@collection_option
@click.option("--all", "show_all", is_flag=True, help="Print every candidate of every stage, not only the final top-k.")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help=(
        "Print {reranker, expansion, dense_feedback, question_terms, fusion, results: [...]} with the final "
        "top-k's (with --all: every candidate's) per-stage ranks and scores, each row's score arithmetic and "
        "BM25 term contributions (sparse_terms); question_terms: the terms BM25 searched, with their IDF."
    ),
)
def search(
    question: str, as_json: bool, show_all: bool, collection: str | None, filters: tuple[str, ...], **overrides: object
) -> None:
    """Search QUESTION and print the final top-k (-k) with each one's rank and score in every stage; under a
    section's chunk, the chunks it carries (final rank in brackets: the section's, as the inspector shows it).

    With --mode other than plain, each search the mode ran (hop, retry, tool call) is printed as a stage.
    """
    flt = parse_filters(filters)
    with opened(collection) as components:
        # The collection's settings under these options.
        force = in_force(components.settings, components.shared).given(overrides)
        config = with_options(components.settings.retrieval, overrides)
        click.echo(f"settings: {force.describe()}", err=True)
        if config.mode != "plain":
            _search_mode(components, question, config, flt, as_json)
            return
        result = retrieve(components, question, config, flt)
        terms = question_terms(components, question)
        shown = result.candidates if show_all else result.shown  # with the chunks each section carries, under it
        if as_json:
            click.echo(json.dumps(_as_json(components, result, shown, terms, force), ensure_ascii=False, indent=2))
            return
    click.echo(summary(terms), err=True)  # what BM25 searched, or why it searched nothing
    click.echo(
        f"{'final':>5}  {'chunk':8}  {'dense':>12}  {'sparse':>12}  {'fused':>12}  {'rerank':>12}  source > heading"
    )
    for c in shown:
        click.echo(_line(c))
    if len(shown) < len(result.candidates):
        click.echo(
            f"{len(result.candidates) - len(shown)} more candidates did not reach the final "
            f"top-{config.final_k}: --all prints them",
            err=True,
        )
    click.echo(
        f"reranker: {result.reranker} · {config_label(config)} · "
        + ", ".join(f"{k} {v:.0f} ms" for k, v in result.timings_ms.items()),
        err=True,
    )
    for stage, note in feedback_notes(result).items():
        click.echo(f"{stage} stage: {note}", err=True)


def _search_mode(
    components: Components, question: str, config: RetrievalConfig, flt: ChunkFilter, as_json: bool
) -> None:
    """A retrieval mode: each of its searches (hop, retry, call) with what the mode added, then the final list."""
    from rag.modes.run import run_mode  # here: it loads the answerers' libraries, which plain search never needs

    mr = run_mode(components, question, config=config, flt=flt)
    if as_json:
        click.echo(json.dumps(mr.as_json(), ensure_ascii=False, indent=2, default=str))
        return
    for label, r in mr.searches():
        info = {k: v for k, v in mr.stage_info(label, r).items() if v not in ("", [], None)}
        click.echo(f"== {label}: {r.question}" + "".join(f"\n   {k}: {v}" for k, v in info.items()))
        for c in r.final:
            click.echo(_line(c))
    click.echo(f"== final ({mr.mode}, {mr.backend}): {mr.result.reranker}")
    for c in mr.result.final:
        click.echo(_line(c))
    for note in (*mr.notes, mr.reason):
        if note:
            click.echo(f"{mr.mode}: {note}", err=True)


def _as_json(
    components: Components, result: RetrievalResult, shown: Sequence[Candidate], terms: QuestionTerms, force: InForce
) -> dict:
    """The documented --json shape: the stages' rows, each with its score arithmetic and BM25 terms."""
    arithmetic = score_arithmetic(components, result)
    explained = explained_rows(components, result, [c.id for c in shown], arithmetic)
    return {
        "reranker": result.reranker,
        "expansion": list(result.expansion),
        "dense_feedback": list(result.dense_feedback),
        "question_terms": terms.as_dict(),
        "fusion": arithmetic.as_dict(),
        "results": [c.as_row() | explained[c.id] for c in shown],
        "settings": force.as_json(),
    }


def parse_filters(filters: tuple[str, ...]) -> ChunkFilter:
    """`source=NAME` / `tag=NAME` options into one filter (values of one kind are alternatives); `pages=all`
    also reads the chunks stored out of ranking (contents and index pages: ChunkFilter.include_unranked)."""
    sources, tags, unranked = [], [], False
    for item in filters:
        key, sep, value = item.partition("=")
        key, value = key.strip(), value.strip()
        if key == "pages" and value == "all":
            unranked = True
            continue
        if not sep or not value or key not in ("source", "tag"):
            raise click.BadParameter(f"{item!r}: use source=NAME or tag=NAME (or pages=all)", param_hint="--filter")
        (sources if key == "source" else tags).append(value)
    return ChunkFilter(sources=tuple(sources), tags=tuple(tags), include_unranked=unranked)


def _line(c: Candidate) -> str:
    cells = []
    for stage in STAGES:
        s = c.stage(stage)
        cells.append(f"{s.rank:>3} {s.score:>8.4f}" if s.rank is not None else f"{'–':>3} {'':>8}")
    # A chunk carried with its section (rag/retrieval/collapse.py) shows that section's rank in brackets.
    final = str(c.final_rank) if c.final_rank is not None else f"({c.carried_at})" if c.carried_at else "–"
    return f"{final:>5}  {c.id[:8]}  " + "  ".join(cells) + f"  {c.chunk.chunk.location}"
