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
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

from rag.answer.generator import Generator
from rag.ask.answerer import answer_question, default_generator
from rag.catalog.parse import chunk_flags
from rag.catalog.versions import version_label
from rag.components import Components
from rag.errors import RagError
from rag.eval.answers import AnswerRecord, answer_metrics
from rag.eval.correctness import check_answer
from rag.eval.gold import CollectionIndex, Resolution, SectionGold, SectionRef
from rag.eval.judge import FaithfulnessJudge
from rag.eval.metrics import CONTEXT_PRECISION, MetricResult, by_query, context_precision_at_k, evaluate, means
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
        NothingScored: saving, and every question with gold was left out; nothing was stored.
        RagError: the collection is empty, or retrieval / generation failed.
    """
    config = config or components.settings.retrieval
    index = _collection_index(components)
    if generator is None and answers:
        generator = default_generator(components)
    scored = [
        _score_question(components, index, q, config, generator, judge)
        for q in _paced(qset.questions, cancel, progress)
    ]
    if save and not any(s.row.scored for s in scored):  # a run is stored only when it scored
        if left_out := [s.row for s in scored if s.row.invalid]:
            raise NothingScored(components.settings.collection, left_out)
    run = _build_run(components, qset, config, index, scored, generator, judge, name)
    if save:  # a stored run names the collection's version (reading every chunk id, so only for these)
        run = replace(run, version=version_label(components))
        save_run(components.shared, run)
    return run


@dataclass(frozen=True)
class _Scored:
    """One question's share of a run: its row (scores still empty) and, when the row counts toward the
    retrieval metrics (`row.scored`), its gold and each stage's ranking in the form the metric functions read."""

    row: QuestionResult
    reranker: str  # the reranker that really ran (a name resolved by retrieve)
    qrels: dict[str, int] = field(default_factory=dict)  # {gold unit: grade}
    chunk_qrels: dict[str, int] = field(default_factory=dict)  # chunk-level, for context precision
    runs: dict[str, dict[str, float]] = field(default_factory=dict)  # per stage: the ranking over gold units
    contexts: dict[str, dict[str, float]] = field(default_factory=dict)  # per stage: the final k chunks


def _collection_index(components: Components) -> CollectionIndex:
    """The collection's chunks for resolving gold; an empty collection is refused before any question runs."""
    index = CollectionIndex.from_components(components)
    if not index.by_id:
        raise RagError(
            f"collection {components.settings.collection!r} has no chunks: ingest documents "
            "(or the sample help centre) before running an eval"
        )
    return index


def _paced(
    questions: Sequence[Question], cancel: threading.Event | None, progress: Progress | None
) -> Iterator[Question]:
    """The questions one by one: `cancel` is checked before each (a set event raises `EvalCancelled`), and
    `progress` told after each, once the caller has finished with it."""
    total = len(questions)
    for done, q in enumerate(questions):
        if cancel is not None and cancel.is_set():
            raise EvalCancelled(f"eval cancelled after {done} of {total} questions; nothing was stored")
        yield q
        if progress is not None:
            progress(done + 1, total, f"{done + 1}/{total}: {q.question[:80]}")


def _score_question(
    components: Components,
    index: CollectionIndex,
    q: Question,
    config: RetrievalConfig,
    generator: Generator | None,
    judge: FaithfulnessJudge | None,
) -> _Scored:
    """Retrieve (and answer) one question the app's way: its row, and its rankings when it counts. Gold the
    collection lacks leaves the question out of the metrics, so a broken set never looks like bad retrieval."""
    gold = index.resolve(q.gold)
    mr, record = _ask(components, q, gold.chunk_ids, config, generator, judge)
    result = mr.result
    row = _question_row(components, q, config, gold, mr, record)
    if not row.scored:
        return _Scored(row, result.reranker)
    return _Scored(
        row,
        result.reranker,
        qrels=gold.qrels(),
        # Gold that no chunk holds still counts, as a miss (0), like every other metric.
        chunk_qrels=dict.fromkeys(gold.chunk_ids or ("(gold in no chunk)",), 1),
        # A chunk carried with its section counts at the section's rank (rag/retrieval/collapse.py).
        runs={stage: gold.collapse([tuple(c.id for c in g) for g in result.ranked_groups(stage)]) for stage in STAGES},
        contexts={
            stage: {c.id: -float(i) for i, c in enumerate(result.ranked(stage)[: config.final_k])} for stage in STAGES
        },
    )


