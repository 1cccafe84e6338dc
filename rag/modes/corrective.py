"""Corrective retrieval: grade the final chunks, keep the relevant ones, and act when none is good enough.

Grades: offline, the answer gate's own relevance score (the dense cosine between question and chunk,
or a cross-encoder's score when one reranks). Not the default reranker's score: maxsim-fusion and
score-fusion min-max normalise per question, so their best chunk scores 1 however poor it is, and no
threshold on them means anything. With Claude, one batched call grades every chunk 0-3; a reply
that is not the expected structure falls back to the offline grades, and the attempt says so.

Actions, each tried only when the previous search's best grade is under the threshold, each adding to
the last: pseudo-relevance feedback (new words from the top BM25 hits), then `wider_candidates` times
the candidates, then union fusion (every chunk either list found goes to the reranker). If even that
leaves no relevant chunk, the mode abstains: its final list is empty and `reason` says why.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

from rag.answer.checks import relevance_scores
from rag.answer.prompt import escape_source_text, wrap_sources
from rag.components import Components
from rag.modes.fusion import keep_final
from rag.modes.llm import SOURCES_ARE_DATA, Claude, labelled
from rag.modes.options import ModeOptions
from rag.modes.result import Attempt, CorrectiveStage, Grade, ModeResult
from rag.retrieval.result import RetrievalResult
from rag.retrieval.retrieve import retrieve
from rag.settings.config import RetrievalConfig
from rag.types import ChunkFilter

GRADE_SYSTEM = f"""You grade retrieved documentation passages for relevance to a question, every passage in one reply.
Scale: 0 = unrelated, 1 = same topic but does not help answer, 2 = answers part of the question,
3 = answers the question. {SOURCES_ARE_DATA} Reply only through the grade_sources tool."""

GRADE_TOOL = {
    "name": "grade_sources",
    "description": "Record a relevance grade for every source.",
    "input_schema": {
        "type": "object",
        "properties": {
            "grades": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "source": {"type": "string", "description": "the source id, e.g. S1"},
                        "grade": {"type": "integer", "minimum": 0, "maximum": 3},
                    },
                    "required": ["source", "grade"],
                },
            }
        },
        "required": ["grades"],
    },
}


def run_corrective(
    components: Components, question: str, config: RetrievalConfig, flt: ChunkFilter, options: ModeOptions,
    claude: Claude | None,
) -> ModeResult:  # fmt: skip
    attempts: list[Attempt] = []
    for action, cfg in actions(config, options):
        result = retrieve(components, question, cfg, flt)
        attempt = grade(components, action, result, options, claude)
        attempts.append(attempt)
        relevant = [g.chunk_id for g in attempt.grades if attempt.is_relevant(g)]
        if relevant:
            stage = CorrectiveStage(
                tuple(attempts), f"kept the {len(relevant)} relevant of {len(attempt.grades)} chunks of the {action}"
            )
            return _result(question, keep_final(result, relevant), stage, claude)
        if claude is not None and claude.tokens_used >= options.max_tokens:
            break
    last = attempts[-1]
    best = "nothing retrieved" if last.best is None else f"the best grade was {last.best:.3f}"
    reason = (
        f"no chunk reached the {last.basis} threshold of {last.threshold:g} after {len(attempts)} searches "
        f"({', '.join(a.action for a in attempts)}); {best}"
    )
    stage = CorrectiveStage(tuple(attempts), "abstained")
    return dataclasses.replace(
        _result(question, keep_final(last.result, ()), stage, claude), abstained=True, reason=reason
    )


def actions(config: RetrievalConfig, options: ModeOptions) -> Iterator[tuple[str, RetrievalConfig]]:
    """The first pass, then each corrective action that changes the search (cumulative)."""
    yield "first pass", config
    steps = (
        ("retry with PRF", {"prf": True}),
        ("more candidates", {"candidates": config.candidates * options.wider_candidates}),
        ("union fusion", {"fusion": "union"}),
    )
    current = config
    for action, change in steps:
        changed = dataclasses.replace(current, **change)
        if changed != current:
            current = changed
            yield action, current


def grade(
    components: Components, action: str, result: RetrievalResult, options: ModeOptions, claude: Claude | None
) -> Attempt:
    """Grade `result`'s final chunks with Claude (one call) or with the answer gate's relevance score."""
    note = ""
    if claude is not None and result.final:
        reply = claude.structured("grading", GRADE_TOOL, grade_prompt(result), GRADE_SYSTEM)
        grades = parse_grades(reply, [c.id for c in result.final])
        if grades is not None:
            threshold = float(options.claude_grade_threshold)
            return Attempt(
                action,
                result,
                tuple(Grade(cid, g) for cid, g in grades.items()),
                "Claude grade (0-3)",
                threshold,
            )
        note = (
            "Claude's grading reply was not the expected structure (a grade 0-3 for every source); "
            "the reranker-side relevance was used instead"
        )
    scores, basis = relevance_scores(components, result)
    threshold = (
        options.grade_threshold if options.grade_threshold is not None else components.settings.answer.min_rerank_score
    )
    grades_ = tuple(Grade(c.id, scores[c.id]) for c in result.final if c.id in scores)
    return Attempt(action, result, grades_, basis, threshold, note)


def grade_prompt(result: RetrievalResult) -> str:
    return (
        f"{wrap_sources(labelled(result.final))}\n\n<question>{escape_source_text(result.question)}</question>\n\n"
        "Grade every source."
    )


def parse_grades(reply: dict | None, ids: list[str]) -> dict[str, float] | None:
    """chunk id -> grade, when the reply grades every source S1..Sn exactly once with an integer 0-3; else None."""
    items = reply.get("grades") if isinstance(reply, dict) else None
    if not isinstance(items, list):
        return None
    labels = {f"S{i}": cid for i, cid in enumerate(ids, 1)}
    out: dict[str, float] = {}
    for item in items:
        if not isinstance(item, dict):
            return None
        label, value = item.get("source"), item.get("grade")
        if (
            not isinstance(label, str)
            or label not in labels
            or labels[label] in out
            or isinstance(value, bool)
            or not isinstance(value, int)
            or not 0 <= value <= 3
        ):
            return None
        out[labels[label]] = float(value)
    return out if len(out) == len(ids) else None


def _result(question: str, final: RetrievalResult, stage: CorrectiveStage, claude: Claude | None) -> ModeResult:
    backend = "claude" if claude is not None else "offline"
    notes = (
        ()
        if claude is not None
        else (
            "offline: chunks are graded by the answer gate's relevance score (dense cosine, or a cross-encoder's "
            "own score), not by a reader",
        )
    )
    return ModeResult(
        "corrective", question, final, backend, notes, corrective=stage, llm_calls=tuple(claude.calls) if claude else ()
    )
