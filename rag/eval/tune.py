"""Tune on a question set: sweep some retrieval settings, and rank every configuration against the current one.

Which settings can vary, and the values each takes, come from the settings' own descriptions
(rag/settings/config.py): a switch takes off and on, a setting with choices takes each choice, a number
takes a ladder around its current value inside its range, the reranker takes every built-in (the weighted
ones at a few weights) and the configured one. Values that cannot matter under the others (RRF k under
DBSF, PRF's numbers with PRF off) collapse into one configuration. The plan puts the current settings
first, then every single change, then pairs, and so on, until the budget.

Each configuration is an eval run (`run_eval`, so every question goes through `retrieve()` or the mode, as
in the Eval tab) that is not added to the run history; its per-question scores are stored in
`<data_dir>/tune.sqlite` (on a server, in its metadata collection: rag/eval/sweep_records.py) as soon as it
finishes, so a cancelled or crashed sweep resumes where it stopped.
Results rank best first by one metric, each with the paired-bootstrap 95% interval of its difference from
the current settings (rag/eval/bootstrap.py); only an interval that excludes zero is a win beyond noise,
and only a win whose interval is above zero is ever stored for the collection (`apply_best`), whole: every
setting it ran with.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import random
import secrets
import sqlite3
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rag.components import Components
from rag.errors import ConfigError, EvalSetError, RagError
from rag.eval import sweep_records
from rag.eval.bootstrap import Interval, paired_interval
from rag.eval.gold import CollectionIndex
from rag.eval.history import opened
from rag.eval.metrics import CONTEXT_PRECISION, KS, MRR_K, NDCG_K
from rag.eval.qsets import QuestionSet, parse_question_set
from rag.eval.runner import EvalCancelled, run_eval
from rag.eval.runs import FINAL_STAGE
from rag.settings.collection_settings import CollectionSettings, save_collection_settings
from rag.settings.config import RetrievalConfig
from rag.settings.labels import config_label
from rag.settings.rerankers import RERANKERS, parse_reranker
from rag.settings.shared_home import SharedHome, home_of
from rag.settings.spec import Knob, knobs
from rag.text.words import plural

METRIC = f"ndcg@{NDCG_K}"
# What a sweep can rank by: every per-question metric the eval scores.
RANK_METRICS = (METRIC, f"mrr@{MRR_K}", *(f"{m}@{k}" for m in ("recall", "hit") for k in KS), CONTEXT_PRECISION)
BUDGET = 24
WEIGHTS = (0.4, 0.6, 0.8)  # a weighted reranker's weights tried (and the current one)
LADDER = (0.5, 2.0, 4.0)  # a number's values: these multiples of the current one, inside its range
FRACTIONS = (0.25, 0.5, 0.75)  # a number whose whole range is at most 1 wide: these points of it
# Settings that only change what the answerer is handed, never a ranking: a retrieval sweep cannot score them.
ANSWER_ONLY = ("context",)
Progress = Callable[[int, int, str], None]


def tunable() -> dict[str, Knob]:
    """Every retrieval setting a sweep can vary, by field name and by link name ("k" is final_k)."""
    out: dict[str, Knob] = {}
    for knob in knobs(RetrievalConfig):
        if knob.cli:
            out[knob.name] = out[knob.link or knob.name] = knob
    return out


@dataclass(frozen=True)
class Dimension:
    """One varied setting and the values the sweep tries."""

    name: str
    values: tuple[Any, ...]


def dimensions(
    vary: Sequence[str], base: RetrievalConfig, claude: bool = False, vectors: Sequence[str] = ()
) -> list[Dimension]:
    """The varied settings named in `vary` (field or link names), each with its values. `vectors` are the
    collection's searchable dense vectors, its default first: what `dense_vector` sweeps over.

    Raises:
        ConfigError: an unknown name, a setting whose values cannot be derived (no range), or one a retrieval
            sweep cannot score; the message lists the names that can vary.
    """
    known = tunable()
    out: list[Dimension] = []
    for raw in vary:
        knob = known.get(raw.strip().replace("-", "_"))
        if knob is None or knob.name in ANSWER_ONLY:
            why = (
                f"{raw!r} only changes what the answerer reads, never a ranking, so a retrieval sweep cannot score it"
                if knob is not None
                else f"cannot vary {raw!r}"
            )
            names = ", ".join(n for n, k in known.items() if n == k.name and n not in ANSWER_ONLY)
            raise ConfigError(f"{why}; vary any of: {names}")
        if knob.name not in (d.name for d in out):
            current = getattr(base, knob.name)
            values = _vectors(current, vectors) if knob.name == "dense_vector" else _values(knob, current, claude)
            out.append(Dimension(knob.name, values))
    if not out:
        raise ConfigError("name at least one setting to vary, e.g. fusion,reranker")
    return out


def _vectors(current: str, vectors: Sequence[str]) -> tuple[str, ...]:
    """The current dense vector, then the collection's others ("" is its default, so the default is not run twice)."""
    values = tuple(dict.fromkeys([current, *("" if i == 0 else v for i, v in enumerate(vectors))]))
    if len(values) < 2:
        raise ConfigError(
            "the collection holds one searchable dense vector, so there is nothing to compare; "
            "add one with `ragscope vectors add MODEL`"
        )
    return values