def _question_row(
    components: Components,
    q: Question,
    config: RetrievalConfig,
    gold: Resolution,
    mr: ModeResult,
    record: AnswerRecord | None,
) -> QuestionResult:
    """The stored row of one question: its gold ranks, its verdict (none when its gold is invalid), the
    inspector link that tracks the chunk the verdict follows, and its answer; scores are filled in later."""
    result = mr.result
    verdict = (
        None
        if gold.invalid
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
    return QuestionResult(
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
        invalid=gold.invalid,
    )


def _build_run(
    components: Components,
    qset: QuestionSet,
    config: RetrievalConfig,
    index: CollectionIndex,
    scored: Sequence[_Scored],
    generator: Generator | None,
    judge: FaithfulnessJudge | None,
    name: str | None,
) -> EvalRun:
    """The run: each stage's metrics over the questions that count, every row with its own scores, and what
    ran (models, the collection's stored settings), so a later reader knows what the numbers measured."""
    per_stage_results = _stage_metrics(scored, config.final_k)
    tables = {stage: by_query(r) for stage, r in per_stage_results.items()}
    rows = [s.row for s in scored]
    flags = chunk_flags(components, (cid for row in rows for cid in _gold_sites(row)))
    rows = [replace(row, parse_flags={c: flags[c] for c in _gold_sites(row) if c in flags}) for row in rows]
    questions = tuple(
        replace(row, scores={s: tables[s].get(row.id, {}) for s in STAGES}) if row.scored else row for row in rows
    )
    settings = components.settings
    reranker = scored[-1].reranker if scored else config.reranker
    now = datetime.now(UTC)
    return EvalRun(
        id=f"{now:%Y%m%d-%H%M%S}-{secrets.token_hex(2)}",
        created_at=now.isoformat(timespec="seconds"),
        set_name=qset.name,
        collection=settings.collection,
        config=config,
        models=_models(components, config, reranker, generator, judge),
        fingerprint=index.fingerprint,
        per_stage={stage: means(r) for stage, r in per_stage_results.items()},
        answers=answer_metrics((r.answerable, r.answer) for r in rows if r.answer) if generator is not None else {},
        questions=questions,
        name=name or config_label(config),
    )


def _gold_sites(row: QuestionResult) -> tuple[str, ...]:
    """Where a failed question's gold sits, for its parse signals: its gold chunks, or (its answer text in no
    chunk) the chunk its verdict follows, split across or nearest to it; none for a question that passed."""
    if row.verdict is None:
        return ()
    return row.gold_chunks or ((row.verdict.track,) if row.verdict.track else ())


def _stage_metrics(scored: Sequence[_Scored], final_k: int) -> dict[str, dict[str, MetricResult]]:
    """Every metric of every stage over the questions that count (context precision over their final k chunks)."""
    counted = [s for s in scored if s.row.scored]
    qrels = {s.row.id: s.qrels for s in counted}
    chunk_qrels = {s.row.id: s.chunk_qrels for s in counted}
    out = {}
    for stage in STAGES:
        runs = {s.row.id: s.runs[stage] for s in counted}
        contexts = {s.row.id: s.contexts[stage] for s in counted}
        out[stage] = evaluate(runs, qrels) | {CONTEXT_PRECISION: context_precision_at_k(contexts, chunk_qrels, final_k)}
    return out


def _models(
    components: Components,
    config: RetrievalConfig,
    reranker: str,
    generator: Generator | None,
    judge: FaithfulnessJudge | None,
) -> dict[str, str]:
    """What produced the run's numbers: the encoders, the reranker that ran, the generator and judge when
    answers were scored, and the collection's own stored settings when the config follows them. The dense
    model is the one of the dense vector searched (rag/catalog/vectors.py), named when the collection holds
    more than its first."""
    settings = components.settings
    models = {"dense": settings.dense_model, "sparse": settings.sparse_model, "reranker": reranker}
    record = components.store.collection_models()
    if record is not None and record.follows_record:
        space = record.space(config.dense_vector)
        models |= {"dense": space.model, "dense vector": space.name}
    if generator is not None:
        models["generator"] = f"{generator.mode}: {generator.model}"
    if judge is not None:
        models["judge"] = judge.model
    if stored := stored_in_run(config, components.shared, settings.collection):  # the collection's own settings
        models["collection settings"] = stored
    return models


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
