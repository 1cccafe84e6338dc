"""Two versions of a collection on one question set: which questions the later one fixed, and which it broke.

Each version is opened as a collection of its own (`rag.catalog.versions.open_version`:
`<collection>--<version>`, its points, settings and originals restored afresh) and evaluated there by
`run_eval`, the one eval code path, with the settings that version stored; the runs are not kept in the
history (they are of the version's own collection, not of the collection). A question counts when both
runs scored it; it is a hit when a gold chunk reached the final k. Fixed: missed in A, hit in B; broke:
hit in A, missed in B. Each question keeps the inspector link of both runs: the version collections stay,
so the links open the inspector on each version as it was.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from rag.catalog.versions import open_version
from rag.components import build_components
from rag.eval.qsets import QuestionSet
from rag.eval.runner import Progress, run_eval
from rag.eval.runs import EvalRun, QuestionResult
from rag.settings.config import Settings
from rag.text.words import plural


class Outcome(StrEnum):
    """How a question moved from version A to version B."""

    FIXED = "fixed"
    BROKE = "broke"
    SAME_HIT = "hit in both"
    SAME_MISS = "missed in both"


@dataclass(frozen=True)
class QuestionMove:
    """One question scored in both versions: whether each hit, and the inspector link of each run."""

    id: str
    question: str
    hit_a: bool
    hit_b: bool
    inspector_a: Mapping[str, str]
    inspector_b: Mapping[str, str]

    @property
    def outcome(self) -> Outcome:
        if self.hit_a == self.hit_b:
            return Outcome.SAME_HIT if self.hit_a else Outcome.SAME_MISS
        return Outcome.FIXED if self.hit_b else Outcome.BROKE

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id, "question": self.question, "outcome": self.outcome, "hit_a": self.hit_a,
            "hit_b": self.hit_b, "inspector_a": dict(self.inspector_a), "inspector_b": dict(self.inspector_b),
        }  # fmt: skip


@dataclass(frozen=True)
class VersionDiff:
    """Version B against version A on one question set."""

    a: str
    b: str
    run_a: EvalRun
    run_b: EvalRun
    questions: tuple[QuestionMove, ...]
    left_out: tuple[str, ...]  # ids of the questions not scored in both runs

    def having(self, outcome: str) -> list[QuestionMove]:
        return [q for q in self.questions if q.outcome == outcome]

    def headline(self) -> str:
        """ "v3 against v2: 4 questions fixed, 1 broke"."""
        fixed, broke = len(self.having(Outcome.FIXED)), len(self.having(Outcome.BROKE))
        return f"{self.b} against {self.a}: {plural(fixed, 'question')} fixed, {broke} broke"

    def as_json(self) -> dict[str, Any]:
        return {
            "a": self.a, "b": self.b, "headline": self.headline(), "fixed": [q.id for q in self.having(Outcome.FIXED)],
            "broke": [q.id for q in self.having(Outcome.BROKE)], "left_out": list(self.left_out),
            "metrics_a": self.run_a.metrics, "metrics_b": self.run_b.metrics,
            "questions": [q.as_json() for q in self.questions],
        }  # fmt: skip


def diff_versions(
    settings: Settings,
    a: str,
    b: str,
    qset: QuestionSet,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> VersionDiff:
    """Evaluate versions `a` and `b` of `settings.collection` on `qset` and compare them question by question.

    Raises:
        RagError: a version is missing or cannot be opened, or an eval fails (EvalCancelled when cancelled).
    """
    run_a, run_b = (_run_on(settings, name, qset, progress, cancel) for name in (a, b))
    by_id = {q.id: q for q in run_a.questions if q.scored}
    moves, left_out = [], []
    for qb in run_b.questions:
        qa = by_id.get(qb.id)
        if qa is None or not qb.scored:
            left_out.append(qb.id)
            continue
        moves.append(QuestionMove(qb.id, qb.question, _hit(qa), _hit(qb), qa.inspector, qb.inspector))
    moved = {m.id for m in moves}
    left_out += [qid for qid in by_id if qid not in moved]
    return VersionDiff(a, b, run_a, run_b, tuple(moves), tuple(dict.fromkeys(left_out)))


def _run_on(
    settings: Settings, name: str, qset: QuestionSet, progress: Progress | None, cancel: threading.Event | None
) -> EvalRun:
    """The set evaluated on version `name`'s own collection, with the settings it stored."""
    components = build_components(open_version(settings, name))
    try:
        components = components.with_stored_settings()
        told = None if progress is None else lambda done, total, msg: progress(done, total, f"{name}: {msg}")
        return run_eval(components, qset, progress=told, cancel=cancel, save=False)
    finally:
        components.close()


def _hit(q: QuestionResult) -> bool:
    return q.gold_ranks.get("final") is not None