def _values(knob: Knob, current: Any, claude: bool) -> tuple[Any, ...]:  # noqa: ANN401 - a setting's value
    if knob.kind is bool:
        values: list[Any] = [False, True]
    elif knob.choices:
        # The agent mode cannot run without Claude (rag.modes.options.AGENT_OFFLINE): offline it is not tried.
        values = [c for c in knob.choices if claude or c != "agent"]
    elif knob.grammar is not None:
        values = _rerankers(current)
    elif knob.kind in (int, float) and knob.lo is not None and knob.hi is not None and current is not None:
        span = knob.hi - knob.lo
        points = [knob.lo + span * f for f in FRACTIONS] if span <= 1 else [current * m for m in LADDER]
        values = [round(p) if knob.kind is int else round(p, 3) for p in points]
    else:
        raise ConfigError(f"{knob.who} has no range to sweep; set it with --{knob.name.replace('_', '-')} instead")
    ok = []
    for v in [current, *values]:
        try:
            ok.append(knob.check(v, knob.who))
        except ConfigError:
            continue
    return tuple(dict.fromkeys(ok))


def _rerankers(current: str) -> list[str]:
    """The configured reranker, every built-in, and the weighted built-ins at `WEIGHTS` and the current weight."""
    weight = parse_reranker(current).weight
    out = [current]
    for name in RERANKERS:
        try:
            parse_reranker(f"{name}:0.5")
        except ConfigError:  # takes no weight
            out.append(name)
            continue
        out += [f"{name}:{w:g}" for w in sorted({*WEIGHTS, *([weight] if weight is not None else [])})]
    return out


def plan_configs(base: RetrievalConfig, dims: Sequence[Dimension], budget: int, seed: int = 0) -> list[RetrievalConfig]:
    """The configurations to run, the current one (`base`) first, then fewest changes first, at most `budget`.

    A value that does not apply under the others' values (`Knob.applies`) is set back to the base's, so
    configurations that would rank the same are run once.
    """
    names = [d.name for d in dims]
    found: dict[RetrievalConfig, int] = {}
    for combo in itertools.product(*(d.values for d in dims)):
        config = _effective(dataclasses.replace(base, **dict(zip(names, combo, strict=True))), base)
        found.setdefault(config, sum(getattr(config, n) != getattr(base, n) for n in names))
    rng = random.Random(seed)
    order = {c: rng.random() for c in found}
    configs = sorted(found, key=lambda c: (c != base, found[c], order[c]))
    return configs[: max(1, budget)]


def _effective(config: RetrievalConfig, base: RetrievalConfig) -> RetrievalConfig:
    values = dataclasses.asdict(config)
    idle = {k.name: getattr(base, k.name) for k in knobs(RetrievalConfig) if k.applies(values)}
    return dataclasses.replace(config, **idle)


@dataclass(frozen=True)
class ConfigResult:
    """One configuration's scores: the final stage's means and each scored question's metrics."""

    position: int
    config: RetrievalConfig
    means: Mapping[str, float]
    per_query: Mapping[str, Mapping[str, float]]  # question id -> metric -> score
    seconds: float

    def scores(self, metric: str) -> dict[str, float]:
        return {q: m[metric] for q, m in self.per_query.items() if metric in m}


@dataclass(frozen=True)
class Ranked:
    """A configuration in the ranking: its score, what it changes, and its interval against the current settings."""

    result: ConfigResult
    score: float
    changes: Mapping[str, tuple[Any, Any]]  # setting -> (current, this)
    interval: Interval

    @property
    def is_current(self) -> bool:
        return not self.changes

    @property
    def beats_current(self) -> bool:
        """Better than the current settings beyond noise: its whole gain interval is above zero."""
        return not self.is_current and self.interval.lo > 0

    def changes_words(self) -> str:
        return ", ".join(f"{k} {a} → {b}" for k, (a, b) in self.changes.items()) or "current settings"

    def as_json(self) -> dict[str, Any]:
        return {
            "position": self.result.position, "label": config_label(self.result.config), "score": self.score,
            "changes": {k: list(v) for k, v in self.changes.items()}, "interval": self.interval.as_json(),
            "metrics": dict(self.result.means), "config": dataclasses.asdict(self.result.config),
            "seconds": round(self.result.seconds, 2),
        }  # fmt: skip


