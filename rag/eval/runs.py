"""Stored eval runs: what ran (config, models, collection fingerprint), what it scored, and comparisons.

Runs live in SQLite at `<data_dir>/eval.sqlite`, or on a server in its metadata collection, where every
replica sees them (rag/eval/run_records.py). A run is written in one transaction once every
question is done; a cancelled or failed run writes nothing, so history only ever holds complete runs.
One run per question set can be marked as the baseline that later runs are compared with. Each run
has an editable name (by default its settings in words); histories from before names existed are
given one when first opened.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from collections.abc import Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rag.errors import RagError
from rag.eval import run_records
from rag.eval.answers import AnswerRecord
from rag.eval.bootstrap import Interval, paired_interval
from rag.eval.history import opened
from rag.eval.verdicts import INVALID, Verdict
from rag.ingest.parse_signals import flag_titles
from rag.settings.config import RetrievalConfig
from rag.settings.labels import config_label
from rag.settings.shared_home import SharedHome, home_of

FINAL_STAGE = "rerank"  # the pipeline's own order: what the answer is built from
HEADLINE = ("ndcg@10", "mrr@10", "recall@1", "recall@5", "recall@10", "hit@5")

_COLUMNS = (
    "id, created_at, set_name, collection, config, models, fingerprint, per_stage, answers, baseline, name, version"
)
# The columns a run is saved with (the rest, `baseline`, is marked apart).
_SAVED = tuple(c for c in _COLUMNS.split(", ") if c != "baseline")
_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id TEXT PRIMARY KEY,
    created_at TEXT NOT NULL,
    set_name TEXT NOT NULL,
    collection TEXT NOT NULL,
    config TEXT NOT NULL,
    models TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    per_stage TEXT NOT NULL,
    answers TEXT NOT NULL,
    baseline INTEGER NOT NULL DEFAULT 0,
    name TEXT NOT NULL DEFAULT '',
    version TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS questions (
    run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (run_id, position)
);
"""


@dataclass(frozen=True)
class QuestionResult:
    """One question of a run: gold, per-stage scores and gold ranks, the verdict, the answer."""

    id: str
    question: str
    answerable: bool
    gold: Any  # the question set's JSON form
    gold_labels: tuple[str, ...]
    gold_chunks: tuple[str, ...]
    scores: Mapping[str, Mapping[str, float]]  # stage -> metric -> value; empty when unanswerable
    gold_ranks: Mapping[str, int | None]  # stage (and "final") -> best rank of any gold chunk
    verdict: Verdict | None
    inspector: Mapping[
        str, str
    ]  # query parameters for the inspector; "track" only when there is a gold chunk to follow
    answer: AnswerRecord | None = None
    invalid: str | None = (
        None  # why the gold cannot be scored (names what the collection lacks); left out of the metrics
    )
    # A failed question's gold chunks (or, its answer text in no chunk, the chunk the verdict follows) that a
    # parse signal flags, with the signals (rag.ingest.parse_signals); None: a run stored before they existed.
    parse_flags: Mapping[str, tuple[str, ...]] | None = None

    @property
    def failed(self) -> bool:
        return self.verdict is not None

    @property
    def parse_note(self) -> str:
        """Its gold's parse problems in words ("gold chunk 1a2b3c4d: page furniture ..."); "" when none."""
        return "; ".join(f"gold chunk {c[:8]}: {flag_titles(f)}" for c, f in (self.parse_flags or {}).items())

    @property
    def scored(self) -> bool:
        """Counted in the retrieval metrics: answerable, with gold the collection has."""
        return self.answerable and self.invalid is None

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id, "question": self.question, "answerable": self.answerable, "gold": self.gold,
            "gold_labels": list(self.gold_labels), "gold_chunks": list(self.gold_chunks),
            "scores": {s: dict(m) for s, m in self.scores.items()}, "gold_ranks": dict(self.gold_ranks),
            "verdict": self.verdict.as_json() if self.verdict else None, "inspector": dict(self.inspector),
            "answer": self.answer.as_json() if self.answer else None, "invalid": self.invalid,
            "parse_flags": None if self.parse_flags is None else {c: list(f) for c, f in self.parse_flags.items()},
        }  # fmt: skip

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> QuestionResult:
        return cls(
            d["id"], d["question"], d["answerable"], d["gold"], tuple(d["gold_labels"]), tuple(d["gold_chunks"]),
            d["scores"], d["gold_ranks"], Verdict.from_json(d["verdict"]), d["inspector"],
            AnswerRecord.from_json(d["answer"]), d.get("invalid"),
            None if d.get("parse_flags") is None else {c: tuple(f) for c, f in d["parse_flags"].items()},
        )  # fmt: skip


