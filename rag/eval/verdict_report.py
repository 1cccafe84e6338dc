"""One Eval verdict's failure report: the question re-run with the run's settings, its gold tracked.

The verdict says where the gold was lost when the run was made; the report re-runs the question now, with the
settings the run used, through the inspector's own tracking (rag/inspect/track.py), so it holds the same
sections as the inspector's report (rag/inspect/report.py): the stage table, the target, where it was lost,
what ranked above it and the verified fix. The gold followed is the one the verdict's inspector link tracks;
a verdict with none (the answer text in no chunk, an unanswerable question answered) gets the report without
a target.
"""

from __future__ import annotations

from rag.components import Components
from rag.eval.runs import EvalRun, QuestionResult
from rag.inspect.report import FailureReport, failure_report, report_input
from rag.inspect.target import find_target
from rag.inspect.track import track
from rag.retrieval.retrieve import retrieve
from rag.settings.links import parse_inspector_params


def verdict_report(components: Components, run: EvalRun, question: QuestionResult) -> FailureReport:
    """The report of one question of `run`, re-run now on `components`' collection with the run's settings.

    Raises:
        RagError: the gold chunk or section is no longer stored, or the retrieval fails.
    """
    verdict = question.verdict
    outcome = f"{verdict.title}: {verdict.detail}" if verdict else "passed"
    came_from = f"Eval run {run.label} ({run.created_at}, set {run.set_name}), question {question.id}: {outcome}"
    gold = parse_inspector_params({k: [v] for k, v in question.inspector.items()}, run.config)
    if not (gold.track or gold.track_source):
        result = retrieve(components, question.question, run.config)
        return failure_report(report_input(components, result, None, came_from))
    target = find_target(
        components,
        chunk_id=gold.track or None,
        source=gold.track_source or None,
        heading=gold.track_heading,
        question=question.question,
    )
    report = track(components, question.question, target, run.config)
    return failure_report(report_input(components, report.result, report, came_from))
