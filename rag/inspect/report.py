"""One question's failure report, to send: Markdown for an issue tracker and JSON for a program.

"Send me the failure" (issue 40, item 4): what the inspector found for a question (the settings it ran with
and where each came from, every stage's ranks, the tracked target and how its scores were computed against
the chunk just above it, where it was lost, what ranked above it, the verified fix) in one file the
inspector, each Eval verdict and `ragscope track --report` write alike.

A report is a list of sections, each made by one builder in `SECTIONS` from the same `ReportInput`; a
builder returns None when its section has nothing to say (no target tracked, nothing ranked above), so a new
section is one more row there. Document text, names and the question are untrusted: in the Markdown they are
escaped with the one escaper (`rag.text.markdown.escape_markdown`) and folded onto one line, so a chunk
holding `<script>`, a heading line or a table row reads as written and cannot add a section, a link or an
image to the report.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rag.catalog.parse import ChunkParse, chunk_parse
from rag.components import Components
from rag.errors import RagError
from rag.ingest.parse_signals import SIGNALS, flag_titles
from rag.inspect.above import outranking
from rag.inspect.arithmetic import ScoreArithmetic, score_arithmetic, versus_above
from rag.inspect.track import TrackReport
from rag.retrieval.loss import LOSS_TITLES
from rag.retrieval.result import STAGES, RetrievalResult
from rag.settings.collection_settings import COLLECTION, DEFAULT, ENVIRONMENT, GIVEN, InForce, in_force
from rag.settings.labels import config_label
from rag.settings.parity import Parity, parity, shown_value
from rag.settings.spec import knobs
from rag.text.markdown import escape_markdown

FORMATS = {".md": "markdown", ".json": "json"}
STAGE_ROWS = 20  # candidates listed in the Markdown stage table (the JSON has every one)
EXCERPT = 400  # characters of the target's text quoted
_ORIGIN = {GIVEN: "given (form, link or option)", COLLECTION: "collection's stored", ENVIRONMENT: "environment",
           DEFAULT: "default"}  # fmt: skip


@dataclass(frozen=True)
class ReportInput:
    """What a report is made from: the question's retrieval, the settings it ran with, and its tracking."""

    question: str
    settings: InForce  # the settings it ran with, each with where it came from (`InForce.as_run`)
    parity: Parity  # against what Ask and Eval run for the collection
    result: RetrievalResult
    track: TrackReport | None = None  # None: no target was tracked (an Eval verdict with no gold chunk)
    came_from: str = ""  # e.g. "the search inspector", "Eval run … question q3: Dropped by the reranker"
    arithmetic: ScoreArithmetic | None = None  # how each row's scores were made (rag.inspect.arithmetic)
    parse: ChunkParse | None = None  # the tracked target's parse signals (rag.catalog.parse)


@dataclass(frozen=True)
class ReportSection:
    """One section: its key (the JSON's), its title (the Markdown's), the Markdown body (escaped) and its data."""

    key: str
    title: str
    markdown: str
    data: Any  # JSON-able


@dataclass(frozen=True)
class FailureReport:
    """The sections of one question's report, in order."""

    question: str
    sections: tuple[ReportSection, ...]

    def section(self, key: str) -> ReportSection | None:
        return next((s for s in self.sections if s.key == key), None)

    def markdown(self) -> str:
        head = f"# ragscope failure report: {_line(self.question)}"
        return "\n\n".join([head, *(f"## {s.title}\n\n{s.markdown}" for s in self.sections)]) + "\n"

    def as_json(self) -> dict[str, Any]:
        return {"report": "ragscope failure report", **{s.key: s.data for s in self.sections}}

    def text(self, fmt: str) -> str:
        """The report as `fmt` ("markdown" or "json")."""
        return self.markdown() if fmt == "markdown" else json.dumps(self.as_json(), ensure_ascii=False, indent=2) + "\n"

    def write(self, path: Path) -> None:
        """Write it as the file's extension says (.md or .json).

        Raises:
            RagError: another extension, or the file cannot be written.
        """
        fmt = report_format(path)
        try:
            path.write_text(self.text(fmt), encoding="utf-8")
        except OSError as e:
            raise RagError(f"the report cannot be written to {path}: {e.strerror or e}") from None


def report_format(path: Path) -> str:
    """ "markdown" or "json" by the file's extension.

    Raises:
        RagError: neither .md nor .json.
    """
    if (fmt := FORMATS.get(path.suffix.lower())) is None:
        raise RagError(f"a report is written as .md (Markdown) or .json; {path.name!r} is neither")
    return fmt


def failure_report(given: ReportInput) -> FailureReport:
    """Every section that has something to say, in `SECTIONS` order."""
    built = (build(given) for build in SECTIONS)
    return FailureReport(given.question, tuple(s for s in built if s is not None))


