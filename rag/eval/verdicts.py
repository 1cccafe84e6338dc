"""Why a question failed: one verdict per failed question, naming the first stage that lost the gold.

The checks follow the data's path: the gold must exist in some chunk (else the answer text is in no
chunk, or straddles two chunks), be recalled by dense or sparse, survive fusion's candidate cut,
survive the reranker, survive the score threshold and k, and then be cited (and not contradicted) by
the answer, which must abstain exactly when the documents do not answer. The first check that fails
is the verdict; its evidence holds the ranks and settings that show it, and `track` is the gold chunk
the search inspector should follow. A gold of several items (two sections, several relevant abstracts)
fails when any one of them misses the final k, as recall counts it; the verdict is then that item's.
Gold that names something the collection lacks gets no verdict: the runner marks such a question
invalid and leaves it out of the metrics.

A retrieval mode adds its own causes, checked first when the gold is missing from the mode's final
list, since its final list is a combination of several searches: the corrective grader discarded the
gold, a search found it but combining the searches lost it, a later hop's query drifted away from it,
or the agent never searched for it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rag.eval.answers import AnswerRecord
from rag.eval.gold import GoldUnit, Resolution, SectionRef
from rag.retrieval.fusion import QDRANT_FUSIONS
from rag.retrieval.loss import LOSS_TITLES, Loss, outranked_by, where_lost
from rag.retrieval.result import Candidate, RetrievalResult
from rag.settings.config import RetrievalConfig
from rag.settings.links import inspector_params

if TYPE_CHECKING:
    from rag.modes.result import ModeResult

# Code -> title, in pipeline order (the order the checks run in).
VERDICTS: dict[str, str] = {
    "parse_loss": "Answer text in the source file but in no chunk (lost in parsing)",
    "text_not_found": "Answer text in no chunk (source files not kept: parse loss or other wording)",
    "boundary_split": "Answer split across a chunk boundary",
    "grader_discarded": "The corrective grader discarded the gold chunk",
    "mode_merge_dropped": "Found by one of the mode's searches but lost when they were combined",
    "hop_drifted": "A later hop's query drifted away from the gold",
    "agent_never_searched": "The agent never searched for the gold",
    **{code: title for code, title in LOSS_TITLES.items() if code != "filter"},
    "not_cited": "Retrieved, but the answer does not cite it",
    "unsupported": "Cited, but the answer says what its sources do not",
    "wrong_answer": "Cites the gold, but does not say the gold answer",
    "answered_unanswerable": "Answered but should have abstained",
    "abstained_answerable": "Abstained on an answerable question",
}
INVALID = "invalid"  # not a verdict: the gold names what the collection lacks, so the question was not scored


def verdict_title(code: str | None) -> str:
    """A question's outcome in words: its verdict's title, 'invalid gold (not scored)', or 'passed'."""
    if code == INVALID:
        return "invalid gold (not scored)"
    return VERDICTS.get(code, code) if code else "passed"


# Runs stored before the two abstention verdicts were told apart used one code for both.
_LEGACY_ABSTENTION = "wrong_abstention"
# ... and one code for the minimum score and the final k, before one classifier served tracking and Eval.
_LEGACY_CUT = "cut"

FusedRank = Callable[[str], "int | None"]


@dataclass(frozen=True)
class Verdict:
    """The first stage that lost a question's gold, with the numbers that show it."""

    code: str
    detail: str
    evidence: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)
    track: str | None = None

    @property
    def title(self) -> str:
        return VERDICTS[self.code]

    def as_json(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "title": self.title,
            "detail": self.detail,
            "evidence": dict(self.evidence),
            "track": self.track,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> Verdict | None:
        if not data:
            return None
        code = data["code"]
        if code == _LEGACY_ABSTENTION:
            code = "answered_unanswerable" if "should have abstained" in data["detail"] else "abstained_answerable"
        if code == "not_cited" and "do not state" in data["detail"]:
            code = "unsupported"
        if code == _LEGACY_CUT:
            code = "min_score" if "minimum score" in data["detail"] else "final_k"
        return cls(code, data["detail"], data.get("evidence", {}), data.get("track"))


def judge_question(
    answerable: bool, gold: Resolution, result: RetrievalResult, answer: AnswerRecord | None = None,
    fused_rank: FusedRank | None = None, mode: ModeResult | None = None,
) -> Verdict | None:  # fmt: skip
    """The verdict for one question, or None when it did not fail.

    Args:
        answerable: False for questions the documents must not answer.
        gold: the question's gold resolved against the collection.
        result: what retrieval returned (with every stage's ranks).
        answer: the checked answer, when the generator ran.
        fused_rank: a chunk's rank in an uncut fused list (to say where fusion put a gold it cut).
        mode: the retrieval mode's searches, when one other than plain ran (`result` is its final list).

    Returns:
        A Verdict when a gold item (any of them, when there are several) is missing from the final k, or the
        answer failed; else None.
    """
    if not answerable:
        if answer is not None and not answer.abstained:
            return Verdict(
                "answered_unanswerable",
                "answered a question the documents do not answer (it should have abstained)",
                {"cited": list(answer.cited)},
            )
        return None
    # The final list as shown: a chunk carried with its section is found at its section's rank.
    final = sorted((c for c in result.shown if c.id in gold.chunk_ids), key=lambda c: c.shown_rank)
    if not final:
        return _mode_verdict(gold, mode, result.config.final_k) or _retrieval_verdict(gold, result, fused_rank)
    kept = {c.id for c in final}
    lost = [u for u in gold.units if not kept & set(u.chunk_ids)]
    if lost:
        return _partial_verdict(gold, lost, result, fused_rank, mode)
    best = final[0]
    where = {"final_rank": best.shown_rank, **_ranks(best)}
    if answer is None:
        return None
    if answer.abstained:
        return Verdict(
            "abstained_answerable",
            f"gold was retrieved at final rank {best.shown_rank} but the answer abstained: {answer.reason}",
            where,
            best.id,
        )
    if not gold.chunk_ids & set(answer.cited):
        why = f"gold was retrieved at final rank {best.shown_rank} but the answer cites only "
        why += _named(answer.cited, result) or "nothing"
        facts = {"cited": list(answer.cited)}
    elif answer.unsupported:
        why = f"the answer cites the gold but the judge found {len(answer.unsupported)} sentence(s) its sources "
        why += f"do not state: “{answer.unsupported[0]}”"
        return Verdict("unsupported", why, {**where, "unsupported": list(answer.unsupported)}, best.id)
    elif answer.check is not None and not answer.check.correct:
        return Verdict("wrong_answer", f"the answer cites the gold but {answer.check.reason}", where, best.id)
    else:
        return None
    return Verdict("not_cited", why, {**where, **facts}, best.id)


def _retrieval_verdict(gold: Resolution, result: RetrievalResult, fused_rank: FusedRank | None) -> Verdict:
    config = result.config
    if not gold.chunk_ids:
        missing = [u.label for u in gold.missing]
        if gold.split:
            return Verdict(
                "boundary_split",
                f"the answer text starts in one chunk and ends in the next: {_named(gold.split, result)}",
                {"chunks": list(gold.split), "gold": missing},
                gold.split[0],
            )
        nearest = (
            f"; the chunk sharing most of its words is {_named([gold.nearest], result)}"
            if gold.nearest
            else "; no chunk shares its words"
        )
        facts = {"gold": missing, "nearest": gold.nearest, "files": list(gold.lost_in)}
        if gold.lost_in:
            where = ", ".join(gold.lost_in[:3])
            return Verdict(
                "parse_loss",
                f"{', '.join(missing)} is in the file of {where} but in no chunk{nearest}: the loader or chunker "
                "dropped it (e.g. HTML navigation or hidden text, a PDF header)",
                facts,
                gold.nearest,
            )
        why = (
            "Its documents were ingested before ragscope kept source files, so parse loss and other wording "
            "cannot be told apart; re-ingest them to find out"
        )
        return Verdict(
            "text_not_found",
            f"no chunk of the collection holds {', '.join(missing)}{nearest}. {why}",
            facts,
            gold.nearest,
        )
    loss = where_lost(result, gold.chunk_ids)
    best = loss.best
    k = config.final_k
    match loss.code:
        case "missed_by_retrievers":
            return Verdict(
                loss.code,
                f"no gold chunk in the top {config.candidates} of dense or of sparse",
                {
                    "candidates": config.candidates,
                    "dense_last_score": _last_score(result, "dense"),
                    "sparse_last_score": _last_score(result, "sparse"),
                },
                min(gold.chunk_ids),
            )
        case "fused_out":
            return _fused_out(best, config, fused_rank)
        case "collapsed":
            holder = result.get(best.collapsed_into)
            where = f"{_named([best.collapsed_into], result)}, which "
            where += f"ranks {holder.final_rank}" if holder and holder.final_rank else "is itself below the final k"
            above = outranked_by(result, best)
            outranked = f"; {_named([above.id], result)} outranks it, so its section does not carry it" if above else ""
            return _ranked_loss(
                loss,
                f"the gold chunk was collapsed behind another chunk of its section ({where}){outranked}; the gold "
                "names the chunk, not its section",
                collapsed_into=best.collapsed_into,
            )
        case "repeat":
            return _ranked_loss(
                loss,
                f"the gold chunk's text is the same as {_named([best.repeat_of], result)}'s, which stands for it "
                "(repeated passages once); the gold names this place",
                repeat_of=best.repeat_of,
            )
        case "reranker_dropped":
            return _ranked_loss(
                loss,
                f"gold was fused rank {best.fused.rank} (inside k={k}) but the {result.reranker} reranker moved it "
                f"to rank {best.rerank.rank}",
                reranker=result.reranker,
                final_k=k,
            )
        case "min_score":
            return _ranked_loss(
                loss,
                f"gold ranked {best.rerank.rank} but its score {best.rerank.score:.3f} is below the minimum score "
                f"{config.min_score:g}",
                min_score=config.min_score,
                score=best.rerank.score,
                final_k=k,
            )
        case "final_k":
            return _ranked_loss(
                loss,
                f"gold ranked {best.rerank.rank} after reranking ({result.reranker}); only the top k={k} are kept",
                final_k=k,
            )
    raise AssertionError(f"no retrieval verdict for {loss.code!r}: the gold is in the final k")


def _ranked_loss(loss: Loss, detail: str, **evidence: object) -> Verdict:
    """The verdict on a gold chunk that the lists held but the final k did not: what explains its loss, then its
    rank at every stage, and the chunk to track."""
    return Verdict(loss.code, detail, {**evidence, **_ranks(loss.best)}, loss.best.id)


def _partial_verdict(
    gold: Resolution,
    lost: Sequence[GoldUnit],
    result: RetrievalResult,
    fused_rank: FusedRank | None,
    mode: ModeResult | None,
) -> Verdict:
    """Some gold items are in the final k and some are not: the verdict of the first missing one.

    Recall counts every gold item (a question naming two sections needs both), so a question that
    found one of its two sections failed too; without this it read "passed" at recall 0.5.
    """
    alone = Resolution((lost[0],))
    v = _mode_verdict(alone, mode, result.config.final_k) or _retrieval_verdict(alone, result, fused_rank)
    found = len(gold.units) - len(lost)
    missing = [u.label for u in lost]
    detail = (
        f"{found} of {len(gold.units)} gold items in the final k={result.config.final_k}; "
        f"{lost[0].label} is not: {v.detail}"
    )
    return Verdict(v.code, detail, {**v.evidence, "missing_gold": missing}, v.track)


def _mode_verdict(gold: Resolution, mr: ModeResult | None, k: int) -> Verdict | None:
    """The mode's own reason the gold is not in its final list, or None (then the plain checks run on the
    final list)."""
    ids = gold.chunk_ids
    if mr is None or mr.mode == "plain" or not ids:
        return None
    for attempt in mr.corrective.attempts if mr.corrective else ():
        for g in attempt.grades:
            if g.chunk_id in ids and not attempt.is_relevant(g):
                rank = attempt.result.get(g.chunk_id).final_rank
                evidence = {
                    "search": attempt.action,
                    "final_rank": rank,
                    "grade": g.score,
                    "basis": attempt.basis,
                    "threshold": attempt.threshold,
                }
                detail = (
                    f"the grader discarded the gold chunk: the {attempt.action} ranked it {rank} but graded it "
                    f"{g.score:.3f} ({attempt.basis}), under the threshold {attempt.threshold:g}"
                )
                return Verdict("grader_discarded", detail, evidence, g.chunk_id)
    for label, r in mr.searches():
        hit = next((c for c in r.final if c.id in ids), None)
        if hit is not None:
            detail = (
                f"gold was rank {hit.final_rank} in the {label} search, but combining the mode's searches "
                f"({mr.result.reranker}) left it out of the final k={k}"
            )
            return Verdict(
                "mode_merge_dropped",
                detail,
                {"search": label, "final_rank": hit.final_rank, "merged": mr.result.reranker, "final_k": k},
                hit.id,
            )
    if len(mr.hops) > 1:
        last, before = mr.hops[-1], mr.hops[-2]
        carried = f" (carrying {', '.join(before.carried)} from hop {before.number})" if before.carried else ""
        detail = (
            f"hop {last.number} query drifted: it searched “{last.query}”{carried}, and no hop ranked a gold "
            f"chunk in its final k={k}"
        )
        return Verdict(
            "hop_drifted", detail, {"hop": last.number, "query": last.query, "carried": list(before.carried)}, min(ids)
        )
    if mr.mode == "agent":
        queries = [c.query for step in mr.agent for c in step.calls if c.result is not None]
        wanted = ", ".join(u.label for u in gold.units) or _short(sorted(ids))
        searched = (
            f"its {len(queries)} searches ({'; '.join(f'“{q}”' for q in queries)}) never returned it"
            if queries
            else "it ran no search"
        )
        return Verdict(
            "agent_never_searched", f"agent never searched for {wanted}: {searched}", {"queries": queries}, min(ids)
        )
    return None


def _fused_out(best: Candidate, config: RetrievalConfig, fused_rank: FusedRank | None) -> Verdict:
    """The gold was in a prefetch list but not in the fused one: say where fusion put it."""
    evidence = {"fusion": config.fusion, "candidates": config.candidates, **_ranks(best)}
    found = f"gold at {_stage_ranks(best)} (each list keeps {config.candidates})"
    if config.fusion in ("dense", "sparse"):
        return Verdict(
            "fused_out", f"{found}, but fusion {config.fusion!r} keeps only the {config.fusion} list", evidence, best.id
        )
    rank = fused_rank(best.id) if fused_rank is not None and config.fusion in QDRANT_FUSIONS else None
    evidence["uncut_fused_rank"] = rank
    where = f"ranked it {rank}" if rank else "ranked it below"
    return Verdict(
        "fused_out",
        f"{found}, but {config.fusion} fusion {where} of both lists and keeps only the top {config.candidates}",
        evidence,
        best.id,
    )


def inspector_link(
    question: str, config: RetrievalConfig, track: str | None, base: RetrievalConfig | None = None,
    section: SectionRef | None = None,
) -> dict[str, str]:  # fmt: skip
    """Query parameters that open the search inspector on this question and the run's whole config,
    following the gold chunk.

    Beyond what `inspector_params` writes it always carries dense_weight and rrf_k, since a verdict can
    depend on them (fusion weighted away from a stage). `base`: the configured settings the inspector
    reads links on. With `section` (gold given as sections) the link tracks that section, all its chunks, as
    Eval counted it, instead of the one chunk `track` names.
    """
    params = inspector_params(question, config, base) | {
        "dense_weight": str(config.dense_weight),
        "rrf_k": str(config.rrf_k),
    }
    if section is not None:
        return params | {"track_source": section.source, "track_heading": section.heading}
    return params | ({"track": track} if track else {})


def _ranks(c: Candidate) -> dict[str, Any]:
    return {f"{s}_rank": c.stage(s).rank for s in ("dense", "sparse", "fused", "rerank")}


def _stage_ranks(c: Candidate) -> str:
    parts = [f"{s} rank {c.stage(s).rank}" for s in ("dense", "sparse") if c.stage(s).rank]
    return " and ".join(parts)


def _last_score(result: RetrievalResult, stage: str) -> float | None:
    ranked = result.ranked(stage)
    return ranked[-1].stage(stage).score if ranked else None


def _short(ids: Sequence[str]) -> str:
    return ", ".join(i[:8] for i in ids)


def _named(ids: Sequence[str], result: RetrievalResult) -> str:
    """Chunks as a reader knows them, `source › heading`; an id prefix only for a chunk the retrieval never saw."""
    names = []
    for cid in ids:
        c = result.get(cid)
        names.append(f"{c.chunk.chunk.source} › {c.chunk.chunk.heading or '(no heading)'}" if c else cid[:8])
    return "; ".join(dict.fromkeys(names))
