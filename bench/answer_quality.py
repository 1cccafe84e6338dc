"""Offline answer correctness on the docs sets: does the quoted sentence say the gold answer?

Two steps, so one tree's answers can be scored by another tree's checker (the "before" of a change is
an older commit, which has no answer-text gold and no checker):

    # 1. answer every question of a set with the tree on PYTHONPATH, write what was answered and read
    python bench/answer_quality.py dump --set tests/data/fastapi_qa.jsonl --docs DIR --out A.json
        [--section-reads N] [--cache DIR]
    # 2. score dumps against the set's answer-text gold ("answer"), side by side, with paired intervals
    python bench/answer_quality.py score --set tests/data/fastapi_qa.jsonl A.json B.json ...

`dump` uses only what every tree since the layout change has (build_components, ingest_files,
answer_question) and reads the set's lines itself, so it runs on an older commit:
`git worktree add /tmp/before <commit>; PYTHONPATH=/tmp/before python bench/answer_quality.py dump ...`.
`score` applies rag.eval.correctness (answer correctness; context recall) to every dump; a question
counts only where it has answer-text gold. Gold chunks are the sources whose document and heading path
fall under a gold section, read from the dump, so dumps of different trees need not share chunk ids.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def _files(docs: Path) -> list[tuple[str, bytes]]:
    suffixes = {".md", ".markdown", ".txt", ".html", ".htm", ".rst", ".pdf"}
    return [
        (p.relative_to(docs).as_posix(), p.read_bytes())
        for p in sorted(docs.rglob("*"))
        if p.is_file() and p.suffix.lower() in suffixes
    ]


def dump(args: argparse.Namespace) -> int:
    from rag.ask.answerer import answer_question
    from rag.components import build_components
    from rag.ingest.pipeline import ingest_files
    from rag.settings.config import Settings

    import rag

    print(f"answering with {Path(rag.__file__).parent}", file=sys.stderr)
    data = Path(args.cache or f"/tmp/answer-quality-{Path(args.set).stem}")
    fresh = not (data / "qdrant").exists()
    components = build_components(Settings(data_dir=data))
    try:
        if fresh:
            summary = ingest_files(components, _files(Path(args.docs)))
            if summary.errors:
                print(f"ingest errors: {summary.errors[:3]}", file=sys.stderr)
        config = components.settings.retrieval
        if args.section_reads > 1:
            config = dataclasses.replace(config, section_reads=args.section_reads)
        lines = [json.loads(raw) for raw in Path(args.set).read_text(encoding="utf-8").splitlines() if raw.strip()]
        out = {}
        t0 = time.process_time()
        for n, line in enumerate(lines, 1):
            answer = answer_question(components, line["question"], config)
            signals = _signals(answer) | {"best_sentence": _best_sentence(components, line["question"], answer)}
            by_id = {c.id: c for c in answer.retrieval.candidates}
            out[str(line.get("id", f"q{n}"))] = {
                "answerable": line.get("answerable", True) is not False,
                "signals": signals,
                "text": answer.text,
                "abstained": answer.abstained,
                "reason": answer.reason,
                "sources": [
                    {
                        "id": cid,
                        "source": by_id[cid].chunk.chunk.source,
                        "heading": list(by_id[cid].chunk.chunk.heading_path),
                        "text": by_id[cid].answer_chunk.text,
                    }
                    for cid in answer.sources
                ],
            }
            print(f"\r{n}/{len(lines)} answered", end="", file=sys.stderr)
        print(f"\n{len(out)} answers in {time.process_time() - t0:.0f} s CPU", file=sys.stderr)
    finally:
        components.close()
    Path(args.out).write_text(json.dumps({"label": args.label or Path(args.out).stem, "answers": out}), "utf-8")
    return 0


def _signals(answer) -> dict[str, float]:  # noqa: ANN001 - an Answer of whichever tree is on PYTHONPATH
    """What might tell an answerable question from an unanswerable one, read from the retrieval every tree has.

    top_sparse: the best BM25 score (Qdrant applies the IDF); top_dense: the best dense cosine; relevance:
    the best score the gate compared; terms: the question's BM25 terms (a longer question sums more);
    best_sentence (added by `dump`): the offline answerer's best sentence relevance over what the gate passed.
    """
    candidates = answer.retrieval.candidates
    sparse = [c.sparse.score for c in candidates if c.sparse.score is not None]
    dense = [c.dense.score for c in candidates if c.dense.score is not None]
    query = getattr(answer.retrieval, "query", None)
    return {
        "top_sparse": max(sparse, default=0.0),
        "top_dense": max(dense, default=0.0),
        "relevance": max(answer.relevance.values(), default=0.0),
        "terms": float(len(query.sparse.indices)) if query is not None else 0.0,
    }


def _best_sentence(components, question: str, answer) -> float:  # noqa: ANN001 - any tree's types
    """The offline answerer's best sentence score over what the gate let through (0 when nothing passed)."""
    from rag.answer.checks import gate
    from rag.answer.extractive import ExtractiveGenerator

    checked = gate(components, answer.retrieval, components.settings.answer)
    scored = ExtractiveGenerator(components.dense, 0.0).score(question, checked.sources, answer.retrieval)
    # A unit's own relevance (a tree since the question kinds ranks by more than that; older ones by it alone).
    return max((getattr(s, "relevance", s.score) for s in scored), default=0.0)


