"""One hit per section against a final list that never hides the answer: today's collapse, collapse off, and a
section's chunk carrying the siblings that outrank the next section (rag/retrieval/collapse.py).

    python bench/collapse.py --set tests/data/fastapi_qa.jsonl --data /tmp/x/fastapi [--out result.json] [--depth N]

`--data` is a collection already built with the product's defaults (bench-cache: copy it first). Each question
runs `retrieve()` twice with the product's defaults, collapse on and off; the three rankings compared are

- **collapse** (before this change): the last stage one chunk per section, as `ranked("rerank")` lists it;
- **no-collapse**: every chunk, as `--no-collapse` ranks them;
- **carry**: `ranked_groups("rerank")`, each section's chunk with the siblings it carries, counted at its rank.

Section gold (`gold`) and answer-text gold (`answer`, the chunks holding the documents' words) are both scored
with rag.eval's own machinery (gold resolution, `Resolution.collapse`, the metric functions), with paired
bootstrap intervals (rag.eval.bootstrap). `lost_collapsed_outranking` counts the questions whose answer-text
gold is lost as "collapsed" (rag.retrieval.loss.where_lost) while its best chunk outranks the next section;
for "collapse" it counts what today's rule would have hidden the same way. `--depth N` runs the carry rule
with CARRY_DEPTH = N (how deep, in final k's, a section's siblings are carried; the product's is 2).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

METRICS = ("mrr@10", "recall@5", "hit@10")
VARIANTS = ("collapse", "no-collapse", "carry")


def _outranks_next(result, cid: str) -> bool:  # noqa: ANN001 - a RetrievalResult
    """The folded chunk ranks above the next section's chunk after its own section's (today's rule hides it)."""
    c = result.get(cid)
    holder = result.get(c.collapsed_into)
    after = [s for s in result.ranked("rerank") if s.rerank.rank > holder.rerank.rank]
    return not after or c.rerank.rank < after[0].rerank.rank


def run(set_path: Path, data: Path) -> dict:
    from rag.components import build_components
    from rag.eval.bootstrap import paired_interval
    from rag.eval.gold import CollectionIndex, TextGold
    from rag.eval.metrics import evaluate
    from rag.eval.qsets import read_question_set_file
    from rag.retrieval.loss import where_lost
    from rag.retrieval.retrieve import retrieve
    from rag.settings.config import Settings

    components = build_components(Settings(data_dir=data))
    try:
        index = CollectionIndex.from_components(components)
        config = components.settings.retrieval
        assert config.collapse, "the product's default is collapse on"
        off = dataclasses.replace(config, collapse=False)
        runs = {g: {v: {} for v in VARIANTS} for g in ("section", "answer")}
        qrels: dict[str, dict[str, dict[str, int]]] = {"section": {}, "answer": {}}
        lost = {v: [] for v in ("collapse", "carry")}
        full: list[str] = []
        carried_shown = 0
        for q in read_question_set_file(set_path).questions:
            if not q.answerable:
                continue
            answer_gold = index.resolve(TextGold(q.answer)) if q.answer else None
            golds = {"section": index.resolve(q.gold), "answer": answer_gold}
            result = retrieve(components, q.question, config)
            plain = retrieve(components, q.question, off)
            carried_shown += len(result.shown) - len(result.final)
            rankings = {
                "collapse": [(c.id,) for c in result.ranked("rerank")],
                "no-collapse": [(c.id,) for c in plain.ranked("rerank")],
                "carry": [tuple(c.id for c in g) for g in result.ranked_groups("rerank")],
            }
            for kind, gold in golds.items():
                if gold is None or gold.invalid or not gold.chunk_ids:
                    continue
                qrels[kind][q.id] = gold.qrels()
                for v, ranked in rankings.items():
                    runs[kind][v][q.id] = gold.collapse(ranked)
            answer = golds["answer"]
            if answer is not None and answer.chunk_ids and not answer.invalid:
                loss = where_lost(result, answer.chunk_ids)
                if loss.code == "collapsed" and _outranks_next(result, loss.best.id):
                    lost["carry"].append(q.id)
                folded = loss.best is not None and loss.best.collapsed_into
                if loss.code == "final_k" and folded and result.get(loss.best.collapsed_into).final_rank:
                    full.append(q.id)  # outranks the next section, but its section already carries k - 1
                today = [c for c in result.final if c.id in answer.chunk_ids]
                ranked = [c for c in result.candidates if c.id in answer.chunk_ids and c.rerank.rank]
                best = min(ranked, key=lambda c: c.rerank.rank, default=None)
                if not today and best is not None and best.collapsed_into and _outranks_next(result, best.id):
                    lost["collapse"].append(q.id)
        asked = max(1, len(qrels["section"]))
        out: dict = {"set": set_path.stem, "chunks": len(index.by_id), "carried_per_question": carried_shown / asked}
        for kind in ("section", "answer"):
            scores = {v: evaluate(runs[kind][v], qrels[kind]) for v in VARIANTS}
            table = {"n": len(qrels[kind])}
            for m in METRICS:
                table[m] = {v: round(scores[v][m].mean, 4) for v in VARIANTS}
                per = {v: scores[v][m].per_query for v in VARIANTS}
                table[m]["carry - collapse"] = paired_interval(per["collapse"], per["carry"]).words()
                table[m]["carry - no-collapse"] = paired_interval(per["no-collapse"], per["carry"]).words()
            out[kind] = table
        out["lost_collapsed_outranking"] = {v: len(ids) for v, ids in lost.items()}
        out["lost_collapsed_outranking_ids"] = lost
        out["section_full"] = full
        return out
    finally:
        components.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--set", required=True, type=Path)
    parser.add_argument("--data", required=True, type=Path, help="a copy of a bench-cache collection folder")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--depth", type=int, default=None, help="CARRY_DEPTH to try instead of the product's")
    args = parser.parse_args(argv)
    if args.depth is not None:
        import rag.retrieval.collapse

        rag.retrieval.collapse.CARRY_DEPTH = args.depth
    out = run(args.set, args.data)
    text = json.dumps(out, ensure_ascii=False, indent=1)
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    print(text)
    return 1 if out["lost_collapsed_outranking"]["carry"] else 0


if __name__ == "__main__":
    sys.exit(main())