def report_input(
    components: Components, result: RetrievalResult, track: TrackReport | None = None, came_from: str = ""
) -> ReportInput:
    """The input for `result` (and its tracking) on the components' collection: its settings with their origins,
    measured against what Ask and Eval run there, and its score arithmetic.

    Raises:
        ConfigError: the collection's stored settings file is damaged.
    """
    force = in_force(components.settings, components.shared)
    config = result.config
    return ReportInput(
        result.question, force.as_run(config), parity(config, force.config), result, track, came_from,
        score_arithmetic(components, result), chunk_parse(components, track.target.id) if track else None,
    )  # fmt: skip


def _question(r: ReportInput) -> ReportSection:
    lines = [f"> {_line(r.question)}", "", f"Collection: {_line(r.settings.collection)}"]
    if r.came_from:
        lines.append(f"From: {_line(r.came_from)}")
    data = {"text": r.question, "collection": r.settings.collection, "came_from": r.came_from}
    return ReportSection("question", "Question", "\n".join(lines), data)


def _settings(r: ReportInput) -> ReportSection:
    config, differs = r.settings.config, {d.name: d for d in r.parity.differences}
    rows = [
        [k.name, _line(shown_value(k.name, getattr(config, k.name))), _ORIGIN[r.settings.origins.get(k.name, DEFAULT)],
         _line(shown_value(k.name, differs[k.name].reference)) if k.name in differs else ""]
        for k in knobs(type(config))
    ]  # fmt: skip
    body = "\n".join([
        f"{_line(config_label(config))}: {_line(r.parity.words())}.", "",
        _table(["setting", "value", "from", "Ask and Eval run"], rows),
    ])  # fmt: skip
    data = {**r.settings.as_json(), "parity": r.parity.as_json()}
    return ReportSection("settings", "Settings (and where each came from)", body, data)


def _stages(r: ReportInput) -> ReportSection:
    rows = [c.as_row() | {"shown_rank": c.shown_rank} for c in r.result.candidates]
    cells = [
        [_cell(row["shown_rank"]), f"{_line(row['source'])} › {_line(row['heading'])}", f"`{row['chunk_id'][:8]}`",
         *(f"{_cell(row[f'{s}_rank'])} ({_score(row[f'{s}_score'])})" for s in STAGES)]
        for row in rows[:STAGE_ROWS]
    ]  # fmt: skip
    more = len(rows) - STAGE_ROWS
    body = _table(["final", "source › heading", "chunk", *(f"{s} rank (score)" for s in STAGES)], cells)
    if more > 0:
        body += f"\n\n{more} more candidates in the JSON report."
    timings = {k: round(v, 1) for k, v in r.result.timings_ms.items()}
    data = {"reranker_ran": r.result.reranker, "timings_ms": timings, "candidates": rows}
    return ReportSection("stages", "Stage table", body, data)


def _target(r: ReportInput) -> ReportSection | None:
    if r.track is None:
        return None
    t, chunk = r.track.target, r.track.target.chunk.chunk
    excerpt = _line(chunk.text[:EXCERPT]) + ("…" if len(chunk.text) > EXCERPT else "")
    rows = [
        [s.stage, _cell(s.rank), _cell(s.would_be_rank), _score(s.score), str(s.list_size), _line(s.note)]
        for s in r.track.stages
    ]
    body = "\n".join([
        f"**{_line(chunk.location)}** (`{chunk.id}`), picked by {t.how}" + (f": {_line(t.note)}" if t.note else ""),
        "", f"> {excerpt}", "", _table(["stage", "rank", "would-be rank", "score", "list size", "note"], rows),
    ])  # fmt: skip
    data = {
        "chunk_id": chunk.id, "source": chunk.source, "heading": chunk.heading, "how": t.how, "note": t.note,
        "section": list(t.section), "text": chunk.text,
        "stages": [{"stage": s.stage, "rank": s.rank, "would_be_rank": s.would_be_rank, "score": s.score,
                    "list_size": s.list_size, "note": s.note} for s in r.track.stages],
    }  # fmt: skip
    return ReportSection("target", "Target", body, data)


def _parse(r: ReportInput) -> ReportSection | None:
    """The target's parse signals: whether its text is index lines, page furniture, a broken table, a near-empty
    page or boilerplate (rag.ingest.parse_signals), so a loss caused by the parsing reads as one."""
    if r.parse is None:
        return None
    signals, flags = r.parse.signals, r.parse.flags
    values = signals.payload()
    shown = ", ".join(
        f"{name} {'not measured' if values.get(name) is None else values[name]}"
        for name in (*(n for n in SIGNALS if n != "thin_page"), "page_chars")
    )
    head = f"**Flagged: {flag_titles(flags)}**." if flags else "No parse signal flags it."
    data = {"flags": list(flags), "signals": values, "stored": r.parse.stored}
    return ReportSection("parse", "Parse signals of the target", f"{head} Measured: {shown}.", data)


