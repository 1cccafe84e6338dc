"""`ragscope gen-set OUT.jsonl`: Claude writes a question set from the collection; a person reviews it; JSONL out.

Every question kept has checked gold (rag/eval/generate.py). With `--review` (the default) each one is
shown and kept, edited or dropped at a prompt before anything is written; `--no-review` writes every
checked question, for review in an editor. An API error mid-run still writes what was written before it,
then exits 1 saying so; an existing OUT is never replaced without `--force`.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import click

from rag.answer.anthropic_client import AnthropicClient
from rag.cli.collections_cmd import collection_option
from rag.cli.main import main, opened, progress_bar
from rag.eval.generate import (
    MAX_TOKENS,
    Generated,
    GeneratedQuestion,
    collection_sections,
    generate_questions,
    hand_template,
    pick_sections,
)
from rag.eval.gold import CollectionIndex
from rag.eval.qsets import parse_question_set, set_name
from rag.text.words import plural

NO_KEY = (
    "gen-set needs ANTHROPIC_API_KEY: Claude writes the questions from your sections, each with its section "
    "and answering sentence as gold, checked against the collection. Without a key, write a set by hand: "
    "`ragscope gen-set --template OUT.jsonl` writes a template naming this collection's sections."
)


@main.command("gen-set")
@click.argument("out", type=click.Path(dir_okay=False, path_type=Path))
@collection_option
@click.option("--source", "sources", multiple=True, metavar="NAME", help="Write from this document (repeatable).")
@click.option("--sections", "sample", type=click.IntRange(min=1), default=None, help="A sample of N sections.")
@click.option("--per-section", type=click.IntRange(1, 10), default=2, show_default=True, help="Questions each.")
@click.option("--near-misses", type=click.IntRange(0, 5), default=1, show_default=True,
              help="Unanswerable near-miss questions per section.")  # fmt: skip
@click.option("--per-call", type=click.IntRange(1, 20), default=3, show_default=True, help="Sections per call.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the --sections sample.")
@click.option("--review/--no-review", default=True, show_default=True,
              help="Keep, edit or drop each question at a prompt before writing.")  # fmt: skip
@click.option("--template", is_flag=True, help="Write a template to fill in by hand (no key needed) and exit.")
@click.option("--force", is_flag=True, help="Replace OUT if it exists.")
def gen_set(
    out: Path, collection: str | None, sources: tuple[str, ...], sample: int | None, per_section: int,
    near_misses: int, per_call: int, seed: int, review: bool, template: bool, force: bool,
) -> None:  # fmt: skip
    """Write a question set for the collection into OUT.jsonl: Claude drafts, the gold is checked, you review.

    Each line holds its section as "gold" and the sentence that answers as "answer".
    """
    if out.exists() and not force:
        raise click.ClickException(f"{out} exists; pass --force to replace it")
    with opened(collection) as components:
        index = CollectionIndex.from_components(components)
        sections = pick_sections(collection_sections(index), sources, sample, seed)
        if template:
            _write(out, hand_template(sections))
            click.echo(f"wrote a template to {out}: replace each question, keep the gold shapes", err=True)
            return
        api = AnthropicClient.from_settings(components.settings)
        if api is None:
            raise click.ClickException(NO_KEY)
        with progress_bar(len(sections), "gen-set", unit="section") as bar:
            generated = generate_questions(
                api, index, sections, per_section=per_section, near_misses=near_misses, per_call=per_call,
                max_tokens=max(components.settings.answer.max_tokens, MAX_TOKENS),
                progress=lambda done, _n, _m: bar.update(done - bar.n),
            )  # fmt: skip
    _report(generated)
    kept = _review(generated.kept) if review else list(generated.kept)
    text = "".join(json.dumps(q.to_question().as_json(), ensure_ascii=False) + "\n" for q in kept)
    if text:
        parse_question_set(
            text, set_name(out.name)
        )  # the file `ragscope eval` will read: refuse to write one it would refuse
        _write(out, text)
    click.echo(f"wrote {plural(len(kept), 'question')} to {out}" if text else "no question kept; nothing written")
    if generated.stopped:
        raise click.ClickException(generated.stopped + (f"; the questions before it are in {out}" if text else ""))


def _write(out: Path, text: str) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")


def _report(generated: Generated) -> None:
    click.echo(
        f"{plural(len(generated.kept), 'question')} kept from {plural(generated.sections, 'section')} "
        f"({plural(len(generated.dropped), 'dropped')})",
        err=True,
    )
    for d in generated.dropped:
        click.echo(f"  dropped ({d.where}): {d.question or '(whole reply)'}: {d.reason}", err=True)


def _review(kept: tuple[GeneratedQuestion, ...]) -> list[GeneratedQuestion]:
    """Show each question with its gold; [k]eep, [e]dit the wording, [d]rop, or [a]ccept all the rest."""
    out: list[GeneratedQuestion] = []
    for i, q in enumerate(kept):
        gold = f"{q.section.source} › {q.section.heading}\n    answer: {q.answer}" if q.section else "(none: near miss)"
        click.echo(
            f"\n[{i + 1}/{len(kept)}] {q.question}\n    gold: {gold}" + (f"\n    note: {q.note}" if q.note else "")
        )
        choice = click.prompt("keep, edit, drop, all", type=click.Choice(["k", "e", "d", "a"]), default="k")
        if choice == "a":
            return out + list(kept[i:])
        if choice == "e":
            text = click.prompt("question", default=q.question).strip()
            q = dataclasses.replace(q, question=text or q.question)
        if choice != "d":
            out.append(q)
    return out
