"""Answer checks that can fail offline: does the answer say the gold answer, citing where it is?

A question may carry answer-text gold (`"answer"` in its set line: the documents' words that answer it).
Two checks use it:

- **answer correctness**: some sentence of the answer that cites a gold chunk says the gold answer (the
  sentence, with the code block it introduces, holds at least `SAYS` of the content terms of the gold
  answer or of one of its sentences, or contains it outright: answer-text gold is one sentence or two
  consecutive ones, each a statement that answers). A quote of the right chunk's wrong sentence, an
  answer citing another section, and an abstention are all wrong. With a judge, a sentence the words
  miss (a paraphrase) is asked of Claude: does the answer state the gold answer?
- **context recall** (RAGAS): the share of the gold answer's sentences attributable to the context handed
  to the answerer: by words offline (`SAYS` of a sentence's content terms in one source, or the sentence
  itself), by Claude with a judge.

Without answer-text gold neither is scored (None), never a flattering 1. Content terms are the stems BM25
matches (rag.answer.terms), so "refunds" meets "refund" and Chinese is read by bigrams.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from rag.answer.citations import answer_sentences
from rag.answer.result import source_label
from rag.answer.terms import content_terms
from rag.text.fold import match_key, reader_form
from rag.text.sentences import split_sentences

if TYPE_CHECKING:
    from rag.eval.judge import FaithfulnessJudge


class Answered(Protocol):
    """What the checks read of an answer (rag.answer.result.Answer, or one read back by bench/answer_quality.py)."""

    text: str
    abstained: bool
    reason: str
    sources: tuple[str, ...]  # chunk ids sent, [S1] first


SAYS = 0.8  # share of the gold answer's content terms a sentence must hold to say it (docs/answers.md)


@dataclass(frozen=True)
class AnswerCheck:
    """One answer against its answer-text gold."""

    correct: bool
    reason: str  # in words: what the answer said, or failed to say
    context_recall: float | None  # None when the gold answer has no sentence to attribute
    basis: str  # "words" (offline) or "claude" (the judge was asked where the words did not settle it)

    def as_json(self) -> dict[str, Any]:
        recall = self.context_recall
        return {"correct": self.correct, "reason": self.reason, "context_recall": recall, "basis": self.basis}

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> AnswerCheck | None:
        if not data:
            return None
        return cls(bool(data["correct"]), data["reason"], data.get("context_recall"), data.get("basis", "words"))


def coverage(text: str, gold: str) -> float:
    """Share of `gold`'s content terms found in `text`; 1.0 when `text` contains `gold` as a reader reads it."""
    if match_key(reader_form(gold)) in match_key(reader_form(text)):
        return 1.0
    wanted = content_terms(gold)
    return len(wanted & content_terms(text)) / len(wanted) if wanted else 0.0


def check_answer(
    answer: Answered, gold_answer: str, gold_chunks: frozenset[str], texts: Mapping[str, str],
    judge: FaithfulnessJudge | None = None,
) -> AnswerCheck:  # fmt: skip
    """Score `answer` against the documents' words that answer its question.

    Args:
        gold_chunks: the chunks the question's gold resolved to; empty when the gold names only the answer text
            (then any cited chunk may carry it).
        texts: chunk id -> text, for at least the sources handed to the answerer.
        judge: Claude, asked where the words do not settle it (a paraphrase).
    """
    context = [texts[c] for c in answer.sources if c in texts]
    recall, recall_basis = context_recall(gold_answer, context, judge)
    if answer.abstained:
        return AnswerCheck(False, f"abstained: {answer.reason}", recall, recall_basis)
    by_label = {source_label(i): c for i, c in enumerate(answer.sources, 1)} | {c.lower(): c for c in answer.sources}
    sentences = answer_sentences(answer.text)
    said: list[str] = []  # what the sentences citing gold say, each with the code block it introduces
    for i, s in enumerate(sentences):
        cited = {by_label[x] for x in s.ids if x in by_label}
        if cited and (not gold_chunks or cited & gold_chunks):
            stop = sentences[i + 1].start if i + 1 < len(sentences) else len(answer.text)
            said.append(answer.text[s.start : stop])
    if not said:
        return AnswerCheck(False, "no sentence of the answer cites a gold source", recall, recall_basis)
    golds = [gold_answer, *(gold_answer[a:b] for a, b in _sentences(gold_answer))]
    best = max(coverage(text, g) for text in said for g in golds)
    if best >= SAYS:
        return AnswerCheck(True, "a sentence citing gold says the gold answer", recall, recall_basis)
    if judge is not None:
        supported, _ = judge.judge(gold_answer, ["\n".join(said)])
        why = (
            "Claude: the sentences citing gold state the gold answer"
            if supported
            else ("Claude: the sentences citing gold do not state the gold answer")
        )
        return AnswerCheck(supported, why, recall, "claude")
    return AnswerCheck(
        False,
        f"the sentences citing gold hold {best:.0%} of the gold answer's words (at least {SAYS:.0%} needed)",
        recall,
        recall_basis,
    )


def _sentences(text: str) -> list[tuple[int, int]]:
    """The sentences of a gold answer that say something (a one-sentence answer gives none beyond itself)."""
    spans = split_sentences(text)
    return [(a, b) for a, b in spans if content_terms(text[a:b])] if len(spans) > 1 else []


def context_recall(
    gold_answer: str, context: Sequence[str], judge: FaithfulnessJudge | None = None
) -> tuple[float | None, str]:
    """RAGAS context recall: the share of the gold answer's sentences the context states, and its basis."""
    statements = [gold_answer[a:b] for a, b in _sentences(gold_answer)] or [gold_answer]
    statements = [s for s in statements if content_terms(s)]
    if not statements:
        return None, "words"
    found = 0
    asked = False
    for statement in statements:
        if any(coverage(text, statement) >= SAYS for text in context):
            found += 1
        elif judge is not None and context:
            asked = True
            found += judge.judge(statement, list(context))[0]
    return found / len(statements), "claude" if asked else "words"