@dataclass(frozen=True)
class Dumped:
    """An answer read back from a dump: the fields rag.eval.correctness reads of an Answer."""

    text: str
    abstained: bool
    reason: str
    sources: tuple[str, ...]


def _under(heading: list[str], gold: str, source: str, gold_source: str) -> bool:
    """The source chunk sits in the gold section, as Eval's gold resolution matches it."""
    from rag.text.headings import heading_names

    return source == gold_source and heading_names(heading, gold)


def score(args: argparse.Namespace) -> int:
    from rag.eval.bootstrap import paired_interval
    from rag.eval.correctness import check_answer

    lines = {
        str(q.get("id")): q
        for q in (json.loads(r) for r in Path(args.set).read_text(encoding="utf-8").splitlines() if r.strip())
        if q.get("answer")
    }
    runs = [json.loads(Path(p).read_text(encoding="utf-8")) for p in args.dumps]
    per_run: list[dict[str, dict[str, float]]] = []
    for run in runs:
        scores: dict[str, dict[str, float]] = {"correct": {}, "recall": {}}
        for qid, line in lines.items():
            got = run["answers"].get(qid)
            if got is None:
                continue
            texts = {s["id"]: s["text"] for s in got["sources"]}
            gold = frozenset(
                s["id"]
                for s in got["sources"]
                for g in line["gold"]
                if _under(s["heading"], g.get("heading", ""), s["source"], g["source"])
            )
            answer = Dumped(got["text"], got["abstained"], got["reason"], tuple(s["id"] for s in got["sources"]))
            check = check_answer(answer, line["answer"], gold, texts)
            scores["correct"][qid] = float(check.correct)
            scores["recall"][qid] = check.context_recall if check.context_recall is not None else 0.0
        per_run.append(scores)
    base = per_run[0]
    shared = sorted(set.intersection(*(set(s["correct"]) for s in per_run)))
    print(f"{Path(args.set).name}: {len(shared)} questions with answer-text gold answered by every dump")
    print(f"{'run':<28} {'correct':>8} {'gain vs first [95% CI]':>28} {'ctx recall':>11} {'gain [95% CI]':>26}")
    for run, s in zip(runs, per_run):
        row = f"{run['label']:<28}"
        for metric in ("correct", "recall"):
            a = {q: s[metric][q] for q in shared}
            b = {q: base[metric][q] for q in shared}
            mean = float(np.mean(list(a.values())))
            row += f" {mean:>8.3f} {paired_interval(b, a).words():>28}"
        print(row)
    print(f"{'run':<28} {'false abstentions':>18} {'unanswerable abstained':>23}")
    for run in runs:
        answers = run["answers"]
        asked = [qid for qid in shared]
        false = sum(answers[q]["abstained"] for q in asked)
        unanswerable = [a for a in answers.values() if a.get("answerable") is False]
        declined = sum(a["abstained"] for a in unanswerable)
        print(f"{run['label']:<28} {f'{false}/{len(asked)}':>18} {f'{declined}/{len(unanswerable)}':>23}")
    _print_auc(runs[0], set(lines))
    return 0


def auc(positive: list[float], negative: list[float]) -> float:
    """The chance that a random positive scores above a random negative (ties count half): Mann-Whitney's AUC."""
    if not positive or not negative:
        return float("nan")
    pos, neg = np.asarray(positive)[:, None], np.asarray(negative)[None, :]
    return float(((pos > neg).sum() + 0.5 * (pos == neg).sum()) / (pos.size * neg.size))


def _print_auc(run: dict, with_gold: set[str]) -> None:
    """How well each signal of the first dump separates the set's answerable questions from its unanswerable ones."""
    answers = [a for a in run["answers"].values() if "signals" in a]
    unanswerable = [a["signals"] for a in answers if a.get("answerable") is False]
    answerable = [a["signals"] for a in answers if a.get("answerable") is not False]
    if not unanswerable:
        return
    print(f"AUC, answerable ({len(answerable)}) vs unanswerable ({len(unanswerable)}), from {run['label']}:")
    derived = {"top_sparse / terms": lambda x: x["top_sparse"] / max(x["terms"], 1.0)}
    if "best_sentence" in answerable[0]:  # the offline answerer's answer score (rag/answer/extractive.py)
        derived["answer score"] = lambda x: (x["best_sentence"] + x["top_dense"]) / 2
    for name in [*answerable[0], *derived]:
        value = derived.get(name, lambda x, n=name: x[n])
        print(f"  {name:<22} {auc([value(x) for x in answerable], [value(x) for x in unanswerable]):.3f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="step", required=True)
    d = sub.add_parser("dump")
    d.add_argument("--set", required=True)
    d.add_argument("--docs", required=True, help="the documents folder the set was written over")
    d.add_argument("--out", required=True)
    d.add_argument("--label", default="")
    d.add_argument("--section-reads", type=int, default=1)
    d.add_argument("--cache", default="", help="data dir kept between runs (one per tree: chunk ids may differ)")
    s = sub.add_parser("score")
    s.add_argument("--set", required=True)
    s.add_argument("dumps", nargs="+")
    args = parser.parse_args(argv)
    return dump(args) if args.step == "dump" else score(args)


if __name__ == "__main__":
    # Appended, not inserted: a tree on PYTHONPATH (the "before" of a change) must win over this one.
    sys.path.append(str(Path(__file__).resolve().parent.parent))
    raise SystemExit(main())