@dataclass(frozen=True)
class EvalRun:
    """A complete run over a question set.

    Example:
        run = run_eval(components, load_question_set(data_dir, "sample"))
        run.metrics["ndcg@10"], run.per_stage["dense"]["recall@10"]
    """

    id: str
    created_at: str
    set_name: str
    collection: str
    config: RetrievalConfig
    models: Mapping[str, str]
    fingerprint: str
    per_stage: Mapping[str, Mapping[str, float]]
    answers: Mapping[str, float | None]
    questions: tuple[QuestionResult, ...] = field(compare=False)
    baseline: bool = False
    name: str = ""
    # The collection's version the run was made on (rag.catalog.versions.version_label), so every citation and
    # rank in it can be opened where it was made: "v3", "unversioned changes since v3", "" when never versioned.
    version: str = ""

    @property
    def label(self) -> str:
        """What lists and charts call the run: its name, else its id."""
        return self.name or self.id

    @property
    def metrics(self) -> dict[str, float]:
        """The headline numbers: the final stage's, plus the share of scored questions whose gold reached the
        final k."""
        final = self.per_stage.get(FINAL_STAGE, {})
        out = {name: final.get(name, 0.0) for name in HEADLINE}
        scored = [q for q in self.questions if q.scored]
        out["hit@final"] = sum(1 for q in scored if q.gold_ranks.get("final")) / len(scored) if scored else 0.0
        return out

    @property
    def invalid(self) -> list[QuestionResult]:
        """Questions whose gold names what the collection lacks: left out of every metric."""
        return [q for q in self.questions if q.invalid]

    @property
    def parse_flagged(self) -> list[QuestionResult]:
        """The failed questions whose gold sits in chunks a parse signal flags (index lines, page furniture...)."""
        return [q for q in self.questions if q.failed and q.parse_flags]

    def verdict_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for q in self.questions:
            if q.verdict:
                counts[q.verdict.code] = counts.get(q.verdict.code, 0) + 1
        return counts

    def summary_json(self) -> dict[str, Any]:
        return {
            "run_id": self.id, "name": self.name, "created_at": self.created_at, "set": self.set_name,
            "collection": self.collection, "config": dataclasses.asdict(self.config), "models": dict(self.models),
            "fingerprint": self.fingerprint, "baseline": self.baseline, "version": self.version,
        }  # fmt: skip

    def as_json(self) -> dict[str, Any]:
        """The CLI's --json shape."""
        return {
            **self.summary_json(),
            "metrics": self.metrics,
            "per_stage": {s: dict(m) for s, m in self.per_stage.items()},
            "answers": dict(self.answers),
            "verdicts": self.verdict_counts(),
            "parse_flagged": [
                {"id": q.id, "chunks": {c: list(f) for c, f in (q.parse_flags or {}).items()}}
                for q in self.parse_flagged
            ],  # fmt: skip
            "left_out": len(self.invalid),
            "invalid": [{"id": q.id, "question": q.question, "reason": q.invalid} for q in self.invalid],
            "questions": [q.as_json() for q in self.questions],
        }


def db_path(data_dir: Path) -> Path:
    return data_dir / "eval.sqlite"


def _connect(data_dir: Path) -> AbstractContextManager[sqlite3.Connection]:
    return opened(db_path(data_dir), _SCHEMA, "eval history", _migrate)


def _migrate(con: sqlite3.Connection) -> None:
    """Bring a history from an older version up to date: runs get a name (their settings in words) and the
    collection version they were made on (none known: '')."""
    columns = {row[1] for row in con.execute("PRAGMA table_info(runs)")}
    if "version" not in columns:
        with con:
            con.execute("ALTER TABLE runs ADD COLUMN version TEXT NOT NULL DEFAULT ''")
    if "name" in columns:
        return
    with con:
        con.execute("ALTER TABLE runs ADD COLUMN name TEXT NOT NULL DEFAULT ''")
        rows = con.execute("SELECT id, config FROM runs").fetchall()
        con.executemany(
            "UPDATE runs SET name = ? WHERE id = ?",
            [(config_label(RetrievalConfig.from_record(json.loads(c))), rid) for rid, c in rows],
        )


