"""Run a question set through the same retrieval (and, optionally, answering) the app uses, and score it.

Each question runs `run_mode()` in the config's mode (plain: one `retrieve()`), or `answer_question()`,
which retrieves the same way, so every stage's ranking comes from one call; per-stage metrics use the
final (for a mode: fused) `RetrievalResult.ranked(stage)`, verdicts the whole result and the mode's
own searches. A question whose gold names something the collection lacks (a chunk id, a document, a heading)
is marked invalid and left out of the metrics, so a broken set never looks like bad retrieval. A run
reports progress after each question and checks its cancel event before each one; a cancelled run
raises `EvalCancelled` and stores nothing.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime

from rag.answer.generator import Generator
from rag.ask.answerer import answer_question, default_generator
from rag.components import Components
from rag.errors import RagError
from rag.eval.answers import AnswerRecord, answer_metrics
from rag.eval.correctness import check_answer
from rag.eval.gold import CollectionIndex, Resolution, SectionGold, SectionRef
from rag.eval.judge import FaithfulnessJudge
from rag.eval.metrics import CONTEXT_PRECISION, by_query, context_precision_at_k, evaluate, means
from rag.eval.qsets import Question, QuestionSet
from rag.eval.runs import EvalRun, QuestionResult, save_run
from rag.eval.verdicts import inspector_link, judge_question
from rag.modes.result import ModeResult
from rag.modes.run import run_mode
from rag.retrieval.fusion import uncut_fused_rank
from rag.retrieval.result import STAGES, RetrievalResult
from rag.settings.collection_settings import stored_in_run
from rag.settings.config import RetrievalConfig
from rag.settings.labels import config_label
from rag.settings.links import collection_param

Progress = Callable[[int, int, str], None]


class EvalCancelled(RagError):
    """The run was cancelled; nothing was stored."""


class NothingScored(RagError):
    """Every question with gold was left out (its gold names what the collection lacks): nothing was stored.

    Such a run would read as "nDCG@10 0.000", bad retrieval, when the set was only run on the wrong collection."""

    def __init__(self, collection: str, left_out: list[QuestionResult]) -> None:
        first, n = left_out[0], len(left_out)
        which = "the only question with gold was" if n == 1 else f"all {n:,} questions with gold were"
        super().__init__(
            f"nothing stored: {which} left out of the metrics, "
            f"their gold names what collection {collection!r} lacks ({first.id}: {first.invalid}). "
            "Was the set written for another collection? Switch to it and run again."
        )


def run_eval(
    components: Components,
    qset: QuestionSet,
    config: RetrievalConfig | None = None,
    *,
    answers: bool = False,
    generator: Generator | None = None,
    judge: FaithfulnessJudge | None = None,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
    save: bool = True,
    name: str | None = None,
) -> EvalRun:
    """Evaluate `qset` against the collection and (by default) store the run.

    Args:
        components: store and encoders of the collection to evaluate.
        qset: the questions and their gold.
        config: retrieval settings; None means the configured defaults. Use candidates >= 20 so that
            the @20 metrics can count.
        answers: also generate an answer per question and score it (citations, abstentions).
        generator: who writes answers (implies `answers`); None means Claude with a key, else extractive.
        judge: an LLM faithfulness judge for answer sentences (needs answers).
        progress: called after each question with (done, total, message).
        cancel: when set, the run stops before its next question.
        save: write the run to the eval history (`<data_dir>/eval.sqlite`).
        name: what the history calls the run; None means its settings in words.

    Returns:
        The complete run.

    Raises:
        EvalCancelled: `cancel` was set; nothing was stored.
        RagError: the collection is empty, or retrieval / generation failed.
    """
    config = config or components.settings.retrieval
    index = CollectionIndex.from_components(components)
    if not index.by_id:
        raise RagError(
            f"collection {components.settings.collection!r} has no chunks: ingest documents "
            "(or the sample help centre) before running an eval"
        )
    if generator is None and answers:
        generator = default_generator(components)
    total = len(qset.questions)
    rows: list[QuestionResult] = []
    runs: dict[str, dict[str, dict[str, float]]] = {stage: {} for stage in STAGES}
    contexts: dict[str, dict[str, dict[str, float]]] = {
        stage: {} for stage in STAGES
    }  # chunk-level, for context precision
    qrels: dict[str, dict[str, int]] = {}
    chunk_qrels: dict[str, dict[str, int]] = {}
    reranker = config.reranker
    for done, q in enumerate(qset.questions):
        if cancel is not None and cancel.is_set():
            raise EvalCancelled(f"eval cancelled after {done} of {total} questions; nothing was stored")
        gold = index.resolve(q.gold)
        mr, record = _ask(components, q, gold.chunk_ids, config, generator, judge)
        result = mr.result
        reranker = result.reranker
        invalid = gold.invalid
        if q.answerable and invalid is None:
            qrels[q.id] = gold.qrels()
            # Gold that no chunk holds still counts, as a miss (0), like every other metric.
            chunk_qrels[q.id] = dict.fromkeys(gold.chunk_ids or ("(gold in no chunk)",), 1)
            for stage in STAGES:
                ranked = [c.id for c in result.ranked(stage)]
                # A chunk carried with its section counts at the section's rank (rag/retrieval/collapse.py).
                runs[stage][q.id] = gold.collapse([tuple(c.id for c in g) for g in result.ranked_groups(stage)])
                contexts[stage][q.id] = {cid: -float(i) for i, cid in enumerate(ranked[: config.final_k])}
        verdict = (
            None
            if invalid
            else judge_question(
                q.answerable,
                gold,
                result,
                record,
                lambda cid, r=result: _rank_of(uncut_fused_rank(components.store, r, cid)),
                mr,
            )
        )
        track = verdict.track if verdict and verdict.track else gold.track()
        section = _tracked_section(q, gold, track)
        rows.append(
            QuestionResult(
                id=q.id,
                question=q.question,
                answerable=q.answerable,
                gold=q.as_json().get("gold"),
                gold_labels=tuple(u.label for u in gold.units),
                gold_chunks=tuple(sorted(gold.chunk_ids)),
                scores={},
                gold_ranks=_gold_ranks(result, gold.chunk_ids),
                verdict=verdict,
                inspector=inspector_link(q.question, config, track, components.settings.retrieval, section)
                | collection_param(components.settings.collection),
                answer=record,
                invalid=invalid,
            )
        )
        if progress is not None:
            progress(done + 1, total, f"{done + 1}/{total}: {q.question[:80]}")

    if save and not qrels and (left_out := [row for row in rows if row.invalid]):  # a run is stored only when it scored
        raise NothingScored(components.settings.collection, left_out)
    per_stage_results = {
        stage: evaluate(runs[stage], qrels)
        | {CONTEXT_PRECISION: context_precision_at_k(contexts[stage], chunk_qrels, config.final_k)}
        for stage in STAGES
    }
    tables = {stage: by_query(r) for stage, r in per_stage_results.items()}
    questions = tuple(
        replace(row, scores={s: tables[s].get(row.id, {}) for s in STAGES}) if row.scored else row for row in rows
    )
    settings = components.settings
    models = {"dense": settings.dense_model, "sparse": settings.sparse_model, "reranker": reranker}
    if generator is not None:
        models["generator"] = f"{generator.mode}: {generator.model}"
    if judge is not None:
        models["judge"] = judge.model
    if stored := stored_in_run(config, settings.data_dir, settings.collection):  # the collection's own settings
        models["collection settings"] = stored
    now = datetime.now(UTC)
    run = EvalRun(
        id=f"{now:%Y%m%d-%H%M%S}-{secrets.token_hex(2)}",
        created_at=now.isoformat(timespec="seconds"),
        set_name=qset.name,
        collection=settings.collection,
        config=config,
        models=models,
        fingerprint=index.fingerprint,
        per_stage={stage: means(r) for stage, r in per_stage_results.items()},
        answers=answer_metrics((r.answerable, r.answer) for r in rows if r.answer) if generator is not None else {},
        questions=questions,
        name=name or config_label(config),
    )
    if save:
        save_run(settings.data_dir, run)
    return run


def _ask(
    components: Components,
    q: Question,
    gold_chunks: frozenset[str],
    config: RetrievalConfig,
    generator: Generator | None,
    judge: FaithfulnessJudge | None,
) -> tuple[ModeResult, AnswerRecord | None]:
    if generator is None:
        return run_mode(components, q.question, config=config), None
    answer = answer_question(components, q.question, config, generator=generator)
    texts = {c.id: c.answer_chunk.text for c in answer.retrieval.candidates}
    judged = judge.judge_answer(answer, texts) if judge is not None else ()
    relevancy = judge.answer_relevancy(q.question, answer, components.dense) if judge is not None else None
    check = check_answer(answer, q.answer, gold_chunks, texts, judge) if q.answer and q.answerable else None
    mr = answer.mode_result or ModeResult("plain", answer.question, answer.retrieval)
    return mr, AnswerRecord.from_answer(answer, judged, relevancy, check)


def _tracked_section(q: Question, gold: Resolution, track: str | None) -> SectionRef | None:
    """The gold section the inspector link should follow: the one holding the tracked chunk (the lost one,
    for a verdict), else the first; None when the gold is not given as sections."""
    if not isinstance(q.gold, SectionGold):
        return None
    pairs = list(zip(q.gold.sections, gold.units, strict=True))
    return next((ref for ref, unit in pairs if track in unit.chunk_ids), pairs[0][0] if pairs else None)


def _gold_ranks(result: RetrievalResult, gold: frozenset[str]) -> dict[str, int | None]:
    """Best rank of any gold chunk in each stage, and in the final list (a carried chunk at its section's rank)."""
    ranks: dict[str, int | None] = {}
    for stage in STAGES:
        ranks[stage] = min(
            (c.stage(stage).rank for c in result.candidates if c.id in gold and c.stage(stage).rank), default=None
        )
    ranks["final"] = min((c.shown_rank for c in result.shown if c.id in gold), default=None)
    return ranks


def _rank_of(found: tuple[int, float] | None) -> int | None:
    return found[0] if found else None