@dataclass(frozen=True)
class Sweep:
    """A stored sweep: what it varies, its plan, and the configurations done so far (`results`)."""

    id: str
    created_at: str
    set_name: str
    collection: str
    fingerprint: str
    vary: tuple[str, ...]
    metric: str
    plan: tuple[RetrievalConfig, ...]
    results: tuple[ConfigResult, ...]
    questions: str  # the set's JSONL, so a resumed sweep scores the same questions

    @property
    def base(self) -> RetrievalConfig:
        return self.plan[0]

    @property
    def finished(self) -> bool:
        return len(self.results) == len(self.plan)

    def ranked(self, current: RetrievalConfig | None = None) -> list[Ranked]:
        """The configurations done, best first by the metric. Ties go to the one nearest the collection's
        `current` settings (the sweep's start when not given: a sweep from other settings, `tune --fusion dense`,
        must not trade the collection's value for an equal one), then to fewer changes, then to plan order."""
        if not self.results or self.results[0].position != 0:
            return []
        base = self.results[0]
        rows = []
        for r in self.results:
            mine = r.scores(self.metric)
            score = sum(mine.values()) / len(mine) if mine else 0.0
            changes = {
                k: (getattr(self.base, k), getattr(r.config, k))
                for k in self.vary
                if getattr(self.base, k) != getattr(r.config, k)
            }
            rows.append(Ranked(r, score, changes, paired_interval(base.scores(self.metric), mine)))
        near = current or self.base
        return sorted(
            rows, key=lambda x: (-x.score, len(differences(x.result.config, near)), len(x.changes), x.result.position)
        )

    def best(self, current: RetrievalConfig | None = None) -> Ranked | None:
        ranked = self.ranked(current)
        return ranked[0] if ranked else None

    def winner(self, current: RetrievalConfig | None = None) -> Ranked | None:
        """The best-ranked configuration that beats the current settings beyond noise; None when none does.

        The top score alone is not enough: on a few dozen questions a configuration often tops the ranking
        by noise, and storing it would change the collection for nothing.
        """
        return next((r for r in self.ranked(current) if r.beats_current), None)

    def as_json(self, current: RetrievalConfig | None = None) -> dict[str, Any]:
        return {
            "sweep_id": self.id, "created_at": self.created_at, "set": self.set_name, "collection": self.collection,
            "fingerprint": self.fingerprint, "vary": list(self.vary), "metric": self.metric,
            "planned": len(self.plan), "done": len(self.results), "finished": self.finished,
            "current": config_label(self.base), "ranked": [r.as_json() for r in self.ranked(current)],
        }  # fmt: skip


def start_sweep(
    components: Components,
    qset: QuestionSet,
    vary: Sequence[str],
    *,
    base: RetrievalConfig | None = None,
    budget: int = BUDGET,
    metric: str = METRIC,
) -> Sweep:
    """Plan a sweep over the collection and store it (nothing runs yet: `run_sweep` does).

    Raises:
        ConfigError: see `dimensions`; or an unknown metric.
        EvalSetError: no question's gold names anything the collection holds (`_check_gold`).
    """
    base = base or components.settings.retrieval
    record = components.store.collection_models()
    searchable = [s.name for s in record.spaces if s.filled] if record else []
    if record and record.dense_vector in searchable:  # the default first, as `dimensions` expects
        searchable.insert(0, searchable.pop(searchable.index(record.dense_vector)))
    dims = dimensions(vary, base, claude=bool(components.settings.anthropic_api_key), vectors=searchable)
    _check_metric(metric)
    index = CollectionIndex.from_components(components)
    _check_gold(qset, index, components.settings.collection)
    now = datetime.now(UTC)
    sweep = Sweep(
        f"{now:%Y%m%d-%H%M%S}-{secrets.token_hex(2)}", now.isoformat(timespec="seconds"), qset.name,
        components.settings.collection, index.fingerprint,
        tuple(d.name for d in dims), metric, tuple(plan_configs(base, dims, budget)), (), qset.to_jsonl(),
    )  # fmt: skip
    row = {
        "id": sweep.id, "created_at": sweep.created_at, "set_name": sweep.set_name, "collection": sweep.collection,
        "fingerprint": sweep.fingerprint, "vary": json.dumps(sweep.vary), "metric": metric,
        "plan": json.dumps([dataclasses.asdict(c) for c in sweep.plan]), "questions": sweep.questions,
    }  # fmt: skip
    home = components.shared
    if home.records is not None:
        sweep_records.save_sweep(home.records, row)
        return sweep
    with _connect(home.data_dir) as con:
        con.execute(f"INSERT INTO sweeps ({', '.join(row)}) VALUES ({','.join('?' * len(row))})", tuple(row.values()))
    return sweep