def save_run(where: Path | SharedHome, run: EvalRun) -> None:
    """Write a complete run, all or nothing (one transaction; on a server, listed once whole)."""
    home = home_of(where)
    values = (
        run.id, run.created_at, run.set_name, run.collection, json.dumps(dataclasses.asdict(run.config)),
        json.dumps(dict(run.models)), run.fingerprint, json.dumps(run.per_stage), json.dumps(run.answers),
        run.name, run.version,
    )  # fmt: skip
    questions = [json.dumps(q.as_json(), ensure_ascii=False) for q in run.questions]
    if home.records is not None:
        run_records.save(home.records, dict(zip(_SAVED, values, strict=True)), questions)
        return
    with _connect(home.data_dir) as con:
        con.execute(f"INSERT INTO runs ({', '.join(_SAVED)}) VALUES ({','.join('?' * len(_SAVED))})", values)
        con.executemany(
            "INSERT INTO questions (run_id, position, data) VALUES (?,?,?)",
            [(run.id, i, q) for i, q in enumerate(questions)],
        )


def list_runs(where: Path | SharedHome, set_name: str | None = None) -> list[EvalRun]:
    """Runs newest first (without their questions: load_run reads those)."""
    home = home_of(where)
    if home.records is not None:
        return [_run(_row(r), ()) for r in run_records.rows(home.records, set_name)]
    if not db_path(home.data_dir).is_file():
        return []
    query = (
        f"SELECT {_COLUMNS} FROM runs"
        + (" WHERE set_name = ?" if set_name else "")
        + " ORDER BY created_at DESC, rowid DESC"
    )
    with _connect(home.data_dir) as con:
        return [_run(row, ()) for row in con.execute(query, (set_name,) if set_name else ())]


def load_run(where: Path | SharedHome, run_id: str) -> EvalRun:
    home = home_of(where)
    missing = RagError(f"no eval run {run_id!r}; `ragscope eval --list-runs` or the Eval tab lists them")
    if home.records is not None:
        found = run_records.row(home.records, run_id)
        if found is None:
            raise missing
        texts = run_records.questions(home.records, run_id)
        return _run(_row(found), tuple(QuestionResult.from_json(json.loads(d)) for d in texts))
    with _connect(home.data_dir) as con:
        row = con.execute(f"SELECT {_COLUMNS} FROM runs WHERE id = ?", (run_id,)).fetchone()
        if row is None:
            raise missing
        questions = tuple(
            QuestionResult.from_json(json.loads(d))
            for (d,) in con.execute("SELECT data FROM questions WHERE run_id = ? ORDER BY position", (run_id,))
        )
    return _run(row, questions)


def delete_run(where: Path | SharedHome, run_id: str) -> None:
    home = home_of(where)
    if home.records is not None:
        run_records.delete(home.records, run_id)
        return
    with _connect(home.data_dir) as con:
        con.execute("DELETE FROM runs WHERE id = ?", (run_id,))


def rename_run(where: Path | SharedHome, run_id: str, name: str) -> None:
    """Give a run a new name; an empty name is refused (lists would show nothing)."""
    name = " ".join(name.split())
    if not name:
        raise RagError("a run's name cannot be empty")
    home = home_of(where)
    if home.records is not None:
        renamed = run_records.rename(home.records, run_id, name)
    else:
        with _connect(home.data_dir) as con:
            renamed = con.execute("UPDATE runs SET name = ? WHERE id = ?", (name, run_id)).rowcount > 0
    if not renamed:
        raise RagError(f"no eval run {run_id!r} to rename")


def set_baseline(where: Path | SharedHome, run_id: str) -> None:
    """Mark `run_id` as its question set's baseline (unmarking the previous one)."""
    home = home_of(where)
    missing = RagError(f"no eval run {run_id!r} to mark as baseline")
    if home.records is not None:
        if not run_records.set_baseline(home.records, run_id):
            raise missing
        return
    with _connect(home.data_dir) as con:
        row = con.execute("SELECT set_name FROM runs WHERE id = ?", (run_id,)).fetchone()
        if row is None:
            raise missing
        con.execute("UPDATE runs SET baseline = 0 WHERE set_name = ?", (row[0],))
        con.execute("UPDATE runs SET baseline = 1 WHERE id = ?", (run_id,))


def baseline_of(where: Path | SharedHome, set_name: str) -> str | None:
    """The id of the set's baseline run, if one is marked."""
    return next((r.id for r in list_runs(where, set_name) if r.baseline), None)


def _row(found: dict[str, Any]) -> tuple:
    """A server's row (rag/eval/run_records.py) in the file's column order."""
    return tuple(found[c] for c in _COLUMNS.split(", "))


