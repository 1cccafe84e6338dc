"""Answer metrics: what each answer did with its sources, and the set-level rates built from it.

- citation validity: share of answers (not abstentions) that cite no id outside the sources sent;
- uncited share: uncited statement sentences over all statement sentences;
- abstention accuracy: share of unanswerable questions the system declined;
- false abstentions: share of answerable questions it declined;
- faithfulness: share of judged sentences the LLM judge says their sources state (only with a judge);
- answer relevancy: mean over answered questions of RAGAS's answer relevancy (only with a judge);
- answer correctness and context recall: over questions with answer-text gold (rag.eval.correctness).
A rate with nothing to count is None, never a flattering 0 or 1.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from rag.answer.citations import answer_sentences
from rag.answer.result import Answer
from rag.eval.correctness import AnswerCheck
from rag.eval.judge import SentenceJudgement

ANSWER_METRICS = (
    "citation_validity",
    "uncited_share",
    "abstention_accuracy",
    "false_abstentions",
    "faithfulness",
    "answer_relevancy",
    "answer_correctness",
    "context_recall",
)
# What each metric needs to be scored, said where its value is None (the Eval tab, `ragscope eval`).
NEEDS = {
    "faithfulness": "needs an API key (Claude judges each sentence)",
    "answer_relevancy": "needs an API key (Claude writes the questions an answer answers)",
    "answer_correctness": 'needs answer-text gold ("answer" in the question set)',
    "context_recall": 'needs answer-text gold ("answer" in the question set)',
    "abstention_accuracy": "needs unanswerable questions in the set",
}


@dataclass(frozen=True)
class AnswerRecord:
    """The stored summary of one answer: enough to score it and to say why it failed."""

    text: str
    abstained: bool
    reason: str
    mode: str
    model: str
    cited: tuple[str, ...]
    invented: tuple[str, ...]
    sentences: int
    uncited: tuple[str, ...]
    judged: tuple[SentenceJudgement, ...] = ()
    relevancy: float | None = None  # answer relevancy by the judge; None without one, or for an abstention
    check: AnswerCheck | None = None  # against answer-text gold, when the question has it

    @classmethod
    def from_answer(
        cls, answer: Answer, judged: Iterable[SentenceJudgement] = (), relevancy: float | None = None,
        check: AnswerCheck | None = None,
    ) -> AnswerRecord:  # fmt: skip
        statements = (
            [s for s in answer_sentences(answer.text) if s.ids or s.needs_citation] if not answer.abstained else []
        )
        return cls(
            text=answer.text,
            abstained=answer.abstained,
            reason=answer.reason,
            mode=answer.mode,
            model=answer.model,
            cited=tuple(dict.fromkeys(c.id for c in answer.citations)),
            invented=tuple(answer.invented),
            sentences=len(statements),
            uncited=tuple(answer.uncited_sentences),
            judged=tuple(judged),
            relevancy=relevancy,
            check=check,
        )

    @property
    def unsupported(self) -> tuple[str, ...]:
        return tuple(j.sentence for j in self.judged if not j.supported)

    def as_json(self) -> dict[str, Any]:
        return {
            "text": self.text, "abstained": self.abstained, "reason": self.reason, "mode": self.mode,
            "model": self.model, "cited": list(self.cited), "invented": list(self.invented),
            "sentences": self.sentences, "uncited": list(self.uncited), "judged": [j.as_json() for j in self.judged],
            "relevancy": self.relevancy, "check": self.check.as_json() if self.check else None,
        }  # fmt: skip

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> AnswerRecord | None:
        if not data:
            return None
        judged = tuple(
            SentenceJudgement(j["sentence"], tuple(j["chunk_ids"]), j["supported"], j["reply"])
            for j in data.get("judged", [])
        )
        return cls(
            data["text"], data["abstained"], data["reason"], data["mode"], data["model"], tuple(data["cited"]),
            tuple(data["invented"]), data["sentences"], tuple(data["uncited"]), judged, data.get("relevancy"),
            AnswerCheck.from_json(data.get("check")),
        )  # fmt: skip


def answer_metrics(rows: Iterable[tuple[bool, AnswerRecord]]) -> dict[str, float | None]:
    """Set-level answer rates from (answerable, record) pairs; see the module docstring."""
    rows = list(rows)
    answered = [r for _, r in rows if not r.abstained]
    sentences = sum(r.sentences for r in answered)
    judged = [j for r in answered for j in r.judged]
    unanswerable = [r for ok, r in rows if not ok]
    answerable = [r for ok, r in rows if ok]
    checked = [r for ok, r in rows if ok and r.check is not None]
    return {
        "citation_validity": _share(sum(1 for r in answered if not r.invented), len(answered)),
        "uncited_share": _share(sum(len(r.uncited) for r in answered), sentences),
        "abstention_accuracy": _share(sum(1 for r in unanswerable if r.abstained), len(unanswerable)),
        "false_abstentions": _share(sum(1 for r in answerable if r.abstained), len(answerable)),
        "faithfulness": _share(sum(1 for j in judged if j.supported), len(judged)),
        "answer_relevancy": _mean([r.relevancy for r in answered if r.relevancy is not None]),
        "answer_correctness": _share(sum(1 for r in checked if r.check.correct), len(checked)),
        "context_recall": _mean([r.check.context_recall for r in checked if r.check.context_recall is not None]),
    }


def metric_text(name: str, value: float | None) -> str:
    """An answer metric as the Eval tab and `ragscope eval` print it: the number, or what scoring it needs."""
    if value is not None:
        return f"{value:.3f}"
    return NEEDS.get(name, "nothing to count")


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None
