"""`ragscope track`: where an expected chunk or section went for a question, over the inspector's own tracking."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import click

from rag.cli.collections_cmd import collection_option
from rag.cli.main import main, opened
from rag.cli.options import retrieval_options, with_options
from rag.cli.search_cmd import parse_filters
from rag.components import Components
from rag.errors import RagError
from rag.inspect.arithmetic import explained_rows, score_arithmetic, versus_above
from rag.inspect.question_terms import question_terms
from rag.inspect.report import failure_report, report_format, report_input
from rag.inspect.target import find_target
from rag.inspect.track import TrackReport, section_fates, track
from rag.retrieval.loss import LOSS_TITLES
from rag.retrieval.result import STAGES
from rag.settings.config import RetrievalConfig

_HELP = (
    "Follow a chunk (--chunk), a section (--source and --heading) or a chunk holding --text through every stage of "
    "QUESTION's retrieval: where it ranked, where it was lost, and the smallest verified setting changes that bring it "
    "back; found below rank 1, what ranked above it and why. "
    "A section is found when any of its chunks is in the final top k, at its best chunk's rank (as Eval counts a "
    "hit). lost_at is one of: " + ", ".join(LOSS_TITLES) + " (null when found)."
)


@main.command(name="track", help=_HELP)
@click.argument("question")
@click.option("--chunk", "chunk_id", default=None, metavar="ID", help="Track this chunk id.")
@click.option("--source", default=None, metavar="NAME", help="Track a section: its document (with --heading).")
@click.option("--heading", default=None, metavar="PATH", help="The section's heading path or its last title.")
@click.option("--text", default=None, metavar="TEXT", help="Track the chunk containing this text.")
@retrieval_options
@click.option("--filter", "filters", multiple=True, metavar="source=NAME|tag=NAME", help="Restrict to a source or tag.")
@collection_option
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help=(
        "Print {target, found, final_rank, lost_at, stages, standing_chunk, fixes, above, question_terms, explained, "
        "versus_above}: explained holds the target's and each chunk above's score arithmetic and BM25 terms; "
        "versus_above, the chunk just above it and the term that decided."
    ),
)
@click.option(
    "--report",
    "report_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    metavar="FILE.md|FILE.json",
    help="Also write the failure report to share (question, settings and where each came from, stage table, "
    "target, where it was lost, what ranked above, the verified fix): Markdown for .md, JSON for .json.",
)
def track_command(
    question: str, chunk_id: str | None, source: str | None, heading: str | None, text: str | None,
    filters: tuple[str, ...], collection: str | None, as_json: bool, report_path: Path | None, **options: object,
) -> None:  # fmt: skip
    if sum(x is not None for x in (chunk_id, source, text)) != 1:
        raise click.UsageError("give one of --chunk ID, --source NAME [--heading PATH], --text TEXT")
    if report_path is not None:
        try:
            report_format(report_path)  # refused before any retrieval runs
        except RagError as e:
            raise click.BadParameter(str(e), param_hint="--report") from None
        if not report_path.parent.is_dir():
            raise click.BadParameter(f"no folder {report_path.parent} to write the report in", param_hint="--report")
    flt = parse_filters(filters)
    with opened(collection) as components:
        config = with_options(components.settings.retrieval, options)
        target = find_target(
            components, chunk_id=chunk_id, source=source, heading=heading, text=text, question=question
        )
        report = track(components, question, target, config, flt)
        out = report_json(report) | explained_json(components, report)
        if report_path is not None:
            given = report_input(components, report.result, report, "ragscope track")
            failure_report(given).write(report_path)
            click.echo(f"report written to {report_path}", err=True)
    if as_json:
        click.echo(json.dumps(out, ensure_ascii=False, indent=2))
        return
    if out["question_terms"]["note"]:
        click.echo(out["question_terms"]["note"], err=True)
    chunk = report.target.chunk.chunk
    click.echo(f"tracking {chunk.source} › {chunk.heading or '(no heading)'} ({chunk.id[:8]}), {report.target.how}")
    if report.target.note:
        click.echo(report.target.note, err=True)
    for stage, s in out["stages"].items():
        click.echo(f"{stage:>7}: rank {s['rank'] if s['rank'] is not None else '–'}  score {_score(s['score'])}")
    click.echo(
        "found: final rank " + str(out["final_rank"])
        if out["found"]
        else f"{LOSS_TITLES[report.dropped_at]}: {report.reason}"
    )
    if out["above"]:
        click.echo("ranked above it:")
    for a in out["above"]:
        click.echo(f"  {a['rank']}. {a['source']} › {a['heading']}  score {_score(a['score'])}: {a['why']}")
    if out["versus_above"]:
        click.echo(f"against the chunk just above it: {out['versus_above']['text']}")
    for fix in out["fixes"]:
        click.echo(f"fix: {fix['setting']} = {fix['value']} -> final rank {fix['final_rank']}")


def report_json(report: TrackReport) -> dict[str, Any]:
    """The documented --json shape of a tracking report."""
    target = report.target
    stages = {st.stage: st for st in report.stages}
    found = report.found or report.section_found
    standing = report.result.get(target.id)
    fates = section_fates(report)
    final_rank = min((f["final_rank"] for f in fates if f["final_rank"] is not None), default=None) if found else None
    return {
        "target": {
            "how": target.how,
            "source": target.source or target.chunk.chunk.source,
            "heading": target.heading if target.how == "heading" else target.chunk.chunk.heading,
            "chunk_ids": list(target.section or (target.id,)),
        },
        "found": found,
        "final_rank": final_rank,
        "lost_at": None if found else report.dropped_at,
        "reason": report.reason,
        "stages": {s: {"rank": stages[s].rank, "score": stages[s].score} for s in STAGES if s in stages},
        "standing_chunk": target.id if standing is not None or not target.section else None,
        "chunks": fates,
        "fixes": [_fix(s.config, report.result.config, s.final_rank) for s in report.suggestions],
        "above": [
            {
                "rank": a.rank,
                "chunk_id": a.candidate.id,
                "source": a.candidate.chunk.chunk.source,
                "heading": a.candidate.chunk.chunk.heading,
                "score": a.score,
                "why": a.why,
            }
            for a in report.above
        ],
    }


def explained_json(components: Components, report: TrackReport) -> dict[str, Any]:
    """What --json adds to `report_json`: the question's BM25 terms, the target's and each chunk above's score
    arithmetic and BM25 contributions (keyed by chunk id), and the comparison with the chunk just above it."""
    result = report.result
    arithmetic = score_arithmetic(components, result)
    ids = [c for c in dict.fromkeys((report.target.id, *(a.candidate.id for a in report.above))) if result.get(c)]
    versus = versus_above(result, arithmetic, report.target.id)
    return {
        "question_terms": question_terms(components, report.result.question).as_dict(),
        "explained": explained_rows(components, result, ids, arithmetic),
        "versus_above": versus.as_dict() if versus else None,
    }


def _fix(changed: RetrievalConfig, config: RetrievalConfig, final_rank: int) -> dict[str, Any]:
    diff = {
        f.name: getattr(changed, f.name)
        for f in dataclasses.fields(config)
        if getattr(changed, f.name) != getattr(config, f.name)
    }
    setting, value = next(iter(diff.items()), ("", None))
    return {"setting": setting, "value": value, "final_rank": final_rank, "changes": diff}


def _score(score: float | None) -> str:
    return "–" if score is None else f"{score:.4f}"