def _run(row: tuple, questions: tuple[QuestionResult, ...]) -> EvalRun:
    rid, created, set_name, collection, config, models, fingerprint, per_stage, answers, baseline, name, version = row
    return EvalRun(
        rid, created, set_name, collection, RetrievalConfig.from_record(json.loads(config)), json.loads(models),
        fingerprint, json.loads(per_stage), json.loads(answers), questions, bool(baseline), name, version,
    )  # fmt: skip


@dataclass(frozen=True)
class QuestionChange:
    """One question in two runs: its final-stage nDCG@10, best gold rank and verdict in each."""

    id: str
    question: str
    score_a: float | None
    score_b: float | None
    rank_a: int | None
    rank_b: int | None
    verdict_a: str | None
    verdict_b: str | None

    @property
    def outcome(self) -> str:
        """'win', 'loss' or 'same' for run B against run A."""
        if self.score_a is None or self.score_b is None or abs(self.score_b - self.score_a) < 1e-9:
            return "same"
        return "win" if self.score_b > self.score_a else "loss"


@dataclass(frozen=True)
class Comparison:
    """Run B against run A: metric deltas per stage, per-question wins and losses, verdict changes."""

    a: EvalRun
    b: EvalRun
    deltas: Mapping[str, Mapping[str, float]]  # stage -> metric -> b - a
    questions: tuple[QuestionChange, ...]

    @property
    def wins(self) -> list[QuestionChange]:
        return [q for q in self.questions if q.outcome == "win"]

    @property
    def losses(self) -> list[QuestionChange]:
        return [q for q in self.questions if q.outcome == "loss"]

    @property
    def verdict_changes(self) -> list[QuestionChange]:
        return [q for q in self.questions if q.verdict_a != q.verdict_b]

    @property
    def same_collection(self) -> bool:
        return self.a.fingerprint == self.b.fingerprint

    def interval(self, metric: str, stage: str = FINAL_STAGE) -> Interval:
        """The paired-bootstrap 95% interval of B - A in `metric` at `stage`, over the questions both scored:
        whether a difference (another dense vector, another reranker) is more than the questions' noise."""

        def per_question(run: EvalRun) -> dict[str, float]:
            return {q.id: q.scores[stage][metric] for q in run.questions if metric in q.scores.get(stage, {})}

        return paired_interval(per_question(self.a), per_question(self.b))

    def config_changes(self) -> dict[str, tuple[Any, Any]]:
        a, b = dataclasses.asdict(self.a.config), dataclasses.asdict(self.b.config)
        changed = {k: (a[k], b[k]) for k in a if a[k] != b[k]}
        return changed | {
            k: (self.a.models.get(k), self.b.models.get(k))
            for k in set(self.a.models) | set(self.b.models)
            if self.a.models.get(k) != self.b.models.get(k)
        }

    def as_json(self) -> dict[str, Any]:
        return {
            "a": self.a.id, "b": self.b.id, "same_collection": self.same_collection,
            "changes": {k: list(v) for k, v in self.config_changes().items()},
            "deltas": {s: dict(m) for s, m in self.deltas.items()},
            "wins": [q.id for q in self.wins], "losses": [q.id for q in self.losses],
            "verdict_changes": [{"id": q.id, "a": q.verdict_a, "b": q.verdict_b} for q in self.verdict_changes],
        }  # fmt: skip


def compare_runs(a: EvalRun, b: EvalRun) -> Comparison:
    """Compare run B with run A (both loaded with their questions); questions are matched by id."""
    deltas = {
        stage: {
            m: b.per_stage[stage][m] - a.per_stage[stage][m]
            for m in a.per_stage[stage]
            if m in b.per_stage.get(stage, {})
        }
        for stage in a.per_stage
        if stage in b.per_stage
    }
    by_id = {q.id: q for q in a.questions}
    changes = []
    for qb in b.questions:
        qa = by_id.get(qb.id)
        if qa is None:
            continue
        verdicts = (_outcome(qa), _outcome(qb))
        ranks = (qa.gold_ranks.get(FINAL_STAGE), qb.gold_ranks.get(FINAL_STAGE))
        changes.append(QuestionChange(qb.id, qb.question, _score(qa), _score(qb), *ranks, *verdicts))
    return Comparison(a, b, deltas, tuple(changes))


def _outcome(q: QuestionResult) -> str | None:
    """The verdict code, INVALID for a question not scored, None for a pass."""
    return q.verdict.code if q.verdict else INVALID if q.invalid else None


def _score(q: QuestionResult) -> float | None:
    return q.scores.get(FINAL_STAGE, {}).get("ndcg@10") if q.answerable else None