def _lost(r: ReportInput) -> ReportSection | None:
    if r.track is None:
        return None
    found = r.track.found or r.track.section_found
    title = "Found" if r.track.found else LOSS_TITLES[r.track.dropped_at]
    data = {"found": found, "lost_at": None if found else r.track.dropped_at, "title": title, "reason": r.track.reason}
    return ReportSection("lost", "Where it was lost", f"**{title}**: {_line(r.track.reason)}", data)


def _above(r: ReportInput) -> ReportSection | None:
    """Found below rank 1: the chunks above it (the tracking's own); lost but ranked: every final chunk."""
    if r.track is None:
        return None
    above = r.track.above or outranking(r.track.result, r.track.target.id)
    if not above:
        return None
    lines = [
        f"{a.rank}. {_line(a.candidate.chunk.chunk.location)} (`{a.candidate.id[:8]}`), score {_score(a.score)}: "
        f"{_line(a.why)}"
        for a in above
    ]
    data = [
        {"rank": a.rank, "chunk_id": a.candidate.id, "source": a.candidate.chunk.chunk.source,
         "heading": a.candidate.chunk.chunk.heading, "score": a.score, "why": a.why}
        for a in above
    ]  # fmt: skip
    return ReportSection("above", "What ranked above it", "\n".join(lines), data)


def _fix(r: ReportInput) -> ReportSection | None:
    if r.track is None or r.track.found or r.track.section_found:
        return None
    t = r.track
    lines = [f"- **{_line(s.text)}**: verified, final rank {s.final_rank}" for s in t.suggestions]
    if t.no_fix:
        lines.append(f"No small change surfaces it: {_line(t.no_fix)}.")
    lines += [f"- too large to advise: {_line(s.text)} (final rank {s.final_rank})" for s in t.too_large]
    data = {
        "verified": [{"change": s.text, "final_rank": s.final_rank} for s in t.suggestions],
        "too_large": [{"change": s.text, "final_rank": s.final_rank} for s in t.too_large],
        "no_fix": t.no_fix,
    }
    body = "\n".join(lines) or "No change of the kinds tried surfaces it."
    return ReportSection("fix", "The verified fix", body, data)


def _mode(r: ReportInput) -> ReportSection | None:
    """Under a retrieval mode: each of its searches where the target appeared or was lost."""
    if r.track is None or r.track.mode is None:
        return None
    trail = r.track.mode
    rows = [[_line(x.search), _line(x.query), _cell(x.final_rank), _line(x.note)] for x in trail.sightings]
    body = f"{_line(trail.summary)}\n\n" + _table(["search", "query", "final rank", "what happened"], rows)
    data = {"mode": trail.mode, "summary": trail.summary,
            "searches": [{"search": x.search, "query": x.query, "final_rank": x.final_rank, "note": x.note}
                         for x in trail.sightings]}  # fmt: skip
    return ReportSection("mode", f"The {trail.mode} mode's searches", body, data)


def _arithmetic(r: ReportInput) -> ReportSection | None:
    """The tracked target's scores as they were computed, and why the chunk just above it won (the term that
    decided); the first final chunk's when no target was tracked."""
    if r.arithmetic is None:
        return None
    chunk_id = r.track.target.id if r.track is not None else next((c.id for c in r.result.final), None)
    row = r.arithmetic.row(chunk_id) if chunk_id else None
    if row is None:
        return None
    lines = [f"- fused ({_line(row.fused.fusion)}): {_line(row.fused.text())}"]
    if row.rerank is not None:
        lines.append(f"- rerank ({_line(row.rerank.reranker)}): {_line(row.rerank.text())}")
    versus = versus_above(r.result, r.arithmetic, chunk_id) if r.track is not None else None
    if versus is not None:
        lines.append(f"- against the chunk just above it (`{versus.above_id[:8]}`): {_line(versus.text)}")
    data = {"retrieval": r.arithmetic.as_dict(), "row": row.as_dict(),
            "versus_above": None if versus is None else versus.as_dict()}  # fmt: skip
    title = "How its scores were computed" if r.track is not None else "How the first chunk's scores were computed"
    return ReportSection("arithmetic", title, "\n".join(lines), data)


# The report's sections, in order: one builder each, None when it has nothing to say.
SECTIONS: tuple[Callable[[ReportInput], ReportSection | None], ...] = (
    _question, _settings, _stages, _target, _parse, _arithmetic, _mode, _lost, _above, _fix,
)  # fmt: skip


def _line(text: str) -> str:
    """Untrusted text on one line, escaped: it reads as written and adds no structure (no heading, row or link)."""
    return escape_markdown(" ".join(str(text).split()))


def _cell(value: Any) -> str:  # noqa: ANN401 - a setting's or a rank's value
    return "–" if value is None else _line(str(value))


def _score(score: float | None) -> str:
    return "–" if score is None else f"{score:.4f}"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows])
