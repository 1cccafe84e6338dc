"""Offline answerer quality: does it abstain when the docs do not say, and quote the right thing when they do?

Runs the product's answer path (`rag.ask.answerer.answer_question`, default settings, no API key, so the
extractive answerer) over the sample help centre, on two question sets:

- rag/resources/sample_qa.jsonl: the shipped set (17 answerable, 3 unanswerable);
- tests/data/sample_unanswerable.jsonl: a held-out set written before this answerer was tuned on it
  (14 unanswerable near-misses such as "Can I pay with PayPal?", 10 answerable).

Per set it prints:
- abstention accuracy: unanswerable questions it abstained on;
- correct answers: answerable questions whose answer is right: the best (first) quoted sentence cites
  a gold chunk, and, for a text gold ("5 to 10 business days"), the answer contains that text;
- false abstentions and wrong answers among the answerable ones;
- on-gold sentences: of every sentence quoted for an answerable question, the share cited from a gold
  chunk (the rest is padding from elsewhere).
With --verbose it prints each question's answer or abstention reason.

Usage:
    python bench/answers.py [--verbose]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from rag.answer.result import Answer  # noqa: E402
from rag.ask.answerer import answer_question  # noqa: E402
from rag.components import Components, build_components  # noqa: E402
from rag.settings.config import Settings  # noqa: E402
from rag.eval.gold import CollectionIndex, TextGold  # noqa: E402
from rag.text.fold import reader_form  # noqa: E402
from rag.eval.qsets import Question, QuestionSet, read_question_set_file  # noqa: E402
from rag.ingest.pipeline import ingest_files  # noqa: E402
from rag.catalog.sample import sample_files  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
SETS = (REPO / "rag" / "resources" / "sample_qa.jsonl", REPO / "tests" / "data" / "sample_unanswerable.jsonl")


@dataclass(frozen=True)
class Scores:
    """One set's counts; see the module docstring for what each means."""

    unanswerable: int
    abstained: int
    answerable: int
    correct: int
    false_abstentions: int
    sentences: int
    on_gold: int

    def lines(self) -> list[str]:
        wrong = self.answerable - self.correct - self.false_abstentions
        return [
            f"  abstention accuracy  {self.abstained}/{self.unanswerable}",
            f"  correct answers      {self.correct}/{self.answerable}",
            f"  false abstentions    {self.false_abstentions}/{self.answerable}",
            f"  wrong answers        {wrong}/{self.answerable}",
            f"  on-gold sentences    {self.on_gold}/{self.sentences}",
        ]


def is_correct(answer: Answer, question: Question, index: CollectionIndex) -> bool:
    """The best quoted sentence cites a gold chunk and, for a text gold, the answer holds the text."""
    gold = index.resolve(question.gold).chunk_ids
    if answer.abstained or not answer.citations or answer.citations[0].id not in gold:
        return False
    return not isinstance(question.gold, TextGold) or reader_form(question.gold.text) in reader_form(answer.text)


def score_set(components: Components, qset: QuestionSet, index: CollectionIndex, verbose: bool) -> Scores:
    """Answer every question of the set and count the outcomes."""
    counts = dict.fromkeys(("abstained", "correct", "false_abstentions", "sentences", "on_gold"), 0)
    for q in qset.questions:
        answer = answer_question(components, q.question)
        if verbose:
            outcome = f"ABSTAIN ({answer.reason})" if answer.abstained else " | ".join(answer.text.splitlines())
            print(f"  [{'answerable' if q.answerable else 'unanswerable'}] {q.id}: {outcome}")
        if not q.answerable:
            counts["abstained"] += answer.abstained
            continue
        counts["false_abstentions"] += answer.abstained
        counts["correct"] += is_correct(answer, q, index)
        if not answer.abstained:
            gold = index.resolve(q.gold).chunk_ids
            cited = {c.start: c.id for c in answer.citations}  # one citation per quoted sentence
            counts["sentences"] += len(cited)
            counts["on_gold"] += sum(cid in gold for cid in cited.values())
    return Scores(qset.unanswerable, counts["abstained"], len(qset.questions) - qset.unanswerable, counts["correct"],
                  counts["false_abstentions"], counts["sentences"], counts["on_gold"])  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--verbose", action="store_true", help="print every answer")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        components = build_components(Settings(data_dir=Path(tmp)))
        try:
            summary = ingest_files(components, sample_files())
            if summary.errors:
                print(f"ingest failed: {summary.errors}", file=sys.stderr)
                return 1
            index = CollectionIndex.from_components(components)
            for path in SETS:
                qset = read_question_set_file(path)
                print(f"{path.relative_to(REPO)} ({len(qset.questions)} questions)")
                print("\n".join(score_set(components, qset, index, args.verbose).lines()))
        finally:
            components.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