def run_sweep(
    components: Components,
    sweep: Sweep,
    *,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> Sweep:
    """Run the configurations of `sweep` not done yet, storing each as it finishes; returns the sweep as it stands.

    A cancel (or Ctrl-C) keeps every finished configuration: `run_sweep` on the loaded sweep resumes.

    Raises:
        RagError: the collection changed since the sweep started (its numbers would mix two collections),
            or retrieval failed.
    """
    if sweep.collection != components.settings.collection:
        raise RagError(f"sweep {sweep.id} ran on collection {sweep.collection!r}; open that collection to resume it")
    fingerprint = CollectionIndex.from_components(components).fingerprint
    if fingerprint != sweep.fingerprint:
        raise RagError(
            f"collection {sweep.collection!r} changed since sweep {sweep.id} started (other chunks or models): "
            "start a new sweep"
        )
    qset = parse_question_set(sweep.questions, sweep.set_name)
    n = len(qset.questions)
    results = list(sweep.results)
    total = len(sweep.plan) * n
    for position in range(len(results), len(sweep.plan)):
        config = sweep.plan[position]
        label = config_label(config)

        def each(done: int, _n: int, _m: str, position: int = position, label: str = label) -> None:
            if progress is not None:
                progress(position * n + done, total, f"configuration {position + 1}/{len(sweep.plan)}: {label}")

        start = time.perf_counter()
        try:
            run = run_eval(components, qset, config, progress=each, cancel=cancel, save=False)
        except EvalCancelled:
            break
        per_query = {q.id: dict(q.scores.get(FINAL_STAGE, {})) for q in run.questions if q.scored}
        result = ConfigResult(position, config, run.metrics, per_query, time.perf_counter() - start)
        _save_result(components.shared, sweep.id, result)
        results.append(result)
    return dataclasses.replace(sweep, results=tuple(results))


NOTHING_BEAT = "no configuration beat the current settings with an interval above zero; nothing stored"


def apply_best(
    where: Path | SharedHome,
    sweep: Sweep,
    current: RetrievalConfig | None = None,
    configured: RetrievalConfig | None = None,
) -> CollectionSettings | None:
    """Store the winner (`Sweep.winner`, ties to `current`, the collection's settings in force) as the collection's
    own settings; None when none beat the sweep's start.

    The whole configuration measured is stored, not only the varied settings: a sweep started from other settings
    (`tune --fusion dense --reranker none`) measured its winner with those, and storing the varied ones alone
    ran them with the collection's others. Stored are the settings that differ from the defaults or from
    `configured` (the environment's, under the stored ones), replacing what was stored, so the collection then
    runs exactly the winner.
    """
    best = sweep.winner(current)
    if best is None:
        return None
    config = best.result.config
    values = differences(config, RetrievalConfig()) | differences(config, configured or RetrievalConfig())
    start = "" if current is None or current == sweep.base else f"; measured from {config_label(sweep.base)}"
    note = f"tune sweep {sweep.id} on set {sweep.set_name}: {sweep.metric} {best.interval.words()}{start}"
    return save_collection_settings(where, sweep.collection, values, note, merge=False)


def differences(config: RetrievalConfig, other: RetrievalConfig) -> dict[str, Any]:
    """`config`'s values of the retrieval settings where it differs from `other`."""
    return {k.name: v for k in knobs(RetrievalConfig) if (v := getattr(config, k.name)) != getattr(other, k.name)}


def _check_gold(qset: QuestionSet, index: CollectionIndex, collection: str) -> None:
    """Refuse a set none of whose questions can be scored here: every configuration would rank zeros and the
    sweep would "find" nothing. The message lists the invalid gold as `ragscope eval` does."""
    invalid = [(q.id, index.resolve(q.gold).invalid) for q in qset.questions if q.answerable]
    if any(why is None for _, why in invalid):
        return
    shown = "; ".join(f"{qid}: {why}" for qid, why in invalid[:5]) + ("; ..." if len(invalid) > 5 else "")
    raise EvalSetError(
        f"no question of set {qset.name!r} can be scored on collection {collection!r} "
        f"({plural(len(invalid), 'answerable question')}, every gold invalid: {shown or 'none'}); "
        "fix the gold or choose the collection it was written for, then tune"
    )


def _check_metric(metric: str) -> None:
    if metric not in RANK_METRICS:
        raise ConfigError(f"cannot rank by {metric!r}; use one of {', '.join(RANK_METRICS)}")


# --- storage ---------------------------------------------------------------------------------------------------

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sweeps (
    id TEXT PRIMARY KEY, created_at TEXT NOT NULL, set_name TEXT NOT NULL, collection TEXT NOT NULL,
    fingerprint TEXT NOT NULL, vary TEXT NOT NULL, metric TEXT NOT NULL, plan TEXT NOT NULL, questions TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS sweep_results (
    sweep_id TEXT NOT NULL REFERENCES sweeps(id) ON DELETE CASCADE, position INTEGER NOT NULL,
    means TEXT NOT NULL, per_query TEXT NOT NULL, seconds REAL NOT NULL, PRIMARY KEY (sweep_id, position)
);
"""


_SWEEP_COLUMNS = ("id", "created_at", "set_name", "collection", "fingerprint", "vary", "metric", "plan", "questions")
_RESULT_COLUMNS = ("position", "means", "per_query", "seconds")


def db_path(data_dir: Path) -> Path:
    return data_dir / "tune.sqlite"


def _connect(data_dir: Path) -> AbstractContextManager[sqlite3.Connection]:
    return opened(db_path(data_dir), _SCHEMA, "sweep history")


def _save_result(where: Path | SharedHome, sweep_id: str, r: ConfigResult) -> None:
    row = {"position": r.position, "means": json.dumps(dict(r.means)), "per_query": json.dumps(r.per_query),
           "seconds": r.seconds}  # fmt: skip
    home = home_of(where)
    if home.records is not None:
        sweep_records.save_result(home.records, sweep_id, row)
        return
    with _connect(home.data_dir) as con:
        con.execute(
            "INSERT OR REPLACE INTO sweep_results (sweep_id, position, means, per_query, seconds) VALUES (?,?,?,?,?)",
            (sweep_id, *row.values()),
        )


def list_sweeps(where: Path | SharedHome, collection: str | None = None) -> list[Sweep]:
    """Stored sweeps, newest first (with their results)."""
    home = home_of(where)
    if home.records is not None:
        return [load_sweep(home, i) for i in sweep_records.sweep_ids(home.records, collection)]
    if not db_path(home.data_dir).is_file():
        return []
    with _connect(home.data_dir) as con:
        ids = [
            row[0]
            for row in con.execute(
                "SELECT id FROM sweeps" + (" WHERE collection = ?" if collection else "") + " ORDER BY created_at DESC",
                (collection,) if collection else (),
            )
        ]
    return [load_sweep(home, i) for i in ids]


def load_sweep(where: Path | SharedHome, sweep_id: str) -> Sweep:
    """A stored sweep with the configurations it finished.

    Raises:
        RagError: no such sweep.
    """
    home = home_of(where)
    missing = RagError(f"no sweep {sweep_id!r}; `ragscope tune --list` shows the stored ones")
    if home.records is not None:
        found = sweep_records.sweep_row(home.records, sweep_id)
        if found is None:
            raise missing
        row = tuple(found[c] for c in _SWEEP_COLUMNS)
        done = [tuple(r[c] for c in _RESULT_COLUMNS) for r in sweep_records.result_rows(home.records, sweep_id)]
    else:
        with _connect(home.data_dir) as con:
            row = con.execute(f"SELECT {', '.join(_SWEEP_COLUMNS)} FROM sweeps WHERE id = ?", (sweep_id,)).fetchone()
            if row is None:
                raise missing
            done = con.execute(
                f"SELECT {', '.join(_RESULT_COLUMNS)} FROM sweep_results WHERE sweep_id = ? ORDER BY position",
                (sweep_id,),
            ).fetchall()
    sid, created, set_name, collection, fingerprint, vary, metric, plan, questions = row
    configs = tuple(RetrievalConfig.from_record(c) for c in json.loads(plan))
    results = tuple(
        ConfigResult(p, configs[p], json.loads(m), json.loads(q), s) for p, m, q, s in done if p < len(configs)
    )
    return Sweep(sid, created, set_name, collection, fingerprint, tuple(json.loads(vary)), metric, configs,
                 _contiguous(results), questions)  # fmt: skip


def _contiguous(results: tuple[ConfigResult, ...]) -> tuple[ConfigResult, ...]:
    """The finished configurations from the first on (a resume continues after the last of them)."""
    out = []
    for i, r in enumerate(results):
        if r.position != i:
            break
        out.append(r)
    return tuple(out)
